-- order (prepended to the scripts that read or write orders): an order is one field of the
-- activity's orders hash, its short number (stock.shortNo) -> ten space-separated values
--   state uid qty expire_at created_at request_id cseq useq er es
-- ('-' for an absent entry id er/es; cseq/useq 0 for an order restored from MySQL). The same
-- format as stock.packed in Go (internal/stock/packed.go), the one copy there.
-- packOrder takes every value as a string (numbers made by string.format('%d')); er and es
-- may be false or nil.
local function packOrder(state, uid, qty, expireAt, createdAt, rid, cseq, useq, er, es)
  return state .. ' ' .. uid .. ' ' .. qty .. ' ' .. expireAt .. ' ' .. createdAt .. ' ' .. rid .. ' ' ..
    cseq .. ' ' .. useq .. ' ' .. (er or '-') .. ' ' .. (es or '-')
end
-- unpackOrder reads a packed order into a table (its values as strings; er and es false when
-- absent); nil for nil or a value that is not a packed order.
local function unpackOrder(v)
  if not v then
    return nil
  end
  local st, uid, qty, ea, ca, rid, cseq, useq, er, es =
    string.match(v, '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$')
  if not st then
    return nil
  end
  return {state = st, uid = uid, qty = qty, expire_at = ea, created_at = ca, request_id = rid, cseq = cseq,
    useq = useq, er = er ~= '-' and er, es = es ~= '-' and es}
end
-- repackOrder is o (from unpackOrder) in its new state after a change of seq seqS whose
-- settling entry is es.
local function repackOrder(o, state, seqS, es)
  return packOrder(state, o.uid, o.qty, o.expire_at, o.created_at, o.request_id, o.cseq, seqS, o.er, es)
end
