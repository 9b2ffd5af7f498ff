-- tend's benchmarks, written as users write actors, beside their twins in
-- bench/peers.erl (Erlang/OTP) and bench/peers.lua (plain Lua coroutines):
-- one output line per measurement, bench=NAME impl=tend variant=V ...
-- rate=R. scripts/bench runs each 5 times and prints medians and spreads.
-- Usage: tend bench/bench.lua pingpong N reply|sender int|string|table|hooks
--        | ring SIZE ROUNDS | ask N | spawn N | restart K | backoff_restart K
--        | restart_queued Q K | copy N | backoff N | costs N | trace N
local tend = require "tend"

local bench = arg[1]
local A = {}
for i = 2, #arg do A[#A + 1] = math.tointeger(tonumber(arg[i])) or arg[i] end

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

-- Seconds the main thread has waited runnable for a processor (the
-- kernel's run-queue delay, /proc/self/schedstat's second field), 0 where
-- there is none: what a wall-clock figure above the CPU one is made of
-- when the process never sleeps.
local function runq_wait()
  local f = io.open("/proc/self/schedstat")
  if not f then return 0 end
  local _, waited = f:read("n", "n")
  f:close()
  return (waited or 0) / 1e9
end

-- Times fn() (which waits until its work is done); emits the line:
-- secs of wall clock, cpu of the process, runq of them spent waiting for
-- a processor held by another process.
local function timed(name, variant, count, fn, extra)
  local t0, c0, q0 = tend.now(), os.clock(), runq_wait()
  fn()
  local secs, cpu, runq = tend.now() - t0, os.clock() - c0, runq_wait() - q0
  local fields = { { "variant", variant }, { "count", count }, { "secs", secs }, { "cpu", cpu },
    { "runq", runq }, { "rate", math.floor(count / secs + 0.5) } }
  for _, kv in ipairs(extra or {}) do fields[#fields + 1] = kv end
  emit(name, fields)
end

-- A driver that crashes the child announcing itself, k times, each time
-- waiting for the next child (as the peers' restart benchmarks); then it
-- tells the main chunk, which waits in tend.receive (as a user's would,
-- and the peers' do: no polling).
local function crash_driver(k)
  local main = tend.self()
  local driver = tend.spawn(function()
    local left = k
    return function(child)
      if left == 0 then main:send("done") return end
      left = left - 1
      child:send("crash")
    end
  end)
  return driver, function() assert(tend.receive() == "done") end
end

if bench == "pingpong" then
  -- pong answers with ctx:reply(msg) or ctx.sender:send(msg); the message
  -- is an integer, a short string or a small table; "hooks": the pong is a
  -- hook table ({ receive = ... }) answering with ctx:reply
  local n, style, kind = A[1] or 1000000, A[2] or "reply", A[3] or "int"
  local msg = kind == "string" and "ping" or kind == "table" and { tag = "ping", seq = 1, body = { 1, 2, 3 } } or 42
  local done = false
  local pong
  if kind == "hooks" then
    pong = tend.spawn(function()
      return { receive = function(self, m, ctx) ctx:reply(m) end }
    end)
  elseif style == "reply" then
    pong = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
  else
    pong = tend.spawn(function() return function(m, ctx) ctx.sender:send(m) end end)
  end
  local ping = tend.spawn(function()
    local left = n
    return function(m, ctx)
      if left == 0 then done = true return tend.stopped end
      left = left - 1
      pong:send(msg)
    end
  end)
  timed("pingpong", style .. "-" .. kind, 2 * n, function()
    ping:send(msg)
    await(function() return done end)
  end)
  tend.stop(pong)

elseif bench == "ask" then
  -- an actor asks a server N times (tend.ask from an actor: a request, a
  -- wait, a reply), as gen_server:call
  local n = A[1] or 200000
  local done = false
  local server = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
  local client = tend.spawn(function()
    return function(k)
      for i = 1, k do assert(tend.ask(server, i) == i) end
      done = true
    end
  end)
  timed("ask", "actor", n, function()
    client:send(n)
    await(function() return done end)
  end)
  tend.stop(server)
  tend.stop(client)

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
  timed("copy", tend.copy_messages() and "copied" or "shared", 2 * n, function()
    ping:send({ seq = n })
    await(function() return done end)
  end)
  tend.stop(pong)

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
  timed("ring", "int", size * rounds, function()
    head:send(rounds)
    await(function() return done end)
  end)
  for _, a in ipairs(actors) do tend.stop(a) end

elseif bench == "spawn" then
  -- N idle actors, children of one holder that keeps their refs (a list),
  -- after a first round (warm): the rate, and the bytes per idle actor
  -- including the ref its spawner keeps
  local count = A[1] or 1000000
  local function idle() return function() end end
  for _, phase in ipairs { "cold", "warm" } do
    local holder = tend.spawn(function(ctx)
      local kept = {}
      return function(n, ctx)
        for i = 1, n do kept[i] = ctx:spawn(idle) end
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
    if phase == "warm" then
      emit("spawn", { { "variant", phase }, { "count", count }, { "secs", secs },
        { "cpu", cpu }, { "rate", math.floor(count / secs + 0.5) },
        { "bytes_per_actor", math.floor(bytes / count + 0.5) },
        { "rss_bytes_per_actor", math.floor((r1 - r0) * 1024 / count + 0.5) } })
    end
    tend.stop(holder)
    await(function() return not tend.alive(holder) end)
    collectgarbage("collect")
  end

elseif bench == "restart" then
  -- A supervisor with the default strategy and default logging (run with
  -- --log-level error: the warn line of each restart is made and not
  -- printed) and one child that fails on every message; a driver crashes
  -- it K times, each time waiting for the restarted child to announce
  -- itself (as the peers).
  local k = A[1] or 1000000
  local driver, wait_done = crash_driver(k)
  local r0 = tend.stats().restarts
  local sup
  timed("restart", "default", k, function()
    sup = tend.spawn(function(ctx)
      ctx:spawn(function(cctx)
        driver:send(cctx.self) -- "started"
        return function() error("boom") end
      end)
      return function() end
    end)
    wait_done()
  end)
  assert(tend.stats().restarts - r0 == k)
  tend.stop(sup)
  tend.stop(driver)

elseif bench == "restart_queued" then
  -- Restarts while Q messages wait in the mailbox and one tend.ask to the
  -- actor is pending behind them: a child that fails on every message gets
  -- K + Q of them, then the ask (held, still queued); K restarts are timed,
  -- with at least Q messages ahead of the ask all along. A restart must not
  -- cost more with a deeper mailbox.
  local q, k = A[1] or 100000, A[2] or 2000
  local wall = require("tend.internal").wall_clock
  local t0, t1, n = nil, nil, 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      if t0 then
        n = n + 1
        if n == k then t1 = wall() end
      end
      return function() error("boom") end
    end, { name = "w" })
    return function(_, ctx) ctx:reply(ctx:children()[1]) end
  end)
  local w = tend.ask(sup, "?")
  local asker = tend.spawn(function()
    return function()
      t0 = wall()
      pcall(tend.ask, w, "held", 3600)
    end
  end)
  for i = 1, k + q do w:send(i) end -- queued: w runs only when main waits
  asker:send("go")
  await(function() return t1 ~= nil end)
  emit("restart", { { "variant", "queued" }, { "queued", q }, { "count", k },
    { "secs", t1 - t0 }, { "rate", math.floor(k / (t1 - t0) + 0.5) } })
  tend.stop(sup)
  tend.stop(asker)

elseif bench == "backoff_restart" then
  -- The same under a backoff supervisor (on_failure, min_backoff = 0): each
  -- failure stops the child and starts a new one
  local k = A[1] or 300000
  local driver, wait_done = crash_driver(k)
  local sup
  timed("restart", "backoff", k, function()
    sup = tend.spawn(tend.backoff.on_failure(function(cctx)
      driver:send(cctx.self)
      return function() error("boom") end
    end, { min_backoff = 0, max_backoff = 0, random_factor = 0 }))
    wait_done()
  end)
  tend.stop(sup)
  tend.stop(driver)

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

elseif bench == "costs" then
  -- The cost model (docs/costs.md): nanoseconds per send, per behavior call,
  -- per ask, per restart, per timer; bytes per actor, per pending message,
  -- per timer, per watch. One line each: bench=cost variant=WHAT ns=|bytes=
  local n = A[1] or 200000
  local internal = require "tend.internal"
  local function cost(what, key, value)
    emit("cost", { { "variant", what }, { key, string.format("%.1f", value) } })
  end
  local function bytes() local s = tend.stats() return s.lua_bytes + s.c_bytes end
  local function wall() return internal.wall_clock() end
  local got = 0
  local sink = tend.spawn(function() return function() got = got + 1 end end)
  tend.sleep(0)
  collectgarbage("collect")
  local b0, t0 = bytes(), wall()
  for i = 1, n do sink:send(i) end -- queued: the sink runs only when main waits
  local t1 = wall()
  collectgarbage("collect")
  local b1 = bytes()
  local t2 = wall()
  await(function() return got == n end)
  local t3 = wall()
  cost("send (enqueue an integer)", "ns", (t1 - t0) * 1e9 / n)
  cost("behavior call (take one, run it)", "ns", (t3 - t2) * 1e9 / n)
  cost("pending message", "bytes", (b1 - b0) / n)
  -- ask: a round trip from an actor
  local server = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
  local done = false
  local client = tend.spawn(function()
    return function(k) for i = 1, k do tend.ask(server, i) end done = true end
  end)
  t0 = wall()
  client:send(n)
  await(function() return done end)
  cost("ask round trip (from an actor)", "ns", (wall() - t0) * 1e9 / n)
  -- timers: ctx:after(0) armed and fired, one at a time
  local fired = 0
  local ticker = tend.spawn(function()
    return function(m, ctx) fired = fired + 1 if fired < n then ctx:after(0, "tick") end end
  end)
  t0 = wall()
  ticker:send("tick")
  await(function() return fired == n end)
  cost("timer (arm and fire ctx:after)", "ns", (wall() - t0) * 1e9 / n)
  -- restart: a child failing on each message under the default strategy
  local restarted = 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function(c)
      restarted = restarted + 1
      return function() error("boom") end
    end, { name = "w" })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end)
  local w = tend.ask(sup, "?")
  local k = math.max(1, n // 4)
  t0 = wall()
  for _ = 1, k do
    local before = restarted
    w:send("crash")
    await(function() return restarted > before end)
  end
  cost("restart (default strategy, log below level)", "ns", (wall() - t0) * 1e9 / k)
  -- bytes: idle actors (with the refs kept), timers, watches
  local m = math.max(1, n // 4)
  collectgarbage("collect")
  b0 = bytes()
  local kept = {}
  for i = 1, m do kept[i] = tend.spawn(function() return function() end end) end
  tend.sleep(0)
  collectgarbage("collect")
  cost("idle actor (its ref kept)", "bytes", (bytes() - b0) / m)
  local watcher = tend.spawn(function()
    return function(refs, ctx) for _, r in ipairs(refs) do ctx:watch(r) end ctx:reply(true) end
  end)
  collectgarbage("collect")
  local r0 = rss_kb() -- watch records and actor exts are malloc'ed: RSS
  b0 = bytes()
  tend.ask(watcher, kept, 60)
  collectgarbage("collect")
  cost("watch (record, and the target's ext when it had none)", "bytes",
    ((bytes() - b0) + (rss_kb() - r0) * 1024) / m)
  local armer = tend.spawn(function()
    return function(k2, ctx) for _ = 1, k2 do ctx:after(1000, "x") end ctx:reply(true) end
  end)
  collectgarbage("collect")
  b0 = bytes()
  tend.ask(armer, m, 60)
  collectgarbage("collect")
  cost("pending timer", "bytes", (bytes() - b0) / m)
  for _, r in ipairs(kept) do tend.stop(r) end
  for _, r in ipairs { sink, server, client, ticker, sup, watcher, armer } do tend.stop(r) end
  -- an invariant: the pass hook and a check returning true, per pass in
  -- which the clock moved (each tend.sleep(0) is one; last: it stays)
  local passes = math.max(1, n // 4)
  t0 = wall()
  for _ = 1, passes do tend.sleep(0) end
  local plain = wall() - t0
  local checks = 0
  tend.invariant("bench", function() checks = checks + 1 return true end)
  t0 = wall()
  for _ = 1, passes do tend.sleep(0) end
  local checked = wall() - t0
  assert(checks >= passes, "a check per pass")
  cost("invariant check per pass (hook, fn returns true)", "ns", (checked - plain) * 1e9 / passes)

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
  io.stderr:write("usage: tend bench/bench.lua pingpong N reply|sender int|string|table|hooks"
    .. " | ring SIZE ROUNDS | ask N | spawn N | restart K | backoff_restart K"
    .. " | restart_queued Q K | copy N"
    .. " | backoff N | costs N | trace N\n")
  tend.shutdown(2)
end
