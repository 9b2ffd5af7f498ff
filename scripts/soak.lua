-- scripts/soak.lua: long runs that must not grow (make soak):
--
--   build/tend --virtual-time scripts/soak.lua [SCALE]
--
-- Each workload runs in 10 rounds; the resident set (/proc/self/statm) is
-- read after round 5 (the warm-up: malloc's arenas settle by then) and
-- after round 10, each time after a full collection, and must not grow by
-- more than 5 %. Prints one line per
-- workload (the rate, the RSS before and after) and exits 1 if any grew.
-- SCALE (default 1) multiplies every count: the full sizes are 10^6
-- restarts, 10^7 messages, 10 x 10^5 actors spawned and stopped, 10^7
-- timers, 10^6 asks, 10^6 watches.
local tend = require "tend"
local internal = require "tend.internal"

local scale = tonumber(arg[1]) or 1
local ROUNDS = 10
local WARMUP = 5 -- rounds before the first reading (the allocator settles)
local failed = false

local function rss_kb()
  collectgarbage("collect")
  local f = assert(io.open("/proc/self/statm"))
  local resident = f:read("n") and f:read("n")
  f:close()
  return resident * 4 -- pages of 4 KB
end

-- Runs round(n) ROUNDS times (n units each) and reports.
local function soak(name, unit, total, round)
  local n = math.max(1, math.floor(total * scale / ROUNDS))
  local t0, warm = internal.wall_clock(), nil
  for r = 1, ROUNDS do
    round(n)
    if r == WARMUP then warm = rss_kb() end
  end
  local secs = internal.wall_clock() - t0
  local last = rss_kb()
  local growth = (last - warm) / warm
  local ok = growth <= 0.05
  failed = failed or not ok
  print(string.format("soak %-10s %10d %-9s %9.0f/s  rss %7d KB -> %7d KB (%+.1f %%)  %s",
    name, n * ROUNDS, unit, n * ROUNDS / secs, warm, last, growth * 100, ok and "ok" or "GREW"))
end

local function idle() return function() end end

-- Restarts: a child that fails on every message, each failure awaited.
soak("restarts", "restarts", 1e6, function(n)
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function(msg, ctx) ctx:reply(0) error("boom") end end)
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { log = false } })
  local child = tend.ask(sup, "child")
  for _ = 1, n do tend.ask(child, "fail") end
  tend.stop(sup)
  tend.sleep(0)
end)

-- Messages: two actors, one message in flight, n round trips / 2.
soak("messages", "messages", 1e7, function(n)
  local done
  local pong = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
  local ping = tend.spawn(function()
    local left = n // 2
    return function(m, ctx)
      if m == "go" then done = ctx.sender pong:send(1) return end
      left = left - 1
      if left > 0 then pong:send(m + 1) else done:send("done") end
    end
  end)
  tend.ask(ping, "go", math.huge)
  tend.stop(ping)
  tend.stop(pong)
  tend.sleep(0)
end)

-- Spawn and stop: 10^5 actors at a time.
soak("actors", "actors", 1e6, function(n)
  local before = tend.stats().actors
  local refs = {}
  for i = 1, n do refs[i] = tend.spawn(idle) end
  tend.sleep(0)
  for i = 1, n do tend.stop(refs[i]) end
  -- every one is gone before the reading (a stop takes more than one pass
  -- of the scheduler: the readings depended on how many were left)
  repeat tend.sleep(0) until tend.stats().actors <= before
end)

-- Timers: each fired and delivered.
soak("timers", "timers", 1e7, function(n)
  local got = 0
  local a = tend.spawn(function(ctx)
    for _ = 1, n do ctx:after(0.001, "t") end
    return function() got = got + 1 end
  end)
  tend.sleep(0.01)
  assert(got == n, "timers: " .. got .. " of " .. n)
  tend.stop(a)
  tend.sleep(0)
end)

-- Asks: each answered.
soak("asks", "asks", 1e6, function(n)
  local a = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
  for i = 1, n do assert(tend.ask(a, i) == i) end
  tend.stop(a)
  tend.sleep(0)
end)

-- Watch churn: watch and unwatch, and watched actors that die (their
-- notices taken by the watcher).
soak("watches", "watches", 1e6, function(n)
  local watcher = tend.spawn(function()
    return function(msg, ctx)
      if msg == "gone" then return end
      local target = ctx:spawn(idle)
      for _ = 1, msg do
        ctx:watch(target)
        ctx:unwatch(target)
      end
      for _ = 1, msg // 10 do ctx:watch(ctx:spawn(idle), "gone") end
      for _, c in ipairs(ctx:children()) do ctx:stop(c) end
      ctx:reply(true)
    end
  end)
  tend.ask(watcher, n, math.huge)
  tend.sleep(0)
  tend.stop(watcher)
  tend.sleep(0)
end)

tend.shutdown(failed and 1 or 0)
