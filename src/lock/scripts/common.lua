-- redlockrun: the prelude every script begins with, common.lua then holders.lua; each script file
-- is appended to them.
-- KEYS[1] the lock key: a bare decimal Unix time at which the lock expires
-- KEYS[2] owner hash   KEYS[3] fence counter   KEYS[4] wake-up list
-- KEYS[5] the queue of the waiters: a sorted set of 'ARRIVAL:ID' members, each
--         scored with the time until which that waiter keeps its place without asking again. A
--         queued waiter blocks on a wake-up list of its own, KEYS[4] .. ':' .. ID, in the same slot.
--         Named here, not in KEYS: a release wakes the waiters the queue holds first, unknown to
--         its caller. With KEYS[4]'s hash tag they are in the slot the request went to, all that
--         Redis and Valkey check (Dragonfly, which refuses undeclared keys, is not supported).
-- KEYS[6] the holders that --break ended: a hash of TOKEN -> a JSON record {by, why, at_ms},
--         which expires once each of them has renewed, or would have.
-- KEYS[7] how long the last holds took: a list of up to hold_durations_kept durations in ms, the
--         latest first, which expires with the fence counter (7 days after the last release).
-- KEYS[8] who waits: a hash of waiter ID -> a JSON record {since_us, kept_ms, host, pid, mode,
--         deadline_ms, note, supersede, hold, by} (holders.lua, "Waiters").
-- ARGV[1] the database: selected here too, so that a failed SELECT on the connection cannot make a
--         script act on another database.
local lock_key, owner_key, fence_key, wake_key, queue_key, broken_key, durations_key,
  waiters_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
if ARGV[1] ~= '0' then
  redis.call('SELECT', ARGV[1])
end

local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local wake_ttl_ms = 10000
-- The fence counter expires this long after the last grant (7 days), so that the locks of one-off
-- jobs and per-branch CI keys leave nothing behind for ever (DESIGN §1). Fences still grow once
-- it has expired: the next one comes from the server's clock, which has moved on by at least as
-- much, unless it was stepped back by more than that.
local fence_keep_ms = 7 * 24 * 3600 * 1000

-- The expiry in ms that a lock value stands for, or nil if the value is not a timestamp. Integers or
-- decimals; below 1e11 they are seconds, from there on milliseconds. Anything before 2001-09-09
-- (1e9 s) or from 1e14 ms on is not a timestamp. Mirrors src/lock/timestamp.cpp.
local function expiry_ms(value)
  local whole, fraction = string.match(value, '^(%d+)%.(%d+)$')
  if not whole then
    whole, fraction = string.match(value, '^(%d+)$'), ''
    if not whole then
      return nil
    end
  end
  whole = tonumber(whole)
  if whole < 1e9 or whole >= 1e14 then
    return nil
  end
  if whole < 1e11 then
    return whole * 1000 + tonumber(string.sub(fraction .. '000', 1, 3))
  end
  return whole
end

