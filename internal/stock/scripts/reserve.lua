-- reserve: a batch of reservations of one activity, in order, each with the checks and
-- effects of a single one (a single reservation is a batch of one).
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] orders hash  KEYS[4] buyers hash
-- KEYS[5] events stream
-- ARGV and the reply are named in Go (codec.go: reserveArgs, reserveItemArgs, reserveReply,
-- reserveReplay), which prepends their positions as constants: ARG_<name> (ARG_COUNT of them),
-- then per item ITEM_<name> within its group of ITEM_COUNT; the reply's REPLY_<name> (its
-- items' answers after REPLY_HEAD) and a replay's REPLAY_<name>.
-- The orders hash holds each order packed in one field (order.lua), named by its short number
-- (ITEM_SHORT: the order_no without the activity id and the tag, stock.shortNo; the events carry
-- the order_no, ITEM_ORDER_NO). The buyers hash holds per buyer the quantity held (reserved +
-- paid) and per request id its order's short number: one request
-- id makes at most one order of a buyer in an activity (as MySQL's
-- UNIQUE(activity_id, uid, request_id) holds too), for as long as the activity's keys live.
-- 'seq' in the stock hash counts the activity's order changes, a reservation batch one (its
-- orders are made at once); an order records the seq of its creation ('cseq') and of its last
-- change ('useq'), so reconciliation can read the orders in chunks and still see them as they
-- were at one seq. Each change's entry carries its seq ('sq'; the batch's on its shared line):
-- an Acker that sees a seq it acknowledged for another entry, or the hash's seq below one it
-- acknowledged, knows Redis lost acknowledged writes (a partial rollback: relay.Acker).
-- Per batch: one HMGET of the stock hash, TIME, one HMGET of the buyers hash (every item's
-- holding and request id), one HMGET of the orders hash (every item's fresh number: the
-- collision check; and every replayed order); then, when any item was reserved, one XADD of the
-- batch's entry (every reservation's event in it: entry.lua, packBatchHead and batchLine; a
-- batch that made one order writes the entry of one change, packOrderEntry),
-- one HSET of the orders hash, one of the buyers hash, one ZADD of the pending zset and one
-- HSET of the stock hash's counters. Later items see what earlier ones did (Lua tables: the holdings,
-- the request ids, the numbers taken). The pending zset gets one member per batch: the
-- short numbers of the orders made, space-separated, scored by their expire-at (the same for all).
-- The orders hash, the buyers hash and the pending zset get their EXPIREAT only when this
-- call may have created them: when the stock hash has no field 'kx' (set here; absent in a
-- stock hash warmup just wrote, and removed by expire_due.lua when it empties the pending
-- zset, which then vanishes).
-- Returns the reply head (code 0, remaining the stock hash's before the call, 0 when absent;
-- expire_at_ms and created_ms those of every order the call makes, expire_at_ms 0 when the
-- hash's pay timeout is unusable; entry_id the batch's outbox entry's id, '' when nothing was
-- reserved; entry, with ARG_WANT_ENTRIES "1", the entry as the stream holds it (the value of its
-- field 'e'), else 0), then ri, item i's answer, flat but for replays:
--   0: reserved, its event in the batch's entry (every order the call made has it as 'er');
--   a replay (the request id seen before, also earlier in this batch): the order as it is now,
--     with ARG_WANT_ENTRIES "1" its entries still in the outbox (unsent: {id, fields, ...}, or
--     {id, entry} for the entry of this call); {1, short} when the order is gone (a replay names
--     its order by its short number: Go makes the order_no of it);
--   code < 0 (an integer, see codes.go): -2 not started, -3 ended, -4 limit, -5 sold out,
--     -11 bad quantity, -12 the order number is taken (nothing written for the item: the
--     caller retries it with a fresh one).
-- or {code} for the whole batch, before any write: -1 not warm, -15 past the sell-by, -17 the
-- draw is not done, -13 the stock hash holds a pay timeout or an expire-at this script could
-- not apply. Not warm is checked first, before any replay; each other is checked where a
-- single reservation checks it (after its replay check), and only replays, which write
-- nothing, can come before.
-- The globals the loops read are locals (a register, not a look-up in the globals table).
local ARGV, tonumber, format = ARGV, tonumber, string.format
local n = (#ARGV - ARG_COUNT) / ITEM_COUNT
if n < 1 or n % 1 ~= 0 or #KEYS ~= 5 then
  return {-11}
end
local s = redis.call('HMGET', KEYS[1], 'remaining', 'start', 'end', 'limit', 'ttl', 'sku', 'exp',
  'locked', 'kx', 'seq', 'epoch', 'draw_at', 'drawn')
if not s[1] then
  -- Not warm, and no replay either: what Redis still holds of the orders may be a rolled-back
  -- book's (the Acker deleted its stock hash), which the rebuild wipes; a replay answered
  -- from it could acknowledge an order whose event the rebuild's new epoch then drops.
  return {-1}
end
local t = redis.call('TIME')
-- A number string in arithmetic is read once (strtod); tonumber reads it twice (lua_isnumber, then
-- lua_tonumber: ≈ 1,800 instructions for a 10-digit string against ≈ 700). It is used where a
-- non-number fails the call either way: TIME's answer, and start and end below.
local us = t[2] + 0
local now = t[1] * 1000 + (us - us % 1000) / 1000
local sellBy = tonumber(ARGV[ARG_SELL_BY_MS]) or 0
local remaining, locked = tonumber(s[1]), tonumber(s[8])
local fresh = not s[9]
local seq = tonumber(s[10]) or 0
local ttl, exp = tonumber(s[5]), tonumber(s[7])
local corrupt = not ttl or ttl < 1 or ttl ~= math.floor(ttl) or not exp or exp ~= math.floor(exp) or
    exp * 1000 <= now or exp * 1000 > now + 630720000000
-- Every number is handed to redis.call as a string made once by string.format('%d'): a
-- Lua number argument becomes '1e+14' in Lua's own conversion once large, and Redis's
-- (snprintf '%.17g' per argument) costs a float formatting each time.
local nowS, expireAt, expireAtS, startMs, endMs, limit
if not corrupt then
  expireAt = now + ttl * 1000
  expireAtS = format('%d', expireAt)
end
nowS = format('%d', now)
if s[1] then
  startMs, endMs, limit = s[2] * 1000, s[3] * 1000, tonumber(s[4])
end
local want, epoch, aid, sku = ARGV[ARG_WANT_ENTRIES] == '1', s[11] or '0', ARGV[ARG_ACTIVITY_ID], s[6]
local serve = ARGV[ARG_SERVE] == '1'
-- distinct: no two items share a buyer or a fresh number (Go's word, from the items): no item
-- can see an earlier one's holding, request id or number, and held, req and mine stay empty.
local distinct = ARGV[ARG_DISTINCT] == '1'
local heldPrefix = ARGV[ARG_HELD_PREFIX] -- a buyer's holding's field is it and the uid (heldField)
local trace = entryTrace(ARGV[ARG_TRACEPARENT]) -- the caller's trace context (event.FieldTraceParent)
-- Item i's field f (ITEM_<name>) is ARGV[a + f], a = ARG_COUNT + ITEM_COUNT * (i - 1) its base
-- (stepped by ITEM_COUNT in the loops: no call per item).
-- The buyers' holdings and request ids, read once (b[2i - 1], b[2i]: item i's); then the
-- orders hash, read once: each item's fresh number (ov[i]: taken, the number is in use) and
-- each order a request id names (before[order_no]: its value now, for a replay).
local bf, names = {}, {} -- the buyers hash's fields (item i's holding 2i - 1, request id 2i); the shorts
local a = ARG_COUNT
for i = 1, n do
  bf[2 * i - 1], bf[2 * i], names[i] = heldPrefix .. ARGV[a + ITEM_UID], ARGV[a + ITEM_REQ_FIELD], ARGV[a + ITEM_SHORT]
  a = a + ITEM_COUNT
