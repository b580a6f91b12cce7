-- Lua, part 2: counting one event, line for line the rules of MemoryStatsStore.apply (see
-- src/modules/vod-stats/memory-stats-store.ts), so both stores answer alike for the same batches.
-- An event arrives as 9 strings: type (r m a s e b), owner, asset, session, ts, latency ('' none),
-- error code, startup ms ('' none), 'w' when it counts for the workspace only. Batches are
-- applied in the order Redis runs the calls.
--

local MARK = { m = 1, a = 2, s = 3 }
local FIELD = { m = 2, a = 3, s = 4 }
local LATENCY = { m = 5, a = 9 }

-- Adds to counter field (or the latency, or the error) of the four buckets an event reaches.
local function count(A, O, second, minute, detailed, summarised, add)
  add(historyOf(A, minute))
  add(ownerBucket(O, 'h', 'hk', minute))
  if detailed then add(detailOf(A, second)) end
  if summarised then add(ownerBucket(O, 'd', 'k', second)) end
end

-- Workspace-only events (summary and history, deduplicated per asset, session and kind or code
-- by the workspace's om: marks while in the summary) and rebuffer reports (playback quality
-- history of the asset if held, and of the workspace): EventCounter.applyOutsideAssets.
local function applyOutside(t, O, o, a, sid, ts, lat, code, r)
  local minute = minuteOf(ts)
  if t == 'b' then
    local A = loadAsset(o, a)
    if A.present and anchorOf(A.st, A.lt) + RETENTION >= r.at then
      local b = qoeIn(A.q, A.qk, A.fresh, minute)
      b[1] = b[1] + 1
    end
    local b = qoeIn(O.q, O.qk, false, minute)
    b[1] = b[1] + 1
    return
  end
  local second = secondOf(ts)
  local summarised = second >= r.summaryFirst
  -- Marks only while they can matter (in the summary); an older duplicate counts in the history (workspace-marks.ts).
  if summarised and t ~= 'r' then
    local asset = #a .. ':' .. a .. ':' .. sid
    if t == 'e' then
      local field = 'e:' .. code .. ':' .. asset
      local seen = ownerMarkOf(O, field, nil)
      if seen ~= NONE and seen > r.second - WINDOW then return end
      O.s[field] = second
      O.ds[field] = true
    else
      local field = 's:' .. asset
      local m = ownerMarkOf(O, field, {NONE, NONE, NONE})
      local seen = m[MARK[t]]
      if seen ~= NONE and seen > r.second - WINDOW then return end
      m[MARK[t]] = second
      O.ds[field] = true
    end
  end
  local add
  if t == 'e' then add = function(b) addError(b, code) end
  else
    local f = FIELD[t] or 1
    add = function(b)
      b[f] = b[f] + 1
      if lat ~= nil and (t == 'm' or t == 'a') then addLatency(b, LATENCY[t], lat) end
    end
  end
  add(ownerBucket(O, 'h', 'hk', minute))
  if summarised then add(ownerBucket(O, 'd', 'k', second)) end
end

-- Counts one event; false when it was dropped (a new asset past the workspace's limit).
local function apply(t, o, a, sid, ts, lat, code, startup, wsOnly, r)
  local O = ownerOf(o)
  if wsOnly or t == 'b' then
    applyOutside(t, O, o, a, sid, ts, lat, code, r)
    return true
  end
  local A = loadAsset(o, a)
  if A.present and anchorOf(A.st, A.lt) + RETENTION < r.at then removeAsset(A) end
  if not A.present then
    if not roomFor(o, r.at) then return false end
    A.present = true
    A.wipe = true
    A.sq = redis.call('INCR', P .. 'seq')
    redis.call('ZADD', expiryKey(o), fmt(ts + RETENTION), a)
  end
  local moved = false
  if t == 's' and ts > A.st then
    A.st = ts
    moved = true
  end
  if ts > A.lt then
    A.lt = ts
    if A.st == NONE then moved = true end
  end
  if moved then reanchor(A) end

  local second, minute = secondOf(ts), minuteOf(ts)
  local detailed = second >= A.fl
  local summarised = second >= r.summaryFirst
  if t == 'r' then
    count(A, O, second, minute, detailed, summarised, function(b) b[1] = b[1] + 1 end)
    return true
  end
  local live = isLive(A, second, r.second)
  if t == 'e' then
    if live then
      local field = 'e:' .. code .. ':' .. sid
      local seen = markOf(A, field, nil)
      if seen ~= NONE and isLive(A, seen, r.second) then return true end
      A.s[field] = second
      A.ds[field] = true
    end
    count(A, O, second, minute, detailed, summarised, function(b) addError(b, code) end)
    return true
  end
  if live then
    local field = 's:' .. sid
    local m = markOf(A, field, {NONE, NONE, NONE})
    local seen = m[MARK[t]]
    if seen ~= NONE and isLive(A, seen, r.second) then return true end
    m[MARK[t]] = second
    A.ds[field] = true
  end
  local f = FIELD[t]
  count(A, O, second, minute, detailed, summarised, function(b)
    b[f] = b[f] + 1
    if lat ~= nil and t ~= 's' then addLatency(b, LATENCY[t], lat) end
  end)
  if t == 's' then
    if startup ~= nil then
      addStartup(qoeIn(A.q, A.qk, A.fresh, minute), startup)
      addStartup(qoeIn(O.q, O.qk, false, minute), startup)
    end
    if second >= windowFirst(A) and second <= secondOf(anchorOf(A.st, A.lt)) then A.wn = A.wn + 1 end
  end
  return true
end

-- Applies n events held as EVENT_ARGS strings each in list, starting at index first, received at
-- at; returns the positions (0-based) of the events dropped.
local function applyBatch(at, list, first, n)
  local second = secondOf(at)
  local r = { at = at, second = second, summaryFirst = windowStart(second) }
  local dropped = {}
  for i = 0, n - 1 do
    local j = first + i * EVENT_ARGS
    local lat, startup = list[j + 5], list[j + 7]
    if lat == '' then lat = nil else lat = tonumber(lat) end
    if startup == '' then startup = nil else startup = tonumber(startup) end
    if not apply(list[j], list[j + 1], list[j + 2], list[j + 3], tonumber(list[j + 4]), lat, list[j + 6], startup, list[j + 8] == 'w', r) then
      dropped[#dropped + 1] = i
    end
  end
  if #dropped > 0 then redis.call('INCRBY', P .. 'dropped', #dropped) end
  return dropped
end

-- stats_delay_ms: batches wait in P pending as "<at>|<json list of strings>" until due.
local function release(now, delay)
  local key = P .. 'pending'
  local lastAt = nil
  while true do
    local head = redis.call('LINDEX', key, 0)
    if not head then break end
    local bar = string.find(head, '|', 1, true)
    local at = tonumber(string.sub(head, 1, bar - 1))
    if at + delay > now then break end
    redis.call('LPOP', key)
    local list = cjson.decode(string.sub(head, bar + 1))
    local n = #list / EVENT_ARGS
    redis.call('DECRBY', P .. 'pendingEvents', n)
    applyBatch(at, list, 1, n)
    lastAt = at
  end
  if lastAt ~= nil then flush(lastAt) end
end
