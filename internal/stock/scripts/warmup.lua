-- warmup: create an activity's stock hash only if it is absent.
-- KEYS[1] stock hash
-- ARGV[1] total  ARGV[2] remaining  ARGV[3] locked  ARGV[4] sold
-- ARGV[5] start (unix s)  ARGV[6] end (unix s)  ARGV[7] per-user limit
-- ARGV[8] pay timeout (s)  ARGV[9] sku id  ARGV[10] expire at (unix s: end + pay timeout
-- + grace)  ARGV[11] name  ARGV[12] epoch (inventory.epoch of this warm-up or rebuild)
-- ARGV[13] draw_at (ms, 0: no draw)  ARGV[14] "1": the draw is done (MySQL says so)
-- ARGV[15] the unit price (smallest currency unit, 0..10^9; fixed once the activity starts)
-- KEYS[2] fence key (fence.lua): a stock hash of an epoch below it is not written (-16)
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
for i = 1, 10 do
  local v = tonumber(ARGV[i])
  if not v or v ~= math.floor(v) or v < 0 then
    return {-11}
  end
end
local price = tonumber(ARGV[15])
if not price or price ~= math.floor(price) or price < 0 or price > 1000000000 then
  return {-11}
end
local e = tonumber(ARGV[12])
if not e or e ~= math.floor(e) or e < 0 then
  return {-11}
end
-- the keys must outlive now and stay within Redis's reach (20 years; activities are
-- bounded to 10 years from now at the API)
local exp = tonumber(ARGV[10])
if exp <= nowS or exp > nowS + 630720000 then
  return {-11}
end
if tonumber(ARGV[2]) + tonumber(ARGV[3]) + tonumber(ARGV[4]) ~= tonumber(ARGV[1]) then
  return {-11}
end
if (tonumber(redis.call('GET', KEYS[2]) or '0') or 0) > e then
  return {-16}
end
redis.call('HSET', KEYS[1],
  'total', ARGV[1], 'remaining', ARGV[2], 'locked', ARGV[3], 'sold', ARGV[4],
  'start', ARGV[5], 'end', ARGV[6], 'limit', ARGV[7], 'ttl', ARGV[8],
  'sku', ARGV[9], 'exp', ARGV[10], 'name', ARGV[11], 'epoch', ARGV[12], 'price', ARGV[15])
if (tonumber(ARGV[13]) or 0) > 0 then
  redis.call('HSET', KEYS[1], 'draw_at', ARGV[13], 'drawn', ARGV[14])
end
redis.call('EXPIREAT', KEYS[1], exp)
return {1, tonumber(ARGV[2])}