end
local b = redis.call('HMGET', KEYS[4], unpack(bf))
local k = n
for i = 1, n do
  if b[2 * i] then
    k = k + 1
    names[k] = b[2 * i]
  end
end
local ov = redis.call('HMGET', KEYS[3], unpack(names))
local before = k > n and {} -- none without a replay (a table costs ≈ 750 instructions)
for j = n + 1, k do
  before[names[j]] = ov[j]
end
local out = {}
out[REPLY_CODE], out[REPLY_REMAINING], out[REPLY_EXPIRE_AT_MS], out[REPLY_CREATED_MS] = 0, remaining or 0,
  expireAt or 0, now
-- refuse: the whole call's refusal, the same for every item, known before the items (the first
-- item that would write returns it): -15 past the sell-by, -17 the draw not done (not warm
-- returned above).
local refuse = sellBy > 0 and now > sellBy and -15 or s[12] and s[13] ~= '1' and not serve and -17
-- made: the reservations made so far; pz their short numbers (the pending member), ma their
-- items' ARGV bases (their order_no, uid and request id are read there again for their event
-- lines and their orders, packed once the entry's id is known: fewer tables than one per
-- value), mq their quantities' strings; bh the buyers hash's fields and values to write (a buyer's holding once per order: the
-- last one written holds); held[field], req[field] a holding and a request id this call changed
-- (later items see them); mine[order_no] the item that made it (a replay of it later in the
-- batch waits on this call's entry, late: those replays; a number taken twice in one call is
-- refused). held, req, mine and late are made only when the items are not distinct (else never read).
local made, bh, nb, pz, held, req, mine, late = 0, {}, 0, {}
if not distinct then
  held, req, mine, late = {}, {}, {}, {}
