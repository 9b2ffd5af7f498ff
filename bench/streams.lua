-- tend.stream's benchmarks (make bench; rows in scripts/bench). Each mode
-- prints bench=... lines as bench/bench.lua does.
--   fused N      range(1, N):map(f):filter(g):run_fold, fused (impl=tend)
--                and the same work as a plain Lua for loop (impl=lua)
--   async N      the same with :async() between every stage (impl=tend),
--                and as four hand-made actors with the same demand
--                protocol (impl=lua: the floor); bench/streams.exs is
--                the Elixir twin
--   map_async N  map_async(4) of a tend.ask to an echo actor (impl=tend)
--                and four hand-made workers doing the same asks (impl=lua:
--                the goal's peer), and four bare fibers of one task doing
--                them (impl=fibers: the floor of map_async's design), in
--                one invocation
--   rss N        an endless source into a sink that sleeps 1 ms per
--                element (run with --virtual-time), RSS after N/10 and
--                after N elements
-- Usage: tend bench/streams.lua MODE N
local tend = require "tend"
local S = tend.stream
local internal = require "tend.internal"
local mode, n = ..., tonumber((select(2, ...)))

local function emit(name, impl, count, seconds, extra)
  print(string.format("bench=%s impl=%s count=%d seconds=%.6f rate=%.0f%s",
    name, impl, count, seconds, count / seconds, extra or ""))
end
local function clock() return internal.now_ns() / 1e9 end

local function f(x) return x * 3 end
local function g(x) return x % 2 == 0 end
local function add(a, b) return a + b end

-- The floor of async: the same pipeline as four hand-made actors (a
-- source, a map, a filter and the folding caller) and the same demand
-- protocol as :async() and bench/streams.exs (a consumer grants up to its
-- buffer, 16, asks again once half of it is free; a producer sends what it
-- has, up to the credit, as one message), with nothing else: no stream
-- library, no supervision of stages, no failure handling.
local function async_floor()
  local BUF, HALF = 16, 8
  local me = tend.self()
  -- a stage between two boundaries: step(x) -> y or nil (dropped)
  local function stage(step)
    return function()
      local up, down, q, qh, qt, outstanding, credit, done = nil, nil, {}, 1, 0, 0, 0, false
      local function pump()
        while credit > 0 and qh <= qt do
          local b, k = {}, 0
          while k < credit and qh <= qt do
            local y = step(q[qh])
            q[qh] = nil
            qh = qh + 1
            if y ~= nil then k = k + 1 b[k] = y end
          end
          if k > 0 then credit = credit - k down:send(b) end
        end
        local ahead = outstanding + qt - qh + 1
        if not done and ahead <= HALF then
          up:send(BUF - ahead)
          outstanding = outstanding + BUF - ahead
        end
        if done and qh > qt and down then down:send("done") down = nil end
      end
      return function(m)
        if type(m) == "table" then
          if m.down then -- the wiring: then the first demand
            up, down, outstanding = m.up, m.down, BUF
            up:send(BUF)
            return
          end
          for i = 1, #m do qt = qt + 1 q[qt] = m[i] end
          outstanding = outstanding - #m
        elseif m == "done" then done = true
        else credit = credit + m end
        pump()
      end
    end
  end
  local source = tend.spawn(function()
    local i, down = 1, nil
    return function(m)
      if type(m) == "table" then down = m.down return end
      if not down then return end -- done already
      local hi = math.min(n, i + m - 1)
      local b = {}
      for x = i, hi do b[x - i + 1] = x end
      down:send(b)
      i = hi + 1
      if i > n then down:send("done") down = nil end
    end
  end)
  local mapper = tend.spawn(stage(f))
  local filter = tend.spawn(stage(function(x) if g(x) then return x end end))
  source:send({ down = mapper })
  mapper:send({ up = source, down = filter })
  filter:send({ up = mapper, down = me })
  local acc, outstanding = 0, BUF
  filter:send(BUF)
  while true do
    local m = tend.receive()
    if m == "done" then break end
    for i = 1, #m do acc = add(acc, m[i]) end
    outstanding = outstanding - #m
    if outstanding <= HALF then filter:send(BUF - outstanding) outstanding = BUF end
  end
  return acc
end

if mode == "fused" or mode == "async" then
  local s = S.range(1, n)
  if mode == "async" then s = s:async():map(f):async():filter(g):async()
  else s = s:map(f):filter(g) end
  local t0 = clock()
  local sum = s:run_fold(0, add)
  emit("stream_" .. mode, "tend", n, clock() - t0)
  if mode == "async" then
    t0 = clock()
    local acc = async_floor()
    emit("stream_async", "lua", n, clock() - t0)
    assert(acc == sum, "the hand-made actors and the stream disagree")
  end
  if mode == "fused" then
    t0 = clock()
    local acc = 0
    for i = 1, n do
      local y = f(i)
      if g(y) then acc = add(acc, y) end
    end
    emit("stream_fused", "lua", n, clock() - t0)
    assert(acc == sum, "the loop and the stream disagree")
  end
elseif mode == "map_async" then
  local echo = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
  local t0 = clock()
  S.range(1, n):map_async(4, function(x) return tend.ask(echo, x) end):run_ignore()
  emit("stream_map_async", "tend", n, clock() - t0)
  -- four workers taking numbers from a shared counter, each asking
  local next_i, done, me = 1, 0, tend.self()
  local function worker()
    return function()
      while next_i <= n do
        local i = next_i
        next_i = next_i + 1
        tend.ask(echo, i)
      end
      me:send("done")
    end
  end
  t0 = clock()
  for k = 1, 4 do tend.spawn(worker, { name = "w" .. k }):send("go") end
  while done < 4 do tend.receive() done = done + 1 end
  emit("stream_map_async", "lua", n, clock() - t0)
  -- the floor of map_async's design: this task and four fibers of it
  -- (the coroutines map_async's calls run in, docs/design.md §4.7), each
  -- taking the next number and asking, with nothing else: no stream, no
  -- order kept, no supervision (impl=fibers)
  local core = require "tend.core"
  local fibers, i, ended = {}, 0, 0
  t0 = clock()
  for k = 1, 4 do
    fibers[k] = coroutine.create(function()
      while i < n do i = i + 1 tend.ask(echo, i) end
      ended = ended + 1
    end)
    core.fiber_resume(fibers[k], k)
  end
  while ended < 4 do
    if core.receive() == core.fiber_ready then
      local tag = core.fiber_take()
      while tag do core.fiber_resume(fibers[tag], tag) tag = core.fiber_take() end
    end
  end
  emit("stream_map_async", "fibers", n, clock() - t0)
  tend.shutdown()
elseif mode == "rss" then
  local function rss_kib()
    for line in io.lines("/proc/self/status") do
      local v = line:match("^VmRSS:%s+(%d+)")
      if v then return tonumber(v) end
    end
  end
  local seen, first, t0 = 0, nil, clock()
  S.unfold(0, function(s) return s + 1, s end):take(n)
    :run_foreach(function()
      tend.sleep(0.001)
      seen = seen + 1
      if seen == n // 10 then collectgarbage() first = rss_kib() end
    end)
  collectgarbage()
  local last = rss_kib()
  emit("stream_rss", "tend", n, clock() - t0,
    string.format(" rss_kib_first=%d rss_kib_last=%d growth_pct=%.1f", first, last, (last - first) * 100 / first))
else
  error("usage: tend bench/streams.lua fused|async|map_async|rss N")
end
