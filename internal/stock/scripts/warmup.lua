-- warmup: create an activity's stock hash only if it is absent.
-- KEYS[1] stock hash
-- ARGV (stock.warmupArgs, read by the ARG_ names prepended): TOTAL, REMAINING, LOCKED, SOLD,
-- then stock.activityArgs (edit_meta.lua's too): START (unix s), END (unix s), LIMIT per user,
-- PAY_TIMEOUT (s), SKU_ID, EXPIRE_AT (unix s: end + pay timeout + grace), NAME, DRAW_AT (ms,
-- 0: no draw), PRICE the unit price (smallest currency unit, 0..10^9; fixed once the activity
-- starts); then EPOCH (inventory.epoch of this warm-up or rebuild), DRAWN "1": the draw is done
-- (MySQL says so)
-- KEYS[2] epoch claim key (claim_epoch.lua): a stock hash of an epoch below it is not written (-16)
-- Returns {1, remaining} created, {0, remaining} it existed (never overwritten);
--         {-16} a later loss rebuild has claimed a higher epoch (nothing written);
--         {-11} a bad argument (nothing written: every value is checked before the
--         first write, so EXPIREAT can never fail after HSET).
local cur = redis.call('HGET', KEYS[1], 'remaining')
if cur then
  return {0, tonumber(cur)}
end
local t = redis.call('TIME')
local nowS = tonumber(t[1])
local counts = {ARGV[ARG_TOTAL], ARGV[ARG_REMAINING], ARGV[ARG_LOCKED], ARGV[ARG_SOLD], ARGV[ARG_START],
  ARGV[ARG_END], ARGV[ARG_LIMIT], ARGV[ARG_PAY_TIMEOUT], ARGV[ARG_SKU_ID], ARGV[ARG_EXPIRE_AT]}
for i = 1, 10 do
  local v = tonumber(counts[i])
  if not v or v ~= math.floor(v) or v < 0 then
    return {-11}
  end
end
local price = tonumber(ARGV[ARG_PRICE])
if not price or price ~= math.floor(price) or price < 0 or price > 1000000000 then
  return {-11}
end
local e = tonumber(ARGV[ARG_EPOCH])
if not e or e ~= math.floor(e) or e < 0 then
  return {-11}
end
-- the keys must outlive now and stay within Redis's reach (20 years; activities are
-- bounded to 10 years from now at the API)
local exp = tonumber(ARGV[ARG_EXPIRE_AT])
if exp <= nowS or exp > nowS + 630720000 then
  return {-11}
end
if tonumber(ARGV[ARG_REMAINING]) + tonumber(ARGV[ARG_LOCKED]) + tonumber(ARGV[ARG_SOLD]) ~=
  tonumber(ARGV[ARG_TOTAL]) then
  return {-11}
end
if (tonumber(redis.call('GET', KEYS[2]) or '0') or 0) > e then
  return {-16}
end
redis.call('HSET', KEYS[1],
  'total', ARGV[ARG_TOTAL], 'remaining', ARGV[ARG_REMAINING], 'locked', ARGV[ARG_LOCKED], 'sold', ARGV[ARG_SOLD],
  'start', ARGV[ARG_START], 'end', ARGV[ARG_END], 'limit', ARGV[ARG_LIMIT], 'ttl', ARGV[ARG_PAY_TIMEOUT],
  'sku', ARGV[ARG_SKU_ID], 'exp', ARGV[ARG_EXPIRE_AT], 'name', ARGV[ARG_NAME], 'epoch', ARGV[ARG_EPOCH],
  'price', ARGV[ARG_PRICE])
if (tonumber(ARGV[ARG_DRAW_AT]) or 0) > 0 then
  redis.call('HSET', KEYS[1], 'draw_at', ARGV[ARG_DRAW_AT], 'drawn', ARGV[ARG_DRAWN])
end
redis.call('EXPIREAT', KEYS[1], exp)
return {1, tonumber(ARGV[ARG_REMAINING])}
