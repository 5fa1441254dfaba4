-- reserve: a batch of reservations of one activity, in order, each with the checks and
-- effects of a single one (a single reservation is a batch of one).
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] orders zset  KEYS[4] events stream
-- KEYS[3 + 2i], KEYS[4 + 2i]: item i's order hash and buyer hash (i = 1..n)
-- ARGV[1] activity id
-- ARGV[2] sell-by, ms since the epoch (0: none): degrade mode's lease on the activity's
--         mode (degrade.Book). Past it by Redis's clock the script sells nothing (-15), so
--         a reservation that reaches Redis late (a write stall, a failover's CLIENT PAUSE,
--         go-redis retrying) cannot sell after the instance's lease lapsed.
-- ARGV[3] the activity's order-hash key prefix (stock.Keys.Order(aid, "")): a replay reads
--         the replayed order's hash, ARGV[3] .. order_no, in the activity's slot
-- ARGV[4] "1": return each outbox entry's fields (Store has an acknowledgement hook that
--         reads them); anything else: its id only
-- ARGV[5] the caller's W3C traceparent ('' for none): written as each entry's field 'tp'
-- ARGV[6] "1": the draw serves its entrants (draw.go); else an activity whose draw is not
--         done sells nothing (-17: the caller takes the batch to enter.lua)
-- ARGV[7 + 5(i-1)] .. ARGV[11 + 5(i-1)]: item i's order_no (fresh), uid, quantity,
--         request id, and its field in the buyer hash (stock.Keys.ReqField)
-- The buyer hash holds 'held' (the quantity the buyer holds: reserved + paid) and one field
-- per request id -> order_no: one request id makes at most one order of an activity (as
-- MySQL's UNIQUE(activity_id, uid, request_id) holds too), for as long as its keys live.
-- 'seq' in the stock hash counts the activity's order changes; an order hash records the
-- seq of its creation ('cseq') and of its last change ('useq'), so reconciliation can
-- read the orders in chunks and still see them as they were at one seq. Each change's
-- event carries its seq ('sq'): an Acker that sees a seq it acknowledged for another
-- entry, or the hash's seq below one it acknowledged, knows Redis lost acknowledged
-- writes (a partial rollback: relay.Acker).
-- Once per batch: one read and one write of the stock hash's counters, and the zsets'
-- EXPIREAT only when this call may have created them (orders: the first reservation since
-- the stock hash was written, marked by its field 'z'; pending: also whenever nothing was
-- locked, as it is deleted once empty). A buyer hash gets its EXPIREAT when it had no
-- 'held' (every writer of 'held' sets the expiry with it). The orders zset is the order
-- number's collision check: one ZMSCORE per batch (taken), then one ZADD per zset.
-- Returns {0, r1, ..., rn}, ri item i's answer:
--   {0, order_no, remaining, expire_at_ms, created_ms, entry_id[, entry_fields]} reserved
--     (entry_fields, with ARGV[4] "1": the outbox entry as written);
--   {1, order_no, state, qty, expire_at_ms, created_ms, remaining[, unsent]} replay of a
--     request id already seen (also earlier in this batch), the order as it is now, with
--     ARGV[4] "1" also its entries still in the outbox (unsent: the caller acknowledges the
--     replay only once they are in Kafka); {1, order_no} when the replayed order's hash is gone;
--   {code} with code < 0 (see codes.go): -2 not started, -3 ended, -4 limit, -5 sold out,
--     -11 bad quantity, -12 the order number is taken (nothing written for the item: the
--     caller retries it with a fresh one).
-- or {code} for the whole batch, before any write: -1 not warm, -15 past ARGV[2], -17 the draw is not done, -13 the
-- stock hash holds a pay timeout or an expire-at this script could not apply. Each is
-- checked where a single reservation checks it (after its replay check), and only replays,
-- which write nothing, can come before.
local n = (#ARGV - 6) / 5
if n < 1 or n ~= math.floor(n) or #KEYS ~= 4 + 2 * n then
  return {-11}
end
local s = redis.call('HMGET', KEYS[1], 'remaining', 'start', 'end', 'limit', 'ttl', 'sku', 'exp',
  'locked', 'z', 'seq', 'epoch', 'draw_at', 'drawn')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local sellBy = tonumber(ARGV[2]) or 0
local remaining, locked = tonumber(s[1]), tonumber(s[8])
local locked0, fresh = locked, not s[9]
local seq = tonumber(s[10]) or 0
local ttl, exp = tonumber(s[5]), tonumber(s[7])
local corrupt = not ttl or ttl < 1 or ttl ~= math.floor(ttl) or not exp or exp ~= math.floor(exp) or
    exp * 1000 <= now or exp * 1000 > now + 630720000000
-- Every number is handed to redis.call as a string made once by string.format('%d'): a
-- Lua number argument becomes '1e+14' in Lua's own conversion once large, and Redis's
-- (snprintf '%.17g' per argument) costs a float formatting each time.
local nowS, expS, expireAt, expireAtS, startMs, endMs
if not corrupt then
  expS = string.format('%d', exp)
  expireAt = now + ttl * 1000
  expireAtS = string.format('%d', expireAt)
end
nowS = string.format('%d', now)
if s[1] then
  startMs, endMs = tonumber(s[2]) * 1000, tonumber(s[3]) * 1000
end
local want, tp, epoch = ARGV[4] == '1', ARGV[5], s[11] or '0'
local out = {0}
-- made: the reservations made so far, onos[1..made] their order numbers. The orders zset
-- is read once, at the first item that gets as far as the collision check: one ZMSCORE of
-- the numbers of that item and every later one (zset = the numbers taken before this call;
-- used = the ones this call took; 'z': the one already in the zset, by the last item's
-- ZADD NX).
local made, onos, zset, used = 0, {}, nil, {}
local function taken(i, ono)
  if used[ono] then
    return true
  end
  if not zset and i == n then
    -- the last item: one ZADD NX is both the check and the write (a batch of one costs
    -- what it did before batching)
    if redis.call('ZADD', KEYS[3], 'NX', nowS, ono) == 0 then
      return true
    end
    used[ono] = 'z'
    return false
  end
  if not zset then
    local names = {}
    for j = i, n do
      names[j - i + 1] = ARGV[7 + 5 * (j - 1)]
    end
    local sc = redis.call('ZMSCORE', KEYS[3], unpack(names))
    zset = {}
    for j = 1, #names do
      if sc[j] then
        zset[names[j]] = true
      end
    end
  end
  if zset[ono] then
    return true
  end
  used[ono] = true
  return false
end
for i = 1, n do
  local a = 7 + 5 * (i - 1)
  local ono, uid, rfield = ARGV[a], ARGV[a + 1], ARGV[a + 4]
  local okey, ukey = KEYS[3 + 2 * i], KEYS[4 + 2 * i]
  local qty = tonumber(ARGV[a + 2])
  local r
  if not qty or qty < 1 or qty ~= math.floor(qty) then
    r = {-11}
  else
    local u = redis.call('HMGET', ukey, 'held', rfield)
    if u[2] then
      local o = redis.call('HMGET', ARGV[3] .. u[2], 'state', 'qty', 'expire_at', 'created_at', 'er', 'es')
      if not o[1] then
        r = {1, u[2]}
      else
        r = {1, u[2], o[1], tonumber(o[2]), tonumber(o[3]), tonumber(o[4]),
          remaining or tonumber(redis.call('HGET', KEYS[1], 'remaining') or '0')}
        if want then
          r[8] = unsent(KEYS[4], o[5], o[6])
        end
      end
    else
      if not s[1] then
        return {-1}
      end
      if sellBy > 0 and now > sellBy then
        return {-15}
      end
      if s[12] and s[13] ~= '1' and ARGV[6] ~= '1' then
        return {-17}
      end
      local held = tonumber(u[1] or '0')
      if now < startMs then
        r = {-2}
      elseif now >= endMs then
        r = {-3}
      elseif held + qty > tonumber(s[4]) then
        r = {-4}
      elseif remaining < qty then
        r = {-5}
      elseif corrupt then
        return {-13}
      elseif taken(i, ono) then
        -- a taken number: nothing written for this item (every order hash's number is in
        -- the orders zset for as long as the hash lives)
        r = {-12}
      else
        made = made + 1
        onos[made] = ono
        seq = seq + 1
        remaining, locked = remaining - qty, locked + qty
        local seqS, qtyS = string.format('%d', seq), string.format('%d', qty)
        -- no 'cms': a reserved event's creation time is its 'at' (event.FromStream fills it in)
        local ev = {'t', 'reserved', 'aid', ARGV[1], 'sku', s[6], 'ono', ono, 'uid', uid,
          'qty', qtyS, 'at', nowS, 'rid', ARGV[a + 3], 'ems', expireAtS, 'ep', epoch, 'sq', seqS}
        if tp ~= '' then -- the caller's trace context (event.FieldTraceParent)
          ev[#ev + 1] = 'tp'
          ev[#ev + 1] = tp
        end
        local id = redis.call('XADD', KEYS[4], '*', unpack(ev))
        -- 'er': the reserved entry's id, so a replay can tell whether it is in Kafka yet (unsent)
        redis.call('HSET', okey, 'uid', uid, 'qty', qtyS, 'state', 'reserved', 'expire_at', expireAtS,
          'request_id', ARGV[a + 3], 'created_at', nowS, 'cseq', seqS, 'useq', seqS, 'er', id)
        redis.call('EXPIREAT', okey, expS)
        redis.call('HSET', ukey, 'held', string.format('%d', held + qty), rfield, ono)
        if not u[1] then
          redis.call('EXPIREAT', ukey, expS)
        end
        r = {0, ono, remaining, expireAt, now, id}
        if want then
          r[7] = ev
        end
      end
    end
  end
  out[i + 1] = r
end
if made > 0 then
  -- one ZADD per zset for the batch: every order made now has the same creation time
  -- (the orders zset's score) and the same expire-at (the pending zset's)
  local oz, pz, k = {}, {}, 0
  for j = 1, made do
    if used[onos[j]] ~= 'z' then
      oz[k + 1], oz[k + 2], k = nowS, onos[j], k + 2
    end
    pz[2 * j - 1], pz[2 * j] = expireAtS, onos[j]
  end
  if k > 0 then
    redis.call('ZADD', KEYS[3], unpack(oz))
  end
  redis.call('ZADD', KEYS[2], unpack(pz))
  redis.call('HSET', KEYS[1], 'remaining', string.format('%d', remaining),
    'locked', string.format('%d', locked), 'z', '1', 'seq', string.format('%d', seq))
  if fresh or locked0 == 0 then
    redis.call('EXPIREAT', KEYS[2], expS)
  end
  if fresh then
    redis.call('EXPIREAT', KEYS[3], expS)
  end
end
return out
