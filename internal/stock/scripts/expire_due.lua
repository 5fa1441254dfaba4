-- expire_due: release every listed order that is still reserved and due, in one call.
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] orders hash  KEYS[4] buyers hash
-- KEYS[5] events stream
-- ARGV[1] activity id  ARGV[2] stock-back channel  ARGV[3] the prefix of a buyer's holding
-- field in the buyers hash (stock.HeldField: prefix .. uid)  ARGV[3 + i] order_no of candidate i
-- When anything expired, the activity id is PUBLISHed on the stock-back channel.
-- The caller picks candidates from the pending zset; each is re-checked here (state
-- reserved, expire_at <= now), so a stale or concurrent pick releases nothing twice.
-- One read and one write of the orders hash, the buyers hash and the stock hash's counters
-- for the call; one XADD per order expired.
-- Returns {expired count, order_no...}, or {-1} when the activity is not warm.
local h = redis.call('HMGET', KEYS[1], 'sku', 'epoch', 'remaining', 'locked', 'seq')
local sku, epoch = h[1], h[2] or '0'
if not sku then
  return {-1}
end
if #ARGV < 4 then
  return {0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowS = string.format('%d', now)
local remaining, locked, seq = tonumber(h[3]), tonumber(h[4]), tonumber(h[5]) or 0
local onos = {}
for i = 4, #ARGV do
  onos[#onos + 1] = ARGV[i]
end
local vals = redis.call('HMGET', KEYS[3], unpack(onos))
local done, drop, oh, held, owners = {}, {}, {}, {}, {}
for j, ono in ipairs(onos) do
  local o = unpackOrder(vals[j])
  if o and o.state == 'reserved' and tonumber(o.expire_at) <= now then
    local qty = tonumber(o.qty)
    remaining, locked, seq = remaining + qty, locked - qty, seq + 1
    local seqS = string.format('%d', seq) -- the activity's change count (see reserve.lua)
    local id = redis.call('XADD', KEYS[5], '*', 't', 'expired', 'aid', ARGV[1], 'sku', sku,
      'ono', ono, 'uid', o.uid, 'qty', o.qty, 'at', nowS,
      'rid', o.request_id, 'cms', o.created_at, 'ems', o.expire_at, 'ep', epoch, 'sq', seqS)
    oh[#oh + 1] = ono
    oh[#oh + 1] = repackOrder(o, 'expired', seqS, id) -- 'es': see unsent.lua
    local hf = ARGV[3] .. o.uid
    if not held[hf] then
      owners[#owners + 1] = hf
      held[hf] = 0
    end
    held[hf] = held[hf] + qty
    done[#done + 1] = ono
    drop[#drop + 1] = ono
  elseif not o or o.state ~= 'reserved' then
    -- closed by a pay or cancel that won the race, or gone: stop tracking it
    drop[#drop + 1] = ono
  end
end
if #drop > 0 then
  redis.call('ZREM', KEYS[2], unpack(drop))
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
  redis.call('PUBLISH', ARGV[2], ARGV[1])
end
table.insert(done, 1, #done)
return done
