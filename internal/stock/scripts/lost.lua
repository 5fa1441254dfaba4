-- lost: the inventory service's Acker found that Redis no longer holds writes it had
-- acknowledged (a partial rollback: a failover to a replica that had not received them,
-- or a restart that lost the last second of the AOF). While the stock hash is still of
-- the epoch the Acker checked, delete it: every script then answers not warm, and the
-- next call rebuilds the activity from MySQL as after any loss (the rebuild wipes what
-- the rolled-back Redis kept of the activity's orders before it restores them).
-- KEYS[1] stock hash
-- ARGV (stock.lostArgs, read by the ARG_ names prepended): EPOCH the Acker saw
-- Returns {1} deleted; {0} gone already, or of another epoch (nothing deleted).
local ep = redis.call('HGET', KEYS[1], 'epoch')
if ep and ep == ARGV[ARG_EPOCH] then
  redis.call('DEL', KEYS[1])
  return {1}
end
return {0}
