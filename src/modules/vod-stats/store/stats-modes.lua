-- Lua, part 3: the entry points. ARGV[1] is the key prefix, ARGV[2] the mode:
--   record  now delay maxAssets batchKey receivedAt n force events... -> {1 counted | 0 seen before | -1 busy, dropped positions...}
--   release now delay maxAssets                                    -> releases due delayed batches
--   pruneBegin now delay margin                                    -> the prune reference time ('' busy)
--   pruneAssets ref owner members...                               -> {assets, buckets, sessions} removed
--   pruneOwner ref owner                                           -> {ownerBuckets removed, owner removed, marks removed}
--   top now owner limit                                            -> {asset id, {st, lt, sq, w}, ...} in rank order
-- Receipt times only move forward (P last), as in the embedded store; prune moves P last up to
-- its reference time, so no later batch is counted against state prune already judged dead.
-- While P rebuilding exists only the rebuild (force = '1') counts, and prune waits: the journal
-- replay must see receipt times in journal order.
--

local mode = ARGV[2]

if mode == 'record' then
  local now, delay = tonumber(ARGV[3]), tonumber(ARGV[4])
  MAX_ASSETS = tonumber(ARGV[5])
  local batchKey = ARGV[6]
  local receivedAt, n = tonumber(ARGV[7]), tonumber(ARGV[8])
  if ARGV[9] ~= '1' and redis.call('EXISTS', P .. 'rebuilding') == 1 then return {-1} end
  if batchKey ~= '' then
    if not redis.call('SET', P .. 'done:' .. batchKey, '1', 'NX', 'PX', 90000000) then return {0} end
  end
  local last = tonumber(redis.call('GET', P .. 'last') or '0')
  local at = math.max(receivedAt, last)
  redis.call('SET', P .. 'last', fmt(at))
  if delay == 0 then
    local dropped = applyBatch(at, ARGV, 10, n)
    flush(at)
    local out = {1}
    for _, i in ipairs(dropped) do out[#out + 1] = i end
    return out
  end
  local list = {}
  for i = 10, 9 + n * EVENT_ARGS do list[#list + 1] = ARGV[i] end
  redis.call('RPUSH', P .. 'pending', fmt(at) .. '|' .. cjson.encode(list))
  redis.call('INCRBY', P .. 'pendingEvents', n)
  release(now, delay)
  return {1}
end

if mode == 'release' then
  MAX_ASSETS = tonumber(ARGV[5])
  release(tonumber(ARGV[3]), tonumber(ARGV[4]))
  return 1
end

if mode == 'pruneBegin' then
  local now, delay = tonumber(ARGV[3]), tonumber(ARGV[4])
  MAX_ASSETS = tonumber(ARGV[6] or MAX_ASSETS)
  if redis.call('EXISTS', P .. 'rebuilding') == 1 then return '' end
  if delay > 0 then release(now, delay) end
  local ref = now - delay - tonumber(ARGV[5])
  local last = tonumber(redis.call('GET', P .. 'last') or '0')
  if ref > last then redis.call('SET', P .. 'last', fmt(ref)) end
  return fmt(ref)
end

-- Deletes the fields of hash k that pass dead(field); returns how many went.
local function hdelWhere(k, fields, dead)
  local doomed = {}
  for _, f in ipairs(fields) do
    if dead(f) then doomed[#doomed + 1] = f end
  end
  for j = 1, #doomed, 1000 do redis.call('HDEL', k, unpack(doomed, j, math.min(j + 999, #doomed))) end
  return #doomed
end

-- Drops the marks of a session-marks hash (`s:` fields hold three marks, the others one) that
-- `live(second)` no longer keeps; rewrites the fields that keep some. Returns the fields deleted.
local function pruneMarks(key, live)
  local flat = redis.call('HGETALL', key)
  local gone, kept = {}, {}
  for j = 1, #flat, 2 do
    local field, value = flat[j], flat[j + 1]
    if string.sub(field, 1, 2) == 's:' then
      local m = decodeMarks(value)
      local changed = false
      for x = 1, 3 do
        if m[x] ~= NONE and not live(m[x]) then
          m[x] = NONE
          changed = true
        end
      end
      if m[1] == NONE and m[2] == NONE and m[3] == NONE then gone[#gone + 1] = field
      elseif changed then
        kept[#kept + 1] = field
        kept[#kept + 1] = encodeMarks(m)
      end
    elseif not live(tonumber(value)) then
      gone[#gone + 1] = field
    end
  end
  local removed = hdelWhere(key, gone, function() return true end)
  if #kept > 0 then hsetChunks(key, kept) end
  return removed
end


if mode == 'pruneAssets' then
  local ref = tonumber(ARGV[3])
  local refSecond = secondOf(ref)
  local historyFirst = minuteOf(ref - RETENTION)
  local o = ARGV[4]
  local rk = rankKey(o)
  local removed = {0, 0, 0}
  for i = 5, #ARGV do
    local member = ARGV[i]
    local id = string.sub(member, 33)
    local k, sk, hk, qk = assetKey('a', o, id), assetKey('s', o, id), assetKey('h', o, id), assetKey('q', o, id)
    local A = readAsset(k)
    local anchor = A ~= nil and anchorOf(A.st, A.lt) or nil
    if anchor == nil or rankMember(anchor, A.sq, id) ~= member then
      redis.call('ZREM', rk, member)
    elseif anchor + RETENTION < ref then
      removed[1] = removed[1] + 1
      removed[2] = removed[2] + A.count + redis.call('HLEN', hk) + redis.call('HLEN', qk)
      removed[3] = removed[3] + redis.call('HLEN', sk)
      redis.call('DEL', k, sk, hk, qk)
      redis.call('ZREM', rk, member)
      redis.call('ZREM', expiryKey(o), id)
    else
      local detail = {}
      for second in pairs(A.raw) do
        if second < A.fl then detail[#detail + 1] = 'd' .. fmt(second) end
      end
      removed[2] = removed[2] + hdelWhere(k, detail, function() return true end)
      removed[2] = removed[2] + hdelWhere(hk, redis.call('HKEYS', hk), function(f) return tonumber(f) < historyFirst end)
      removed[2] = removed[2] + hdelWhere(qk, redis.call('HKEYS', qk), function(f) return tonumber(f) < historyFirst end)
      removed[3] = removed[3] + pruneMarks(sk, function(second) return isLive(A, second, refSecond) end)
    end
  end
  return removed
end

if mode == 'pruneOwner' then
  local ref = tonumber(ARGV[3])
  local o = ARGV[4]
  local ok, ohk, oqk, omk = P .. 'o:' .. o, P .. 'oh:' .. o, P .. 'oq:' .. o, P .. 'om:' .. o
  local refSecond = secondOf(ref)
  local summaryFirst = windowStart(refSecond)
  local historyFirst = minuteOf(ref - RETENTION)
  local n = hdelWhere(ok, redis.call('HKEYS', ok), function(f) return tonumber(f) < summaryFirst end)
  n = n + hdelWhere(ohk, redis.call('HKEYS', ohk), function(f) return tonumber(f) < historyFirst end)
  n = n + hdelWhere(oqk, redis.call('HKEYS', oqk), function(f) return tonumber(f) < historyFirst end)
  -- Workspace-only marks: live while inside the summary of a batch received at ref or later (workspace-marks.ts).
  local marks = pruneMarks(omk, function(second) return second > refSecond - WINDOW end)
  redis.call('ZREMRANGEBYSCORE', expiryKey(o), '-inf', '(' .. fmt(ref))
  local gone = 0
  if redis.call('ZCARD', rankKey(o)) == 0 and redis.call('HLEN', ok) == 0 and redis.call('HLEN', ohk) == 0 and redis.call('HLEN', oqk) == 0 and redis.call('HLEN', omk) == 0 then
    redis.call('SREM', P .. 'owners', o)
    gone = 1
  end
  return {n, gone, marks}
end

if mode == 'top' then
  local now, o, limit = tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
  local rk = rankKey(o)
  local out = {}
  local found = 0
  local start = 0
  local page = limit + 16
  while true do
    local members = redis.call('ZRANGE', rk, start, start + page - 1)
    if #members == 0 then return out end
    for _, member in ipairs(members) do
      local anchor = memberAnchor(member)
      if anchor + RETENTION >= now then
        local id = string.sub(member, 33)
        local v = redis.call('HMGET', assetKey('a', o, id), 'st', 'lt', 'sq', 'w')
        -- An entry left behind by an asset that expired in Redis and came back is skipped.
        if v[1] and rankMember(anchorOf(tonumber(v[1]), tonumber(v[2])), tonumber(v[3]), id) == member then
          out[#out + 1] = id
          out[#out + 1] = v
          found = found + 1
          if found >= limit then return out end
        end
      end
    end
    start = start + page
  end
end

return redis.error_reply('unknown statistics script mode ' .. tostring(mode))
