-- wake: ARGV[2] waiter id, ARGV[3] limit. A waiter that gives up passes on what it may have been
-- given: the wake-up token of an exclusive lock, or, for a semaphore, its place in the queue and
-- the wake-up a free slot may have sent it. The slots are counted with the limit the key is held
-- with, not the waiter's own: a waiter refused for another limit was woken for a slot of the
-- semaphore that holds the key, and the waiters behind it must not sleep until a timeout.
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
  local limit_field = call_unless_wrongtype('HGET', owner_key, 'limit')
  local held_limit = tonumber(limit_field)
  if not held_limit then
    return 1 -- held by an exclusive holder or a classic client: its release wakes the queue
  end
  local _, count = live_holders()
  free = held_limit - count
end
wake_queue(free)
return 1
