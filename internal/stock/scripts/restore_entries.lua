-- restore_entries: write a batch of the draw's entries, read from MySQL (draw_entry), into
-- Redis while the stock hash is absent: part of the rebuild after a loss (restore.lua).
-- KEYS[1] stock hash  KEYS[2] entries hash  KEYS[2 + j]: buyer hash of lost entrant j
-- ARGV[1] keys' expire at (unix s)  ARGV[2] n
-- ARGV[3 + 2(i-1)], ARGV[4 + 2(i-1)]: entry i's uid and value ("qty request_id entry_id")
-- ARGV[3 + 2n + (j-1)]: lost entrant j's request id field, set to '~lost' (a done draw)
-- Returns {0, n}; {-14} the stock hash exists (nothing written).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {-14}
end
local n = tonumber(ARGV[2])
for i = 1, n do
  redis.call('HSET', KEYS[2], ARGV[1 + 2 * i], ARGV[2 + 2 * i])
end
if n > 0 then
  redis.call('EXPIREAT', KEYS[2], ARGV[1])
end
for j = 3, #KEYS do
  redis.call('HSETNX', KEYS[j], ARGV[2 * n + j], '~lost')
  redis.call('EXPIREAT', KEYS[j], ARGV[1])
end
return {0, n}
