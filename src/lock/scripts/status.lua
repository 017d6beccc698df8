-- status (reads only): {now_ms, type, value, owner value, last fence, limit, took median_ms,
-- took longest_ms, took count, n, then for each of the
-- n holders: host, pid, fence, acquired_ms, expires_ms, hold_until_ms, ended_ms, renew_ms, note,
-- hold, slot; then w, and for each of the w waiters in the order they will be served: host, pid,
-- mode ('1', 'shared' or N), since_ms, deadline_ms, note, supersede, hold}.
-- renew_ms is how often the holder renews: '0' for --no-renew, '' where the record does not say;
-- note is the holder's --note as it was written, '' for none; hold is '1' for a hold (--hold),
-- whose pid is its owner's, '' for a run; slot is a semaphore holder's (REDLOCKRUN_SLOT), ''
-- for none.
-- type is the lock key's Redis type and value its content if it is a string; the caller decides
-- free / held / foreign from them, and whether the holders are the key's (owner value = value) or
-- a client of the classic algorithm wrote the key. '' stands for what is not there. Tokens are
-- never returned. The owner record has one of two layouts:
-- - exclusive: the holder's own fields (token, value, fence, host, pid, acquired_ms, and with
--   renew_ms, with --min-hold hold_until_ms and, once the command ended, ended_ms, with --note
--   note); it expires with the key.
-- - semaphore (--limit): limit, value, and one field 'holder:<token>' per holder holding a cjson
--   object; a record whose expiry_ms has passed is a holder that crashed, not a holder.
local kind = redis.call('TYPE', lock_key)['ok']
local value = ''
if kind == 'string' then
  value = redis.call('GET', lock_key)
end

-- Keys of another type where redlockrun's own should be are read as missing: someone else wrote
-- them, and a status is still worth giving.
local function read_or_nothing(reply)
  if type(reply) == 'table' and reply['err'] then
    return nil
  end
  return reply
end
local last_fence = read_or_nothing(redis.pcall('GET', fence_key)) or ''
local fields = read_or_nothing(redis.pcall('HGETALL', owner_key)) or {}
local owner = {}
for i = 1, #fields, 2 do
  owner[fields[i]] = fields[i + 1]
end

-- A time in ms as text: '' for none (missing, not a number, or 0, which a semaphore record writes
-- for none).
local function time_text(time)
  time = tonumber(time)
  if not time or time <= 0 then
    return ''
  end
  return string.format('%d', time)
end

-- A renewal period in ms as text: '0' for a holder that does not renew, '' for a record that does
-- not say.
local function renew_text(period)
  period = tonumber(period)
  if not period or period < 0 or period >= 1e15 then
    return ''
  end
  return string.format('%d', period)
end

-- A field of a semaphore's holder record as text. A number is written in full only if it is a whole
-- number below 2^53, which a double holds exactly; any other (a record written by another program:
-- 1.5, -3, 1e400, which cjson reads as infinity) as the record spells it, so that it is shown as
-- it is rather than as what '%d' makes of it.
local function text_of(field, name, record)
  if type(field) == 'string' then
    return field
  end
  if type(field) == 'number' then
    if field >= 0 and field < 9007199254740992 and field == math.floor(field) then
      return string.format('%d', field)
    end
    return string.match(record, '"' .. name .. '"%s*:%s*(-?[%d.eE+-]+)')
      or string.format('%.17g', field)
  end
  return ''
end

local took = duration_summary()
local answer = {string.format('%d', now_ms), kind, value, owner['value'] or '', last_fence,
                owner['limit'] or '', took[1] or '', took[2] or '', took[3] or ''}
local holders = {}
if owner['limit'] then
  for name, record in pairs(owner) do
    if string.sub(name, 1, 7) == 'holder:' then
      local ok, holder = pcall(cjson.decode, record)
      if ok and type(holder) == 'table' and tonumber(holder['expiry_ms'])
          and tonumber(holder['expiry_ms']) > now_ms then
        table.insert(holders, {text_of(holder['host'], 'host', record),
                               text_of(holder['pid'], 'pid', record),
                               text_of(holder['fence'], 'fence', record),
                               time_text(holder['acquired_ms']),
                               time_text(holder['expiry_ms']), time_text(holder['hold_until_ms']),
                               time_text(holder['ended_ms']),
                               renew_text(holder['renew_ms']),
                               type(holder['note']) == 'string' and holder['note'] or '',
                               holder['hold'] == 1 and '1' or '',
                               text_of(holder['slot'], 'slot', record)})
      end
    end
  end
elseif owner['value'] then
  table.insert(holders, {owner['host'] or '', owner['pid'] or '', owner['fence'] or '',
                         time_text(owner['acquired_ms']), time_text(expiry_ms(owner['value'])),
                         time_text(owner['hold_until_ms']), time_text(owner['ended_ms']),
                         renew_text(owner['renew_ms']), owner['note'] or '',
                         owner['hold'] == '1' and '1' or '', ''})
end
table.insert(answer, #holders)
for _, holder in ipairs(holders) do
  for _, field in ipairs(holder) do
    table.insert(answer, field)
  end
end

-- The waiters, in the order they will be served (waiting_line(), read without writing): the live
-- members of the queue, with their live records; a member without one is a waiter of an earlier
-- version, whose mode its ID tells.
local entries = read_or_nothing(queue_key and redis.pcall('ZRANGE', queue_key, 0, -1, 'WITHSCORES'))
                or {}
local queue = {}
for i = 1, #entries, 2 do
  if tonumber(entries[i + 1]) > now_ms then
    queue[#queue + 1] = entries[i]
  end
end
table.sort(queue)
local records = read_or_nothing(waiters_key and redis.pcall('HGETALL', waiters_key)) or {}
local waiters = {}
for i = 1, #records, 2 do
  local ok, record = pcall(cjson.decode, records[i + 1])
  if ok and type(record) == 'table' and tonumber(record.kept_ms)
      and tonumber(record.kept_ms) > now_ms and tonumber(record.since_us) then
    waiters[records[i]] = record
  end
end
local line = waiting_line(waiters, queue)
table.insert(answer, #line)
for _, waiter in ipairs(line) do
  local record, mode, n = waiter.record, mode_of(waiter.id)
  local since = tonumber(record.since_us)
  table.insert(answer, type(record.host) == 'string' and record.host or '')
  table.insert(answer, type(record.pid) == 'string' and record.pid or '')
  table.insert(answer, type(record.mode) == 'string' and record.mode
                       or (mode == 'x' and '1' or (mode == 's' and 'shared' or tostring(n or ''))))
  table.insert(answer, since and string.format('%d', math.floor(since / 1000)) or '')
  table.insert(answer, time_text(record.deadline_ms))
  table.insert(answer, type(record.note) == 'string' and record.note or '')
  table.insert(answer, record.supersede == 1 and '1' or '')
  table.insert(answer, record.hold == 1 and '1' or '')
end
return answer
