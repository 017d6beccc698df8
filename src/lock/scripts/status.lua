-- status (reads only): {now_ms, type, value, owner value, host, pid, fence, acquired_ms, last fence}
-- The caller decides free / held / foreign from these.
local kind = redis.call('TYPE', lock_key)['ok']
local value = ''
if kind == 'string' then
  value = redis.call('GET', lock_key)
end
local owner = redis.call('HMGET', owner_key, 'value', 'host', 'pid', 'fence', 'acquired_ms')
return {string.format('%d', now_ms), kind, value, owner[1] or '', owner[2] or '', owner[3] or '',
        owner[4] or '', owner[5] or '', redis.call('GET', fence_key) or ''}
