-- release: ARGV[2] token.
-- {'released'} | {'lost', reason, host, pid}: nothing is deleted unless the lock is still ours.
local lost = not_ours(ARGV[2])
if lost then
  return lost
end
-- The wake-up token first: should pushing it fail, the script stops before it has deleted
-- anything, and the caller's "could not release" is true.
push_wake()
redis.call('DEL', lock_key, owner_key)
return {'released'}
