-- claim_epoch: a loss rebuild claims the next epoch of an activity before it bumps
-- inventory.epoch in MySQL. While the stock hash is absent it raises the claim key to
-- EPOCH (never lowers it); warmup then refuses to write a stock hash of an older epoch.
-- A rebuilder that stalled past its lock's lease between its own bump and its stock hash
-- write, while a second one bumped again, so can never leave a stock hash one epoch
-- behind MySQL (whose every change the writer would drop). Checking the hash and raising
-- the claim are one step: a stalled rebuilder's hash written first makes this one stop.
-- KEYS[1] stock hash  KEYS[2] epoch claim key (stock.Keys.EpochClaim)
-- ARGV (stock.claimEpochArgs, read by the ARG_ names prepended): EPOCH the rebuild will bump MySQL
-- to, EXPIRE_AT the key's expire-at (unix s)
-- Returns {0} raised (or already that high); {-14} the stock hash exists (nothing
-- written); {-11} a bad argument.
local e = tonumber(ARGV[ARG_EPOCH])
local exp = tonumber(ARGV[ARG_EXPIRE_AT])
if not e or e < 1 or e ~= math.floor(e) or not exp or exp ~= math.floor(exp) then
  return {-11}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {-14}
end
local cur = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if e > cur then
  redis.call('SET', KEYS[2], ARGV[ARG_EPOCH], 'EXAT', ARGV[ARG_EXPIRE_AT])
end
return {0}
