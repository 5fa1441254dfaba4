-- restore: write one batch of an activity's orders and buyers' holdings, read from MySQL,
-- into Redis while the activity's stock hash is absent: the rebuild after a loss (the
-- stock hash itself is written last, by warmup, and selling resumes then).
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] orders hash  KEYS[4] buyers hash
-- ARGV[1] keys' expire at (unix s)  ARGV[2] n  ARGV[3] checked, unused
--   (was the request-id keys' ttl)
-- ARGV[4 + 8(i-1)] .. ARGV[11 + 8(i-1)]: order i's order_no, uid, qty, state,
--   expire_at (ms), request_id, created_at (ms), and the request id's field in the buyers
--   hash (stock.ReqField)
-- ARGV[4 + 8n + 2(j-1)], ARGV[5 + 8n + 2(j-1)]: buyer j's holding field in the buyers hash
--   (stock.HeldField) and the quantity the buyer holds (reserved + paid)
-- Each order is written packed (order.lua), cseq and useq 0 (before any seq of the new
-- stock hash), without entry ids (MySQL has the changes already).
-- Returns {0, n, m} written; {-14} the stock hash exists (another rebuild finished and
-- selling resumed: nothing written, so a stale rebuilder can never overwrite live
-- orders); {-11} a bad argument (nothing written: every value is checked first).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {-14}
end
local t = redis.call('TIME')
local nowS = tonumber(t[1])
local exp = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local reqTTL = tonumber(ARGV[3])
if not exp or exp ~= math.floor(exp) or exp <= nowS or exp > nowS + 630720000 then
  return {-11}
end
if not n or n < 0 or n ~= math.floor(n) or not reqTTL or reqTTL < 1 then
  return {-11}
end
local m = (#ARGV - 3 - 8 * n) / 2
if #KEYS ~= 4 or m < 0 or m ~= math.floor(m) then
  return {-11}
end
local states = {reserved = true, paid = true, cancelled = true, expired = true}
local function int(v)
  local x = tonumber(v)
  return x and x == math.floor(x) and x >= 0 and not string.find(v, '[^0-9]')
end
for i = 1, n do
  local a = 4 + 8 * (i - 1)
  if not string.match(ARGV[a], '^%S+$') or not int(ARGV[a + 1]) or not int(ARGV[a + 2]) or
      tonumber(ARGV[a + 2]) < 1 or not states[ARGV[a + 3]] or not int(ARGV[a + 4]) or
      not string.match(ARGV[a + 5], '^%S+$') or not int(ARGV[a + 6]) or ARGV[a + 7] == '' then
    return {-11}
  end
end
local b0 = 4 + 8 * n
for j = 1, m do
  if ARGV[b0 + 2 * j - 2] == '' or not int(ARGV[b0 + 2 * j - 1]) then
    return {-11}
  end
end
local oh, bh, pz = {}, {}, {}
for i = 1, n do
  local a = 4 + 8 * (i - 1)
  local ono, state = ARGV[a], ARGV[a + 3]
  oh[#oh + 1] = ono
  oh[#oh + 1] = packOrder(state, ARGV[a + 1], ARGV[a + 2], ARGV[a + 4], ARGV[a + 6], ARGV[a + 5], '0', '0')
  if state == 'reserved' then -- a pending member of its own (reserve.lua makes one per batch)
    pz[#pz + 1] = ARGV[a + 4]
    pz[#pz + 1] = ono
  end
  -- the request id's field lives as long as the activity's keys (see reserve.lua)
  bh[#bh + 1] = ARGV[a + 7]
  bh[#bh + 1] = ono
end
for j = 1, m do
  bh[#bh + 1] = ARGV[b0 + 2 * j - 2]
  bh[#bh + 1] = ARGV[b0 + 2 * j - 1]
end
if #oh > 0 then
  redis.call('HSET', KEYS[3], unpack(oh))
  redis.call('EXPIREAT', KEYS[3], exp)
end
if #pz > 0 then
  redis.call('ZADD', KEYS[2], unpack(pz))
  redis.call('EXPIREAT', KEYS[2], exp)
end
if #bh > 0 then
  redis.call('HSET', KEYS[4], unpack(bh))
  redis.call('EXPIREAT', KEYS[4], exp)
end
return {0, n, m}
