-- acquire: ARGV[2] token, ARGV[3] ttl in ms, ARGV[4] unit 's' or 'ms', ARGV[5] host, ARGV[6] pid,
-- ARGV[7] min-hold in ms (0: none), ARGV[8] mode: '1' exclusive, 'shared' (--shared), or N, a
-- semaphore of N holders (--limit N), ARGV[9] waiter id (its mode first, as the queue's members
-- name it), ARGV[10] how long a busy waiter keeps its place in the queue without asking again, in
-- ms (0: not queued, as with --no-wait), ARGV[11] how often the holder renews,
-- in ms (0: --no-renew), kept in its record for the messages of those who find the lock held,
-- ARGV[12] the holder's note (--note; '': none), kept in its record as it is, any bytes,
-- ARGV[13] '1' for a hold (--hold: its pid is the hold's owner's), '' for a run,
-- ARGV[14] how long -w has left, in ms ('': no -w), ARGV[15] '1' for --supersede, ARGV[16] when
-- this waiter first asked, as an earlier busy answer gave it ('' for a first request): its record
-- keeps it even if it lapsed meanwhile (a waiter paused past its place's time).
-- {'granted', value, fence, validity_ms, now_ms, slot}: slot is a semaphore holder's place, 0 to
--   N - 1, unique among the key's live holders ('' for an exclusive or a shared holder)
-- | {'busy', remaining_ms, host, pid, fence, limit ('' if exclusive), holders, recheck_ms, ahead,
--    held_ms, renew_ms, ended_ago_ms, note, queued, took_ms, took_count, position, in_line,
--    since_us}:
--   recheck_ms is when to ask again at the latest, as nothing may wake a waiter then (a --min-hold
--   time); ahead is 0, or, where the lock would let this request in but for the waiters queued
--   before it, how many are queued before it (remaining_ms is then when the first of them loses
--   its place if it does not ask again); held_ms, renew_ms and ended_ago_ms are how long ago
--   the holder was granted the lock, how often it renews it ('0': never) and how long ago its
--   command ended (--min-hold keeps it held), each '' where not known; note is the holder's
--   --note, '' for none; queued is '1' if this waiter is in the queue now, '' if it is not (a
--   run that does not wait); took_ms and took_count are the median of the last holds' durations and how
--   many there are ('' for none yet); position is this waiter's place in line (1: served next;
--   '' for a run that does not wait), in_line how many wait, since_us when it first asked
-- | {'superseded', host, pid, note}: a newer waiter with --supersede (that one) ended this one's
--   wait; it has left the queue, and passed on any wake-up it was sent
-- | {'foreign', type} | {'mismatch', limit}: the holders use another limit, or one of shared
-- holders and a semaphore meets the other ('shared' or N: theirs; nothing written)
-- | {'exhausted', last_fence}: the fence counter is too large to count on exactly
-- | {'unreadable_fence', type}: the fence counter holds no number (nothing written for either).
-- host, pid and fence of a busy lock are '' when its holder is a client of the classic algorithm.
local token, ttl_ms, unit = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local min_hold_ms, waiter_id, keep_ms = tonumber(ARGV[7]), ARGV[9], tonumber(ARGV[10])
-- The mode: exclusive, shared (up to shared_cap holders) or a semaphore of `limit`; `held_as` is
-- what the owner record's 'limit' field says of holders of this mode.
local shared = ARGV[8] == 'shared'
local limit = shared and shared_cap or tonumber(ARGV[8])
local exclusive = not shared and limit == 1
local held_as = shared and 'shared' or string.format('%d', limit)
-- This request as a member of the queue would name it, for admissible().
local as_queued = string.format('%017d:%s', 0, exclusive and 'x-' or (shared and 's-')
                                or ('n' .. held_as .. '-'))
