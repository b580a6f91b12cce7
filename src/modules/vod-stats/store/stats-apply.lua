-- Lua, part 2: counting one event, line for line the rules of MemoryStatsStore.apply (see
-- memory-stats-store.ts in this folder), so both stores answer alike for the same batches.
-- An event arrives as 7 strings: type (r m a s e), owner, asset, session, ts, latency ('' none),
-- error code. Batches are applied in the order Redis runs the calls.

local function isOpen(A, minute, openFloor)
  return minute >= openFloor or (minute <= A.am and minute > A.am - WINDOW)
end

local function reanchor(A)
  local minute = minuteOf(anchorOf(A.st, A.lt))
  if minute == A.am then return end
  A.am = minute
  A.wn = windowStarts(A.b, minute)
end

local function countSession(A, m, index, minute, r)
  if m[index] ~= NONE and isOpen(A, m[index], r.open) then return false end
  m[index] = minute
  return true
end

local function apply(t, o, a, sid, ts, lat, code, r)
  local O = ownerOf(o)
  local A = loadAsset(o, a)
  if A.present and anchorOf(A.st, A.lt) + RETENTION < r.at then removeAsset(A) end
  local minute = minuteOf(ts)
  local timely = minute >= r.timely
  if not A.present then
    if not timely then return end
    A.present = true
    A.wipe = true
    A.sq = redis.call('INCR', P .. 'seq')
  end
  if timely then
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
  end
  if not isOpen(A, minute, r.open) then return end
  local total = nil
  if minute >= r.owner then total = ownerMinute(O, minute) end
  if t == 'r' then
    local b = bucketOf(A, minute)
    b[1] = b[1] + 1
    if total then total[1] = total[1] + 1 end
  elseif t == 's' then
    local m = marksOf(A, sid)
    if not countSession(A, m, 3, minute, r) then return end
    A.ds[sid] = true
    local b = bucketOf(A, minute)
    b[4] = b[4] + 1
    if total then total[4] = total[4] + 1 end
    if minute <= A.am and minute > A.am - WINDOW then A.wn = A.wn + 1 end
  elseif t == 'm' or t == 'a' then
    local index, field, base = 1, 2, 5
    if t == 'a' then index, field, base = 2, 3, 9 end
    local m = marksOf(A, sid)
    if not countSession(A, m, index, minute, r) then return end
    A.ds[sid] = true
    local b = bucketOf(A, minute)
    b[field] = b[field] + 1
    if total then total[field] = total[field] + 1 end
    if lat ~= nil then
      addLatency(b, base, lat)
      if total then addLatency(total, base, lat) end
    end
  elseif t == 'e' then
    local m = marksOf(A, sid)
    if m.e == nil then m.e = {} end
    local errs = m.e
    local i = 1
    while i <= #errs and errs[i] ~= code do i = i + 2 end
    if i <= #errs and isOpen(A, errs[i + 1], r.open) then return end
    errs[i] = code
    errs[i + 1] = minute
    A.ds[sid] = true
    addError(bucketOf(A, minute), code)
    if total then addError(total, code) end
  end
end

-- Applies n events held as 7 strings each in list, starting at index first, received at at.
local function applyBatch(at, list, first, n)
  local minute = minuteOf(at)
  local r = { at = at, timely = minute - LATE, open = minute - LATE - (WINDOW - 1), owner = minute - (WINDOW - 1) }
  for i = 0, n - 1 do
    local j = first + i * 7
    local lat = list[j + 5]
    if lat == '' then lat = nil else lat = tonumber(lat) end
    apply(list[j], list[j + 1], list[j + 2], list[j + 3], tonumber(list[j + 4]), lat, list[j + 6], r)
  end
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
    local n = #list / 7
    redis.call('DECRBY', P .. 'pendingEvents', n)
    applyBatch(at, list, 1, n)
    lastAt = at
  end
  if lastAt ~= nil then flush(lastAt) end
end
