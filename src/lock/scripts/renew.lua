-- renew: ARGV[2] token, ARGV[3] ttl in ms, ARGV[4] unit 's' or 'ms'.
-- {'renewed', value, validity_ms} | {'lost', reason, host, pid}
local token, ttl_ms, unit = ARGV[2], tonumber(ARGV[3]), ARGV[4]

local owner = redis.call('HMGET', owner_key, 'token', 'value', 'host', 'pid')
local lock = read_lock()
if owner[1] ~= token or lock.state ~= 'timestamp' or lock.value ~= owner[2]
    or lock.expiry <= now_ms then
  return loss(owner, lock, token)
end
local value, expiry = write_lock(ttl_ms, unit)
redis.call('HSET', owner_key, 'value', value)
redis.call('PEXPIREAT', owner_key, expiry)
return {'renewed', value, expiry - now_ms}