local renew_ms = tonumber(ARGV[11]) or 0
local note = ARGV[12] or ''
local is_hold = ARGV[13] == '1'
local hold_until = min_hold_ms > 0 and now_ms + min_hold_ms or 0
local supersede = ARGV[15] == '1'
-- A run that waits has a record among the waiters (waiters.lua); `mine` is it, read or new.
local waits = keep_ms > 0 and waiters_key ~= nil
local waiters, mine = {}, nil
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
if waits then
  if supersede then
    -- --supersede needs the waiters' records: an ACL user that may not keep them is refused before
    -- anything is written (save_waiter()).
    redis.call('PTTL', waiters_key)
  end
  -- Only a waiter with --supersede reads every record; others, theirs and their mode's newest.
  waiters = supersede and live_waiters()
            or these_waiters({waiter_id, superseding_prefix .. ARGV[8]})
  mine = waiters[waiter_id]
  if not mine then
    local since = tonumber(ARGV[16] or '')
    mine = {since_us = string.format('%d', since and since <= now_us and since or now_us),
            host = ARGV[5], pid = ARGV[6], mode = ARGV[8], supersede = supersede and 1 or nil,
            hold = is_hold and 1 or nil, note = note ~= '' and note or nil}
    if tonumber(ARGV[14] or '') then
      mine.deadline_ms = now_ms + tonumber(ARGV[14])
    end
  end
end

-- The answer to a waiter that a newer one superseded (superseded_by()), once it has left the
-- queue and passed on what it may have been given; nil for one that was not.
local function superseded()
  if not mine then
    return nil
  end
  local by = superseded_by(waiters, waiter_id, mine)
  if not by then
    return nil
  end
  drop_waiter(waiter_id)
  local _, member = place_in(live_queue(), waiter_id)
  pass_on(member, waiter_id)
  return {'superseded', by.host or '', by.pid or '', by.note or ''}
end

-- A waiter with --supersede that has to wait ends the earlier ones of its mode that asked for it
-- too (supersede_earlier()): only once any grant of its own was looked for (an answer lost on the
-- way back must not supersede anyone), and once in a request. `only_if_behind`: only if such an
-- earlier one waits, which it would otherwise wait behind (the lock may be free).
local superseding_done = false
local function supersede_if_waiting(only_if_behind)
  if superseding_done or not mine or not supersede then
    return
  end
  if only_if_behind then
    local behind = false
    for other_id, other in pairs(waiters) do
      if other_id ~= waiter_id and other.supersede and other.mode == mine.mode
          and not superseded_by(waiters, other_id, other)
          and came_before(other, other_id, mine, waiter_id) then
        behind = true
      end
    end
    if not behind then
      return
    end
  end
  superseding_done = true
  supersede_earlier(waiters, live_queue(), waiter_id, mine)
end

local lock = read_lock()
if lock.state == 'foreign' then
  return {'foreign', lock.kind}
end
local held = lock.state == 'timestamp' and lock.expiry > now_ms
local owner = {}
if held then
  -- An owner record of another type names no holder: the lock is then held as if by a client of
  -- the classic algorithm, until KEY expires and a grant replaces the record.
  owner = call_unless_wrongtype('HMGET', owner_key, 'token', 'value', 'fence', 'host', 'pid',
                                'limit', 'hold_until_ms', 'acquired_ms', 'renew_ms', 'ended_ms',
                                'note') or {}
end

-- How long ago a time in a holder's record was, as text: '' for none (a semaphore's record writes
-- 0 for an end that has not come).
local function age_text(time)
  time = tonumber(time)
  if not time or time <= 0 or time > now_ms then
    return ''
  end
  return string.format('%d', now_ms - time)
end

-- What is known of a holder's time, as the reply gives it: {how long ago it was granted, how often
-- it renews ('0': it does not), how long ago its command ended}.
local function times_of(acquired, renew, ended)
  renew = tonumber(renew)
  local renew_text = ''
  if renew and renew >= 0 and renew < 1e15 then
    renew_text = string.format('%d', renew)
  end
  return {age_text(acquired), renew_text, age_text(ended)}
