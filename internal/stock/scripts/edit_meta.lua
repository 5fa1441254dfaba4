-- edit_meta: a merchant's edit of an activity before its start (UpdateActivity) rewrites the
-- warmed stock hash's copy of the activity (window, per-user limit, pay timeout, SKU, name,
-- price, the draw's time, the keys' expiry) in the step that checks, by Redis's clock, that
-- the sale has not started: a reservation runs before it (NOT_STARTED, the old start) or
-- after it (the new values), never between. The counters are not touched (stock changes
-- through adjust). A missing hash is left missing (the caller changed MySQL, which the next
-- warm-up reads). Either way the gateways are told (ARGV[11] on the channel ARGV[10]) to
-- drop the window they cached.
-- KEYS[1] stock hash  KEYS[2] the activity's idempotency hash (adjust.lua)  KEYS[3] fence key
-- ARGV[1] start (unix s)  ARGV[2] end (unix s)  ARGV[3] per-user limit  ARGV[4] pay timeout
-- (s)  ARGV[5] sku id  ARGV[6] expire at (unix s: end + pay timeout + grace)  ARGV[7] name
-- ARGV[8] draw_at (ms, 0: no draw)  ARGV[9] the unit price  ARGV[10] the stock-back channel
-- ARGV[11] the message (stock.WindowMessage)
-- Returns {1} rewritten, {-1} not warm (nothing written), {-24} started (nothing written),
-- {-11} a bad argument or a start not after now (nothing written).
for i = 1, 9 do
  if i ~= 7 then
    local v = tonumber(ARGV[i])
    if not v or v ~= math.floor(v) or v < 0 then
      return {-11}
    end
  end
end
local t = redis.call('TIME')
local nowS = tonumber(t[1])
local now = nowS * 1000 + math.floor(tonumber(t[2]) / 1000)
local start, exp = tonumber(ARGV[1]), tonumber(ARGV[6])
if tonumber(ARGV[2]) <= start or tonumber(ARGV[3]) < 1 or tonumber(ARGV[4]) < 1 or
    tonumber(ARGV[9]) > 1000000000 or exp <= nowS or exp > nowS + 630720000 then
  return {-11}
end
local cur = redis.call('HGET', KEYS[1], 'start')
if not cur then
  redis.call('PUBLISH', ARGV[10], ARGV[11])
  return {-1}
end
if now >= tonumber(cur) * 1000 then
  return {-24}
end
if start * 1000 <= now then
  return {-11}
end
redis.call('HSET', KEYS[1], 'start', ARGV[1], 'end', ARGV[2], 'limit', ARGV[3], 'ttl', ARGV[4],
  'sku', ARGV[5], 'exp', ARGV[6], 'name', ARGV[7], 'price', ARGV[9])
if tonumber(ARGV[8]) > 0 then
  redis.call('HSET', KEYS[1], 'draw_at', ARGV[8], 'drawn', '0')
else
  redis.call('HDEL', KEYS[1], 'draw_at', 'drawn')
end
redis.call('EXPIREAT', KEYS[1], exp)
for k = 2, 3 do
  if redis.call('EXISTS', KEYS[k]) == 1 then
    redis.call('EXPIREAT', KEYS[k], exp)
  end
end
redis.call('PUBLISH', ARGV[10], ARGV[11])
return {1}
