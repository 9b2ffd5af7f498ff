-- The complexity audit (docs/costs.md, "What grows with what"): each
-- section builds a state of SIZE (a mailbox that deep, that many children,
-- watchers, names, timers, asks, pool or group members, connections), then
-- times COUNT operations against it and prints their cost:
--   bench=scaling impl=tend op=OP size=SIZE count=COUNT ns=NS_PER_OP
-- scripts/bench runs each op at every size of `tend bench/scaling.lua
-- sizes OP`, 5 times, and prints the medians and largest/smallest ratio.
-- A flat cost has a ratio near 1; where the operation is linear by nature
-- (a stop frees every queued message, which_children returns every row)
-- the op is timed per item (per message freed, per row) so that it too
-- should be flat. Sections "actors" and "tree" are the large runs (bytes
-- per actor, seconds per message, per actor of a whole tree's restart).
-- Usage: tend bench/scaling.lua OP SIZE [COUNT] | sizes OP | list
local tend = require "tend"
-- CPU seconds of the process (os.clock): on a shared machine whose load
-- comes and goes, the wall clock moves a run by several times; what a
-- state's size does to an operation is CPU (and the caches) all the same
local wall = os.clock

local op, size, count = arg[1], math.tointeger(tonumber(arg[2])), math.tointeger(tonumber(arg[3]))

local function rss()
  local f = io.open("/proc/self/statm")
  if not f then return 0 end
  local _, pages = f:read("n", "n")
  f:close()
  return pages * 4096
end

local function await(flag)
  while not flag() do tend.sleep(0) end
end

local function idle() return function() end end

-- n idle actors under /user, their refs kept
local function idles(n)
  local refs = {}
  for i = 1, n do refs[i] = tend.spawn(idle) end
  tend.sleep(0) -- started
  return refs
end

local ops, order = {}, {}
-- def(name, sizes, default count, unit, fn(size, count) -> seconds, items)
local function def(name, sizes, n, unit, fn)
  ops[name] = { sizes = sizes, count = n, unit = unit, fn = fn }
  order[#order + 1] = name
end
local S4 = { 1000, 10000, 100000, 1000000 }
local S3 = { 1000, 10000, 100000 }

-- Mailbox depth -------------------------------------------------------

def("send", S4, 100000, "send", function(s, m)
  local a = tend.spawn(idle)
  for i = 1, s do a:send(i) end -- a runs only when main waits
  local t0 = wall()
  for i = 1, m do a:send(i) end
  return wall() - t0, m
end)

def("receive", S4, 100000, "message taken", function(s, m)
  local t0, t1, n = nil, nil, 0
  local a = tend.spawn(function()
    return function()
      n = n + 1
      if n == 1 then t0 = wall() elseif n == m + 1 then t1 = wall() end
    end
  end)
  for i = 1, s + m + 1 do a:send(i) end -- at least s behind each timed one
  await(function() return t1 ~= nil end)
  return t1 - t0, m
end)

-- A child failing on every message, an ask held behind them (a restart
-- once checked the held ask against the whole mailbox: quadratic)
def("restart", S4, 20000, "restart", function(s, m)
  local t0, t1, n = nil, nil, 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      if t0 then
        n = n + 1
        if n == m then t1 = wall() end
      end
      return function() error("boom") end
    end)
    return function(_, ctx) ctx:reply(ctx:children()[1]) end
  end)
  local w = tend.ask(sup, "?")
  local asker = tend.spawn(function()
    return function()
      t0 = wall()
      pcall(tend.ask, w, "held", 3600)
    end
  end)
  for i = 1, m + s do w:send(i) end
  asker:send("go")
  await(function() return t1 ~= nil end)
  return t1 - t0, m
end)

-- Linear by nature: a stop frees every queued message; timed per message
def("stop", S4, nil, "queued message freed", function(s)
  local a = tend.spawn(idle)
  for i = 1, s do a:send(i) end
  tend.watch(a)
  local t0 = wall()
  tend.stop(a)
  tend.receive()
  return wall() - t0, s
end)

def("stash", S4, 100000, "message stashed", function(s, m)
  local t0, t1, n = nil, nil, 0
  local a = tend.spawn(function()
    return function(_, ctx)
      n = n + 1
      if n == s + 1 then t0 = wall() end
      ctx:stash()
      if n == s + m then t1 = wall() end
    end
  end, { stash = s + m })
  for i = 1, s + m do a:send(i) end
  await(function() return t1 ~= nil end)
  return t1 - t0, m - 1
end)

