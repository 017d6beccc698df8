-- redlockrun: prelude shared by every script; each script file is appended to it.
-- KEYS[1] the lock key: a bare decimal Unix time at which the lock expires
-- KEYS[2] owner hash   KEYS[3] fence counter   KEYS[4] wake-up list
-- ARGV[1] the database: selected here too, so that a failed SELECT on the connection cannot make a
--         script act on another database.
local lock_key, owner_key, fence_key, wake_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if ARGV[1] ~= '0' then
  redis.call('SELECT', ARGV[1])
end

local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local wake_ttl_ms = 10000

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

-- Reads the lock key: 'missing', 'foreign' (with the key's type) or 'timestamp' (with value and
-- expiry). One GET does for the usual cases; only a key of another type costs a TYPE as well.
local function read_lock()
  local value = redis.pcall('GET', lock_key)
  if type(value) == 'table' then
    if not string.find(value['err'] or '', 'WRONGTYPE', 1, true) then
      redis.call('GET', lock_key) -- any other error: raised as it would be without pcall
    end
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

-- Writes the lock with a fresh expiry (seconds are rounded up) and returns value and expiry.
local function write_lock(ttl_ms, unit)
  local expiry = now_ms + ttl_ms
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

-- Leaves one wake-up token for the longest-waiting BLPOP; never more than one. A wake-up key of
-- another type (someone else wrote to redlockrun's key) is replaced, as a grant replaces it: a
-- release must not fail over it after deciding to release.
local function push_wake()
  local length = redis.pcall('RPUSH', wake_key, '1')
  if type(length) == 'table' then
    if not string.find(length['err'] or '', 'WRONGTYPE', 1, true) then
      redis.call('RPUSH', wake_key, '1') -- any other error: raised as it would be without pcall
    end
    redis.call('DEL', wake_key)
    length = redis.call('RPUSH', wake_key, '1')
  end
  if length > 1 then
    redis.call('LTRIM', wake_key, 0, 0)
  end
  redis.call('PEXPIRE', wake_key, wake_ttl_ms)
end

-- nil if the lock is ours (the owner record has our token and the key still holds the value we
-- wrote) and unexpired; otherwise the answer {'lost', reason, host, pid} saying why not.
local function not_ours(token)
  local owner = redis.call('HMGET', owner_key, 'token', 'value', 'host', 'pid')
  local lock = read_lock()
  if owner[1] == token and lock.state == 'timestamp' and lock.value == owner[2]
      and lock.expiry > now_ms then
    return nil
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

