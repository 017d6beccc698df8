-- acquire: ARGV[2] token, ARGV[3] ttl in ms, ARGV[4] unit 's' or 'ms', ARGV[5] host, ARGV[6] pid.
-- {'granted', value, fence, validity_ms} | {'busy', remaining_ms, host, pid, fence} | {'foreign', type}
-- | {'exhausted', last_fence}: the fence counter is too large to count on exactly (nothing written).
-- host, pid and fence of a busy lock are '' when its holder is a client of the classic algorithm.
local token, ttl_ms, unit = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local max_fence = 9007199254740991 -- 2^53 - 1, the largest fence a Lua number holds exactly

local lock = read_lock()
if lock.state == 'foreign' then
  return {'foreign', lock.kind}
end
if lock.state == 'timestamp' and lock.expiry > now_ms then
  local owner = redis.call('HMGET', owner_key, 'token', 'value', 'fence', 'host', 'pid')
  if owner[2] ~= lock.value then
    return {'busy', lock.expiry - now_ms, '', '', ''}
  end
  if owner[1] == token then
    -- Our own earlier call won, and its answer was lost on the way back.
    return {'granted', lock.value, owner[3], lock.expiry - now_ms}
  end
  return {'busy', lock.expiry - now_ms, owner[4], owner[5], owner[3]}
end

-- Missing or expired: take it, in this same script, so no other client can take it in between.
-- Lua numbers are doubles: from 2^53 on, counting by one repeats values. A fence that is not larger
-- than the last one would break fencing, so the lock is refused, before anything is written.
local last_fence = redis.call('GET', fence_key)
local fence
if not last_fence then
  -- A new counter starts from the server clock in microseconds: fences keep growing even if the
  -- counter is lost.
  fence = tonumber(time[1]) * 1000000 + tonumber(time[2])
  redis.call('SET', fence_key, string.format('%d', fence))
else
  local last = tonumber(last_fence)
  if last and last >= max_fence then
    return {'exhausted', last_fence}
  end
  fence = redis.call('INCR', fence_key)
end
fence = string.format('%d', fence)
local value, expiry = write_lock(ttl_ms, unit)
-- The owner record starts afresh, and a token left by an earlier release must not wake the next
-- waiter for nothing.
redis.call('DEL', owner_key, wake_key)
redis.call('HSET', owner_key, 'token', token, 'value', value, 'fence', fence, 'host', ARGV[5],
           'pid', ARGV[6], 'acquired_ms', string.format('%d', now_ms))
redis.call('PEXPIREAT', owner_key, expiry)
return {'granted', value, fence, expiry - now_ms}
