-- renew: ARGV[2] token, ARGV[3] ttl in ms, ARGV[4] unit 's' or 'ms'.
-- {'renewed', value, validity_ms} | {'lost', reason, host, pid}
local token, ttl_ms, unit = ARGV[2], tonumber(ARGV[3]), ARGV[4]

local lost = not_ours(token)
if lost then
  return lost
end
local value, expiry = write_lock(ttl_ms, unit)
redis.call('HSET', owner_key, 'value', value)
redis.call('PEXPIREAT', owner_key, expiry)
return {'renewed', value, expiry - now_ms}