end
local ma, mq = {}, {}
-- qtyN[s], qtyS[q]: a quantity's number and string, each made once per call (tonumber's strtod
-- and string.format cost more than a table look-up, and quantities repeat).
local qtyN, qtyS = {}, {}
a = ARG_COUNT - ITEM_COUNT
for i = 1, n do
  a = a + ITEM_COUNT
  local rf = ARGV[a + ITEM_REQ_FIELD]
  local qa = ARGV[a + ITEM_QTY]
  local qty = qtyN[qa]
  if qty == nil then
    qty = tonumber(qa) or false
    qtyN[qa] = qty
  end
  local r
  local rono = not distinct and req[rf] or b[2 * i]
  if not qty or qty < 1 or qty % 1 ~= 0 then
    r = -11
  elseif rono then
    local m = not distinct and mine[rono]
    if m then
      r = {[REPLAY_CODE] = 1, [REPLAY_ORDER_NO] = rono, [REPLAY_STATE] = 'reserved',
        [REPLAY_QTY] = tonumber(ARGV[ARG_COUNT + ITEM_COUNT * (m - 1) + ITEM_QTY]),
        [REPLAY_EXPIRE_AT_MS] = expireAt, [REPLAY_CREATED_MS] = now,
        [REPLAY_REMAINING] = remaining}
      if want then
        late[#late + 1] = r -- its unsent: this call's entry, once written
      end
    else
      local o = unpackOrder(before[rono])
      if not o then
        r = {[REPLAY_CODE] = 1, [REPLAY_ORDER_NO] = rono}
      else
        r = {[REPLAY_CODE] = 1, [REPLAY_ORDER_NO] = rono, [REPLAY_STATE] = o.state, [REPLAY_QTY] = tonumber(o.qty),
          [REPLAY_EXPIRE_AT_MS] = tonumber(o.expire_at), [REPLAY_CREATED_MS] = tonumber(o.created_at),
          [REPLAY_REMAINING] = remaining or 0}
        if want then
          r[REPLAY_UNSENT] = unsent(KEYS[5], o.er, o.es)
        end
      end
    end
  else
    if refuse then
      return {refuse}
    end
    local hf, ono = bf[2 * i - 1], ARGV[a + ITEM_SHORT]
    local hb = b[2 * i - 1] -- the holding: none is 0 (and costs no tonumber)
    local h = not distinct and held[hf] or not hb and 0 or tonumber(hb)
    if now < startMs then
      r = -2
    elseif now >= endMs then
      r = -3
    elseif h + qty > limit then
      r = -4
    elseif remaining < qty then
      r = -5
    elseif corrupt then
      return {-13}
    elseif ov[i] or not distinct and mine[ono] then
      -- a taken number: nothing written for this item
      r = -12
    else
      made = made + 1
      remaining, locked = remaining - qty, locked + qty
      local qs = qtyS[qty]
      if not qs then
        qs = format('%d', qty)
        qtyS[qty] = qs
      end
      -- a new buyer's holding is the quantity: its string is made already
      local hs = h == 0 and qs or format('%d', h + qty)
      h = h + qty
      -- no 'cms': a reserved event's creation time is its 'at' (event.FromAttributes fills it in)
      pz[made], ma[made], mq[made] = ono, a, qs
      if not distinct then
        mine[ono], held[hf], req[rf] = i, h, ono
      end
      bh[nb + 1], bh[nb + 2], bh[nb + 3], bh[nb + 4], nb = rf, ono, hf, hs, nb + 4
      r = 0
    end
  end
  out[REPLY_HEAD + i] = r
end
out[REPLY_ENTRY_ID], out[REPLY_ENTRY] = '', 0
if made > 0 then
  -- one change (seq) and one outbox entry for the batch, then one write per key
  seq = seq + 1
  local seqS = format('%d', seq)
  local e
  if made == 1 then -- the entry of one change, one concatenation
    local m = ma[1]
    e = packOrderEntry('reserved', aid, sku, ARGV[m + ITEM_ORDER_NO], ARGV[m + ITEM_UID], mq[1], nowS,
      ARGV[m + ITEM_REQUEST_ID], nil, expireAtS, epoch, seqS, trace)
  else -- a batch entry: its shared line, then one line per event (entry.lua)
    local ep = {packBatchHead('reserved', aid, sku, nowS, expireAtS, epoch, seqS, trace)}
    batchLines(ep, made, ARGV, ma, ITEM_ORDER_NO, ITEM_UID, ITEM_REQUEST_ID, mq)
    e = table.concat(ep)
  end
  local id = addEntry(KEYS[5], e)
  -- 'er': the entry's id, so a replay can tell whether the order's event is in Kafka yet (unsent)
  -- the pieces the batch's orders share, made once (order.lua)
  local mid, tail = orderShared(expireAt, now, seq, seq, id, nil, nowS)
  local oh = {}
  orderValues(oh, made, pz, ARGV, ma, ITEM_UID, ITEM_REQUEST_ID, mq, mid, tail)
  out[REPLY_ENTRY_ID] = id
  if want then
    out[REPLY_ENTRY] = e
    if late then -- none when the items are distinct
      for _, r in ipairs(late) do
        r[REPLAY_UNSENT] = {id, e}
      end
    end
  end
  redis.call('HSET', KEYS[3], unpack(oh))
  redis.call('HSET', KEYS[4], unpack(bh))
  redis.call('ZADD', KEYS[2], expireAtS, table.concat(pz, ' '))
  redis.call('HSET', KEYS[1], 'remaining', format('%d', remaining),
    'locked', format('%d', locked), 'kx', '1', 'seq', seqS)
  if fresh then
    local expS = format('%d', exp)
    redis.call('EXPIREAT', KEYS[2], expS)
    redis.call('EXPIREAT', KEYS[3], expS)
    redis.call('EXPIREAT', KEYS[4], expS)
  end
end
return out
