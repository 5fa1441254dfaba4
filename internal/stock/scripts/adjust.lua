-- adjust: add or withdraw sellable stock. remaining += delta, total += delta.
-- KEYS[1] stock hash  KEYS[2] events stream
-- ARGV[1] activity id  ARGV[2] delta (non-zero integer)  ARGV[3] stock-back channel
-- (the activity id is PUBLISHed there when delta > 0)
-- ARGV[4] the caller's W3C traceparent ('' for none): written as the entry's 'tp'
-- Returns {0, total, remaining, locked, sold, entry_id, entry} (the outbox entry as written:
-- entry.lua); {code} with code < 0.
local delta = tonumber(ARGV[2])
if not delta or delta == 0 or delta ~= math.floor(delta) then
  return {-11}
end
local s = redis.call('HMGET', KEYS[1], 'total', 'remaining', 'locked', 'sold', 'sku', 'epoch')
if not s[1] then
  return {-1}
end
if tonumber(s[2]) + delta < 0 then
  return {-9}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = redis.call('HINCRBY', KEYS[1], 'total', ARGV[2])
local remaining = redis.call('HINCRBY', KEYS[1], 'remaining', ARGV[2])
local e = packEntry({t = 'adjusted', aid = ARGV[1], sku = s[5], d = ARGV[2], at = string.format('%d', now),
  ep = s[6] or '0', tp = ARGV[4]}) -- tp: the caller's trace context (event.FieldTraceParent)
local id = addEntry(KEYS[2], e)
if delta > 0 then
  redis.call('PUBLISH', ARGV[3], ARGV[1])
end
return {0, total, remaining, tonumber(s[3]), tonumber(s[4]), id, e}
