-- restore: write one batch of an activity's orders and buyers' holdings, read from MySQL,
-- into Redis while the activity's stock hash is absent: the rebuild after a loss (the
-- stock hash itself is written last, by warmup, and selling resumes then).
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] orders zset
-- KEYS[2 + 2i], KEYS[3 + 2i]: order hash and buyer hash of order i (i = 1..n)
-- KEYS[3 + 2n + j]: buyer hash of buyer j (j = 1..m)
-- ARGV[1] keys' expire at (unix s)  ARGV[2] n  ARGV[3] checked, unused
--   (was the request-id keys' ttl)
-- ARGV[4 + 8(i-1)] .. ARGV[11 + 8(i-1)]: order i's order_no, uid, qty, state,
--   expire_at (ms), request_id, created_at (ms), and the request id's field in the buyer
--   hash (stock.ReqField)
-- ARGV[4 + 8n + (j-1)]: the quantity buyer j holds (reserved + paid): the buyer hash's 'held'
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
local m = #KEYS - 3 - 2 * n
if m < 0 or #ARGV ~= 3 + 8 * n + m then
  return {-11}
end
local states = {reserved = true, paid = true, cancelled = true, expired = true}
local function int(v)
  local x = tonumber(v)
  return x and x == math.floor(x) and x >= 0
end
for i = 1, n do
  local a = 4 + 8 * (i - 1)
  if ARGV[a] == '' or not int(ARGV[a + 1]) or not int(ARGV[a + 2]) or tonumber(ARGV[a + 2]) < 1 or
      not states[ARGV[a + 3]] or not int(ARGV[a + 4]) or not int(ARGV[a + 6]) or ARGV[a + 7] == '' then
    return {-11}
  end
end
for j = 1, m do
  if not int(ARGV[3 + 8 * n + j]) then
    return {-11}
  end
end
for i = 1, n do
  local a = 4 + 8 * (i - 1)
  local okey, ukey = KEYS[2 + 2 * i], KEYS[3 + 2 * i]
  local ono, state = ARGV[a], ARGV[a + 3]
  redis.call('DEL', okey)
  redis.call('HSET', okey, 'uid', ARGV[a + 1], 'qty', ARGV[a + 2], 'state', state,
    'expire_at', ARGV[a + 4], 'request_id', ARGV[a + 5], 'created_at', ARGV[a + 6])
  redis.call('EXPIREAT', okey, exp)
  if state == 'reserved' then
    redis.call('ZADD', KEYS[2], ARGV[a + 4], ono)
  else
    redis.call('ZREM', KEYS[2], ono)
  end
  redis.call('ZADD', KEYS[3], ARGV[a + 6], ono)
  -- the request id's field lives as long as the activity's keys (see reserve.lua)
  redis.call('HSET', ukey, ARGV[a + 7], ono)
  redis.call('EXPIREAT', ukey, exp)
end
if n > 0 then
  redis.call('EXPIREAT', KEYS[2], exp)
  redis.call('EXPIREAT', KEYS[3], exp)
end
for j = 1, m do
  local ukey = KEYS[3 + 2 * n + j]
  redis.call('HSET', ukey, 'held', ARGV[3 + 8 * n + j])
  redis.call('EXPIREAT', ukey, exp)
end
return {0, n, m}
