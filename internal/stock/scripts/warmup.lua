-- warmup: create an activity's stock hash only if it is absent.
-- KEYS[1] stock hash
-- ARGV[1] total  ARGV[2] remaining  ARGV[3] locked  ARGV[4] sold
-- ARGV[5] start (unix s)  ARGV[6] end (unix s)  ARGV[7] per-user limit
-- ARGV[8] pay timeout (s)  ARGV[9] sku id  ARGV[10] expire at (unix s: end + grace)
-- ARGV[11] name
-- Returns {1, remaining} created, {0, remaining} it existed (never overwritten).
local cur = redis.call('HGET', KEYS[1], 'remaining')
if cur then
  return {0, tonumber(cur)}
end
redis.call('HSET', KEYS[1],
  'total', ARGV[1], 'remaining', ARGV[2], 'locked', ARGV[3], 'sold', ARGV[4],
  'start', ARGV[5], 'end', ARGV[6], 'limit', ARGV[7], 'ttl', ARGV[8],
  'sku', ARGV[9], 'exp', ARGV[10], 'name', ARGV[11])
redis.call('EXPIREAT', KEYS[1], ARGV[10])
return {1, tonumber(ARGV[2])}
