-- wake: ARGV[2] waiter id, ARGV[3] mode ('1': exclusive, 'shared', or a semaphore's N), ARGV[4]
-- '1' for a waiter that took the shared wake-up list's token and did not use it. A waiter that
-- gives up, or takes a wake-up it will not use, leaves the queue and the waiters' record, and
-- passes on what it may have been given: that token, its place and the wake-up it may have been
-- sent, which go to the waiters that may hold the lock now (pass_on()).
local waiter_id = ARGV[2]
local _, member = place_in(live_queue(), waiter_id)
drop_waiter(waiter_id)
if ARGV[4] == '1' then
  push_wake()
end
pass_on(member, waiter_id)
return 1
