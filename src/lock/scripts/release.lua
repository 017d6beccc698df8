-- release: ARGV[2] token.
-- {'released'} | {'lost', reason, host, pid}: nothing is deleted unless the lock is still ours.
local token = ARGV[2]

local owner = redis.call('HMGET', owner_key, 'token', 'value', 'host', 'pid')
local lock = read_lock()
if owner[1] ~= token or lock.state ~= 'timestamp' or lock.value ~= owner[2]
    or lock.expiry <= now_ms then
  return loss(owner, lock, token)
end
redis.call('DEL', lock_key, owner_key)
push_wake()
return {'released'}
