-- release: ARGV[2] token.
-- {'released'} | {'lost', reason, host, pid}: nothing is deleted unless the lock is still ours.
local lost = not_ours(ARGV[2])
if lost then
  return lost
end
redis.call('DEL', lock_key, owner_key)
push_wake()
return {'released'}
