-- expire_due: release every listed order that is still reserved and due, in one call.
-- KEYS[1] stock hash  KEYS[2] pending zset  KEYS[3] events stream
-- KEYS[4], KEYS[5] order hash and buyer hash of the first candidate; then pairs for the rest
-- ARGV[1] activity id  ARGV[2] stock-back channel  ARGV[2 + i] order_no of candidate i
-- When anything expired, the activity id is PUBLISHed on the stock-back channel.
-- The caller picks candidates from the pending zset; each is re-checked here (state
-- reserved, expire_at <= now), so a stale or concurrent pick releases nothing twice.
-- Returns {expired count, order_no...}, or {-1} when the activity is not warm.
local h = redis.call('HMGET', KEYS[1], 'sku', 'epoch')
local sku, epoch = h[1], h[2] or '0'
if not sku then
  return {-1}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local done = {}
for i = 3, #ARGV do
  local okey = KEYS[2 + 2 * (i - 2)]
  local ukey = KEYS[3 + 2 * (i - 2)]
  local ono = ARGV[i]
  local o = redis.call('HMGET', okey, 'state', 'qty', 'uid', 'expire_at', 'request_id', 'created_at')
  if o[1] == 'reserved' and tonumber(o[4]) <= now then
    local qty = tonumber(o[2])
    redis.call('HINCRBY', KEYS[1], 'locked', 0 - qty)
    redis.call('HINCRBY', KEYS[1], 'remaining', qty)
    redis.call('HINCRBY', ukey, 'held', 0 - qty)
    local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1) -- the activity's change count (see reserve.lua)
    local id = redis.call('XADD', KEYS[3], '*', 't', 'expired', 'aid', ARGV[1], 'sku', sku,
      'ono', ono, 'uid', o[3], 'qty', qty, 'at', now,
      'rid', o[5], 'cms', o[6], 'ems', o[4], 'ep', epoch, 'sq', seq)
    redis.call('HSET', okey, 'state', 'expired', 'useq', seq, 'es', id) -- 'es': see unsent.lua
    redis.call('ZREM', KEYS[2], ono)
    done[#done + 1] = ono
  elseif o[1] ~= 'reserved' then
    -- closed by a pay or cancel that won the race, or gone: stop tracking it
    redis.call('ZREM', KEYS[2], ono)
  end
end
if #done > 0 then
  redis.call('PUBLISH', ARGV[2], ARGV[1])
end
table.insert(done, 1, #done)
return done