end

-- A holder's note as the reply gives it: '' for none, and for a record written by another program
-- that holds something other than text there.
local function note_of(holder_note)
  return type(holder_note) == 'string' and holder_note or ''
end

-- A waiter keeps its place in the queue, and its record, while anything keeps it out.
local function busy(remaining, host, pid, fence, semaphore_limit, holders, recheck, ahead, times,
                    holder_note)
  local gone = superseded()
  if gone then
    return gone
  end
  supersede_if_waiting(false)
  local queued, position, in_line = '', '', ''
  if keep_ms > 0 then
    -- Every waiter queues, exclusive ones too, so that the line is the order of service (an
    -- exclusive waiter of an earlier version, which may not, blocks on the shared wake-up list).
    local _, member = place_in(live_queue(), waiter_id)
    enqueue(member, waiter_id, keep_ms)
    queued = '1'
    local queue = live_queue()
    if mine then -- a caller that names no waiters' hash (KEYS[8]) keeps no record
      mine.kept_ms = now_ms + keep_ms
      save_waiter(waiters, waiter_id, mine, #queue, supersede)
    end
    local line = waiting_line(waiters, queue)
    for i, waiter in ipairs(line) do
      if waiter.id == waiter_id then
        position = string.format('%d', i)
      end
    end
    in_line = string.format('%d', #line)
  end
  times = times or {'', '', ''}
  local took = duration_summary()
  return {'busy', remaining, host, pid, fence, semaphore_limit or '', holders or 0,
          recheck or remaining, ahead or 0, times[1], times[2], times[3], note_of(holder_note),
          queued, took[1] or '', took[3] or '', position, in_line, mine and mine.since_us or ''}
end

-- An exclusive redlockrun holder.
local function busy_exclusive()
  return busy(lock.expiry - now_ms, owner[4], owner[5], owner[3], '', 0,
              recheck_at(lock.expiry, tonumber(owner[7])) - now_ms, 0,
              times_of(owner[8], owner[9], owner[10]), owner[11])
end

if held and owner[2] ~= lock.value then
  return busy(lock.expiry - now_ms, '', '', '') -- a client of the classic algorithm
end

-- Held by an exclusive holder.
if held and not owner[6] then
  if exclusive and owner[1] == token then
    -- Our own earlier call won, and its answer was lost on the way back.
    return {'granted', lock.value, owner[3], validity(lock.expiry, ttl_ms), now_ms}
  end
  return busy_exclusive()
end

-- Held by shared holders or a semaphore's.
local holders, count = {}, 0
if held then
  holders, count = live_holders()
  -- KEY, rounded up to the second (--timestamp-unit s), may outlive the last holder's record: no
  -- one holds it then.
  held = count > 0
end
if held then
  if not exclusive and owner[6] ~= held_as then
    return {'mismatch', owner[6]}
  end
  local mine = holders[token]
  if mine then
    return {'granted', lock.value, mine.fence, validity(mine.expiry_ms, ttl_ms), now_ms,
            mine.slot and string.format('%d', mine.slot) or ''}
  end
end

-- A waiter that was superseded never takes the lock, even when it was woken to.
local gone = superseded()
if gone then
  return gone
end
supersede_if_waiting(true)

-- The lock goes to the waiters in the order they came: this request only if it may hold it
-- together with the holders and every waiter queued before it (admissible()).
local queue = live_queue()
local ahead, member = place_in(queue, waiter_id)
local holding = held and holding_of(owner[6], count) or {kind = 'free'}
local together = {}
for i = 1, ahead do
  together[i] = queue[i]
end
together[ahead + 1] = as_queued
local woken, fits = admissible(together, holding)
if woken <= ahead or not fits then
  local first = first_to_expire(holders)
  local remaining, recheck, kept_for
  if held and (exclusive or count >= holding.limit) then
    remaining = first.expiry_ms - now_ms
    recheck = semaphore_recheck_at(holders) - now_ms
  elseif ahead > 0 then
    -- It would go in, but the waiters ahead may take the lock first: they are woken (again: one
    -- that was woken and killed before it asked never will, and must not leave the rest asleep
    -- until their timeouts), and this one asks again when the first of them loses its place, 1 s
    -- after a wake-up at the latest (woken_place_ms). Wake-ups do not pile up: a waiter's list
    -- holds one at most, and a grant deletes it.
    wake_first(queue, math.min(woken, ahead))
    remaining = tonumber(redis.call('ZSCORE', queue_key, queue[1])) - now_ms
    kept_for = ahead
  else
    remaining = 0 -- not reached: the first waiter of the holders' mode fits if any place is free
  end
  first = first or {}
  return busy(remaining, first.host or '', first.pid or '', first.fence or '',
              held and owner[6] or (not exclusive and held_as or ''), count, recheck, kept_for,
              times_of(first.acquired_ms, first.renew_ms, first.ended_ms), first.note)
end

local fence, refusal = next_fence()
if not fence then
  return refusal
end
leave_queue(member, waiter_id)
drop_waiter(waiter_id)

if exclusive then
  local value, expiry = write_lock_at(lease_end(ttl_ms, hold_until), unit)
  -- The owner record starts afresh, and a token left by an earlier release must not wake the next
  -- waiter for nothing.
  redis.call('DEL', owner_key, wake_key)
  redis.call('HSET', owner_key, 'token', token, 'value', value, 'fence', fence, 'host', ARGV[5],
             'pid', ARGV[6], 'acquired_ms', string.format('%d', now_ms), 'renew_ms',
             string.format('%d', renew_ms))
  if hold_until > 0 then
    redis.call('HSET', owner_key, 'hold_until_ms', string.format('%d', hold_until))
  end
  if note ~= '' then
    redis.call('HSET', owner_key, 'note', note)
  end
  if is_hold then
    redis.call('HSET', owner_key, 'hold', '1')
  end
  redis.call('PEXPIREAT', owner_key, expiry)
  return {'granted', value, fence, validity(expiry, ttl_ms), now_ms}
end

if not held then
  redis.call('DEL', owner_key) -- what an expired lock left behind
end
-- A token left on the shared wake-up list would wake an exclusive waiter for nothing.
redis.call('DEL', wake_key)
redis.call('HSET', owner_key, 'limit', held_as)
-- A new record every time: a note is this holder's alone ('' leaves it out). A semaphore's holder
-- takes the lowest slot no live holder has (a record of an earlier version has none): with fewer
-- than N holders, one below N is free.
local slot
if not shared then
  local taken = {}
  for _, other in pairs(holders) do
    if tonumber(other.slot) then
      taken[tonumber(other.slot)] = true
    end
  end
  slot = 0
  while taken[slot] do
    slot = slot + 1
  end
end
local record = {expiry_ms = lease_end(ttl_ms, hold_until), fence = fence, host = ARGV[5],
                pid = ARGV[6], acquired_ms = now_ms, hold_until_ms = hold_until, ended_ms = 0,
                renew_ms = renew_ms, note = note ~= '' and note or nil,
                hold = is_hold and 1 or nil, slot = slot}
local value = save_holder(token, record, holders, unit)
if #queue > (member and 1 or 0) then
  -- A waiter that may join this holder need not wait for a timeout: a shared one queued behind it,
  -- or a semaphore's, while places are left. One, which does the same when granted: a release
  -- has woken every waiter it let in already, and waking them all again at each of their grants
  -- would cost the square of a batch's size; after a lapse (a holder that crashed, which woke no
  -- one) the wake-ups run down the queue one grant after another.
  wake_admissible(holding_of(held_as, count + 1), 1)
end
return {'granted', value, fence, validity(record.expiry_ms, ttl_ms), now_ms,
        slot and string.format('%d', slot) or ''}
