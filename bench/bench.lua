-- tend's side of the peer benchmarks (../shared/bench/peers): the same
-- workloads and sizes, one output line per measurement in the peers' format.
-- Usage: tend bench/bench.lua pingpong N | ring SIZE ROUNDS | spawn COUNT
local tend = require "tend"

local bench = arg[1]
local A = {}
for i = 2, #arg do A[#A + 1] = math.tointeger(tonumber(arg[i])) end

local function emit(name, fields)
  local parts = { "bench=" .. name, "impl=tend" }
  for _, kv in ipairs(fields) do
    local v = kv[2]
    if math.type(v) == "float" then v = string.format("%.4f", v) end
    parts[#parts + 1] = kv[1] .. "=" .. tostring(v)
  end
  print(table.concat(parts, " "))
end

-- Waits (as the main actor) until flag() is true, polling every `step`
-- seconds (0: as soon as others ran; under the virtual clock, give a step
-- so that time can move).
local function await(flag, step)
  while not flag() do tend.sleep(step or 0) end
end

local function rss_kb()
  local f = io.open("/proc/self/status")
  if not f then return 0 end
  local s = f:read("a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)")) or 0
end

if bench == "pingpong" then
  local n = A[1] or 4000000
  local done = false
  local pong = tend.spawn(function()
    return function(msg, ctx) ctx.sender:send("pong") end
  end)
  local ping = tend.spawn(function(ctx)
    local left = n
    return function(msg, ctx)
      if left == 0 then done = true return tend.stopped end
      left = left - 1
      pong:send("ping")
    end
  end)
  local t0, c0 = tend.now(), os.clock()
  ping:send("go")
  await(function() return done end)
  local secs, cpu = tend.now() - t0, os.clock() - c0
  tend.stop(pong)
  emit("pingpong", { { "roundtrips", n }, { "msgs", 2 * n }, { "secs", secs },
    { "cpu", cpu }, { "rate", math.floor(2 * n / secs + 0.5) } })

elseif bench == "copy" then
  -- pingpong with a small table as the message (what --copy-messages
  -- copies: strings and numbers go as they are), with or without the flag
  local n = A[1] or 1000000
  local done = false
  local pong = tend.spawn(function()
    return function(msg, ctx) ctx.sender:send({ seq = msg.seq, tag = "pong", body = msg.body }) end
  end)
  local ping = tend.spawn(function(ctx)
    local left = n
    return function(msg, ctx)
      if left == 0 then done = true return tend.stopped end
      left = left - 1
      pong:send({ seq = left, tag = "ping", body = { 1, 2, 3 } })
    end
  end)
  local t0, c0 = tend.now(), os.clock()
  ping:send({ seq = n })
  await(function() return done end)
  local secs, cpu = tend.now() - t0, os.clock() - c0
  tend.stop(pong)
  emit("copy", { { "phase", tend.copy_messages() and "copied" or "shared" },
    { "roundtrips", n }, { "msgs", 2 * n }, { "secs", secs }, { "cpu", cpu },
    { "rate", math.floor(2 * n / secs + 0.5) } })

elseif bench == "ring" then
  local size, rounds = A[1] or 1000, A[2] or 8000
  local done = false
  local function fwd(ctx, next_of)
    local nxt
    return function(msg, ctx)
      nxt = nxt or next_of[ctx.self]
      nxt:send(msg)
    end
  end
  local next_of = {}
  local head = tend.spawn(function(ctx)
    local nxt
    return function(r, ctx)
      nxt = nxt or next_of[ctx.self]
      if r == 0 then done = true return end
      nxt:send(r - 1)
    end
  end)
  local actors = { head }
  for i = 2, size do actors[i] = tend.spawn(fwd, { args = { next_of } }) end
  for i = 1, size do next_of[actors[i]] = actors[i % size + 1] end
  tend.sleep(0) -- everyone has started
  local t0, c0 = tend.now(), os.clock()
  head:send(rounds)
  await(function() return done end)
  local secs, cpu = tend.now() - t0, os.clock() - c0
  local msgs = size * rounds
  for _, a in ipairs(actors) do tend.stop(a) end
  emit("ring", { { "size", size }, { "rounds", rounds }, { "msgs", msgs },
    { "secs", secs }, { "cpu", cpu }, { "rate", math.floor(msgs / secs + 0.5) } })

elseif bench == "spawn" then
  -- COUNT idle actors, children of one holder; round 1 (cold) touches fresh
  -- memory, round 2 (warm) runs after round 1's actors were stopped.
  local count = A[1] or 1000000
  local function idle() return function() end end
  for _, phase in ipairs { "cold", "warm" } do
    local holder = tend.spawn(function(ctx)
      return function(n, ctx)
        for _ = 1, n do ctx:spawn(idle) end
        ctx:reply(true)
      end
    end)
    collectgarbage("collect")
    local s0, r0 = tend.stats(), rss_kb()
    local t0, c0 = tend.now(), os.clock()
    tend.ask(holder, count, 600)
    tend.sleep(0) -- every child has run its factory and waits for mail
    local secs, cpu = tend.now() - t0, os.clock() - c0
    collectgarbage("collect")
    local s1, r1 = tend.stats(), rss_kb()
    assert(s1.actors - s0.actors == count)
    local bytes = (s1.lua_bytes - s0.lua_bytes) + (s1.c_bytes - s0.c_bytes)
    emit("spawn", { { "phase", phase }, { "actors", count }, { "secs", secs },
      { "cpu", cpu }, { "rate", math.floor(count / secs + 0.5) },
      { "bytes_per_actor", math.floor(bytes / count + 0.5) },
      { "rss_bytes_per_actor", math.floor((r1 - r0) * 1024 / count + 0.5) } })
    local watcher_done = false
    tend.stop(holder)
    await(function() return not tend.alive(holder) end)
    collectgarbage("collect")
  end

