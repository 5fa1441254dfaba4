-- wipe: delete what Redis holds of an activity's orders and buyers while its stock hash is
-- absent: the orders hash, the buyers hash (holdings, request ids, the draw's loser values)
-- and the pending zset. A loss rebuild runs it before it restores from MySQL, so a Redis
-- that came back with part of its state (a partial rollback) keeps nothing the rebuild does
-- not write again. UNLINK: a large hash is freed off Redis's main thread, so the call does
-- not block the shard however many orders the activity has. After a flush it does nothing.
-- KEYS[1] stock hash  KEYS[2] orders hash  KEYS[3] buyers hash  KEYS[4] pending zset
-- Returns {0, orders}: the orders deleted; {-14} the stock hash exists (a live book:
-- nothing deleted).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {-14}
end
local n = redis.call('HLEN', KEYS[2])
redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[4])
return {0, n}
