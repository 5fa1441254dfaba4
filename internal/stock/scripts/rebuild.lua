-- rebuild (prepended to the restore scripts, which write a loss rebuild's batches read from
-- MySQL): restoreBatch(exp, first, width) is how many groups of width values ARGV holds from
-- first on, once the batch may be written: the stock hash KEYS[1] absent (another rebuild
-- finished and selling resumed: a stale rebuilder can never overwrite live state) and exp, the
-- keys' expire-at, a whole unix second after now and within 20 years. Else nil and the
-- script's reply: {-14} the stock hash exists, {-11} a bad expire-at or count.
local function restoreBatch(exp, first, width)
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return nil, {-14}
  end
  local nowS = tonumber(redis.call('TIME')[1])
  local e = tonumber(exp)
  local n = (#ARGV - first + 1) / width
  if not e or e ~= math.floor(e) or e <= nowS or e > nowS + 630720000 or n < 0 or n ~= math.floor(n) then
    return nil, {-11}
  end
  return n
end
