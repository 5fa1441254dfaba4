-- adjust: add or withdraw sellable stock. remaining += delta, total += delta.
-- KEYS[1] stock hash  KEYS[2] events stream  KEYS[3] the activity's idempotency hash
-- ARGV (stock.adjustArgs, read by the ARG_ names prepended): ACTIVITY_ID, DELTA (non-zero
-- integer), STOCK_BACK the stock-back channel (the activity id is PUBLISHed there when
-- delta > 0), TRACEPARENT the caller's W3C traceparent ('' for none): written as the entry's
-- 'tp', IDEMPOTENCY_KEY the merchant's Idempotency-Key ('mid:key'; '' for none), FINGERPRINT
-- the request's: with a key, the applied result is recorded in KEYS[3] as
-- 'fp total remaining locked sold entry_id' in the same call
-- Returns {0, total, remaining, locked, sold, entry_id, entry} (the outbox entry as written:
-- entry.lua); {1, total, remaining, locked, sold, unsent} the key's first result again, nothing
-- applied (unsent: its entry if still in the outbox, unsent.lua); {code} with code < 0 (-23: the
-- key was used with another fingerprint).
local delta = tonumber(ARGV[ARG_DELTA])
if not delta or delta == 0 or delta ~= math.floor(delta) then
  return {-11}
end
local s = redis.call('HMGET', KEYS[1], 'total', 'remaining', 'locked', 'sold', 'sku', 'epoch', 'exp')
if not s[1] then
  return {-1}
end
if ARGV[ARG_IDEMPOTENCY_KEY] ~= '' then
  local rec = redis.call('HGET', KEYS[3], ARGV[ARG_IDEMPOTENCY_KEY])
  if rec then
    local f = {}
    for w in string.gmatch(rec, '%S+') do
      f[#f + 1] = w
    end
    if f[1] ~= ARGV[ARG_FINGERPRINT] then
      return {-23}
    end
    return {1, tonumber(f[2]), tonumber(f[3]), tonumber(f[4]), tonumber(f[5]), unsent(KEYS[2], f[6])}
  end
end
if tonumber(s[2]) + delta < 0 then
  return {-9}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = redis.call('HINCRBY', KEYS[1], 'total', ARGV[ARG_DELTA])
local remaining = redis.call('HINCRBY', KEYS[1], 'remaining', ARGV[ARG_DELTA])
local e = packEntry({t = 'adjusted', aid = ARGV[ARG_ACTIVITY_ID], sku = s[5], d = ARGV[ARG_DELTA],
  at = string.format('%d', now), ep = s[6] or '0',
  tp = ARGV[ARG_TRACEPARENT]}) -- tp: the caller's trace context (event.FieldTraceParent)
local id = addEntry(KEYS[2], e)
if ARGV[ARG_IDEMPOTENCY_KEY] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[ARG_IDEMPOTENCY_KEY],
    string.format('%s %d %d %s %s %s', ARGV[ARG_FINGERPRINT], total, remaining, s[3], s[4], id))
  if s[7] then
    redis.call('EXPIREAT', KEYS[3], s[7])
  end
end
if delta > 0 then
  redis.call('PUBLISH', ARGV[ARG_STOCK_BACK], ARGV[ARG_ACTIVITY_ID])
end
return {0, total, remaining, tonumber(s[3]), tonumber(s[4]), id, e}
