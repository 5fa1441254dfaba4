-- order (prepended to the scripts that read or write orders): an order is one field of the
-- activity's orders hash, its short number (stock.shortNo) -> ten space-separated values
--   state uid qty expire_at created_at request_id cseq useq er es
-- state one letter (r p c e); uid and qty decimal; created_at (ms) in base 36 (0-9a-z),
-- expire_at - created_at (ms, '-' in front when negative) in base 36; cseq in base 36 and
-- useq - cseq (0 for an order restored from MySQL: both 0); er and es the entry ids, '-' when
-- absent, else <seq> (base 36) when the id's ms is created_at, else <seq>:<ms - created_at>
-- (base 36). The same format as stock.packed in Go (internal/stock/packed.go), the one copy
-- there, which says why each number is short.
-- Redis runs a script's whole chunk on every call: what this file does at its top level (a table
-- built, ≈ 2,300 instructions with a few fields; a function made, ≈ 450; a top-level local that
-- a function uses, an upvalue, ≈ 400) every script that prepends it pays on every call, so it
-- builds no table there and makes few functions and upvalues.
-- orderB36's ORDER_PAIRS is every two-digit base-36 number, a line per first digit (36 pairs and
-- a newline, 73 bytes): the pair of d = 36 hi + lo is at 73 hi + 2 lo + 1. A constant of the
-- function, made once, when the script is loaded. orderB36 makes a number two digits a step (a
-- string.sub and a concatenation each: a created_at of 8 digits ≈ 5,900 instructions, a digit a
-- step ≈ 12,300).
local orderSub = string.sub
-- orderB36 is whole number x in base 36 ('-' in front when negative).
local function orderB36(x)
  if x < 0 then
    return '-' .. orderB36(-x)
  end
  local ORDER_PAIRS = [[
000102030405060708090a0b0c0d0e0f0g0h0i0j0k0l0m0n0o0p0q0r0s0t0u0v0w0x0y0z
101112131415161718191a1b1c1d1e1f1g1h1i1j1k1l1m1n1o1p1q1r1s1t1u1v1w1x1y1z
202122232425262728292a2b2c2d2e2f2g2h2i2j2k2l2m2n2o2p2q2r2s2t2u2v2w2x2y2z
303132333435363738393a3b3c3d3e3f3g3h3i3j3k3l3m3n3o3p3q3r3s3t3u3v3w3x3y3z
404142434445464748494a4b4c4d4e4f4g4h4i4j4k4l4m4n4o4p4q4r4s4t4u4v4w4x4y4z
505152535455565758595a5b5c5d5e5f5g5h5i5j5k5l5m5n5o5p5q5r5s5t5u5v5w5x5y5z
606162636465666768696a6b6c6d6e6f6g6h6i6j6k6l6m6n6o6p6q6r6s6t6u6v6w6x6y6z
707172737475767778797a7b7c7d7e7f7g7h7i7j7k7l7m7n7o7p7q7r7s7t7u7v7w7x7y7z
808182838485868788898a8b8c8d8e8f8g8h8i8j8k8l8m8n8o8p8q8r8s8t8u8v8w8x8y8z
909192939495969798999a9b9c9d9e9f9g9h9i9j9k9l9m9n9o9p9q9r9s9t9u9v9w9x9y9z
a0a1a2a3a4a5a6a7a8a9aaabacadaeafagahaiajakalamanaoapaqarasatauavawaxayaz
b0b1b2b3b4b5b6b7b8b9babbbcbdbebfbgbhbibjbkblbmbnbobpbqbrbsbtbubvbwbxbybz
c0c1c2c3c4c5c6c7c8c9cacbcccdcecfcgchcicjckclcmcncocpcqcrcsctcucvcwcxcycz
d0d1d2d3d4d5d6d7d8d9dadbdcdddedfdgdhdidjdkdldmdndodpdqdrdsdtdudvdwdxdydz
e0e1e2e3e4e5e6e7e8e9eaebecedeeefegeheiejekelemeneoepeqereseteuevewexeyez
f0f1f2f3f4f5f6f7f8f9fafbfcfdfefffgfhfifjfkflfmfnfofpfqfrfsftfufvfwfxfyfz
g0g1g2g3g4g5g6g7g8g9gagbgcgdgegfggghgigjgkglgmgngogpgqgrgsgtgugvgwgxgygz
h0h1h2h3h4h5h6h7h8h9hahbhchdhehfhghhhihjhkhlhmhnhohphqhrhshthuhvhwhxhyhz
i0i1i2i3i4i5i6i7i8i9iaibicidieifigihiiijikiliminioipiqirisitiuiviwixiyiz
j0j1j2j3j4j5j6j7j8j9jajbjcjdjejfjgjhjijjjkjljmjnjojpjqjrjsjtjujvjwjxjyjz
k0k1k2k3k4k5k6k7k8k9kakbkckdkekfkgkhkikjkkklkmknkokpkqkrksktkukvkwkxkykz
l0l1l2l3l4l5l6l7l8l9lalblcldlelflglhliljlklllmlnlolplqlrlsltlulvlwlxlylz
m0m1m2m3m4m5m6m7m8m9mambmcmdmemfmgmhmimjmkmlmmmnmompmqmrmsmtmumvmwmxmymz
n0n1n2n3n4n5n6n7n8n9nanbncndnenfngnhninjnknlnmnnnonpnqnrnsntnunvnwnxnynz
o0o1o2o3o4o5o6o7o8o9oaobocodoeofogohoiojokolomonooopoqorosotouovowoxoyoz
p0p1p2p3p4p5p6p7p8p9papbpcpdpepfpgphpipjpkplpmpnpopppqprpsptpupvpwpxpypz
q0q1q2q3q4q5q6q7q8q9qaqbqcqdqeqfqgqhqiqjqkqlqmqnqoqpqqqrqsqtquqvqwqxqyqz
r0r1r2r3r4r5r6r7r8r9rarbrcrdrerfrgrhrirjrkrlrmrnrorprqrrrsrtrurvrwrxryrz
s0s1s2s3s4s5s6s7s8s9sasbscsdsesfsgshsisjskslsmsnsospsqsrssstsusvswsxsysz
t0t1t2t3t4t5t6t7t8t9tatbtctdtetftgthtitjtktltmtntotptqtrtstttutvtwtxtytz
u0u1u2u3u4u5u6u7u8u9uaubucudueufuguhuiujukulumunuoupuqurusutuuuvuwuxuyuz
v0v1v2v3v4v5v6v7v8v9vavbvcvdvevfvgvhvivjvkvlvmvnvovpvqvrvsvtvuvvvwvxvyvz
w0w1w2w3w4w5w6w7w8w9wawbwcwdwewfwgwhwiwjwkwlwmwnwowpwqwrwswtwuwvwwwxwywz
x0x1x2x3x4x5x6x7x8x9xaxbxcxdxexfxgxhxixjxkxlxmxnxoxpxqxrxsxtxuxvxwxxxyxz
y0y1y2y3y4y5y6y7y8y9yaybycydyeyfygyhyiyjykylymynyoypyqyrysytyuyvywyxyyyz
z0z1z2z3z4z5z6z7z8z9zazbzczdzezfzgzhzizjzkzlzmznzozpzqzrzsztzuzvzwzxzyzz
]]
  local s = ''
  while x >= 1296 do
    local d = x % 1296
    local lo = d % 36
    local p = (d - lo) / 36 * 73 + lo * 2 + 1
    s = orderSub(ORDER_PAIRS, p, p + 1) .. s
    x = (x - d) / 1296
  end
  local lo = x % 36
  local hi = (x - lo) / 36
  local p = hi * 73 + lo * 2 + 1
  if hi == 0 then
    return orderSub(ORDER_PAIRS, p + 1, p + 1) .. s
  end
  return orderSub(ORDER_PAIRS, p, p + 1) .. s
