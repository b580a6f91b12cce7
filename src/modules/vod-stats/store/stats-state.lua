-- Lua, part 1 of the statistics script: key names, codecs, and the per-call cache of assets and
-- workspaces that the event application reads and writes, flushed to Redis once at the end.
--
-- Layout under the prefix P (owner o, asset a; `#o` is the owner's byte length, so no two
-- (owner, asset) pairs share a key):
--   P a:#o:o:a  hash  st, lt (start / latest ts, -1 none), sq (creation order, P seq) and
--                     <minute> -> packed minute bucket
--   P s:#o:o:a  hash  session id -> packed dedupe marks "manifest,ad,start[,code,minute]..."
--   P r:o       zset  every asset of o, score -new, member <16 digits MAX_SAFE - anchor ts><16 digits sq><id>:
--                     ZRANGE order = most new sessions, most recent ts, older asset (the embedded order)
--   P o:o       hash  <minute> -> packed workspace minute totals (the owner summary)
--   P owners    set   workspaces with state; P last: latest receipt time; P pending: delayed batches
-- A packed bucket is "requests,manifest,ad,starts,mMin,mMax,mSum,mCount,aMin,aMax,aSum,aCount[,code,n]...".
-- Numbers are written with %.17g, so every double (latency sums) reads back bit for bit.

-- NONE, MINUTE, WINDOW, RETENTION, MAX_SAFE and LATE (the default; record, release and prune
-- pass their own) are declared above this file by stats-lua.ts, from the TypeScript constants.

local P = ARGV[1]
-- Keys outlive their last use by this much (Redis-only: the TypeScript side never expires anything).
local TTL_MARGIN = 3600000
local OWNER_TTL = 3600000

-- Most numbers written are small counters and minutes: skip sprintf for whole numbers.
local floor = math.floor
local function fmt(x)
  if x == 0 then return '0' end
  if x == floor(x) and x < 1e15 and x > -1e15 then return string.format('%d', x) end
  return string.format('%.17g', x)
end
local function minuteOf(ms) return math.floor(ms / MINUTE) end
local function assetKey(kind, o, a) return P .. kind .. ':' .. #o .. ':' .. o .. ':' .. a end
local function ownerKey(o) return P .. 'o:' .. o end
local function rankKey(o) return P .. 'r:' .. o end
local function anchorOf(st, lt) if st ~= NONE then return st end return lt end
local function rankMember(anchor, sq, id) return string.format('%016d%016d', MAX_SAFE - anchor, sq) .. id end
local function memberAnchor(member) return MAX_SAFE - tonumber(string.sub(member, 1, 16)) end

local function newBucket() return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} end
local function decodeBucket(s)
  local b = {}
  local i = 0
  local code
  for part in string.gmatch(s, '[^,]+') do
    i = i + 1
    if i <= 12 then b[i] = tonumber(part)
    elseif i % 2 == 1 then code = part
    else
      if b.e == nil then b.e = {} end
      b.e[code] = tonumber(part)
    end
  end
  return b
