-- enter: a batch of reservations of one activity whose draw is not done, each as an entry
-- of the draw (docs/DESIGN.md, "The opening draw"): one entry per buyer, no stock moved.
-- KEYS[1] stock hash  KEYS[2] entries hash (uid -> "qty request_id entry_id")  KEYS[3] events
-- KEYS[4] entrants per client address (address -> count)
-- ARGV (stock.enterArgs, read by the ARG_ names prepended): ACTIVITY_ID, SELL_BY_MS (0: none;
-- as reserve.lua), WANT_ENTRIES "1": return each outbox entry (the caller acknowledges it),
-- TRACEPARENT ('' for none), PER_ADDRESS the most entrants from one client address (0: no
-- bound); then from ARG_ITEMS the items, ITEM_WIDTH values each (stock.enterItemArgs): UID,
-- QTY, REQUEST_ID and ADDR, the client address ('' for none: not counted); item i's
-- ITEM_<NAME> is ARGV[ARG_ITEMS - 1 + ITEM_WIDTH * (i - 1) + ITEM_<NAME>].
-- Returns {0, r1, ..., rn}, ri item i's answer (stock.enterAnswer):
--   {2, qty, request_id, draw_at_ms, list} the buyer's entry (new, or the one entered before
--     with any request id), list: its outbox entry while the stream holds it ({id, entry}
--     for a new one, entry.lua; {id, fields} for one entered before: unsent.lua), with
--     WANT_ENTRIES "1" (the caller acknowledges the entry only once it is in Kafka);
--   {code}: -2 not started, -3 ended, -4 quantity above the per-user limit, -11 bad
--     quantity, -18 the draw is running and the buyer has no entry, -21 the buyer's client
--     address has PER_ADDRESS entrants already.
-- or {code} for the whole batch, before any write: -11 no items, -1 not warm, -15 past
-- SELL_BY_MS, -20 the draw is done (the caller reserves), -13 the stock hash holds an
-- expire-at it cannot apply.
local n = (#ARGV - ARG_ITEMS + 1) / ITEM_WIDTH
if n < 1 or n ~= math.floor(n) then
  return {-11}
end
local s = redis.call('HMGET', KEYS[1], 'remaining', 'start', 'end', 'limit', 'sku', 'exp', 'seq', 'epoch',
  'draw_at', 'drawn')
if not s[1] then
  return {-1}
end
if not s[9] or s[10] == '1' then
  return {-20}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local sellBy = tonumber(ARGV[ARG_SELL_BY_MS]) or 0
if sellBy > 0 and now > sellBy then
  return {-15}
end
local exp = tonumber(s[6])
if not exp or exp ~= math.floor(exp) or exp * 1000 <= now then
  return {-13}
end
local startMs, endMs, limit = tonumber(s[2]) * 1000, tonumber(s[3]) * 1000, tonumber(s[4])
local drawAt = tonumber(s[9])
local seq, made = tonumber(s[7]) or 0, 0
local want, tp, nowS = ARGV[ARG_WANT_ENTRIES] == '1', ARGV[ARG_TRACEPARENT], string.format('%d', now)
local perAddr = tonumber(ARGV[ARG_PER_ADDRESS]) or 0
local out = {0}
for i = 1, n do
  local a = ARG_ITEMS - 1 + ITEM_WIDTH * (i - 1)
  local uid, rid, addr = ARGV[a + ITEM_UID], ARGV[a + ITEM_REQUEST_ID], ARGV[a + ITEM_ADDR]
  local qty = tonumber(ARGV[a + ITEM_QTY])
  local r
  if not qty or qty < 1 or qty ~= math.floor(qty) then
    r = {-11}
  elseif now < startMs then
    r = {-2}
  elseif now >= endMs then
    r = {-3}
  else
    local cur = redis.call('HGET', KEYS[2], uid)
    if cur then
      local q, erid, eid = string.match(cur, '^(%d+) (%S+) (%S+)$')
      local list = {}
      if want then
        list = unsent(KEYS[3], eid)
      end
      r = {2, tonumber(q), erid, drawAt, list}
    elseif now >= drawAt then
      r = {-18}
    elseif qty > limit then
      r = {-4}
    elseif perAddr > 0 and addr ~= '' and (tonumber(redis.call('HGET', KEYS[4], addr)) or 0) >= perAddr then
      r = {-21}
    else
      if perAddr > 0 and addr ~= '' then
        redis.call('HINCRBY', KEYS[4], addr, 1)
        redis.call('EXPIREAT', KEYS[4], s[6])
      end
      seq = seq + 1
      made = made + 1
      local qtyS, seqS = string.format('%d', qty), string.format('%d', seq)
      local e = packEntry({t = 'entered', aid = ARGV[ARG_ACTIVITY_ID], sku = s[5], uid = uid, qty = qtyS, at = nowS,
        rid = rid, ep = s[8] or '0', sq = seqS, tp = tp})
      local id = addEntry(KEYS[3], e)
      redis.call('HSET', KEYS[2], uid, qtyS .. ' ' .. rid .. ' ' .. id)
      local list = {}
      if want then
        list = {id, e}
      end
      r = {2, qty, rid, drawAt, list}
    end
  end
  out[i + 1] = r
end
if made > 0 then
  redis.call('HSET', KEYS[1], 'seq', string.format('%d', seq))
  redis.call('EXPIREAT', KEYS[2], s[6])
end
return out
