-- acked: the inventory service's Acker produced an outbox entry to Kafka itself. If the
-- activity's stock hash still holds the epoch the entry was written in (the book that
-- made the change still sells: no flush, no rebuild since), the entry is deleted from the
-- outbox, so the relay does not produce it a second time. Check and delete in one step: a
-- rebuilt outbox is never touched.
-- KEYS[1] stock hash  KEYS[2] events stream
-- ARGV[1] the entry's epoch ('ep')  ARGV[2] the entry id
-- Returns {1} deleted; {0, epoch} the hash holds another epoch (nothing deleted);
--         {-1} the hash is gone (not warm).
local ep = redis.call('HGET', KEYS[1], 'epoch')
if not ep then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return {-1}
  end
  ep = '0' -- a hash written before epochs existed
end
if ep ~= ARGV[1] then
  return {0, ep}
end
redis.call('XDEL', KEYS[2], ARGV[2])
return {1}
