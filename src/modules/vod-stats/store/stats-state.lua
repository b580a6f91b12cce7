-- Lua, part 1 of the statistics script: key names, codecs, and the per-call cache of assets and
-- workspaces that the event application reads and writes, flushed to Redis once at the end.
-- The time rules come from stats-window.ts (the same constants as the embedded store).
--
-- Layout under the prefix P (owner o, asset a; `#o` is the owner's byte length, so no two
-- (owner, asset) pairs share a key):
--   P a:#o:o:a  hash  st, lt (start / latest ts, -1 none), sq (creation order), fl (floor second),
--                     w (the window's statistics, packed) and d<second> -> packed detail bucket
--   P h:#o:o:a  hash  <minute> -> packed history bucket
--   P q:#o:o:a  hash  <minute> -> playback quality "rebuffers,startupSum,startupCount,startupMax"
--   P s:#o:o:a  hash  s:<session> -> "manifest,ad,start" seconds; e:<code>:<session> -> second
--   P r:o       zset  every asset of o, score -new, member <16 digits MAX_SAFE - anchor ts><16 digits sq><id>:
--                     ZRANGE order = most new sessions, most recent ts, older asset (the embedded order)
--   P x:o       zset  every asset of o, score = when it expires (anchor + retention): the asset limit
--   P o:o       hash  <second> -> packed workspace totals (the owner summary)
--   P oh:o      hash  <minute> -> packed workspace history
--   P oq:o      hash  <minute> -> workspace playback quality (as q:)
--   P om:o      hash  marks of o's workspace-only events (refusals outside the library), as s: but per
--                     asset: s:#a:a:<session> -> "manifest,ad,start"; e:<code>:#a:a:<session> -> second
--   P owners    set   workspaces with state; P last: latest receipt time; P pending: delayed batches
-- A packed bucket is "requests,manifest,ad,starts,mMin,mMax,mSum,mCount,aMin,aMax,aSum,aCount[,code,n]...".
-- Numbers are written with %.17g, so every double (latency sums) reads back bit for bit.

-- NONE, WINDOW (seconds), RETENTION (ms), GRACE (seconds), MAX_SAFE and MAX_ASSETS (the default;
-- record, release and prune pass their own) are declared above this file by stats-lua.ts, from
-- the TypeScript constants.

local P = ARGV[1]
local TTL_MARGIN = 3600000
local OWNER_TTL = 3600000

-- Most numbers written are small counters and times: skip sprintf for whole numbers.
local floor = math.floor
local function fmt(x)
  if x == 0 then return '0' end
  if x == floor(x) and x < 1e15 and x > -1e15 then return string.format('%d', x) end
  return string.format('%.17g', x)
end
local function secondOf(ms) return floor(ms / 1000) end
local function minuteOf(ms) return floor(ms / 60000) end
local function windowStart(last) return last - WINDOW + 1 end
local function assetKey(kind, o, a) return P .. kind .. ':' .. #o .. ':' .. o .. ':' .. a end
local function rankKey(o) return P .. 'r:' .. o end
local function expiryKey(o) return P .. 'x:' .. o end
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
-- Sums bucket b into window w (latencies merged the way the embedded store merges them).
local function mergeInto(w, b)
  for i = 1, 4 do w[i] = w[i] + b[i] end
  for _, base in ipairs({5, 9}) do
    local count = b[base + 3]
    if count > 0 then
      if w[base + 3] == 0 or b[base] < w[base] then w[base] = b[base] end
      if w[base + 3] == 0 or b[base + 1] > w[base + 1] then w[base + 1] = b[base + 1] end
      w[base + 2] = w[base + 2] + b[base + 2]
      w[base + 3] = w[base + 3] + count
    end
  end
  if b.e ~= nil then
    if w.e == nil then w.e = {} end
    for code, n in pairs(b.e) do w.e[code] = (w.e[code] or 0) + n end
  end
end

local function decodeMarks(s)
  local m = {}
  local i = 0
  for part in string.gmatch(s, '[^,]+') do
    i = i + 1
    m[i] = tonumber(part)
  end
  return m
end
local function encodeMarks(m) return fmt(m[1]) .. ',' .. fmt(m[2]) .. ',' .. fmt(m[3]) end

-- Reads an asset hash: nil when it does not exist.
local function readAsset(k)
  local flat = redis.call('HGETALL', k)
  if #flat == 0 then return nil end
  local A = { st = NONE, lt = NONE, sq = 0, fl = NONE, wn = 0, raw = {}, count = 0 }
  for i = 1, #flat, 2 do
    local f = flat[i]
    if f == 'st' then A.st = tonumber(flat[i + 1])
    elseif f == 'lt' then A.lt = tonumber(flat[i + 1])
    elseif f == 'sq' then A.sq = tonumber(flat[i + 1])
    elseif f == 'fl' then A.fl = tonumber(flat[i + 1])
    elseif f == 'w' then A.wn = decodeBucket(flat[i + 1])[4]
    elseif string.sub(f, 1, 1) == 'd' then
      A.raw[tonumber(string.sub(f, 2))] = flat[i + 1]
      A.count = A.count + 1
    end
  end
  return A
end

local assets = {}
local touched = {}
local function loadAsset(o, a)
  local k = assetKey('a', o, a)
  local A = assets[k]
  if A ~= nil then return A end
  A = { o = o, id = a, k = k, hk = assetKey('h', o, a), sk = assetKey('s', o, a), qk = assetKey('q', o, a), st = NONE, lt = NONE, sq = 0, fl = NONE,
        wn = 0, raw = {}, b = {}, db = {}, h = {}, q = {}, s = {}, ds = {}, present = false, fresh = true, wipe = false, rk0 = false, wn0 = 0 }
  local stored = readAsset(k)
  if stored ~= nil then
    A.st, A.lt, A.sq, A.fl, A.raw = stored.st, stored.lt, stored.sq, stored.fl, stored.raw
    A.wn, A.wn0 = stored.wn, stored.wn
    A.st0, A.lt0 = A.st, A.lt
    A.present, A.fresh = true, false
    A.rk0 = rankMember(anchorOf(A.st, A.lt), A.sq, a)
  end
  assets[k] = A
  touched[#touched + 1] = A
  return A
end

-- The decoded detail bucket of a second, or nil.
local function detailAt(A, second)
  local b = A.b[second]
  if b ~= nil then return b end
  local v = A.raw[second]
  if v == nil then return nil end
  b = decodeBucket(v)
  A.b[second] = b
  return b
end

local function windowFirst(A)
  return math.max(windowStart(secondOf(anchorOf(A.st, A.lt))), A.fl)
end

-- The detail seconds in [first, last], ascending (the order the embedded store sums them in).
local function secondsIn(A, first, last)
  local list = {}
  local seen = {}
  for second in pairs(A.raw) do
    if second >= first and second <= last then list[#list + 1] = second; seen[second] = true end
  end
  for second in pairs(A.b) do
    if not seen[second] and second >= first and second <= last then list[#list + 1] = second end
  end
  table.sort(list)
  return list
end

-- Moves the floor up to what the anchor needs and recounts the window's new sessions.
local function reanchor(A)
  local last = secondOf(anchorOf(A.st, A.lt))
  local fl = windowStart(last)
  if A.st == NONE then fl = fl - GRACE end
  if fl > A.fl then A.fl = fl end
  local n = 0
  for _, second in ipairs(secondsIn(A, windowFirst(A), last)) do n = n + detailAt(A, second)[4] end
  A.wn = n
end

local function windowOf(A)
  local w = newBucket()
  local last = secondOf(anchorOf(A.st, A.lt))
  for _, second in ipairs(secondsIn(A, windowFirst(A), last)) do mergeInto(w, detailAt(A, second)) end
  return w
end

local function isLive(A, second, receivedSecond)
  return second >= A.fl or second > receivedSecond - WINDOW
end

-- Forgets an expired asset; the flush deletes its keys and its ranking entries.
local function removeAsset(A)
  A.present, A.fresh, A.wipe = false, true, true
  A.st, A.lt, A.fl, A.wn = NONE, NONE, NONE, 0
  A.raw, A.b, A.db, A.h, A.q, A.s, A.ds = {}, {}, {}, {}, {}, {}, {}
end

-- A mark field of the asset's s: hash: the session's "manifest,ad,start" or an error's second.
local function markOf(A, field, default)
  local m = A.s[field]
  if m ~= nil then return m end
  if not A.fresh then
    local v = redis.call('HGET', A.sk, field)
    if v then
      if default == nil then m = tonumber(v) else m = decodeMarks(v) end
    end
  end
  if m == nil then m = default or NONE end
  A.s[field] = m
  return m
end

local function detailOf(A, second)
  local b = detailAt(A, second)
  if b == nil then
    b = newBucket()
    A.b[second] = b
  end
  A.db[second] = true
  return b
end

local function historyOf(A, minute)
  local b = A.h[minute]
  if b == nil then
    local v = nil
    if not A.fresh then v = redis.call('HGET', A.hk, fmt(minute)) end
    if v then b = decodeBucket(v) else b = newBucket() end
    A.h[minute] = b
  end
  return b
end

-- Playback quality of one minute: {rebuffers, startupSum, startupCount, startupMax}.
local function qoeIn(cache, key, fresh, minute)
  local b = cache[minute]
  if b == nil then
    local v = nil
    if not fresh then v = redis.call('HGET', key, fmt(minute)) end
    b = {0, 0, 0, 0}
    if v then
      local i = 0
      for part in string.gmatch(v, '[^,]+') do i = i + 1; b[i] = tonumber(part) end
    end
    cache[minute] = b
  end
  return b
end
local function addStartup(b, ms)
  b[2] = b[2] + ms
  b[3] = b[3] + 1
  if ms > b[4] then b[4] = ms end
end

local owners = {}
local ownerList = {}
local function ownerOf(o)
  local O = owners[o]
  if O ~= nil then return O end
  O = { o = o, k = P .. 'o:' .. o, hk = P .. 'oh:' .. o, qk = P .. 'oq:' .. o, mk = P .. 'om:' .. o, d = {}, h = {}, q = {}, s = {}, ds = {} }
  owners[o] = O
  ownerList[#ownerList + 1] = O
  return O
end
local function ownerBucket(O, cache, key, time)
  local b = O[cache][time]
  if b == nil then
    local v = redis.call('HGET', O[key], fmt(time))
    if v then b = decodeBucket(v) else b = newBucket() end
    O[cache][time] = b
  end
  return b
end

-- A mark field of the workspace's om: hash (as markOf for an asset's s: hash).
local function ownerMarkOf(O, field, default)
  local m = O.s[field]
  if m ~= nil then return m end
  local v = redis.call('HGET', O.mk, field)
  if v then
    if default == nil then m = tonumber(v) else m = decodeMarks(v) end
  end
  if m == nil then m = default or NONE end
  O.s[field] = m
  return m
end

-- Whether o may take one more asset at receipt time at: its unexpired assets, counted in x:o
-- (written as soon as an asset is created, so assets new in this call count too).
local function roomFor(o, at)
  return redis.call('ZCOUNT', expiryKey(o), at, '+inf') < MAX_ASSETS
end

local function hsetChunks(key, pairsList)
  for i = 1, #pairsList, 1000 do
    redis.call('HSET', key, unpack(pairsList, i, math.min(i + 999, #pairsList)))
  end
end

-- The changed session marks of an asset or a workspace (its `ds` set of fields), as field/value
-- pairs for HSET: three marks encoded together, or one second.
local function dirtyMarks(X)
  local marks = {}
  for field in pairs(X.ds) do
    local m = X.s[field]
    marks[#marks + 1] = field
    if type(m) == 'table' then marks[#marks + 1] = encodeMarks(m) else marks[#marks + 1] = fmt(m) end
  end
  return marks
end

-- Writes back every asset and workspace the call touched; TTLs reclaim what prune misses.
local function flush(at)
  for _, A in ipairs(touched) do
    local rk = rankKey(A.o)
    if A.wipe then
      redis.call('DEL', A.k, A.sk, A.hk, A.qk)
      if A.rk0 then redis.call('ZREM', rk, A.rk0) end
      redis.call('ZREM', expiryKey(A.o), A.id)
    end
    if A.present then
      local anchor = anchorOf(A.st, A.lt)
      local member = rankMember(anchor, A.sq, A.id)
      local fields = {'st', fmt(A.st), 'lt', fmt(A.lt), 'sq', fmt(A.sq), 'fl', fmt(A.fl), 'w', encodeBucket(windowOf(A))}
      for second in pairs(A.db) do
        fields[#fields + 1] = 'd' .. fmt(second)
        fields[#fields + 1] = encodeBucket(A.b[second])
      end
      hsetChunks(A.k, fields)
      local history = {}
      for minute, b in pairs(A.h) do
        history[#history + 1] = fmt(minute)
        history[#history + 1] = encodeBucket(b)
      end
      if #history > 0 then hsetChunks(A.hk, history) end
      local qoe = {}
      for minute, b in pairs(A.q) do
        qoe[#qoe + 1] = fmt(minute)
        qoe[#qoe + 1] = fmt(b[1]) .. ',' .. fmt(b[2]) .. ',' .. fmt(b[3]) .. ',' .. fmt(b[4])
      end
      if #qoe > 0 then hsetChunks(A.qk, qoe) end
      local marks = dirtyMarks(A)
      if #marks > 0 then hsetChunks(A.sk, marks) end
      if A.wipe or member ~= A.rk0 or A.wn ~= A.wn0 then
        if A.rk0 and not A.wipe and member ~= A.rk0 then redis.call('ZREM', rk, A.rk0) end
        redis.call('ZADD', rk, fmt(0 - A.wn), member)
      end
      if A.wipe or member ~= A.rk0 then
        redis.call('ZADD', expiryKey(A.o), fmt(anchor + RETENTION), A.id)
        -- A safety net: prune deletes expired assets first.
        local ttl = fmt(math.max(anchor + RETENTION - at, 0) + TTL_MARGIN)
        redis.call('PEXPIRE', A.k, ttl)
        redis.call('PEXPIRE', A.sk, ttl)
        redis.call('PEXPIRE', A.hk, ttl)
        redis.call('PEXPIRE', A.qk, ttl)
      end
    end
  end
  for _, O in ipairs(ownerList) do
    redis.call('SADD', P .. 'owners', O.o)
    local marks = dirtyMarks(O)
    if #marks > 0 then
      hsetChunks(O.mk, marks)
      redis.call('PEXPIRE', O.mk, OWNER_TTL)
    end
    for _, part in ipairs({{'d', 'k', OWNER_TTL}, {'h', 'hk', RETENTION + TTL_MARGIN}, {'q', 'qk', RETENTION + TTL_MARGIN}}) do
      local fields = {}
      for time, b in pairs(O[part[1]]) do
        fields[#fields + 1] = fmt(time)
        if part[1] == 'q' then fields[#fields + 1] = fmt(b[1]) .. ',' .. fmt(b[2]) .. ',' .. fmt(b[3]) .. ',' .. fmt(b[4])
        else fields[#fields + 1] = encodeBucket(b) end
      end
      if #fields > 0 then
        hsetChunks(O[part[2]], fields)
        redis.call('PEXPIRE', O[part[2]], part[3])
      end
    end
  end
end
