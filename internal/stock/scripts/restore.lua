-- restore: write one batch of an activity's orders, read from MySQL, into Redis while the
-- activity's stock hash is absent: the rebuild after a loss (restore_holdings, restore_entries
-- and restore_losers write the rest; the stock hash itself is written last, by warmup, and
-- selling resumes then).
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] orders hash  KEYS[4] buyers hash
-- ARGV (stock.restoreArgs, read by the ARG_ names prepended): EXPIRE_AT the keys' (unix s),
-- then from ARG_ORDERS the orders, ORDER_WIDTH values each (stock.restoreOrderArgs): NO (the
-- order's short number, stock.shortNo: what the orders hash, the buyers hash and pending hold), UID,
-- QTY, STATE, EXPIRE_AT_MS, REQUEST_ID, CREATED_MS and REQ_FIELD, the request id's field in
-- the buyers hash (stock.ReqField); order i's ORDER_<NAME> is ARGV[base(i) + ORDER_<NAME>].
-- Each order is written packed (order.lua), cseq and useq 0 (before any seq of the new
-- stock hash), without entry ids (MySQL has the changes already).
-- Returns {0, n} the orders written; {-14} the stock hash exists, {-11} a bad argument
-- (rebuild.lua; nothing written: every value is checked first).
local n, refused = restoreBatch(ARGV[ARG_EXPIRE_AT], ARG_ORDERS, ORDER_WIDTH)
if not n then
  return refused
end
local exp = ARGV[ARG_EXPIRE_AT]
local function base(i)
  return ARG_ORDERS - 1 + ORDER_WIDTH * (i - 1)
end
local states = {reserved = true, paid = true, cancelled = true, expired = true}
local function int(v)
  local x = tonumber(v)
  return x and x == math.floor(x) and x >= 0 and not string.find(v, '[^0-9]')
end
for i = 1, n do
  local a = base(i)
  if not string.match(ARGV[a + ORDER_NO], '^%S+$') or not int(ARGV[a + ORDER_UID]) or
      not int(ARGV[a + ORDER_QTY]) or tonumber(ARGV[a + ORDER_QTY]) < 1 or not states[ARGV[a + ORDER_STATE]] or
      not int(ARGV[a + ORDER_EXPIRE_AT_MS]) or not string.match(ARGV[a + ORDER_REQUEST_ID], '^%S+$') or
      not int(ARGV[a + ORDER_CREATED_MS]) or ARGV[a + ORDER_REQ_FIELD] == '' then
    return {-11}
  end
end
local oh, bh, pz = {}, {}, {}
for i = 1, n do
  local a = base(i)
  local ono, state = ARGV[a + ORDER_NO], ARGV[a + ORDER_STATE]
  oh[#oh + 1] = ono
  oh[#oh + 1] = packOrder(state, ARGV[a + ORDER_UID], ARGV[a + ORDER_QTY], ARGV[a + ORDER_EXPIRE_AT_MS],
    ARGV[a + ORDER_CREATED_MS], ARGV[a + ORDER_REQUEST_ID], '0', '0')
  if state == 'reserved' then -- a pending member of its own (reserve.lua makes one per batch)
    pz[#pz + 1] = ARGV[a + ORDER_EXPIRE_AT_MS]
    pz[#pz + 1] = ono
  end
  -- the request id's field lives as long as the activity's keys (see reserve.lua)
  bh[#bh + 1] = ARGV[a + ORDER_REQ_FIELD]
  bh[#bh + 1] = ono
end
if n > 0 then
  redis.call('HSET', KEYS[3], unpack(oh))
  redis.call('EXPIREAT', KEYS[3], exp)
  redis.call('HSET', KEYS[4], unpack(bh))
  redis.call('EXPIREAT', KEYS[4], exp)
end
if #pz > 0 then
  redis.call('ZADD', KEYS[2], unpack(pz))
  redis.call('EXPIREAT', KEYS[2], exp)
end
return {0, n}
