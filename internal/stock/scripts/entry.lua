-- entry (prepended to every script that writes an outbox entry): an outbox entry is one stream
-- field, 'e', whose value packs the change's attributes as key=value separated by single
-- spaces, the keys event.Field* (t aid sku ono uid qty d at rid cms ems ep sq tn tp, in that
-- order), absent ones left out. No value is empty or holds a space. The same format as
-- event.Event.Pack and event.Attributes in Go (internal/event/entry.go), the one copy there.
-- Every value is a string (numbers made by string.format('%d')).
-- addEntry appends packed entry e to the outbox stream and returns its id.
local function addEntry(stream, e)
  return redis.call('XADD', stream, '*', 'e', e)
end
-- entryTrace is an entry's traceparent part ('' for none: tp nil or ''), made once per call.
local function entryTrace(tp)
  if tp and tp ~= '' then
    return ' tp=' .. tp
  end
  return ''
end
-- packOrderEntry is the entry of an order's change (reserved, paid, cancelled, expired), in one
-- concatenation: reserve.lua makes one per reservation. cms nil: none (a reserved entry's
-- creation is its 'at'); trace from entryTrace (confirm.lua puts the 'tn' of a provider's
-- payment before it).
local function packOrderEntry(t, aid, sku, ono, uid, qty, at, rid, cms, ems, ep, sq, trace)
  return 't=' .. t .. ' aid=' .. aid .. ' sku=' .. sku .. ' ono=' .. ono .. ' uid=' .. uid .. ' qty=' .. qty ..
    ' at=' .. at .. ' rid=' .. rid .. (cms and ' cms=' .. cms or '') .. ' ems=' .. ems .. ' ep=' .. ep ..
    ' sq=' .. sq .. trace
end
-- A reserve batch's events go in one entry (event.BatchSep in Go): a first line of the attributes
-- they share (packBatchHead: the batch is one change, of one seq), then a line per event of its
-- own (batchLines), each starting with a newline; the caller concatenates the lines once
-- (table.concat) and XADDs the entry.
-- packBatchHead is the shared line of a batch of t events (trace from entryTrace).
local function packBatchHead(t, aid, sku, at, ems, ep, sq, trace)
  return 't=' .. t .. ' aid=' .. aid .. ' sku=' .. sku .. ' at=' .. at .. ' ems=' .. ems .. ' ep=' .. ep ..
    ' sq=' .. sq .. trace
end
-- batchLines puts in list ep, at ep[2] to ep[made + 1], the own lines of a batch's made order
-- events, one concatenation each, in one loop (a Lua function called per line cost ≈ 540
-- instructions more): event j's order_no, uid and request id are argv[at[j] + fOno],
-- argv[at[j] + fUid] and argv[at[j] + fRid], its quantity qty[j] (reserve.lua passes its ARGV).
local function batchLines(ep, made, argv, at, fOno, fUid, fRid, qty)
  for j = 1, made do
    local m = at[j]
    ep[j + 1] = '\nono=' .. argv[m + fOno] .. ' uid=' .. argv[m + fUid] .. ' qty=' .. qty[j] .. ' rid=' ..
      argv[m + fRid]
  end
end
-- packEntry is the entry of any change from its attributes by key ({t = 'adjusted', aid = ...};
-- a nil, false or '' value is left out). Its list of the keys in their order is made here, not at
-- the top level, where every script that prepends this file would pay for it on every call.
local function packEntry(a)
  local p = {}
  local keys = {'t', 'aid', 'sku', 'ono', 'uid', 'qty', 'd', 'at', 'rid', 'cms', 'ems', 'ep', 'sq', 'tn', 'tp'}
  for _, k in ipairs(keys) do
    local v = a[k]
    if v and v ~= '' then
      p[#p + 1] = k .. '=' .. v
    end
  end
  return table.concat(p, ' ')
end