end
-- orderEntryID is entry id id (as XADD made it; false or nil: none) packed, relative to created
-- (a number; createdS, when given, the same as a decimal string: compared without a tonumber).
local function orderEntryID(id, created, createdS)
  if not id then
    return '-'
  end
  local ms, seq = string.match(id, '^(%d+)%-(%d+)$')
  local s = orderB36(tonumber(seq))
  if ms == createdS or tonumber(ms) == created then
    return s
  end
  return s .. ':' .. orderB36(tonumber(ms) - created)
end
-- orderShared is the two pieces of an order's value that the orders of one reservation batch
-- share (made once per batch): mid, ' <expire_at - created_at> <created_at> ' (before the
-- request id), and tail, ' <cseq> <useq - cseq> <er> <es>' (after it). expireAt, created, cseq
-- and useq are numbers, er and es entry ids (false or nil: none), createdS as in orderEntryID.
local function orderShared(expireAt, created, cseq, useq, er, es, createdS)
  return ' ' .. orderB36(expireAt - created) .. ' ' .. orderB36(created) .. ' ',
    ' ' .. orderB36(cseq) .. ' ' .. orderB36(useq - cseq) .. ' ' .. orderEntryID(er, created, createdS) .. ' ' ..
    orderEntryID(es, created, createdS)
