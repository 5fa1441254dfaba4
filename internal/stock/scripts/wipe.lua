-- wipe: delete one chunk of what Redis holds of an activity's orders and buyers while its
-- stock hash is absent: the first ARGV[4] order numbers of the orders zset, each order
-- hash with its buyer's hash (request ids and holding), and the numbers themselves; once the
-- zset is empty, the pending zset too. A loss rebuild runs it until done before it
-- restores from MySQL, so a Redis that came back with part of its state (a partial
-- rollback) keeps nothing the rebuild does not write again. After a flush the zset is
-- absent and this does nothing.
-- KEYS[1] stock hash  KEYS[2] orders zset  KEYS[3] pending zset
-- ARGV[1] order-hash prefix  ARGV[2] buyer-hash prefix (stock.Keys: prefix .. order_no,
--   prefix .. uid)
-- ARGV[3] chunk size
-- Returns {0, deleted, left}: orders deleted, 1 if the zset still holds more; {-14} the
-- stock hash exists (a live book: nothing deleted); {-11} a bad argument.
local n = tonumber(ARGV[3])
if not n or n < 1 or n ~= math.floor(n) then
  return {-11}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {-14}
end
local nos = redis.call('ZRANGE', KEYS[2], 0, n - 1)
for _, no in ipairs(nos) do
  local okey = ARGV[1] .. no
  local uid = redis.call('HGET', okey, 'uid')
  redis.call('DEL', okey)
  if uid then
    redis.call('DEL', ARGV[2] .. uid)
  end
end
if #nos > 0 then
  redis.call('ZREM', KEYS[2], unpack(nos))
end
if #nos < n then
  redis.call('DEL', KEYS[2], KEYS[3])
  return {0, #nos, 0}
end
return {0, #nos, 1}