elseif bench == "restart" then
  -- A supervisor (one_for_one, no limit, no log) with one child that fails
  -- on every message; a driver crashes it K times, each time waiting for
  -- the restarted child to announce itself (as the peers' restart bench).
  local k = A[1] or 1000000
  local done = false
  local driver = tend.spawn(function()
    local left = k
    return function(child)
      if left == 0 then done = true return end
      left = left - 1
      child:send("crash")
    end
  end)
  local t0, c0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function(cctx)
      driver:send(cctx.self) -- "started"
      return function() error("boom") end
    end)
    return function() end
  end, { supervisor = tend.one_for_one { log = false } })
  t0, c0 = tend.now(), os.clock()
  await(function() return done end)
  local secs, cpu = tend.now() - t0, os.clock() - c0
  local restarts = tend.stats().restarts
  tend.stop(sup)
  tend.stop(driver)
  assert(restarts == k, restarts)
  emit("restart", { { "restarts", k }, { "secs", secs }, { "cpu", cpu },
    { "rate", math.floor(k / secs + 0.5) } })

elseif bench == "backoff" then
  -- N actors each waiting in a backoff at once (run with --virtual-time):
  -- (1) timers: each actor arms one ctx:after; time to arm and to fire them
  --     all, and the bytes each pending timer costs (record + heap slot);
  -- (2) backoff: each actor (typed restart_with_backoff) fails once; time
  --     to schedule every backoff, then to fire them and restart every
  --     actor, and the bytes each pending backoff costs (its timer, and the
  --     error kept for pre_restart/post_restart).
  local n = A[1] or 100000
  local fired = 0
  local actors = {}
  for i = 1, n do
    actors[i] = tend.spawn(function()
      return function(msg, ctx)
        if msg == "arm" then ctx:after(1 + i % 100 / 1000, "fire") else fired = fired + 1 end
      end
    end)
  end
  tend.sleep(0)
  collectgarbage("collect")
  local s0 = tend.stats()
  local t0 = os.clock()
  for i = 1, n do actors[i]:send("arm") end
  while tend.stats().timers < n do tend.sleep(0) end
  local t1 = os.clock()
  local s1 = tend.stats()
  await(function() return fired == n end, 0.5)
  local t2 = os.clock()
  emit("timers", { { "pending", n }, { "arm_rate", math.floor(n / (t1 - t0) + 0.5) },
    { "rate", math.floor(n / (t2 - t1) + 0.5) },
    { "bytes_per_timer", math.floor((s1.c_bytes - s0.c_bytes) / n + 0.5) } })
  for i = 1, n do tend.stop(actors[i]) end
  tend.sleep(0)

  local started = 0
  for i = 1, n do
    actors[i] = tend.spawn(tend.supervise(function()
      started = started + 1
      return function(msg) error("down") end
    end):on_failure("*", tend.restart_with_backoff(1, 2, 0.2)))
  end
  await(function() return started == n end)
  collectgarbage("collect")
  s0 = tend.stats()
  t0 = os.clock()
  for i = 1, n do actors[i]:send("crash") end
  while tend.stats().timers < n do tend.sleep(0) end
  t1 = os.clock()
  collectgarbage("collect")
  s1 = tend.stats()
  await(function() return started == 2 * n end, 0.5)
  t2 = os.clock()
  emit("backoff", { { "pending", n }, { "schedule_rate", math.floor(n / (t1 - t0) + 0.5) },
    { "rate", math.floor(n / (t2 - t1) + 0.5) },
    { "timer_bytes", math.floor((s1.c_bytes - s0.c_bytes) / n + 0.5) },
    { "bytes_per_backoff", math.floor(((s1.c_bytes - s0.c_bytes) + (s1.lua_bytes - s0.lua_bytes)) / n + 0.5) } })
  for i = 1, n do tend.stop(actors[i]) end

elseif bench == "trace" then
  -- N messages to a dead actor: each is a dead_letter event; run with
  -- --trace FILE to time the trace writer (events per second).
  local n = A[1] or 1000000
  local a = tend.spawn(function() return function() end end)
  tend.stop(a)
  tend.sleep(0.001)
  local t0 = require("tend.internal").wall_clock()
  for i = 1, n do a:send(i) end
  local secs = require("tend.internal").wall_clock() - t0
  emit("trace", { { "events", n }, { "secs", secs }, { "rate", math.floor(n / secs + 0.5) } })

else
  io.stderr:write("usage: tend bench/bench.lua pingpong N | ring SIZE ROUNDS | spawn COUNT"
    .. " | restart K | backoff N | trace N\n")
  tend.shutdown(2)
end
