-- draw_mark: record one served chunk of the draw (draw.go): its losers and the cursor.
-- KEYS[1] stock hash  KEYS[2] draw hash (cursor winners lost status)  KEYS[3] buyers hash
-- ARGV (stock.drawMarkArgs, read by the ARG_ names prepended): FROM the cursor the chunk
-- started at, TO the cursor after it, WINNERS its winners, DONE "1": the draw is done
-- (reservations are served in arrival order from now on); then from ARG_LOSERS to #ARGV each
-- loser's request id field in the buyers hash (stock.ReqField), set to '~lost' (unless it
-- names an order already) so a replay of the entry's reservation is SOLD_OUT (reserve.lua
-- finds no order under it)
-- Returns {0}; {-1} not warm; {-19} the cursor is not FROM (another drawer recorded the
-- chunk): nothing written.
local exp = redis.call('HGET', KEYS[1], 'exp')
if not exp then
  return {-1}
end
if (redis.call('HGET', KEYS[2], 'cursor') or '0') ~= ARGV[ARG_FROM] then
  return {-19}
end
-- The losers go in slices of 1,000: unpack takes at most about 8,000 values (Lua's C stack),
-- and a mark call carries up to 4,096 losers (draw.go's markChunk), 8,192 HSET arguments.
for from = ARG_LOSERS, #ARGV, 1000 do
  local lost = {}
  for i = from, math.min(from + 999, #ARGV) do
    lost[#lost + 1] = ARGV[i]
  end
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
end
if #ARGV >= ARG_LOSERS then
  redis.call('EXPIREAT', KEYS[3], exp)
end
redis.call('HSET', KEYS[2], 'cursor', ARGV[ARG_TO], 'status', ARGV[ARG_DONE] == '1' and 'done' or 'drawing')
redis.call('HINCRBY', KEYS[2], 'winners', ARGV[ARG_WINNERS])
redis.call('HINCRBY', KEYS[2], 'lost', #ARGV - ARG_LOSERS + 1)
redis.call('EXPIREAT', KEYS[2], exp)
if ARGV[ARG_DONE] == '1' then
  redis.call('HSET', KEYS[1], 'drawn', '1')
end
return {0}
