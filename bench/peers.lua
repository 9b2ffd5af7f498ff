-- The plain Lua 5.4 twins of bench/bench.lua: "actors" as coroutines with
-- a mailbox each and a FIFO run queue, no supervision, no timers; what a
-- message costs when nothing else is done. Same output format.
-- Usage: lua5.4 bench/peers.lua pingpong N int|string|table | ring SIZE ROUNDS
--        | spawn N | restart K
local bench = arg[1]

local function emit(name, variant, count, secs, extra)
  print(string.format("bench=%s impl=lua variant=%s count=%d secs=%.4f rate=%d%s",
    name, variant, count, secs, math.floor(count / secs + 0.5), extra or ""))
end

-- The scheduler: an actor is {co, box (a FIFO: head, tail), queued}.
local runq, rhead, rtail = {}, 1, 0
local function schedule(a)
  if not a.queued then
    a.queued = true
    rtail = rtail + 1
    runq[rtail] = a
  end
end
local function send(a, msg)
  a.tail = a.tail + 1
  a[a.tail] = msg
  schedule(a)
end
local function receive(a)
  while a.head > a.tail do coroutine.yield() end
  local msg = a[a.head]
  a[a.head] = nil
  a.head = a.head + 1
  return msg
end
local function spawn(fn, ...)
  local a = { head = 1, tail = 0, queued = false }
  local args = table.pack(...)
  a.co = coroutine.create(function() return fn(a, table.unpack(args, 1, args.n)) end)
  schedule(a)
  return a
end
local function run()
  while rhead <= rtail do
    local a = runq[rhead]
    runq[rhead] = nil
    rhead = rhead + 1
    a.queued = false
    if coroutine.status(a.co) ~= "dead" then
      local ok, err = coroutine.resume(a.co)
      if not ok then a.failed = err end
      if a.head <= a.tail and coroutine.status(a.co) ~= "dead" then schedule(a) end
    end
  end
end

local clock = os.clock
if bench == "pingpong" then
  local n, kind = tonumber(arg[2]), arg[3] or "int"
  local msg = kind == "int" and 42 or kind == "string" and "ping" or { tag = "ping", seq = 1, body = { 1, 2, 3 } }
  local pong = spawn(function(self)
    while true do
      local m = receive(self)
      send(m[1], { self, m[2] })
    end
  end)
  spawn(function(self)
    for _ = 1, n do
      send(pong, { self, msg })
      receive(self)
    end
  end)
  local t0 = clock()
  run()
  emit("pingpong", kind, 2 * n, clock() - t0)
elseif bench == "ring" then
  local size, rounds = tonumber(arg[2]), tonumber(arg[3])
  local nodes = {}
  for i = 1, size do
    nodes[i] = spawn(function(self)
      local nxt = nodes[i % size + 1]
      while true do
        local r = receive(self)
        if i == 1 then
          if r == 0 then return end
          r = r - 1
        end
        send(nxt, r)
      end
    end)
  end
  run()
  local t0 = clock()
  send(nodes[1], rounds)
  run()
  emit("ring", "int", size * rounds, clock() - t0)
elseif bench == "spawn" then
  local n = tonumber(arg[2])
  local function idle(self) receive(self) end
  local keep = {}
  for i = 1, n do keep[i] = spawn(idle) end -- cold
  run()
  keep = {}
  collectgarbage("collect")
  local m0 = collectgarbage("count")
  local t0 = clock()
  for i = 1, n do keep[i] = spawn(idle) end
  run()
  local secs = clock() - t0
  collectgarbage("collect")
  local bytes = (collectgarbage("count") - m0) * 1024
  emit("spawn", "warm", n, secs, string.format(" bytes_per_actor=%d", math.floor(bytes / n + 0.5)))
elseif bench == "restart" then
  -- a parent that restarts its child (a new coroutine) each time it fails
  local k = tonumber(arg[2])
  local function child(self) receive(self) error("crash") end
  local c = spawn(child)
  run()
  local t0 = clock()
  for _ = 1, k do
    send(c, "crash")
    run()
    assert(c.failed)
    c = spawn(child)
    run()
  end
  emit("restart", "pcall", k, clock() - t0)
else
  io.stderr:write("usage: lua5.4 bench/peers.lua pingpong N KIND | ring SIZE ROUNDS | spawn N | restart K\n")
  os.exit(2)
end
