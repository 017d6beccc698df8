-- wake: ARGV[2] waiter id, ARGV[3] limit. A waiter that gives up passes on what it may have been
-- given: the wake-up token of an exclusive lock, or, for a semaphore, its place in the queue.
local waiter_id, limit = ARGV[2], tonumber(ARGV[3])
if limit == 1 then
  push_wake()
  return 1
end
local _, member = place_in(live_queue(), waiter_id)
leave_queue(member, waiter_id)
local lock = read_lock()
local free = limit
if lock.state == 'timestamp' and lock.expiry > now_ms then
  if tonumber(redis.call('HGET', owner_key, 'limit')) ~= limit then
    return 1 -- held by someone else: its release wakes the queue
  end
  local _, count = live_holders()
  free = limit - count
end
wake_queue(free)
return 1
