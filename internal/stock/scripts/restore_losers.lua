-- restore_losers: for a done draw, set a batch of its losers' request id fields to '~lost'
-- (losers.lua) while the stock hash is absent: part of the rebuild after a loss
-- (restore.lua), as draw_advance set them.
-- KEYS[1] stock hash  KEYS[2] buyers hash
-- ARGV (stock.restoreLosersArgs, read by the ARG_ names prepended): EXPIRE_AT the keys' (unix
-- s), then from ARG_LOSERS to #ARGV each loser's request id field in the buyers hash
-- (stock.ReqField).
-- Returns {0, n} the losers taken; {-14} the stock hash exists, {-11} a bad argument
-- (rebuild.lua; nothing written).
local n, refused = restoreBatch(ARGV[ARG_EXPIRE_AT], ARG_LOSERS, 1)
if not n then
  return refused
end
if n > 0 then
  setLosers(KEYS[2], ARG_LOSERS)
  redis.call('EXPIREAT', KEYS[2], ARGV[ARG_EXPIRE_AT])
end
return {0, n}
