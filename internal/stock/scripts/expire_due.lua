-- expire_due: release the orders of the listed pending members that are still reserved and
-- due, up to a limit, in one call.
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] orders hash  KEYS[4] buyers hash
-- KEYS[5] events stream
-- ARGV (stock.expireDueArgs, read by the ARG_ names prepended): ACTIVITY_ID, STOCK_BACK the
-- stock-back channel, HELD_PREFIX the prefix of a buyer's holding field in the buyers hash
-- (stock.HeldField: prefix .. uid), LIMIT the most orders to expire, then from ARG_MEMBERS the
-- pending members, MEMBER_WIDTH values each (stock.expireMemberArgs): SHORTS the member, the
-- short numbers of one reservation batch's orders, space-separated (reserve.lua), all with the
-- member's score as their expire-at, and ORDER_NOS the same orders' order_nos in the same order
-- (their events'; Go makes them of the short numbers)
-- When anything expired, the activity id is PUBLISHed on the stock-back channel.
-- The caller picks members from the pending zset; each order is re-checked here (state
-- reserved, expire_at <= now), so a stale or concurrent pick releases nothing twice; an
-- order no longer reserved (paid, cancelled, gone) is passed over. A member is removed once
-- none of its orders is left reserved (the limit can stop the call inside one); once the
-- zset is empty (and gone) the stock hash's 'kx' is removed (see reserve.lua).
-- One read and one write of the orders hash, the buyers hash and the stock hash's counters
-- for the call; one XADD per order expired.
-- Returns {expired count, members removed, order_no...}, or {-1} when the activity is not
-- warm; {-11} a bad limit, or a member whose order_nos do not match its short numbers.
local h = redis.call('HMGET', KEYS[1], 'sku', 'epoch', 'remaining', 'locked', 'seq')
local sku, epoch = h[1], h[2] or '0'
if not sku then
  return {-1}
end
local limit = tonumber(ARGV[ARG_LIMIT])
if not limit or limit < 1 then
  return {-11}
end
local m = (#ARGV - ARG_MEMBERS + 1) / MEMBER_WIDTH
if m < 1 then
  return {0, 0}
end
if m ~= math.floor(m) then
  return {-11}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowS = string.format('%d', now)
local remaining, locked, seq = tonumber(h[3]), tonumber(h[4]), tonumber(h[5]) or 0
-- onos the orders' short numbers, fulls their order_nos; first[i]: member i's first order in onos
local onos, fulls, first = {}, {}, {}
local function base(i)
  return ARG_MEMBERS - 1 + MEMBER_WIDTH * (i - 1)
end
for i = 1, m do
  local a = base(i)
  first[i] = #onos + 1
  for ono in string.gmatch(ARGV[a + MEMBER_SHORTS], '%S+') do
    onos[#onos + 1] = ono
  end
  for full in string.gmatch(ARGV[a + MEMBER_ORDER_NOS], '%S+') do
    fulls[#fulls + 1] = full
  end
  if #fulls ~= #onos then
    return {-11}
  end
end
first[m + 1] = #onos + 1
local vals = {}
if #onos > 0 then
  vals = redis.call('HMGET', KEYS[3], unpack(onos))
end
local done, drop, oh, held, owners = {}, {}, {}, {}, {}
for i = 1, m do
  local left = false -- an order of the member still reserved
  for j = first[i], first[i + 1] - 1 do
    local o = unpackOrder(vals[j])
    if o and o.state == 'reserved' then
      if #done < limit and tonumber(o.expire_at) <= now then
        local ono, full, qty = onos[j], fulls[j], tonumber(o.qty)
        remaining, locked, seq = remaining + qty, locked - qty, seq + 1
        local seqS = string.format('%d', seq) -- the activity's change count (see reserve.lua)
        local id = addEntry(KEYS[5], packOrderEntry('expired', ARGV[ARG_ACTIVITY_ID], sku, full, o.uid, o.qty, nowS,
          o.request_id, o.created_at, o.expire_at, epoch, seqS, ''))
        oh[#oh + 1] = ono
        oh[#oh + 1] = repackOrder(o, 'expired', seqS, id) -- 'es': see unsent.lua
        local hf = ARGV[ARG_HELD_PREFIX] .. o.uid
        if not held[hf] then
          owners[#owners + 1] = hf
          held[hf] = 0
        end
        held[hf] = held[hf] + qty
        done[#done + 1] = full
      else
        left = true
      end
    end
  end
  if not left then
    local a = base(i)
    drop[#drop + 1] = ARGV[a + MEMBER_SHORTS]
  end
end
if #drop > 0 then
  redis.call('ZREM', KEYS[2], unpack(drop))
  if redis.call('EXISTS', KEYS[2]) == 0 then
    -- the zset is gone: the next reservation creates it and sets its EXPIREAT (reserve.lua)
    redis.call('HDEL', KEYS[1], 'kx')
  end
end
if #done > 0 then
  redis.call('HSET', KEYS[3], unpack(oh))
  local cur = redis.call('HMGET', KEYS[4], unpack(owners))
  local bh = {}
  for j, hf in ipairs(owners) do
    bh[2 * j - 1], bh[2 * j] = hf, string.format('%d', tonumber(cur[j] or '0') - held[hf])
  end
  redis.call('HSET', KEYS[4], unpack(bh))
  redis.call('HSET', KEYS[1], 'remaining', string.format('%d', remaining), 'locked', string.format('%d', locked),
    'seq', string.format('%d', seq))
  redis.call('PUBLISH', ARGV[ARG_STOCK_BACK], ARGV[ARG_ACTIVITY_ID])
end
local out = {#done, #drop}
for j = 1, #done do
  out[j + 2] = done[j]
end
return out