-- tend.receive in a task (oldest first: tend has no selective receive)
def("task_receive", S4, 100000, "tend.receive", function(s, m)
  local me = tend.self()
  for i = 1, s + m do me:send(i) end
  local t0 = wall()
  for _ = 1, m do tend.receive() end
  return wall() - t0, m
end)

-- Children of one supervisor -------------------------------------------

local function parent_of(s, first)
  local sup = tend.spawn(function(ctx)
    ctx:spawn(first or idle)
    for _ = 2, s do ctx:spawn(idle) end
    return function(_, ctx) ctx:reply(ctx:children()[1]) end
  end)
  return sup, tend.ask(sup, "first", 600)
end

def("child_restart", S4, 200000, "restart", function(s, m)
  local t0, t1, n = nil, nil, 0
  local _, w = parent_of(s, function()
    if t0 then
      n = n + 1
      if n == m then t1 = wall() end
    end
    return function() error("boom") end
  end)
  t0 = wall()
  for i = 1, m do w:send(i) end
  await(function() return t1 ~= nil end)
  return t1 - t0, m
end)

def("start_stop_child", S4, 20000, "start_child and stop_child", function(s, m)
  local sup = parent_of(s)
  local t0 = wall()
  for _ = 1, m do tend.stop_child(sup, tend.start_child(sup, idle)) end
  tend.sleep(0)
  return wall() - t0, m
end)

