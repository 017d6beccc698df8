-- break_lock: ARGV[2] who breaks it ('USER@HOST pid PID'), ARGV[3] why ('' when not said).
-- Ends every holder's claim (--break, DESIGN §12): KEY and the owner record are deleted; each
-- redlockrun holder's token is kept in KEYS[6] with who broke it and why, for its next renewal to
-- say so; the fence counter moves past every fence granted; the waiters are woken as a release
-- wakes them. A key that is not a timestamp lock is left alone.
-- {'broken', n, then for each of the n holders: host, pid, fence, note} (host, pid, fence ''
-- for a client of the classic algorithm) | {'foreign', type}
local by, why = ARGV[2], ARGV[3]

local lock = read_lock()
if lock.state == 'foreign' then
  return {'foreign', lock.kind}
end
if lock.state ~= 'timestamp' or lock.expiry <= now_ms then
  return {'broken', 0}
end

local broken = {}
local tokens = {}
local latest = lock.expiry
local fields = call_unless_wrongtype('HGETALL', owner_key) or {}
local owner = {}
for i = 1, #fields, 2 do
  owner[fields[i]] = fields[i + 1]
end
if owner['limit'] and owner['value'] == lock.value then
  local holders = live_holders()
  for token, record in pairs(holders) do
    table.insert(broken, {tostring(record.host or ''), tostring(record.pid or ''),
                          tostring(record.fence or ''), tostring(record.note or '')})
    tokens[#tokens + 1] = token
    latest = math.max(latest, tonumber(record.expiry_ms) or 0)
  end
elseif owner['token'] and owner['value'] == lock.value then
  table.insert(broken, {owner['host'] or '', owner['pid'] or '', owner['fence'] or '',
                        owner['note'] or ''})
  tokens[#tokens + 1] = owner['token']
else
  table.insert(broken, {'', '', '', ''}) -- a client of the classic algorithm
end

if #tokens > 0 then
  local record = cjson.encode({by = by, why = why, at_ms = now_ms})
  -- A key of another type where the records go was written by someone else: it is replaced.
  local kind = redis.call('TYPE', broken_key)['ok']
  if kind ~= 'none' and kind ~= 'hash' then
    redis.call('DEL', broken_key)
  end
  for _, token in ipairs(tokens) do
    redis.call('HSET', broken_key, token, record)
  end
  -- Each holder renews (or finds its validity gone) before its expiry; a minute more covers a
  -- holder paused past it, which then learns of the break rather than of a plain expiry.
  redis.call('PEXPIRE', broken_key, math.max(latest - now_ms, 0) + 60000)
end
next_fence() -- past every fence granted: a fenced resource refuses the broken holders' writes
push_wake()
wake_admissible({kind = 'free'})
redis.call('DEL', lock_key, owner_key)

local answer = {'broken', #broken}
for _, holder in ipairs(broken) do
  for _, field in ipairs(holder) do
    table.insert(answer, field)
  end
end
return answer
