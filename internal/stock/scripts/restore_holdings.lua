-- restore_holdings: write one batch of an activity's buyers' holdings (what each holds,
-- reserved + paid, summed from MySQL's orders) into the buyers hash while the stock hash is
-- absent: part of the rebuild after a loss (restore.lua).
-- KEYS[1] stock hash  KEYS[2] buyers hash
-- ARGV (stock.restoreHoldingsArgs, read by the ARG_ names prepended): EXPIRE_AT the keys'
-- (unix s), then from ARG_HOLDINGS the holdings, HOLDING_WIDTH values each
-- (stock.restoreHoldingArgs): HELD_FIELD the buyer's holding's field in the buyers hash
-- (stock.HeldField) and QTY; holding i's HOLDING_<NAME> is
-- ARGV[ARG_HOLDINGS - 1 + HOLDING_WIDTH * (i - 1) + HOLDING_<NAME>].
-- Returns {0, n} the holdings written; {-14} the stock hash exists, {-11} a bad argument
-- (rebuild.lua; nothing written: every value is checked first).
local n, refused = restoreBatch(ARGV[ARG_EXPIRE_AT], ARG_HOLDINGS, HOLDING_WIDTH)
if not n then
  return refused
end
local bh = {}
for i = 1, n do
  local a = ARG_HOLDINGS - 1 + HOLDING_WIDTH * (i - 1)
  local f, q = ARGV[a + HOLDING_HELD_FIELD], ARGV[a + HOLDING_QTY]
  if f == '' or string.find(q, '[^0-9]') or q == '' then
    return {-11}
  end
  bh[#bh + 1] = f
  bh[#bh + 1] = q
end
if n > 0 then
  redis.call('HSET', KEYS[2], unpack(bh))
  redis.call('EXPIREAT', KEYS[2], ARGV[ARG_EXPIRE_AT])
end
return {0, n}
