-- end_sale: a merchant ended the activity's sale early (EndActivity). The warmed stock hash's
-- 'end' (unix s, what reserve.lua checks against Redis's clock) becomes ARGV[1] if that is
-- earlier; a later one never moves it back. A missing hash is left missing: the next warm-up
-- or backfill reads the end from MySQL, which the caller changed first.
-- KEYS[1] stock hash  ARGV[1] the new end (unix s)
-- Returns {1} moved, {0} already at or before it, {-1} not warm (ErrNotWarm).
local e = redis.call('HGET', KEYS[1], 'end')
if not e then
  return {-1}
end
if tonumber(e) <= tonumber(ARGV[1]) then
  return {0}
end
redis.call('HSET', KEYS[1], 'end', ARGV[1])
return {1}
