-- restore_entries: write a batch of the draw's entries, read from MySQL (draw_entry), into
-- Redis while the stock hash is absent: part of the rebuild after a loss (restore.lua).
-- KEYS[1] stock hash  KEYS[2] entries hash  KEYS[3] buyers hash
-- ARGV[1] keys' expire at (unix s)  ARGV[2] n
-- ARGV[3 + 2(i-1)], ARGV[4 + 2(i-1)]: entry i's uid and value ("qty request_id entry_id")
-- ARGV[3 + 2n + (j-1)]: lost entrant j's request id field in the buyers hash (stock.ReqField),
-- set to '~lost' unless it names an order (a done draw)
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
local lost = {}
for j = 3 + 2 * n, #ARGV do
  lost[#lost + 1] = ARGV[j]
end
if #lost > 0 then
  local cur = redis.call('HMGET', KEYS[3], unpack(lost))
  local set = {}
  for j, f in ipairs(lost) do
    if not cur[j] then
      set[#set + 1] = f
      set[#set + 1] = '~lost'
    end
  end
  if #set > 0 then
    redis.call('HSET', KEYS[3], unpack(set))
  end
  redis.call('EXPIREAT', KEYS[3], ARGV[1])
end
return {0, n}