end
local function encodeBucket(b)
  local parts = {}
  for i = 1, 12 do parts[i] = fmt(b[i]) end
  if b.e ~= nil then
    for code, n in pairs(b.e) do
      parts[#parts + 1] = code
      parts[#parts + 1] = fmt(n)
    end
  end
  return table.concat(parts, ',')
end
local function addLatency(b, base, ms)
  local count = b[base + 3]
  if count == 0 or ms < b[base] then b[base] = ms end
  if count == 0 or ms > b[base + 1] then b[base + 1] = ms end
  b[base + 2] = b[base + 2] + ms
  b[base + 3] = count + 1
end
local function addError(b, code)
  if b.e == nil then b.e = {} end
  b.e[code] = (b.e[code] or 0) + 1
end

local function decodeMarks(s)
  local m = {}
  local i = 0
  for part in string.gmatch(s, '[^,]+') do
    i = i + 1
    if i <= 3 then m[i] = tonumber(part)
    else
      if m.e == nil then m.e = {} end
      if i % 2 == 0 then m.e[#m.e + 1] = part else m.e[#m.e + 1] = tonumber(part) end
    end
  end
  return m
end
local function encodeMarks(m)
  local parts = {fmt(m[1]), fmt(m[2]), fmt(m[3])}
  if m.e ~= nil then
    for i = 1, #m.e, 2 do
      parts[#parts + 1] = m.e[i]
      parts[#parts + 1] = fmt(m.e[i + 1])
    end
  end
  return table.concat(parts, ',')
end

local function windowStarts(buckets, minute)
  local n = 0
  for m, b in pairs(buckets) do
    if m <= minute and m > minute - WINDOW then n = n + b[4] end
  end
  return n
end

-- Reads an asset hash: st, lt, buckets by minute, their count, sq; nil when the hash does not exist.
local function readAsset(k)
  local flat = redis.call('HGETALL', k)
  if #flat == 0 then return nil end
  local st, lt, sq = NONE, NONE, 0
  local buckets = {}
  local count = 0
  for i = 1, #flat, 2 do
    local f = flat[i]
    if f == 'st' then st = tonumber(flat[i + 1])
    elseif f == 'lt' then lt = tonumber(flat[i + 1])
    elseif f == 'sq' then sq = tonumber(flat[i + 1])
    else
      buckets[tonumber(f)] = flat[i + 1]
      count = count + 1
    end
  end
  return st, lt, buckets, count, sq
end

local assets = {}
local touched = {}
local function loadAsset(o, a)
  local k = assetKey('a', o, a)
  local A = assets[k]
  if A ~= nil then return A end
  A = { o = o, id = a, k = k, sk = assetKey('s', o, a), st = NONE, lt = NONE, sq = 0, am = NONE, wn = 0,
        b = {}, db = {}, s = {}, ds = {}, present = false, fresh = true, wipe = false, rk0 = false, wn0 = 0 }
  local st, lt, packed, _, sq = readAsset(k)
  if st ~= nil then
    for minute, v in pairs(packed) do A.b[minute] = decodeBucket(v) end
    A.st, A.lt, A.sq = st, lt, sq
    A.st0, A.lt0 = st, lt
    A.present, A.fresh = true, false
    local anchor = anchorOf(st, lt)
    A.am = minuteOf(anchor)
    A.wn = windowStarts(A.b, A.am)
    A.wn0 = A.wn
    A.rk0 = rankMember(anchor, sq, a)
  end
  assets[k] = A
  touched[#touched + 1] = A
  return A
end

-- Forgets an expired asset; the flush deletes its keys and its ranking entry.
local function removeAsset(A)
  A.present, A.fresh, A.wipe = false, true, true
  A.st, A.lt, A.am, A.wn = NONE, NONE, NONE, 0
  A.b, A.db, A.s, A.ds = {}, {}, {}, {}
end

local function marksOf(A, sid)
  local m = A.s[sid]
  if m ~= nil then return m end
  if not A.fresh then
    local v = redis.call('HGET', A.sk, sid)
    if v then m = decodeMarks(v) end
  end
  if m == nil then m = {NONE, NONE, NONE} end
  A.s[sid] = m
  return m
end

local function bucketOf(A, minute)
  local b = A.b[minute]
  if b == nil then
    b = newBucket()
    A.b[minute] = b
  end
  A.db[minute] = true
  return b
end

local owners = {}
local ownerList = {}
local function ownerOf(o)
  local O = owners[o]
  if O ~= nil then return O end
  O = { o = o, k = ownerKey(o), m = {}, dm = {} }
  owners[o] = O
  ownerList[#ownerList + 1] = O
  return O
end
local function ownerMinute(O, minute)
  local b = O.m[minute]
  if b == nil then
    local v = redis.call('HGET', O.k, fmt(minute))
    if v then b = decodeBucket(v) else b = newBucket() end
    O.m[minute] = b
  end
  O.dm[minute] = true
  return b
end

local function hsetChunks(key, pairsList)
  for i = 1, #pairsList, 1000 do
    redis.call('HSET', key, unpack(pairsList, i, math.min(i + 999, #pairsList)))
  end
end

-- Writes back every asset and workspace the call touched; TTLs reclaim what prune misses.
local function flush(at)
  for _, A in ipairs(touched) do
    local rk = rankKey(A.o)
    if A.wipe then
      redis.call('DEL', A.k, A.sk)
      if A.rk0 then redis.call('ZREM', rk, A.rk0) end
    end
    if A.present then
      local anchor = anchorOf(A.st, A.lt)
      local member = rankMember(anchor, A.sq, A.id)
      local fields = {}
      if A.wipe or A.st ~= A.st0 or A.lt ~= A.lt0 then fields = {'st', fmt(A.st), 'lt', fmt(A.lt), 'sq', fmt(A.sq)} end
      for minute, b in pairs(A.b) do
        if A.wipe or A.db[minute] then
          fields[#fields + 1] = fmt(minute)
          fields[#fields + 1] = encodeBucket(b)
        end
      end
      if #fields > 0 then hsetChunks(A.k, fields) end
      local sessions = {}
      for sid, m in pairs(A.s) do
        if A.ds[sid] then
          sessions[#sessions + 1] = sid
          sessions[#sessions + 1] = encodeMarks(m)
        end
      end
      if #sessions > 0 then hsetChunks(A.sk, sessions) end
      if A.wipe or member ~= A.rk0 or A.wn ~= A.wn0 then
        if A.rk0 and not A.wipe and member ~= A.rk0 then redis.call('ZREM', rk, A.rk0) end
        redis.call('ZADD', rk, fmt(0 - A.wn), member)
      end
      -- The deadline only moves with the anchor (a safety net: prune deletes expired assets first).
      if A.wipe or member ~= A.rk0 then
        local ttl = fmt(math.max(anchor + RETENTION - at, 0) + TTL_MARGIN)
        redis.call('PEXPIRE', A.k, ttl)
        redis.call('PEXPIRE', A.sk, ttl)
      end
    end
  end
  for _, O in ipairs(ownerList) do
    redis.call('SADD', P .. 'owners', O.o)
    local fields = {}
    for minute, b in pairs(O.m) do
      if O.dm[minute] then
        fields[#fields + 1] = fmt(minute)
        fields[#fields + 1] = encodeBucket(b)
      end
    end
    if #fields > 0 then
      hsetChunks(O.k, fields)
      redis.call('PEXPIRE', O.k, OWNER_TTL)
    end
  end
end