-- redis.call, but a WRONGTYPE error (someone else wrote a key of another type where redlockrun keeps
-- one of its own) returns nil and true instead of raising; any other error is raised as it would
-- be without pcall.
local function call_unless_wrongtype(...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply['err'] then
    if not string.find(reply['err'], 'WRONGTYPE', 1, true) then
      redis.call(...)
    end
    return nil, true
  end
  return reply, false
end

-- Reads the lock key: 'missing', 'foreign' (with the key's type) or 'timestamp' (with value and
-- expiry). One GET does for the usual cases; only a key of another type costs a TYPE as well.
local function read_lock()
  local value, wrong_type = call_unless_wrongtype('GET', lock_key)
  if wrong_type then
    return {state = 'foreign', kind = redis.call('TYPE', lock_key)['ok']}
  end
  if not value then
    return {state = 'missing'}
  end
  local expiry = expiry_ms(value)
  if not expiry then
    return {state = 'foreign', kind = 'string'}
  end
  return {state = 'timestamp', value = value, expiry = expiry}
end

-- Writes the lock to expire at `expiry` ms (seconds are rounded up); returns value and expiry.
local function write_lock_at(expiry, unit)
  local value
  if unit == 's' then
    local seconds = math.ceil(expiry / 1000)
    value = string.format('%d', seconds)
    expiry = seconds * 1000
  else
    value = string.format('%d', expiry)
  end
  redis.call('SET', lock_key, value)
  redis.call('PEXPIREAT', lock_key, expiry)
  return value, expiry
end

-- What a grant or renewal writes: the TTL from now, but never before the --min-hold time.
local function lease_end(ttl_ms, hold_until)
  return math.max(now_ms + ttl_ms, hold_until)
end

-- The validity a holder may count on: the TTL at most, even where --min-hold keeps the key
-- longer, so that --no-renew still bounds the command by the TTL.
local function validity(expiry, ttl_ms)
  return math.min(expiry, now_ms + ttl_ms) - now_ms
end

-- The next fence, or nil and the answer that refuses the lock, before anything is written. The
-- next fence is the counter plus one, or the server clock in microseconds if that is larger, so
-- that fences keep growing when the counter is lost (Redis lost its data, or it expired
-- fence_keep_ms after the last grant) or set back (a failover promoted a replica that missed the
-- last increments), as long as the clock does not go back by more than the time between grants.
-- Lua numbers are doubles: from 2^53 on, counting by one repeats
-- values, and a fence that is not larger than the last one would break fencing, so the lock is then
-- refused ({'exhausted', counter}). So it is when the counter holds no number at all (someone else
-- wrote to redlockrun's key): {'unreadable_fence', its type}.
local function next_fence()
  local last_fence, wrong_type = call_unless_wrongtype('GET', fence_key)
  if wrong_type then
    return nil, {'unreadable_fence', redis.call('TYPE', fence_key)['ok']}
  end
  local fence = tonumber(time[1]) * 1000000 + tonumber(time[2])
  if last_fence then
    local last = tonumber(last_fence)
    if not last or last ~= last then -- not a number, or NaN
      return nil, {'unreadable_fence', 'string'}
    elseif last >= 9007199254740991 then -- 2^53 - 1
      return nil, {'exhausted', last_fence}
    elseif last + 1 > fence then
      fence = last + 1
    end
  end
  redis.call('SET', fence_key, string.format('%d', fence), 'PX', fence_keep_ms)
  return string.format('%d', fence)
end

-- How long the last holds of the lock took (DESIGN §14: the median and the longest of the last 20).
local hold_durations_kept = 20

-- Records that a hold granted at `acquired_ms` ended now. Nothing for a record that does not say
-- when it was granted. The durations are for people to read, never part of the lock: any error
-- here (a key of another type where the list should be, an ACL user of an earlier version's rule,
-- without LPUSH) leaves them unrecorded and the release goes on.
local function record_duration(acquired_ms)
  local since = tonumber(acquired_ms)
  if not durations_key or not since or since <= 0 or since > now_ms then
    return
  end
  local pushed = redis.pcall('LPUSH', durations_key, string.format('%d', now_ms - since))
  if type(pushed) == 'number' then
    redis.pcall('LTRIM', durations_key, 0, hold_durations_kept - 1)
    redis.pcall('PEXPIRE', durations_key, fence_keep_ms)
  end
end

-- The median and the longest of the recorded durations, and how many there are: {} if none (or if
-- they cannot be read).
local function duration_summary()
  if not durations_key then
    return {}
  end
  local values = redis.pcall('LRANGE', durations_key, 0, hold_durations_kept - 1)
  local durations = {}
  for _, value in ipairs(type(values) == 'table' and not values['err'] and values or {}) do
    if tonumber(value) then
      durations[#durations + 1] = tonumber(value)
    end
  end
  if #durations == 0 then
    return {}
  end
  table.sort(durations)
  local middle = math.floor((#durations + 1) / 2)
  local median = #durations % 2 == 1 and durations[middle]
                 or math.floor((durations[middle] + durations[middle + 1]) / 2)
  return {string.format('%d', median), string.format('%d', durations[#durations]),
          string.format('%d', #durations)}
end

-- Leaves one wake-up token for the longest-waiting BLPOP; never more than one. A wake-up key of
-- another type (someone else wrote to redlockrun's key) is replaced, as a grant replaces it: a
-- release must not fail over it after deciding to release.
local function push_wake()
  local length, wrong_type = call_unless_wrongtype('RPUSH', wake_key, '1')
  if wrong_type then
    redis.call('DEL', wake_key)
    length = redis.call('RPUSH', wake_key, '1')
  end
  if length > 1 then
    redis.call('LTRIM', wake_key, 0, 0)
  end
  redis.call('PEXPIRE', wake_key, wake_ttl_ms)
end
