-- acked: the inventory service's Acker produced outbox entries of one activity to Kafka
-- itself. Each entry whose epoch the activity's stock hash still holds (the book that
-- made the change still sells: no flush, no rebuild since) is deleted from the outbox, so
-- the relay does not produce it a second time. Check and delete in one step: a rebuilt
-- outbox is never touched. Concurrent Ackers share one call (relay.Acker batches them). An
-- entry is one change's event or a reservation batch's events (reserve.lua): checked and
-- deleted whole.
-- KEYS[1] stock hash  KEYS[2] events stream
-- ARGV (stock.ackedArgs, read by the ARG_ names prepended): from ARG_ENTRIES on the entries
-- (n >= 1), ENTRY_WIDTH values each (stock.ackedEntryArgs): EPOCH the epoch it was written
-- under ('ep') and ID its id; entry i's ENTRY_<NAME> is
-- ARGV[ARG_ENTRIES - 1 + ENTRY_WIDTH * (i - 1) + ENTRY_<NAME>].
-- Returns {0, epoch, seq, line, same_1, ..., same_n}: the hash's epoch and change count
--         'seq', the serving Redis's replication id (INFO's master_replid: a new one after a
--         promotion or a restart), and per entry 1 (its epoch: deleted) or 0 (another epoch:
--         nothing deleted);
--         {-1} the hash is gone (not warm); {-11} a bad argument.
local n = (#ARGV - ARG_ENTRIES + 1) / ENTRY_WIDTH
if n < 1 or n ~= math.floor(n) then
  return {-11}
end
local h = redis.call('HMGET', KEYS[1], 'epoch', 'seq')
local ep = h[1]
if not ep then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return {-1}
  end
  ep = '0' -- a hash written before epochs existed
end
local line = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)') or ''
local out = {0, ep, h[2] or '0', line}
local del = {}
for i = 1, n do
  local a = ARG_ENTRIES - 1 + ENTRY_WIDTH * (i - 1)
  if ARGV[a + ENTRY_EPOCH] == ep then
    del[#del + 1] = ARGV[a + ENTRY_ID]
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if #del > 0 then
  redis.call('XDEL', KEYS[2], unpack(del))
end
return out
