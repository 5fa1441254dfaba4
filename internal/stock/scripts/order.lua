-- order (prepended to the scripts that read or write orders): an order is one field of the
-- activity's orders hash, its short number (stock.shortNo) -> ten space-separated values
--   state uid qty expire_at created_at request_id cseq useq er es
-- state one letter (r p c e); uid and qty decimal; created_at (ms) in base 36 (0-9a-z),
-- expire_at - created_at (ms, '-' in front when negative) in base 36; cseq in base 36 and
-- useq - cseq (0 for an order restored from MySQL: both 0); er and es the entry ids, '-' when
-- absent, else <seq> (base 36) when the id's ms is created_at, else <seq>:<ms - created_at>
-- (base 36). The same format as stock.packed in Go (internal/stock/packed.go), the one copy
-- there, which says why each number is short.
-- packOrder takes every value as a decimal string (numbers made by string.format('%d')) and
-- the entry ids as XADD made them; er and es may be false or nil. The values an order shares
-- with the one packed before it (a reservation batch's: expire_at created_at cseq useq er es)
-- are encoded once.
local ORDER_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'
local ORDER_STATES = {reserved = 'r', paid = 'p', cancelled = 'c', expired = 'e'}
local ORDER_STATE_NAMES = {r = 'reserved', p = 'paid', c = 'cancelled', e = 'expired'}
local function orderB36(x)
  if x < 0 then
    return '-' .. orderB36(-x)
  end
  local s = ''
  repeat
    local d = x % 36
    s = string.sub(ORDER_DIGITS, d + 1, d + 1) .. s
    x = (x - d) / 36
  until x == 0
  return s
end
local function orderEntryID(id, created)
  if not id then
    return '-'
  end
  local ms, seq = string.match(id, '^(%d+)%-(%d+)$')
  local s = orderB36(tonumber(seq))
  if tonumber(ms) == created then
    return s
  end
  return s .. ':' .. orderB36(tonumber(ms) - created)
end
local orderLast = {}
local function packOrder(state, uid, qty, expireAt, createdAt, rid, cseq, useq, er, es)
  local l = orderLast
  if expireAt ~= l[1] or createdAt ~= l[2] or cseq ~= l[3] or useq ~= l[4] or er ~= l[5] or es ~= l[6] then
    local c, s = tonumber(createdAt), tonumber(cseq)
    l[1], l[2], l[3], l[4], l[5], l[6] = expireAt, createdAt, cseq, useq, er, es
    l.head = orderB36(tonumber(expireAt) - c) .. ' ' .. orderB36(c)
    l.tail = orderB36(s) .. ' ' .. orderB36(tonumber(useq) - s) .. ' ' .. orderEntryID(er, c) .. ' ' ..
      orderEntryID(es, c)
  end
  return ORDER_STATES[state] .. ' ' .. uid .. ' ' .. qty .. ' ' .. l.head .. ' ' .. rid .. ' ' .. l.tail
end
-- orderNumber reads a base-36 number of a packed order (signed: '-' in front allowed); nil
-- when v is not one.
local function orderNumber(v, signed)
  if signed and string.sub(v, 1, 1) == '-' then
    local x = orderNumber(string.sub(v, 2), false)
    return x and -x
  end
  if not string.find(v, '^[0-9a-z]+$') then
    return nil
  end
  return tonumber(v, 36)
end
-- orderUnpackEntryID is the entry id v stands for (false when absent), nil when v is not one.
local function orderUnpackEntryID(v, created)
  if v == '-' then
    return false
  end
  local s, d = orderNumber(v, false), 0
  if not s then
    local seq, rel = string.match(v, '^([^:]+):(.+)$')
    s, d = seq and orderNumber(seq, false), rel and orderNumber(rel, true)
  end
  if not s or not d then
    return nil
  end
  return string.format('%d-%d', created + d, s)
end
-- unpackOrder reads a packed order into a table (its values as decimal strings; er and es
-- false when absent, else the ids as XADD made them); nil for nil or a value that is not a
-- packed order.
local function unpackOrder(v)
  if not v then
    return nil
  end
  local st, uid, qty, ea, ca, rid, cseq, useq, er, es =
    string.match(v, '^(%S+) (%d+) (%d+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$')
  local state = ORDER_STATE_NAMES[st]
  if not state then
    return nil
  end
  local c, e, s, u = orderNumber(ca, false), orderNumber(ea, true), orderNumber(cseq, false), orderNumber(useq, true)
  if not c or not e or not s or not u then
    return nil
  end
  local ers, ess = orderUnpackEntryID(er, c), orderUnpackEntryID(es, c)
  if ers == nil or ess == nil then
    return nil
  end
  return {state = state, uid = uid, qty = qty, expire_at = string.format('%d', c + e),
    created_at = string.format('%d', c), request_id = rid, cseq = string.format('%d', s),
    useq = string.format('%d', s + u), er = ers, es = ess}
end
-- repackOrder is o (from unpackOrder) in its new state after a change of seq seqS whose
-- settling entry is es.
local function repackOrder(o, state, seqS, es)
  return packOrder(state, o.uid, o.qty, o.expire_at, o.created_at, o.request_id, o.cseq, seqS, o.er, es)
end
