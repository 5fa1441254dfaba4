-- losers (prepended to draw_advance and restore_losers): setLosers(key, from) sets each buyers
-- hash field ARGV[from] .. ARGV[#ARGV] (an entrant's request id field, stock.ReqField) to the
-- loser value '~lost' unless it names an order already, so a replay of the entry's reservation is SOLD_OUT
-- (reserve.lua finds no order under it). The fields go in slices of 1,000: unpack takes at
-- most about 8,000 values (Lua's C stack), and a draw_advance call carries up to 4,096 losers
-- (draw.go's loserChunk), 8,192 HSET arguments.
local function setLosers(key, from)
  for first = from, #ARGV, 1000 do
    local lost = {}
    for i = first, math.min(first + 999, #ARGV) do
      lost[#lost + 1] = ARGV[i]
    end
    local cur = redis.call('HMGET', key, unpack(lost))
    local set = {}
    for j, f in ipairs(lost) do
      if not cur[j] then
        set[#set + 1] = f
        set[#set + 1] = '~lost'
      end
    end
    if #set > 0 then
      redis.call('HSET', key, unpack(set))
    end
  end
end
