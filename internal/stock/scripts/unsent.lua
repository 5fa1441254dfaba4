-- unsent (prepended to reserve, confirm, release and enter): the outbox entries among ids
-- that the stream still holds, as a flat list {id, fields, id, fields, ...} (fields as XRANGE
-- returns them: {'e', entry} for a packed entry, entry.lua). The relay and the
-- inventory service's Acker delete an entry only once Kafka has it, so an entry still
-- here may not be in Kafka yet: a replayed change is acknowledged only once it is (the
-- caller produces these first). ids are an order's 'er' (its reserved entry) and 'es'
-- (its settling entry); false (absent) ids are skipped.
local function unsent(stream, ...)
  local out = {}
  for i = 1, select('#', ...) do
    local id = select(i, ...)
    if id then
      local e = redis.call('XRANGE', stream, id, id)
      if e[1] then
        out[#out + 1] = e[1][1]
        out[#out + 1] = e[1][2]
      end
    end
  end
  return out
end
