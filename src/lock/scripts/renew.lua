-- renew: ARGV[2] token, ARGV[3] ttl in ms, ARGV[4] unit 's' or 'ms', ARGV[5] mode ('1': exclusive,
-- 'shared', or a semaphore's N).
-- {'renewed', value, validity_ms, now_ms} | {'lost', reason, host, pid, now_ms}: now_ms, the
-- server's clock, lets the holder notice a jump of it (lock/server_clock.hpp).
local token, ttl_ms, unit, mode = ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]

if mode ~= '1' then
  local lost, record = not_holder(token)
  if lost then
    lost[5] = now_ms
    return lost
  end
  local holders = live_holders()
  record.expiry_ms = lease_end(ttl_ms, record.hold_until_ms)
  local value = save_holder(token, record, holders, unit)
  return {'renewed', value, validity(record.expiry_ms, ttl_ms), now_ms}
end

local lost, hold_until = not_ours(token)
if lost then
  lost[5] = now_ms
  return lost
end
local value, expiry = write_lock_at(lease_end(ttl_ms, hold_until), unit)
redis.call('HSET', owner_key, 'value', value)
redis.call('PEXPIREAT', owner_key, expiry)
return {'renewed', value, validity(expiry, ttl_ms), now_ms}
