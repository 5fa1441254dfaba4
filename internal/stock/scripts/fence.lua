-- fence: a loss rebuild claims the next epoch of an activity before it bumps
-- inventory.epoch in MySQL. While the stock hash is absent it raises the fence key to
-- ARGV[1] (never lowers it); warmup then refuses to write a stock hash of an older epoch.
-- A rebuilder that stalled past its lock's lease between its own bump and its stock hash
-- write, while a second one bumped again, so can never leave a stock hash one epoch
-- behind MySQL (whose every change the writer would drop). Checking the hash and raising
-- the fence are one step: a stalled rebuilder's hash written first makes this one stop.
-- KEYS[1] stock hash  KEYS[2] fence key
-- ARGV[1] the epoch the rebuild will bump MySQL to  ARGV[2] the key's expire-at (unix s)
-- Returns {0} raised (or already that high); {-14} the stock hash exists (nothing
-- written); {-11} a bad argument.
local e = tonumber(ARGV[1])
local exp = tonumber(ARGV[2])
if not e or e < 1 or e ~= math.floor(e) or not exp or exp ~= math.floor(exp) then
  return {-11}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {-14}
end
local cur = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if e > cur then
  redis.call('SET', KEYS[2], ARGV[1], 'EXAT', ARGV[2])
end
return {0}
