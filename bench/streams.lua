-- tend.stream's benchmarks (make bench; rows in scripts/bench). Each mode
-- prints bench=... lines as bench/bench.lua does.
--   fused N      range(1, N):map(f):filter(g):run_fold, fused (impl=tend)
--                and the same work as a plain Lua for loop (impl=lua)
--   async N      the same with :async() between every stage (impl=tend);
--                bench/streams.exs is Elixir's Stream twin
--   map_async N  map_async(4) of a tend.ask to an echo actor (impl=tend)
--                and four hand-made workers doing the same asks (impl=lua:
--                the floor), in one invocation
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

if mode == "fused" or mode == "async" then
  local s = S.range(1, n)
  if mode == "async" then s = s:async():map(f):async():filter(g):async()
  else s = s:map(f):filter(g) end
  local t0 = clock()
  local sum = s:run_fold(0, add)
  emit("stream_" .. mode, "tend", n, clock() - t0)
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
