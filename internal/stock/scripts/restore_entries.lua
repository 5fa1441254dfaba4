-- restore_entries: write a batch of the draw's entries, read from MySQL (draw_entry), into
-- Redis while the stock hash is absent: part of the rebuild after a loss (restore.lua).
-- KEYS[1] stock hash  KEYS[2] entries hash
-- ARGV (stock.restoreEntriesArgs, read by the ARG_ names prepended): EXPIRE_AT the keys'
-- (unix s), then from ARG_ENTRIES the entries, ENTRY_WIDTH values each
-- (stock.restoreEntryArgs): UID and VALUE ("qty request_id entry_id"); entry i's
-- ENTRY_<NAME> is ARGV[ARG_ENTRIES - 1 + ENTRY_WIDTH * (i - 1) + ENTRY_<NAME>].
-- Returns {0, n} the entries written; {-14} the stock hash exists, {-11} a bad argument
-- (rebuild.lua; nothing written).
local n, refused = restoreBatch(ARGV[ARG_EXPIRE_AT], ARG_ENTRIES, ENTRY_WIDTH)
if not n then
  return refused
end
for i = 1, n do
  local a = ARG_ENTRIES - 1 + ENTRY_WIDTH * (i - 1)
  redis.call('HSET', KEYS[2], ARGV[a + ENTRY_UID], ARGV[a + ENTRY_VALUE])
end
if n > 0 then
  redis.call('EXPIREAT', KEYS[2], ARGV[ARG_EXPIRE_AT])
end
return {0, n}
