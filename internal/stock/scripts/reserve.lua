-- reserve: take quantity from remaining into locked for one buyer, in one step.
-- KEYS[1] stock hash  KEYS[2] request-id key  KEYS[3] order hash  KEYS[4] user key
-- KEYS[5] pending zset  KEYS[6] orders zset  KEYS[7] events stream
-- ARGV[1] activity id  ARGV[2] order_no (fresh)  ARGV[3] uid  ARGV[4] quantity
-- ARGV[5] request id  (the request-id key expires with the activity's keys: one request
--         id makes at most one order of an activity, as MySQL's
--         UNIQUE(activity_id, uid, request_id) holds too)
-- ARGV[6] sell-by, ms since the epoch (0: none): degrade mode's lease on the activity's
--         mode (degrade.Book). Past it by Redis's clock the script sells nothing (-15), so
--         a reservation that reaches Redis late (a write stall, a failover's CLIENT PAUSE,
--         go-redis retrying) cannot sell after the instance's lease lapsed.
-- 'seq' in the stock hash counts the activity's order changes; an order hash records the
-- seq of its creation ('cseq') and of its last change ('useq'), so reconciliation can
-- read the orders in chunks and still see them as they were at one seq. Each change's
-- event carries its seq ('sq'): an Acker that sees a seq it acknowledged for another
-- entry, or the hash's seq below one it acknowledged, knows Redis lost acknowledged
-- writes (a partial rollback: relay.Acker).
-- The per-activity zsets get their EXPIREAT only when this call may have created them
-- (orders: the first reservation since the stock hash was written, marked by its field
-- 'z'; pending: also whenever nothing was locked, as it is deleted once empty), and the
-- orders ZADD NX doubles as the order number's collision check, so a reservation runs 12
-- Redis commands instead of 18.
-- ARGV[7] the activity's order-hash key prefix (stock.Keys.Order(aid, "")): a replay reads
--         the replayed order's hash, ARGV[7] .. order_no, in the activity's slot
-- ARGV[8] "1": return the outbox entry's fields (Store has an acknowledgement hook that
--         reads them); anything else: its id only
-- ARGV[9] the caller's W3C traceparent ('' for none): written as the entry's field 'tp'
-- Returns {0, order_no, remaining, expire_at_ms, created_ms, entry_id[, entry_fields]}
--         reserved (entry_fields, with ARGV[8] "1": the outbox entry as written, so the
--         caller may publish it before answering);
--         {1, order_no, state, qty, expire_at_ms, created_ms, remaining[, unsent]} replay of
--         a request id already seen, the order as it is now (nothing deducted), with ARGV[8]
--         "1" also the order's entries still in the outbox (unsent: the caller acknowledges
--         the replay only once they are in Kafka); {1, order_no} when the replayed order's
--         hash is gone;
--         {code} with code < 0 (see codes.go); -15 past ARGV[6]; -13 when the stock hash holds a pay
--         timeout or an expire-at this script could not apply. Every value is checked
--         before the first write, so the script never stops half-way.
local qty = tonumber(ARGV[4])
if not qty or qty < 1 or qty ~= math.floor(qty) then
  return {-11}
end
local seen = redis.call('GET', KEYS[2])
if seen then
  local o = redis.call('HMGET', ARGV[7] .. seen, 'state', 'qty', 'expire_at', 'created_at', 'er', 'es')
  if not o[1] then
    return {1, seen}
  end
  local rem = redis.call('HGET', KEYS[1], 'remaining') or '0'
  local r = {1, seen, o[1], tonumber(o[2]), tonumber(o[3]), tonumber(o[4]), tonumber(rem)}
  if ARGV[8] == '1' then
    r[8] = unsent(KEYS[7], o[5], o[6])
  end
  return r
end
local s = redis.call('HMGET', KEYS[1], 'remaining', 'start', 'end', 'limit', 'ttl', 'sku', 'exp',
  'locked', 'z', 'seq', 'epoch')
if not s[1] then
  return {-1}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local sellBy = tonumber(ARGV[6]) or 0
if sellBy > 0 and now > sellBy then
  return {-15}
end
if now < tonumber(s[2]) * 1000 then
  return {-2}
end
if now >= tonumber(s[3]) * 1000 then
  return {-3}
end
local held = tonumber(redis.call('GET', KEYS[4]) or '0')
if held + qty > tonumber(s[4]) then
  return {-4}
end
local remaining = tonumber(s[1])
if remaining < qty then
  return {-5}
end
local ttl = tonumber(s[5])
local exp = tonumber(s[7])
if not ttl or ttl < 1 or ttl ~= math.floor(ttl) or not exp or exp ~= math.floor(exp) or
    exp * 1000 <= now or exp * 1000 > now + 630720000000 then
  return {-13}
end
local expireAt = now + ttl * 1000
local locked = tonumber(s[8])
local fresh = not s[9]
-- Every number is handed to redis.call as a string made once by string.format('%d'): a
-- Lua number argument becomes '1e+14' in Lua's own conversion once large, and Redis's
-- (snprintf '%.17g' per argument) costs a float formatting each time (now and expire_at
-- are used three and four times).
local seq = string.format('%d', (tonumber(s[10]) or 0) + 1)
exp = string.format('%d', exp)
local nowS = string.format('%d', now)
local expireAtS = string.format('%d', expireAt)
local qtyS = string.format('%d', qty)
-- the order number's collision check is the first write: ZADD NX writes nothing when the
-- number is in the orders zset already (every order hash's number is, for as long as the
-- hash lives), so a taken number (-12) still leaves everything as it was
if redis.call('ZADD', KEYS[6], 'NX', nowS, ARGV[2]) == 0 then
  return {-12}
end
redis.call('HSET', KEYS[1], 'remaining', string.format('%d', remaining - qty),
  'locked', string.format('%d', locked + qty), 'z', '1', 'seq', seq)
-- no 'cms': a reserved event's creation time is its 'at' (event.FromStream fills it in)
local ev = {'t', 'reserved', 'aid', ARGV[1], 'sku', s[6], 'ono', ARGV[2], 'uid', ARGV[3],
  'qty', qtyS, 'at', nowS, 'rid', ARGV[5], 'ems', expireAtS, 'ep', s[11] or '0', 'sq', seq}
if ARGV[9] and ARGV[9] ~= '' then -- the caller's trace context (event.FieldTraceParent)
  ev[#ev + 1] = 'tp'
  ev[#ev + 1] = ARGV[9]
end
local id = redis.call('XADD', KEYS[7], '*', unpack(ev))
-- 'er': the reserved entry's id, so a replay can tell whether it is in Kafka yet (unsent)
redis.call('HSET', KEYS[3], 'uid', ARGV[3], 'qty', qtyS, 'state', 'reserved',
  'expire_at', expireAtS, 'request_id', ARGV[5], 'created_at', nowS, 'cseq', seq, 'useq', seq,
  'er', id)
redis.call('EXPIREAT', KEYS[3], exp)
redis.call('SET', KEYS[4], string.format('%d', held + qty), 'EXAT', exp)
redis.call('ZADD', KEYS[5], expireAtS, ARGV[2])
if fresh or locked == 0 then
  redis.call('EXPIREAT', KEYS[5], exp)
end
if fresh then
  redis.call('EXPIREAT', KEYS[6], exp)
end
redis.call('SET', KEYS[2], ARGV[2], 'EXAT', exp)
if ARGV[8] ~= '1' then
  return {0, ARGV[2], remaining - qty, expireAt, now, id}
end
return {0, ARGV[2], remaining - qty, expireAt, now, id, ev}
