-- end_sale: a merchant ended the activity's sale early (EndActivity). The warmed stock hash's
-- 'end' (unix s, what reserve.lua checks against Redis's clock) becomes END if that is
-- earlier; a later one never moves it back. A missing hash is left missing: the next warm-up
-- or backfill reads the end from MySQL, which the caller changed first.
-- KEYS[1] stock hash
-- ARGV (stock.endSaleArgs, read by the ARG_ names prepended): END the new end (unix s)
-- Returns {1} moved, {0} already at or before it, {-1} not warm (ErrNotWarm).
local e = redis.call('HGET', KEYS[1], 'end')
if not e then
  return {-1}
end
if tonumber(e) <= tonumber(ARGV[ARG_END]) then
  return {0}
end
redis.call('HSET', KEYS[1], 'end', ARGV[ARG_END])
return {1}
