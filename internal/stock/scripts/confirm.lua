-- confirm (pay): reserved -> paid. locked -= qty, sold += qty. The buyer's own pay and the
-- payment provider's notification both pay here: the same script, the same outbox entry.
-- KEYS[1] stock hash  KEYS[2] orders hash  KEYS[3] events stream  KEYS[4] trades hash
-- (the order's short number -> trade_no, Keys.Trades)
-- ARGV (stock.confirmArgs, read by the ARG_ names prepended): ACTIVITY_ID, ORDER_NO (the events'),
-- SHORT its name in the orders hash and the trades hash (stock.shortNo), UID of the
-- caller (>= 1; the order must be theirs: there is no "any owner"), or '0' for the payment
-- provider (TRADE_NO set), TRACEPARENT the caller's W3C traceparent ('' for none): written as the
-- entry's 'tp', TRADE_NO the provider's trade_no ('' for the buyer's own pay): kept in the trades
-- hash and written as the entry's 'tn', AMOUNT the notification's amount, PRICE the unit price
-- Returns {0, 'paid', entry_id, entry} paid now (the outbox entry as written: entry.lua);
-- {0, 'paid', '', unsent} already paid (for the provider: by this trade_no), with the order's
-- entries still in the outbox (unsent: the caller acknowledges only once they are in Kafka);
-- {code} with code < 0: -11 a bad argument, -6 no such order or another user's, -7 closed or
-- past expire_at, -22 the amount is not quantity x price, -8 paid otherwise (another trade_no,
-- or the buyer's own pay), -1 the stock hash does not exist (not warm: the caller backfills or
-- rebuilds and tries again).
-- A reserved order past its expire_at cannot be paid (ORDER_CLOSED): expiry is due and
-- the expire job will release it, so a pay and an expiry never both win. The order stays in
-- its pending member (reserve.lua): the expiry job passes over it.
local trade = ARGV[ARG_TRADE_NO] or ''
if trade ~= '' then
  if ARGV[ARG_UID] ~= '0' or not string.match(trade, '^[A-Za-z0-9_-]+$') or
    not string.match(ARGV[ARG_AMOUNT], '^[0-9]+$') or not string.match(ARGV[ARG_PRICE], '^[0-9]+$') then
    return {-11}
  end
elseif not string.match(ARGV[ARG_UID], '^[1-9][0-9]*$') then
  return {-11}
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  -- Not warm, whether or not the order is here: a lost activity's is gone too, and a
  -- rolled-back book's (its stock hash deleted for a rebuild) waits for the rebuild's wipe; an
  -- "already" answered from it could acknowledge a change whose event the new epoch drops.
  return {-1}
end
local o = unpackOrder(redis.call('HGET', KEYS[2], ARGV[ARG_SHORT]))
if not o then
  return {-6}
end
if trade == '' and o.uid ~= ARGV[ARG_UID] then
  return {-6}
end
if trade ~= '' then
  -- exact: quantity x price <= per-user limit x price <= 2^53 - 1 (domain.MaxAmount)
  if tonumber(o.qty) * tonumber(ARGV[ARG_PRICE]) ~= tonumber(ARGV[ARG_AMOUNT]) then
    return {-22}
  end
  local paidBy = redis.call('HGET', KEYS[4], ARGV[ARG_SHORT])
  if paidBy == trade then
    return {0, 'paid', '', unsent(KEYS[3], o.er, o.es)}
  end
  if paidBy or o.state == 'paid' then
    return {-8}
  end
end
if o.state == 'paid' then
  return {0, 'paid', '', unsent(KEYS[3], o.er, o.es)}
end
if o.state ~= 'reserved' then
  return {-7}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now >= tonumber(o.expire_at) then
  return {-7}
end
local qty = tonumber(o.qty)
local h = redis.call('HMGET', KEYS[1], 'sku', 'epoch', 'exp')
local sku = h[1]
if not sku then
  return {-1}
end
redis.call('HINCRBY', KEYS[1], 'locked', 0 - qty)
redis.call('HINCRBY', KEYS[1], 'sold', qty)
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1) -- the activity's change count (see reserve.lua)
local seqS = string.format('%d', seq)
local tn = ''
if trade ~= '' then
  tn = ' tn=' .. trade -- between 'sq' and 'tp', entryKeys' order
  redis.call('HSET', KEYS[4], ARGV[ARG_SHORT], trade)
  if h[3] then
    redis.call('EXPIREAT', KEYS[4], h[3]) -- with the activity's keys
  end
end
local e = packOrderEntry('paid', ARGV[ARG_ACTIVITY_ID], sku, ARGV[ARG_ORDER_NO], o.uid, o.qty,
  string.format('%d', now), o.request_id, o.created_at, o.expire_at, h[2] or '0', seqS,
  tn .. entryTrace(ARGV[ARG_TRACEPARENT]))
local id = addEntry(KEYS[3], e)
redis.call('HSET', KEYS[2], ARGV[ARG_SHORT], repackOrder(o, 'paid', seqS, id)) -- 'es': see unsent
return {0, 'paid', id, e}
