-- wake: ARGV[2] waiter id, ARGV[3] mode ('1': exclusive, 'shared', or a semaphore's N), ARGV[4]
-- '1' for an exclusive waiter that was not queued, and blocked on the shared wake-up list. A
-- waiter that gives up passes on what it may have been given: the token of the shared list, or its
-- place in the queue and the wake-up it may have been sent, which go to the waiters that may hold
-- the lock now (admissible(): counted with how the key is held, not with this waiter's own mode: a
-- waiter refused for another mode was woken for a place beside the holders, and the waiters behind
-- it must not sleep until a timeout).
local waiter_id = ARGV[2]
local _, member = place_in(live_queue(), waiter_id)
if ARGV[4] == '1' then
  push_wake()
  if not member then
    return 1
  end
end
leave_queue(member, waiter_id)
local lock = read_lock()
if lock.state == 'timestamp' and lock.expiry > now_ms then
  local held_as = call_unless_wrongtype('HGET', owner_key, 'limit')
  if not held_as then
    return 1 -- held by an exclusive holder or a classic client: its release wakes the queue
  end
  local _, count = live_holders()
  if count > 0 then
    wake_admissible(holding_of(held_as, count))
    return 1
  end
end
wake_admissible({kind = 'free'})
return 1
