-- redlockrun: the third part of the prelude every script begins with (after common.lua and
-- holders.lua): who waits for a lock, in what order, and --supersede.

-- A waiter that gives up, or was superseded, passes on what it may have been given: its place in
-- the queue (`member`, if it had one) and the wake-up it may have been sent go to the waiters that
-- may hold the lock now (admissible(): counted with how the key is held, not with this waiter's own
-- mode: a waiter refused for another mode was woken for a place beside the holders, and the
-- waiters behind it must not sleep until a timeout).
local function pass_on(member, id)
  leave_queue(member, id)
  local lock = read_lock()
  if lock.state == 'timestamp' and lock.expiry > now_ms then
    local held_as = call_unless_wrongtype('HGET', owner_key, 'limit')
    if not held_as then
      return -- held by an exclusive holder or a classic client: its release wakes the queue
    end
    local _, count = live_holders()
    if count > 0 then
      wake_admissible(holding_of(held_as, count))
      return
    end
  end
  wake_admissible({kind = 'free'})
end

-- Waiters. Every waiter that waits has a record in the waiters hash (KEYS[8]), ID -> JSON:
-- since_us (when it first asked, by the server's clock, in microseconds, as text: cjson writes
-- numbers with 14 digits), kept_ms (until when the record lives without the waiter asking again:
-- its place's time), host, pid, mode ('1', 'shared' or N), deadline_ms (-w's end, absent without
-- -w), note, supersede (1 for --supersede) and hold (1 for --hold). Records are for people to read
-- and for --supersede; the queue alone decides who is served.
--
-- --supersede: the field 'superseding:MODE' holds the newest waiter of that mode with --supersede
-- that had to wait: its record, with its id, kept as long as the fence counter (7 days). Every
-- waiter of the mode with --supersede that came before it is superseded, for good: also one that
-- was paused past its record's time, and comes back after the newer one has run.
local superseding_prefix = 'superseding:'

-- A waiter record read from the hash, if it is live: not past kept_ms, and readable.
local function live_record(text)
  local ok, record = pcall(cjson.decode, text)
  if ok and type(record) == 'table' and tonumber(record.kept_ms)
      and tonumber(record.kept_ms) > now_ms and tonumber(record.since_us) then
    return record
  end
  return nil
end

-- The live waiter records, {id = record}; those past kept_ms, or unreadable, are deleted. Every
-- record is decoded: for --supersede and for the rare clean-up, not for each request.
local function live_waiters()
  if not waiters_key then
    return {}
  end
  local fields, wrong_type = call_unless_wrongtype('HGETALL', waiters_key)
  if wrong_type then
    redis.call('DEL', waiters_key)
    return {}
  end
  local waiters = {}
  for i = 1, #fields, 2 do
    local record = live_record(fields[i + 1])
    if record then
      waiters[fields[i]] = record
    else
      redis.call('HDEL', waiters_key, fields[i])
    end
  end
  return waiters
end

-- The live records of the waiters `ids` names, {id = record}: what a request of a waiter without
-- --supersede needs (its own, and its mode's 'superseding:MODE'), whatever the number of waiters.
local function these_waiters(ids)
  if not waiters_key then
    return {}
  end
  local texts, wrong_type = call_unless_wrongtype('HMGET', waiters_key, unpack(ids))
  if wrong_type then
    redis.call('DEL', waiters_key)
    return {}
  end
  local waiters = {}
  for i, id in ipairs(ids) do
    waiters[id] = texts[i] and live_record(texts[i]) or nil
  end
  return waiters
end

-- Writes waiter `id`'s record into `waiters` and the hash, which lives at least as long as it,
-- and returns true. Records of waiters that were killed stay until the hash expires, or
-- live_waiters() reads them: when the hash holds many more of them than the queue holds waiters
-- (`queued`), it is done here. An ACL user without PTTL and HLEN (a rule written for an earlier
-- version) keeps no record: its waiters are queued and served as any, and counted but not
-- described by --status; false, and nothing written. `required` (--supersede, which cannot work
-- without the records) raises the refusal instead.
local function save_waiter(waiters, id, record, queued, required)
  local left = (required and redis.call or redis.pcall)('PTTL', waiters_key)
  if type(left) ~= 'number' then
    return false
  end
  waiters[id] = record
  redis.call('HSET', waiters_key, id, cjson.encode(record))
  if left < 0 or now_ms + left < tonumber(record.kept_ms) then
    redis.call('PEXPIREAT', waiters_key, record.kept_ms)
  end
  if queued then
    local count = redis.pcall('HLEN', waiters_key)
    if type(count) == 'number' and count > 2 * queued + 8 then
      live_waiters()
    end
  end
  return true
end

local function drop_waiter(id)
  if waiters_key and id and id ~= '' then
    redis.call('HDEL', waiters_key, id)
  end
end

-- Whether waiter a (record, id) came before waiter b.
local function came_before(a, a_id, b, b_id)
  local a_since, b_since = tonumber(a.since_us), tonumber(b.since_us)
  if a_since ~= b_since then
    return a_since < b_since
  end
  return a_id < b_id
end

-- The newest waiter with --supersede of `mine`'s mode that had to wait, if it superseded `mine`
-- (waiter `id`, which asked for --supersede too, and came before it): {host, pid, note}; else nil.
local function superseded_by(waiters, id, mine)
  local newest = waiters[superseding_prefix .. mine.mode]
  if not mine.supersede or not newest or newest.id == id
      or not came_before(mine, id, newest, newest.id) then
    return nil
  end
  return {host = newest.host, pid = newest.pid, note = newest.note}
end

-- Waiter `id` (`mine`), with --supersede, has to wait: unless a newer one of its mode has already,
-- it is now the newest, and every earlier waiter of its mode with --supersede is superseded:
-- each is taken out of the queue and woken, to hear so at once. Returns how many were.
local function supersede_earlier(waiters, queue, id, mine)
  local field = superseding_prefix .. mine.mode
  local newest = waiters[field]
  if newest and (newest.id == id or came_before(mine, id, newest, newest.id)) then
    return 0
  end
  local record = {id = id, since_us = mine.since_us, host = mine.host, pid = mine.pid,
                  note = mine.note, mode = mine.mode, kept_ms = now_ms + fence_keep_ms}
  save_waiter(waiters, field, record, nil, true)
  local count = 0
  for other_id, other in pairs(waiters) do
    if string.sub(other_id, 1, #superseding_prefix) ~= superseding_prefix
        and superseded_by(waiters, other_id, other) then
      local _, member = place_in(queue, other_id)
      if member then
        redis.call('ZREM', queue_key, member)
      end
      local list = wake_key .. ':' .. other_id
      redis.call('DEL', list)
      redis.call('RPUSH', list, '1')
      redis.call('PEXPIRE', list, wake_ttl_ms)
      count = count + 1
    end
  end
  return count
end

-- The waiters in the order they will be served: those the queue holds, in its order, each as
-- {id = ID, record = its record} (an empty record for a waiter that has none, or whose record was
-- not read: one of an earlier version). A superseded one is on its way out (the waiter that
-- superseded it took it out of the queue; one seen here is one `waiters` does not know of yet), and
-- a record without a place in the queue is a waiter that was woken and has not asked since (gone,
-- or about to be served): neither is in line.
local function waiting_line(waiters, queue)
  local line = {}
  for _, member in ipairs(queue) do
    local id = waiter_of(member)
    local record = waiters[id] or {}
    if not (record.mode and superseded_by(waiters, id, record)) then
      line[#line + 1] = {id = id, record = record}
    end
  end
  return line
end
