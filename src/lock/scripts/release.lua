-- release: ARGV[2] token, ARGV[3] unit 's' or 'ms', ARGV[4] mode ('1': exclusive, 'shared', or a
-- semaphore's N), ARGV[5] '1' if the command ran (--min-hold applies), '0' for a grant that was
-- never used.
-- {'released'} | {'released', 'kept', remaining_ms}: --min-hold keeps the lock until then |
-- {'lost', reason, host, pid}: nothing is deleted unless the lock is still ours. A release that is
-- ours, of a grant whose command ran, records how long the lock was held (record_duration()),
-- whether --min-hold keeps it or not.
local token, unit, mode, command_ran = ARGV[2], ARGV[3], ARGV[4], ARGV[5] == '1'

if mode ~= '1' then
  local lost, record = not_holder(token)
  if lost then
    return lost
  end
  local holders, count = live_holders()
  if command_ran then
    record_duration(record.acquired_ms)
  end
  if command_ran and record.hold_until_ms > now_ms then
    -- Released early: the slot stays taken until the --min-hold time, and wakes no one.
    record.ended_ms = now_ms
    record.expiry_ms = record.hold_until_ms
    save_holder(token, record, holders, unit)
    return {'released', 'kept', record.hold_until_ms - now_ms}
  end
  redis.call('HDEL', owner_key, holder_prefix .. token)
  holders[token] = nil
  count = count - 1
  if count == 0 then
    push_wake() -- for the exclusive waiters, which block on the shared list too
    redis.call('DEL', lock_key, owner_key)
    wake_admissible({kind = 'free'})
  else
    write_semaphore(holders, unit)
    wake_admissible(holding_of(mode, count))
  end
  return {'released'}
end

local lost, hold_until = not_ours(token)
if lost then
  return lost
end
if command_ran then
  record_duration(redis.call('HGET', owner_key, 'acquired_ms'))
end
if command_ran and hold_until > now_ms then
  -- Released early: KEY and the owner record now expire at the --min-hold time, and no one is
  -- woken before then.
  local value, expiry = write_lock_at(hold_until, unit)
  redis.call('HSET', owner_key, 'value', value, 'ended_ms', string.format('%d', now_ms))
  redis.call('PEXPIREAT', owner_key, expiry)
  return {'released', 'kept', expiry - now_ms}
end
-- The wake-up token first: should pushing it fail, the script stops before it has deleted
-- anything, and the caller's "could not release" is true.
push_wake() -- for the exclusive waiters, which block on the shared list too
wake_admissible({kind = 'free'}) -- the first waiter, or the shared ones at the queue's head
redis.call('DEL', lock_key, owner_key)
return {'released'}
