-- Lua, part 3: the entry points. ARGV[1] is the key prefix, ARGV[2] the mode:
--   record  now delay late batchKey receivedAt n force events... -> 1 counted, 0 seen before, -1 busy
--   release now delay late                                    -> releases due delayed batches
--   pruneBegin now delay late margin                          -> the prune reference time ('' busy)
--   pruneAssets ref late owner members...                     -> {assets, buckets, sessions} removed
--   pruneOwner ref owner                                      -> {ownerBuckets removed, owner removed}
--   top now owner limit                                       -> {asset id, asset hash, ...} in rank order
-- Receipt times only move forward (P last), as in the embedded store; prune moves P last up to
-- its reference time, so no later batch is counted against state prune already judged dead.
-- While P rebuilding exists only the rebuild (force = '1') counts, and prune waits: the journal
-- replay must see receipt times in journal order.

local mode = ARGV[2]

if mode == 'record' then
  local now, delay = tonumber(ARGV[3]), tonumber(ARGV[4])
  LATE = tonumber(ARGV[5])
  local batchKey = ARGV[6]
  local receivedAt, n = tonumber(ARGV[7]), tonumber(ARGV[8])
  if ARGV[9] ~= '1' and redis.call('EXISTS', P .. 'rebuilding') == 1 then return -1 end
  if batchKey ~= '' then
    if not redis.call('SET', P .. 'done:' .. batchKey, '1', 'NX', 'PX', 90000000) then return 0 end
  end
  local last = tonumber(redis.call('GET', P .. 'last') or '0')
  local at = math.max(receivedAt, last)
  redis.call('SET', P .. 'last', fmt(at))
  if delay == 0 then
    applyBatch(at, ARGV, 10, n)
    flush(at)
  else
    local list = {}
    for i = 10, 9 + n * 7 do list[#list + 1] = ARGV[i] end
    redis.call('RPUSH', P .. 'pending', fmt(at) .. '|' .. cjson.encode(list))
    redis.call('INCRBY', P .. 'pendingEvents', n)
    release(now, delay)
  end
  return 1
end

if mode == 'release' then
  LATE = tonumber(ARGV[5])
  release(tonumber(ARGV[3]), tonumber(ARGV[4]))
  return 1
end

if mode == 'pruneBegin' then
  local now, delay = tonumber(ARGV[3]), tonumber(ARGV[4])
  LATE = tonumber(ARGV[5])
  if redis.call('EXISTS', P .. 'rebuilding') == 1 then return '' end
  if delay > 0 then release(now, delay) end
  local ref = now - delay - tonumber(ARGV[6])
  local last = tonumber(redis.call('GET', P .. 'last') or '0')
  if ref > last then redis.call('SET', P .. 'last', fmt(ref)) end
  return fmt(ref)
end

if mode == 'pruneAssets' then
  local ref = tonumber(ARGV[3])
  LATE = tonumber(ARGV[4])
  local o = ARGV[5]
  local rk = rankKey(o)
  local openFloor = minuteOf(ref) - LATE - (WINDOW - 1)
  local removed = {0, 0, 0}
  for i = 6, #ARGV do
    local member = ARGV[i]
    local id = string.sub(member, 33)
    local k, sk = assetKey('a', o, id), assetKey('s', o, id)
    local st, lt, buckets, count, sq = readAsset(k)
    local anchor = st ~= nil and anchorOf(st, lt) or nil
    if anchor == nil or rankMember(anchor, sq, id) ~= member then
      redis.call('ZREM', rk, member)
    elseif anchor + RETENTION < ref then
      removed[1] = removed[1] + 1
      removed[2] = removed[2] + count
      removed[3] = removed[3] + redis.call('HLEN', sk)
      redis.call('DEL', k, sk)
      redis.call('ZREM', rk, member)
    else
      local A = { am = minuteOf(anchor) }
      local dead = {}
      for minute in pairs(buckets) do
        if not isOpen(A, minute, openFloor) then dead[#dead + 1] = fmt(minute) end
      end
      if #dead > 0 then redis.call('HDEL', k, unpack(dead)) end
      removed[2] = removed[2] + #dead
      local flat = redis.call('HGETALL', sk)
      local gone, kept = {}, {}
      for j = 1, #flat, 2 do
        local m = decodeMarks(flat[j + 1])
        local changed = false
        for x = 1, 3 do
          if m[x] ~= NONE and not isOpen(A, m[x], openFloor) then
            m[x] = NONE
            changed = true
          end
        end
        if m.e ~= nil then
          local live = {}
          for x = 1, #m.e, 2 do
            if isOpen(A, m.e[x + 1], openFloor) then
              live[#live + 1] = m.e[x]
              live[#live + 1] = m.e[x + 1]
            end
          end
          if #live < #m.e then changed = true end
          if #live > 0 then m.e = live else m.e = nil end
        end
        if m[1] == NONE and m[2] == NONE and m[3] == NONE and m.e == nil then
          gone[#gone + 1] = flat[j]
        elseif changed then
          kept[#kept + 1] = flat[j]
          kept[#kept + 1] = encodeMarks(m)
        end
      end
      for j = 1, #gone, 1000 do redis.call('HDEL', sk, unpack(gone, j, math.min(j + 999, #gone))) end
      if #kept > 0 then hsetChunks(sk, kept) end
      removed[3] = removed[3] + #gone
    end
  end
  return removed
end

if mode == 'pruneOwner' then
  local ownerFloor = minuteOf(tonumber(ARGV[3])) - (WINDOW - 1)
  local o = ARGV[4]
  local ok = ownerKey(o)
  local dead = {}
  for _, field in ipairs(redis.call('HKEYS', ok)) do
    if tonumber(field) < ownerFloor then dead[#dead + 1] = field end
  end
  if #dead > 0 then redis.call('HDEL', ok, unpack(dead)) end
  local gone = 0
  if redis.call('ZCARD', rankKey(o)) == 0 and redis.call('HLEN', ok) == 0 then
    redis.call('SREM', P .. 'owners', o)
    gone = 1
  end
  return {#dead, gone}
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
        local flat = redis.call('HGETALL', assetKey('a', o, id))
        local st, lt, sq = NONE, NONE, 0
        for j = 1, #flat, 2 do
          if flat[j] == 'st' then st = tonumber(flat[j + 1])
          elseif flat[j] == 'lt' then lt = tonumber(flat[j + 1])
          elseif flat[j] == 'sq' then sq = tonumber(flat[j + 1]) end
        end
        -- An entry left behind by an asset that expired in Redis and came back is skipped.
        if #flat > 0 and rankMember(anchorOf(st, lt), sq, id) == member then
          out[#out + 1] = id
          out[#out + 1] = flat
          found = found + 1
          if found >= limit then return out end
        end
      end
    end
    start = start + page
  end
end

return redis.error_reply('unknown statistics script mode ' .. tostring(mode))
