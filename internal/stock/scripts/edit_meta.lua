-- edit_meta: a merchant's edit of an activity before its start (UpdateActivity) rewrites the
-- warmed stock hash's copy of the activity (window, per-user limit, pay timeout, SKU, name,
-- price, the draw's time, the keys' expiry) in the step that checks, by Redis's clock, that
-- the sale has not started: a reservation runs before it (NOT_STARTED, the old start) or
-- after it (the new values), never between. The counters are not touched (stock changes
-- through adjust). A missing hash is left missing (the caller changed MySQL, which the next
-- warm-up reads). Either way the gateways are told (MESSAGE on the channel STOCK_BACK) to
-- drop the window they cached.
-- KEYS[1] stock hash  KEYS[2] the activity's idempotency hash (adjust.lua)  KEYS[3] epoch claim key
-- ARGV (stock.editMetaArgs, read by the ARG_ names prepended): stock.activityArgs (warmup.lua's
-- too): START (unix s), END (unix s),
-- LIMIT per user, PAY_TIMEOUT (s), SKU_ID, EXPIRE_AT (unix s: end + pay timeout + grace), NAME,
-- DRAW_AT (ms, 0: no draw), PRICE the unit price, STOCK_BACK the stock-back channel, MESSAGE
-- (stock.WindowMessage)
-- Returns {1} rewritten, {-1} not warm (nothing written), {-24} started (nothing written),
-- {-11} a bad argument or a start not after now (nothing written).
local counts = {ARGV[ARG_START], ARGV[ARG_END], ARGV[ARG_LIMIT], ARGV[ARG_PAY_TIMEOUT], ARGV[ARG_SKU_ID],
  ARGV[ARG_EXPIRE_AT], ARGV[ARG_DRAW_AT], ARGV[ARG_PRICE]}
for i = 1, 8 do
  local v = tonumber(counts[i])
  if not v or v ~= math.floor(v) or v < 0 then
    return {-11}
  end
end
local t = redis.call('TIME')
local nowS = tonumber(t[1])
local now = nowS * 1000 + math.floor(tonumber(t[2]) / 1000)
local start, exp = tonumber(ARGV[ARG_START]), tonumber(ARGV[ARG_EXPIRE_AT])
if tonumber(ARGV[ARG_END]) <= start or tonumber(ARGV[ARG_LIMIT]) < 1 or tonumber(ARGV[ARG_PAY_TIMEOUT]) < 1 or
    tonumber(ARGV[ARG_PRICE]) > 1000000000 or exp <= nowS or exp > nowS + 630720000 then
  return {-11}
end
local cur = redis.call('HGET', KEYS[1], 'start')
if not cur then
  redis.call('PUBLISH', ARGV[ARG_STOCK_BACK], ARGV[ARG_MESSAGE])
  return {-1}
end
if now >= tonumber(cur) * 1000 then
  return {-24}
end
if start * 1000 <= now then
  return {-11}
end
redis.call('HSET', KEYS[1], 'start', ARGV[ARG_START], 'end', ARGV[ARG_END], 'limit', ARGV[ARG_LIMIT],
  'ttl', ARGV[ARG_PAY_TIMEOUT], 'sku', ARGV[ARG_SKU_ID], 'exp', ARGV[ARG_EXPIRE_AT], 'name', ARGV[ARG_NAME],
  'price', ARGV[ARG_PRICE])
if tonumber(ARGV[ARG_DRAW_AT]) > 0 then
  redis.call('HSET', KEYS[1], 'draw_at', ARGV[ARG_DRAW_AT], 'drawn', '0')
else
  redis.call('HDEL', KEYS[1], 'draw_at', 'drawn')
end
redis.call('EXPIREAT', KEYS[1], exp)
for k = 2, 3 do
  if redis.call('EXISTS', KEYS[k]) == 1 then
    redis.call('EXPIREAT', KEYS[k], exp)
  end
end
redis.call('PUBLISH', ARGV[ARG_STOCK_BACK], ARGV[ARG_MESSAGE])
return {1}