end
-- orderValues puts in list oh, as field and value pairs from oh[1] on, a reservation batch's made
-- reserved orders, one concatenation each, in one loop (a Lua function called per order cost
-- ≈ 540 instructions more): order j's field is short[j], its uid and request id argv[at[j] + fUid]
-- and argv[at[j] + fRid], its quantity qty[j] (reserve.lua passes its ARGV), mid and tail from
-- orderShared. The value is packOrder's, state r.
local function orderValues(oh, made, short, argv, at, fUid, fRid, qty, mid, tail)
  for j = 1, made do
    local m = at[j]
    oh[2 * j - 1], oh[2 * j] = short[j], 'r ' .. argv[m + fUid] .. ' ' .. qty[j] .. mid .. argv[m + fRid] .. tail
  end
end
-- packOrder takes every value as a decimal string (numbers made by string.format('%d')) and
-- the entry ids as XADD made them; er and es may be false or nil. The state's letter is its
-- first (reserved r, paid p, cancelled c, expired e); another state is an error. The values an
-- order shares with the one packed before it in the same call (expire_due's orders of one
-- reservation batch: expire_at created_at cseq useq er es) are encoded once: packLast keeps
-- them, a table made by the first packOrder of the call (a script that packs none makes none).
local packLast
local function packOrder(state, uid, qty, expireAt, createdAt, rid, cseq, useq, er, es)
  local st = (state == 'reserved' or state == 'paid' or state == 'cancelled' or state == 'expired') and
    orderSub(state, 1, 1)
  if not st then
    error('packOrder: state ' .. tostring(state))
  end
  local l = packLast
  if not l then
    l = {}
    packLast = l
  end
  if expireAt ~= l[1] or createdAt ~= l[2] or cseq ~= l[3] or useq ~= l[4] or er ~= l[5] or es ~= l[6] then
    l[1], l[2], l[3], l[4], l[5], l[6] = expireAt, createdAt, cseq, useq, er, es
    l.mid, l.tail = orderShared(tonumber(expireAt), tonumber(createdAt), tonumber(cseq), tonumber(useq), er, es)
  end
  return st .. ' ' .. uid .. ' ' .. qty .. l.mid .. rid .. l.tail -- the same as orderValues
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
  local state = st == 'r' and 'reserved' or st == 'p' and 'paid' or st == 'c' and 'cancelled' or
    st == 'e' and 'expired'
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
