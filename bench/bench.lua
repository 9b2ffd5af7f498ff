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

-- Waits (as the main actor) until flag() is true.
local function await(flag)
  while not flag() do tend.sleep(0) end
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

else
  io.stderr:write("usage: tend bench/bench.lua pingpong N | ring SIZE ROUNDS | spawn COUNT | restart K\n")
  tend.shutdown(2)
end
