-- redlockrun: the second part of the prelude every script begins with (after common.lua): the
-- holders of a lock (one exclusive holder, or a semaphore's and shared holders) and the queue of
-- its waiters.

-- Semaphores (--limit N). The owner hash holds 'limit', 'value' (what KEY holds: the latest
-- expiry among the holders) and one field 'holder:TOKEN' per holder, a JSON record with its own
-- expiry_ms, fence, host, pid, acquired_ms, hold_until_ms and ended_ms (0: none), and its note
-- (--note) if it has one: a renewal or release rewrites the record with every field it read.
local holder_prefix = 'holder:'

-- The semaphore's live holders, {token = record}, and how many. A record past its own expiry (a
-- holder that crashed) or unreadable is deleted: the slot is free again, whatever the others'
-- renewals did to KEY's expiry.
local function live_holders()
  local fields = redis.call('HGETALL', owner_key)
  local holders, count = {}, 0
  for i = 1, #fields, 2 do
    local name = fields[i]
    if string.sub(name, 1, #holder_prefix) == holder_prefix then
      local ok, record = pcall(cjson.decode, fields[i + 1])
      if ok and type(record) == 'table' and tonumber(record.expiry_ms)
          and tonumber(record.expiry_ms) > now_ms then
        holders[string.sub(name, #holder_prefix + 1)] = record
        count = count + 1
      else
        redis.call('HDEL', owner_key, name)
      end
    end
  end
  return holders, count
end

-- When a waiter should ask again at the latest, for a lock held until `expiry`: then, or at the
-- --min-hold time, when a command that ended early leaves the lock to expire without waking anyone.
local function recheck_at(expiry, hold_until)
  if hold_until and hold_until > now_ms then
    return math.min(expiry, hold_until)
  end
  return expiry
end

-- The holder whose record expires first: whose slot frees first if nobody releases.
local function first_to_expire(holders)
  local first
  for _, record in pairs(holders) do
    if not first or record.expiry_ms < first.expiry_ms then
      first = record
    end
  end
  return first
end

-- When a slot of the semaphore can free without a release waking anyone.
local function semaphore_recheck_at(holders)
  local earliest
  for _, record in pairs(holders) do
    local at = recheck_at(record.expiry_ms, tonumber(record.hold_until_ms))
    earliest = math.min(earliest or at, at)
  end
  return earliest or now_ms
end

-- Makes KEY (and the owner hash) expire with the latest of the semaphore's holders.
local function write_semaphore(holders, unit)
  local latest = 0
  for _, record in pairs(holders) do
    latest = math.max(latest, record.expiry_ms)
  end
  local value, expiry = write_lock_at(latest, unit)
  redis.call('HSET', owner_key, 'value', value)
  redis.call('PEXPIREAT', owner_key, expiry)
  return value
end

-- Stores a holder's record, and KEY's expiry with it.
local function save_holder(token, record, holders, unit)
  holders[token] = record
  redis.call('HSET', owner_key, holder_prefix .. token, cjson.encode(record))
  return write_semaphore(holders, unit)
end

-- The answer for a holder that --break ended, {'lost', 'broken', by, why}, or nil. A record of
-- another type, or one that cannot be read, says nothing.
local function broken_answer(token)
  if not broken_key then
    return nil
  end
  local json = redis.pcall('HGET', broken_key, token)
  if type(json) ~= 'string' then
    return nil
  end
  local ok, record = pcall(cjson.decode, json)
  if not ok or type(record) ~= 'table' then
    return nil
  end
  return {'lost', 'broken', tostring(record.by or ''), tostring(record.why or '')}
end

local function not_holder_unless_broken(token)
  local lock = read_lock()
  local owner, wrong_type = call_unless_wrongtype('HMGET', owner_key, 'value', 'token', 'host',
                                                  'pid')
  if wrong_type then
    return {'lost', 'record', '', ''}
  end
  local json = redis.call('HGET', owner_key, holder_prefix .. token)
  if lock.state == 'missing' then
    return {'lost', json and 'deleted' or 'gone', '', ''}
  end
  if lock.state ~= 'timestamp' or lock.value ~= owner[1] then
    return {'lost', 'changed', '', ''}
  end
  if owner[2] then
    return {'lost', 'taken', owner[3] or '', owner[4] or ''} -- an exclusive holder
  end
  if not json then
    return {'lost', 'gone', '', ''}
  end
  local ok, record = pcall(cjson.decode, json)
  if not ok or type(record) ~= 'table' or not tonumber(record.expiry_ms) then
    return {'lost', 'changed', '', ''}
  end
  record.expiry_ms = tonumber(record.expiry_ms)
  record.hold_until_ms = tonumber(record.hold_until_ms) or 0
  if record.expiry_ms <= now_ms or lock.expiry <= now_ms then
    return {'lost', 'expired', '', ''}
  end
  return nil, record
end

-- A loss answer, or nil and `value`, as a check below gives them: a loss names the --break that
-- ended this token's claim, if one did.
local function naming_a_break(token, lost, value)
  if lost then
    return broken_answer(token) or lost
  end
  return nil, value
end

-- nil and its record if `token` holds a slot of the semaphore: its record is live and KEY still
-- holds what the semaphore wrote; otherwise the answer {'lost', reason, host, pid} saying why not,
-- as not_ours() gives it.
local function not_holder(token)
  return naming_a_break(token, not_holder_unless_broken(token))
end

-- The queue of waiters (KEYS[5]): members 'ARRIVAL:ID', ARRIVAL in fixed-width microseconds, so
-- that sorting them gives the order they came in. A waiter's ID begins with its mode: 'x-'
-- exclusive, 's-' shared, 'nN-' a place of a semaphore of N (--limit N). An ID without one is a
-- semaphore waiter's of an earlier version, whose N is not known.
-- Every waiter that waits is queued, and blocks on a wake-up list of its own, where a release
-- wakes the waiters it lets in. A queued waiter that was killed keeps its place until it lapses
-- (woken_place_ms after a wake-up, otherwise the time its last request asked for: 10 s), and
-- sleeps on a wake-up sent to it. So an exclusive waiter that its last answer put first or second
-- in line also blocks on the shared wake-up list (KEYS[4]), where a release leaves one token and
-- Redis gives it to the live waiter that has blocked longest, passing over a killed one: the
-- first in line most often, or the second when the first was killed. That one finds the lock free
-- but for the waiters ahead, wakes them again, and asks again once the first one's woken second
-- is over (acquire.lua). Others learn at their next request (5 s at most), and the same follows.
-- Only the first two: Redis's order of blocked waiters is not the queue's, and every waiter the
-- token reaches out of turn costs two requests. Earlier versions' exclusive waiters blocked on the
-- shared list alone while no one was queued.

-- The waiters still in the queue, in arrival order. A waiter that let its place lapse (paused,
-- killed, or partitioned away) is dropped, so that it cannot hold up the rest. A queue key of
-- another type (someone else wrote to redlockrun's key) holds no waiter; it is left as it is here
-- (enqueue() and wake_admissible() replace it).
local function live_queue()
  if not queue_key then
    return {}
  end
  local _, wrong_type = call_unless_wrongtype('ZREMRANGEBYSCORE', queue_key, '-inf', now_ms)
  if wrong_type then
    return {}
  end
  local members = redis.call('ZRANGE', queue_key, 0, -1)
  table.sort(members)
  return members
end

local function waiter_of(member)
  return string.match(member, '^%d+:(.*)$')
end

-- A waiter's mode from its ID: 'x', 's' or 'n', and for 'n' the semaphore's N (nil if not known).
local function mode_of(id)
  local mode, n = string.match(id or '', '^([xsn])(%d*)%-')
  if not mode then
    return 'n', nil
  end
  return mode, tonumber(n)
end

-- The position of waiter `id` in `queue` (0: first) and its member; #queue if it is not queued.
local function place_in(queue, id)
  for i, member in ipairs(queue) do
    if waiter_of(member) == id then
      return i - 1, member
    end
  end
  return #queue, nil
end

-- Keeps waiter `id` in the queue until now + keep_ms, in its place, or, if new, at the end.
local function enqueue(member, id, keep_ms)
  if keep_ms <= 0 or not queue_key then
    return
  end
  if not member then
    local arrival = tonumber(time[1]) * 1000000 + tonumber(time[2])
    member = string.format('%017d:%s', arrival, id)
  end
  local _, wrong_type = call_unless_wrongtype('ZADD', queue_key, now_ms + keep_ms, member)
  if wrong_type then
    redis.call('DEL', queue_key)
    redis.call('ZADD', queue_key, now_ms + keep_ms, member)
  end
  local last = redis.call('ZRANGE', queue_key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', queue_key, math.max(tonumber(last[2]), now_ms + keep_ms))
end

local function leave_queue(member, id)
  if member then
    redis.call('ZREM', queue_key, member)
  end
  if id and id ~= '' then
    redis.call('DEL', wake_key .. ':' .. id)
  end
end

-- Shared holders (--shared) a lock admits at once: past it, a shared request waits.
local shared_cap = 100

-- How the lock is held, for admitting waiters: {kind = 'free'}, {kind = 'x'} (an exclusive holder
-- or a client of the classic algorithm), or {kind = 's' or 'n', count = holders, limit = how many
-- may hold it together (shared_cap, or the semaphore's N)}.
local function holding_of(limit_field, count)
  if limit_field == 'shared' then
    return {kind = 's', count = count, limit = shared_cap}
  end
  return {kind = 'n', count = count, limit = tonumber(limit_field) or 1}
end

-- How many of `queue`'s first waiters may hold the lock now, beside its holders and each other, in
-- arrival order: an exclusive waiter alone, once nobody holds the lock; shared waiters together, up
-- to shared_cap holders; a semaphore's, up to its N. The first waiter that may not stops the count:
-- no one passes it, so a writer queued behind readers is not starved by the readers that come
-- after it. Also whether the last waiter counted is one that may hold it (not one to be refused).
local function admissible(queue, holding)
  local kind, count, limit = holding.kind, holding.count or 0, holding.limit
  local woken, placed = 0, 0
  local last_placed = false -- whether the last waiter counted may hold the lock (not refused)
  for _, member in ipairs(queue) do
    local mode, n = mode_of(waiter_of(member))
    if kind == 'free' then
      if mode == 'x' then
        return 1, true
      end
      kind, count = mode, 0
      limit = mode == 's' and shared_cap or (n or holding.limit or 1)
    elseif kind == 'x' or mode == 'x' then
      return woken, last_placed
    end
    if mode ~= kind or (mode == 'n' and n and n ~= limit) then
      -- A shared waiter behind a semaphore's holders, a semaphore's behind shared holders, or a
      -- semaphore waiter with another N: its acquire will be refused (they never mix). Woken, it
      -- hears so at once; it holds up no one behind it.
      woken, last_placed = woken + 1, false
    elseif count + placed >= limit then
      return woken, last_placed
    else
      placed, woken, last_placed = placed + 1, woken + 1, true
    end
  end
  return woken, last_placed
end

-- How long a woken waiter keeps its place without asking: a live one asks at once (its acquire
-- is sent together with its BLPOP), while one that was killed as it waited never will, and must
-- not hold up the waiters behind it until its place lapses (10 s after its last request).
local woken_place_ms = 1000

-- Wakes the first `count` waiters of `queue`: one token each, on their own wake-up lists.
local function wake_first(queue, count)
  for i = 1, math.min(count, #queue) do
    local list = wake_key .. ':' .. waiter_of(queue[i])
    redis.call('DEL', list)
    redis.call('RPUSH', list, '1')
    redis.call('PEXPIRE', list, wake_ttl_ms)
    local kept_until = tonumber(redis.call('ZSCORE', queue_key, queue[i]))
    if kept_until and kept_until > now_ms + woken_place_ms then
      redis.call('ZADD', queue_key, 'XX', now_ms + woken_place_ms, queue[i])
    end
  end
end

-- Wakes the waiters that may hold the lock now, held as `holding` says (holding_of()); `most`, if
-- given, of them at most. One read,
-- as every release makes it, most often of no queue at all: a waiter whose place has lapsed is
-- passed over here, and dropped by the next live_queue(). A queue key of another type (someone
-- else wrote to redlockrun's key) holds no waiter: it is deleted, as push_wake() replaces a
-- wake-up key of another type, so that a release does not fail over it after deciding to release.
local function wake_admissible(holding, most)
  if not queue_key then
    return
  end
  local entries, wrong_type = call_unless_wrongtype('ZRANGE', queue_key, 0, -1, 'WITHSCORES')
  if wrong_type then
    redis.call('DEL', queue_key)
    return
  end
  local members = {}
  for i = 1, #entries, 2 do
    if tonumber(entries[i + 1]) > now_ms then
      members[#members + 1] = entries[i]
    end
  end
  table.sort(members)
  wake_first(members, math.min(admissible(members, holding), most or #members))
end

-- nil and the --min-hold time (0: none) if the lock is ours (the owner record has our token and the
-- key still holds the value we wrote) and unexpired; otherwise the answer {'lost', reason, host,
-- pid} saying why not. An owner record of another type (someone else wrote to redlockrun's key)
-- holds no token: nothing proves the lock ours any more ('record').
local function not_ours_unless_broken(token)
  local owner, wrong_type = call_unless_wrongtype('HMGET', owner_key, 'token', 'value', 'host',
                                                  'pid', 'hold_until_ms')
  if wrong_type then
    return {'lost', 'record', '', ''}
  end
  local lock = read_lock()
  if owner[1] == token and lock.state == 'timestamp' and lock.value == owner[2]
      and lock.expiry > now_ms then
    return nil, tonumber(owner[5]) or 0
  end
  if owner[1] and owner[1] ~= token then
    return {'lost', 'taken', owner[3] or '', owner[4] or ''}
  end
  if lock.state == 'missing' then
    return {'lost', owner[1] and 'deleted' or 'gone', '', ''}
  end
  if not owner[1] or lock.state ~= 'timestamp' or lock.value ~= owner[2] then
    return {'lost', 'changed', '', ''}
  end
  return {'lost', 'expired', '', ''}
end

-- nil and the --min-hold time (0: none) if the lock is ours; otherwise the answer {'lost', reason,
-- host, pid} saying why not, as above; for a holder that --break ended, {'lost', 'broken', by, why}.
local function not_ours(token)
  return naming_a_break(token, not_ours_unless_broken(token))
end

