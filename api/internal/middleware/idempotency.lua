-- idempotency: ends this request's claim on an Idempotency-Key record, only while the record is
-- still this request's pending claim (compare and set).
-- KEYS[1] the record  ARGV[1] the pending value this request wrote  ARGV[2] the done value
-- ('' deletes the claim: a 5xx is never kept)  ARGV[3] the record's lifetime in seconds
-- Returns 1 when done, 0 when the record is no longer this claim.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
end
return 1
