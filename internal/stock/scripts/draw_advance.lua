-- draw_advance: record one served chunk of the draw (draw.go): its losers and the cursor.
-- KEYS[1] stock hash  KEYS[2] draw hash (cursor winners lost status)  KEYS[3] buyers hash
-- ARGV (stock.drawAdvanceArgs, read by the ARG_ names prepended): FROM the cursor the chunk
-- started at, TO the cursor after it, WINNERS its winners, DONE "1": the draw is done
-- (reservations are served in arrival order from now on); then from ARG_LOSERS to #ARGV each
-- loser's request id field in the buyers hash (stock.ReqField), set to '~lost' (losers.lua)
-- Returns {0}; {-1} not warm; {-19} the cursor is not FROM (another drawer recorded the
-- chunk): nothing written.
local exp = redis.call('HGET', KEYS[1], 'exp')
if not exp then
  return {-1}
end
if (redis.call('HGET', KEYS[2], 'cursor') or '0') ~= ARGV[ARG_FROM] then
  return {-19}
end
setLosers(KEYS[3], ARG_LOSERS) -- losers.lua
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
