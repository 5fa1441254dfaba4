-- confirm (pay): reserved -> paid. locked -= qty, sold += qty.
-- KEYS[1] stock hash  KEYS[2] orders hash  KEYS[3] events stream
-- ARGV[1] activity id  ARGV[2] order_no  ARGV[3] uid of the caller (>= 1; the order must be
-- theirs: there is no "any owner")
-- ARGV[4] the caller's W3C traceparent ('' for none): written as the entry's 'tp'
-- Returns {0, 'paid', entry_id, entry} paid now (the outbox entry as written: entry.lua);
-- {0, 'paid', '', unsent} already paid, with the order's entries still in the outbox
-- (unsent: the caller acknowledges only once they are in Kafka); {code} with code < 0: -11 uid not an
-- integer >= 1, -6 no such order or another user's, -7 closed or past expire_at, -1 neither
-- the order nor the stock hash exists (not warm: the caller backfills or rebuilds and tries
-- again).
-- A reserved order past its expire_at cannot be paid (ORDER_CLOSED): expiry is due and
-- the expire job will release it, so a pay and an expiry never both win. The order stays in
-- its pending member (reserve.lua): the expiry job passes over it.
if not string.match(ARGV[3], '^[1-9][0-9]*$') then
  return {-11}
end
local o = unpackOrder(redis.call('HGET', KEYS[2], ARGV[2]))
if not o then
  -- no order: a lost activity (its stock hash gone too) is not warm, not "not found"
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return {-1}
  end
  return {-6}
end
if o.uid ~= ARGV[3] then
  return {-6}
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
local h = redis.call('HMGET', KEYS[1], 'sku', 'epoch')
local sku = h[1]
if not sku then
  return {-1}
end
redis.call('HINCRBY', KEYS[1], 'locked', 0 - qty)
redis.call('HINCRBY', KEYS[1], 'sold', qty)
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1) -- the activity's change count (see reserve.lua)
local seqS = string.format('%d', seq)
local e = packOrderEntry('paid', ARGV[1], sku, ARGV[2], o.uid, o.qty, string.format('%d', now), o.request_id,
  o.created_at, o.expire_at, h[2] or '0', seqS, entryTrace(ARGV[4]))
local id = addEntry(KEYS[3], e)
redis.call('HSET', KEYS[2], ARGV[2], repackOrder(o, 'paid', seqS, id)) -- 'es': see unsent
return {0, 'paid', id, e}
