-- release (cancel, expire): reserved -> cancelled | expired.
-- locked -= qty, remaining += qty, the buyer's holding -= qty.
-- KEYS[1] stock hash  KEYS[2] orders hash  KEYS[3] buyers hash  KEYS[4] events stream
-- (the order stays in its pending member, reserve.lua: the expiry job passes over it)
-- ARGV (stock.releaseArgs, read by the ARG_ names prepended): ACTIVITY_ID, ORDER_NO (the events'),
-- SHORT its name in the orders hash (stock.shortNo), UID of the
-- order's owner (>= 1; it must match: there is no "any owner"; expiry passes the owner it read),
-- TARGET state: 'cancelled' or 'expired' (expiry only once expire_at <= now), STOCK_BACK the
-- stock-back channel: the activity id is PUBLISHed there once stock returned, TRACEPARENT the
-- caller's W3C traceparent ('' for none): written as the entry's 'tp', HELD_FIELD the owner's
-- holding field in the buyers hash (stock.HeldField of UID)
-- Returns {0, state, entry_id, entry} released now (the outbox entry as written: entry.lua);
-- {0, state, '', unsent} already in the target state, with the order's entries still in
-- the outbox (unsent: the caller acknowledges only once they are in Kafka); {code} with code < 0:
-- -11 bad target or uid, -6 no such order or another user's, -8 paid, -7 closed,
-- -10 expiry not due, -1 the stock hash does not exist (not warm: the caller backfills or
-- rebuilds and tries again).
local target = ARGV[ARG_TARGET]
if target ~= 'cancelled' and target ~= 'expired' then
  return {-11}
end
if not string.match(ARGV[ARG_UID], '^[1-9][0-9]*$') then
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
if o.uid ~= ARGV[ARG_UID] then
  return {-6}
end
if o.state == target then
  return {0, target, '', unsent(KEYS[4], o.er, o.es)}
end
if o.state == 'paid' then
  return {-8}
end
if o.state ~= 'reserved' then
  return {-7}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if target == 'expired' and now < tonumber(o.expire_at) then
  return {-10}
end
local qty = tonumber(o.qty)
local h = redis.call('HMGET', KEYS[1], 'sku', 'epoch')
local sku = h[1]
if not sku then
  return {-1}
end
redis.call('HINCRBY', KEYS[1], 'locked', 0 - qty)
redis.call('HINCRBY', KEYS[1], 'remaining', qty)
redis.call('HINCRBY', KEYS[3], ARGV[ARG_HELD_FIELD], 0 - qty)
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1) -- the activity's change count (see reserve.lua)
local seqS = string.format('%d', seq)
local e = packOrderEntry(target, ARGV[ARG_ACTIVITY_ID], sku, ARGV[ARG_ORDER_NO], o.uid, o.qty,
  string.format('%d', now), o.request_id, o.created_at, o.expire_at, h[2] or '0', seqS,
  entryTrace(ARGV[ARG_TRACEPARENT]))
local id = addEntry(KEYS[4], e)
redis.call('HSET', KEYS[2], ARGV[ARG_SHORT], repackOrder(o, target, seqS, id)) -- 'es': see unsent
redis.call('PUBLISH', ARGV[ARG_STOCK_BACK], ARGV[ARG_ACTIVITY_ID])
return {0, target, id, e}