-- Linear by nature (a row per child): timed per row
def("which_children", S3, nil, "row", function(s)
  local sup = parent_of(s)
  local calls = math.max(1, 200000 // s)
  tend.children(sup) -- once untimed: the rows' memory, as the later calls
  collectgarbage()   -- find it (the first call's page faults are setup)
  local t0 = wall()
  for _ = 1, calls do tend.children(sup) end
  return wall() - t0, calls * s
end)

-- Linear by nature (it counts them, as OTP's): timed per child
def("count_children", S4, nil, "child counted", function(s)
  local sup = parent_of(s)
  local calls = math.max(1, 1000000 // s)
  local t0 = wall()
  for _ = 1, calls do tend.count_children(sup) end
  return wall() - t0, calls * s
end)

-- Watchers and watches -------------------------------------------------

def("watchers_of_one", S4, 50000, "watch and unwatch", function(s, m)
  local target = tend.spawn(idle)
  for _ = 1, s do tend.spawn(function(ctx) ctx:watch(target) return idle() end) end
  tend.sleep(0)
  local t0 = wall()
  for _ = 1, m do tend.watch(target) tend.unwatch(target) end
  return wall() - t0, m
end)

def("watches_held", S4, 50000, "watch and unwatch", function(s, m)
  for _, r in ipairs(idles(s)) do tend.watch(r) end
  local other = tend.spawn(idle)
  local t0 = wall()
  for _ = 1, m do tend.watch(other) tend.unwatch(other) end
  return wall() - t0, m
end)

-- a watched actor dies: the watcher holds s other watches
def("watched_death", S4, 5000, "death seen", function(s, m)
  for _, r in ipairs(idles(s)) do tend.watch(r) end
  local dying = idles(m)
  for _, r in ipairs(dying) do tend.watch(r) end
  local t0 = wall()
  for _, r in ipairs(dying) do tend.stop(r) end
  for _ = 1, m do tend.receive() end
  return wall() - t0, m
end)

-- Registered names -----------------------------------------------------

def("register", S4, 50000, "register and unregister", function(s, m)
  for i, r in ipairs(idles(s)) do tend.register("n" .. i, r) end
  local r = tend.spawn(idle)
  local t0 = wall()
  for _ = 1, m do tend.register("x", r) tend.unregister("x") end
  return wall() - t0, m
end)

def("send_by_name", S4, 100000, "whereis and send by name", function(s, m)
  for i, r in ipairs(idles(s)) do tend.register("n" .. i, r) end
  local t0 = wall()
  for i = 1, m do tend.send("n" .. (i % s + 1), i) end
  return wall() - t0, m
end)

-- the same with the names held (a literal or a kept string, as a program
-- names its servers): the lookup in the names' table without the making
-- and interning of a string per call ("n" .. i) that send_by_name pays
def("send_to_held_name", S4, 100000, "send by a held name", function(s, m)
  local names = {}
  for i, r in ipairs(idles(s)) do
    names[i] = "n" .. i
    tend.register(names[i], r)
  end
  local t0 = wall()
  for i = 1, m do tend.send(names[i % s + 1], i) end
  return wall() - t0, m
end)

-- a path looked up among SIZE named siblings ("/user/sup/cK")
def("whereis_path", S4, 100000, "tend.whereis of a path", function(s, m)
  local sup = tend.spawn(function(ctx)
    for i = 1, s do ctx:spawn(idle, { name = "c" .. i }) end
    return idle()
  end, { name = "sup" })
  await(function() return tend.whereis("/user/sup/c" .. s) ~= nil end)
  local paths = {}
  for i = 1, 1000 do paths[i] = "/user/sup/c" .. ((i * 7919) % s + 1) end
  local t0 = wall()
  for i = 1, m do
    if not tend.whereis(paths[i % 1000 + 1]) then error("not found") end
  end
  local secs = wall() - t0
  tend.stop(sup)
  return secs, m
end)

-- Linear by nature (a sorted list of every name): timed per name
def("registered", S4, nil, "name listed", function(s)
  for i, r in ipairs(idles(s)) do tend.register("n" .. i, r) end
  local calls = math.max(1, 200000 // s)
  tend.registered() -- the names registered above sorted, once
  local t0 = wall()
  for _ = 1, calls do tend.registered() end
  return wall() - t0, calls * s
end)

-- Pending timers, pending asks -----------------------------------------

def("timer_arm_cancel", S4, 100000, "arm and cancel", function(s, m)
  local done
  tend.spawn(function(ctx)
    for i = 1, s do ctx:after(3600, i) end
    local t0 = wall()
    for i = 1, m do ctx:after(1800, i):cancel() end
    done = wall() - t0
    return idle()
  end)
  await(function() return done ~= nil end)
  return done, m
end)

def("timer_fire", S4, 50000, "timer fired", function(s, m)
  local t0, t1, n = nil, nil, 0
  tend.spawn(function(ctx)
    for i = 1, s do ctx:after(3600, i) end
    t0 = wall()
    for i = 1, m do ctx:after(0, i) end
    return function()
      n = n + 1
      if n == m then t1 = wall() end
    end
  end)
  await(function() return t1 ~= nil end)
  return t1 - t0, m
end)

def("ask_pending", S4, 200000, "ask round trip", function(s, m)
  local holder = tend.spawn(idle) -- never answers
  local askers = idles(0)
  for i = 1, s do
    askers[i] = tend.spawn(function() return function() pcall(tend.ask, holder, "held", 3600) end end)
    askers[i]:send("go")
  end
  tend.sleep(0)
  local echo = tend.spawn(function() return function(x, ctx) ctx:reply(x) end end)
  local t0 = wall()
  for i = 1, m do tend.ask(echo, i) end
  return wall() - t0, m
end)

-- Pools and groups -----------------------------------------------------

local function pool_row(routing)
  return function(s, m)
    local n, started = 0, 0
    local pool = tend.pool { size = s, routing = routing,
      factory = function() started = started + 1 return function() n = n + 1 end end }
    await(function() return started == s end)
    local t0 = wall()
    for i = 1, m do pool:send(i) end
    await(function() return n == m end)
    return wall() - t0, m
  end
end
def("pool_smallest_mailbox", S3, 2000, "message routed", pool_row("smallest_mailbox"))
def("pool_round_robin", S3, 2000, "message routed", pool_row("round_robin"))

def("pg_join_leave", S3, 2000, "join and leave", function(s, m)
  tend.pg.join("g", idles(s))
  local r = tend.spawn(idle)
  local t0 = wall()
  for _ = 1, m do tend.pg.join("g", r) tend.pg.leave("g", r) end
  return wall() - t0, m
end)

-- Linear by nature (one send per member): timed per member
def("pg_send", S3, nil, "member sent to", function(s)
  local n = 0
  local refs = {}
  for i = 1, s do refs[i] = tend.spawn(function() return function() n = n + 1 end end) end
  tend.pg.join("g", refs)
  local calls = math.max(1, 200000 // s)
  local t0 = wall()
  for _ = 1, calls do tend.pg.send("g", "hi") end
  await(function() return n == calls * s end)
  return wall() - t0, calls * s
end)

-- TCP: connections of one listener (both ends here: 2 descriptors each,
-- under this machine's limit of 20,000)
def("tcp_echo", { 1000, 3000, 9000 }, 5000, "echo round trip", function(s, m)
  local server = tend.tcp.listen({ port = 0, max_connections = 100000, backlog = 4096,
    handler = function() return function(msg, ctx) if msg.tend == "data" then ctx:write(msg.data) end end end })
  local port = tend.ask(server, "port")
  for _ = 1, s do tend.tcp.connect({ host = "127.0.0.1", port = port }) end
  while tend.ask(server, "connections") < s do tend.sleep(0.01) end
  local done
  local client = tend.spawn(function()
    local conn = tend.tcp.connect({ host = "127.0.0.1", port = port })
    local left, t0 = m, nil
    return function(msg)
      if msg == "go" then t0 = wall() end
      if msg == "go" or msg.tend == "data" then
        if left == 0 then done = wall() - t0 return tend.stopped end
        left = left - 1
        tend.tcp.write(conn, "ping\n")
      end
    end
  end)
  tend.sleep(0.2)
  client:send("go")
  await(function() return done ~= nil end)
  return done, m
end)

-- Large runs -----------------------------------------------------------

-- SIZE actors in a ring, SIZE tokens each making 10 hops: 10 * SIZE
-- messages; prints bytes per actor too
def("actors", S4, nil, "message", function(s)
  collectgarbage() collectgarbage()
  local before = rss()
  local left = s
  local ring = {}
  for i = 1, s do
    ring[i] = tend.spawn(function(_, i)
      return function(hops)
        if hops == 0 then left = left - 1 return end
        ring[i % s + 1]:send(hops - 1)
      end
    end, { args = { i } })
  end
  tend.sleep(0)
  collectgarbage() collectgarbage()
  local bytes = (rss() - before) / s
  local t0 = wall()
  for i = 1, s do ring[i]:send(10) end
  await(function() return left == 0 end)
  local secs = wall() - t0
  print(string.format("bench=scaling impl=tend op=actors_memory size=%d count=%d bytes=%d", s, s, math.floor(bytes)))
  return secs, 10 * s
end)

-- SIZE/10 supervisors under an all_for_one root, 10 children each; one
-- child of the root fails: the whole tree restarts (timed per actor)
def("tree", { 1000, 10000, 100000, 1000000 }, nil, "actor restarted", function(s)
  local sups = s // 10
  local started, t0 = 0, nil
  local total = sups * 11
  local root = tend.spawn(function(ctx)
    for _ = 1, sups do
      ctx:spawn(function(c)
        started = started + 1
        for _ = 1, 10 do c:spawn(function() started = started + 1 return idle() end) end
        return function() error("boom") end
      end)
    end
    return function(_, ctx) ctx:reply(ctx:children()[1]) end
  end, { children = tend.all_for_one { max_retries = -1 } })
  local first = tend.ask(root, "first", 600)
  await(function() return started == total end)
  started = 0
  t0 = wall()
  first:send("fail")
  await(function() return started == total end)
  return wall() - t0, total
end)

-- Running -------------------------------------------------------------

if op == "list" then
  print(table.concat(order, " "))
  return
end
local sizes_only = op == "sizes"
if sizes_only then op = arg[2] end
local o = ops[op]
if not o then
  io.stderr:write(("scaling.lua: OP: expected one of %s, given %s\n"):format(table.concat(order, ", "), tostring(op)))
  os.exit(2)
end
if sizes_only then
  print(table.concat(o.sizes, " "))
  return
end
if not size then
  io.stderr:write(("scaling.lua: SIZE: expected an integer, given %s\n"):format(tostring(arg[2])))
  os.exit(2)
end
local secs, items = o.fn(size, count or o.count)
print(string.format("bench=scaling impl=tend op=%s size=%d count=%d ns=%.1f unit=%s", op, size, items,
  secs / items * 1e9, o.unit:gsub(" ", "_")))
io.stdout:flush()
os.exit(0)
