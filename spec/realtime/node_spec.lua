-- Nodes over a real nats-server on 127.0.0.1 (started by this spec on a
-- free port) with peer nodes as real tend processes. Run with the real
-- clock: `tend --real-time test spec/realtime/node_spec.lua` (scripts/test
-- and scripts/check do). This process is node "spec"; peers are `tend --node pN
-- --nats URL --node-timeout 2 -e CODE`, children of it.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() or H.skip("node_spec", H.no_nats()) then return end

local eventually = H.eventually
local url, start_nats = H.nats_server()
local nats_proc = start_nats()
-- A node is down after NODE_TIMEOUT s without a heartbeat (one each
-- quarter of it), here and at the peers: short, as a killed or stopped
-- peer is seen down only then. scripts/check sets 2 s
-- (TEND_SPEC_NODE_TIMEOUT): under valgrind this node's loop can stall
-- longer than a heartbeat's period.
local NODE_TIMEOUT = tonumber(os.getenv("TEND_SPEC_NODE_TIMEOUT")) or 0.5
tend.node.start { name = "spec", nats = url, timeout = NODE_TIMEOUT }

local peers = 0
-- A peer node running CODE (after spec/ joins package.path, for
-- spec/node_actors.lua); returns its name and process ref, once it is up.
local function peer(code, name)
  peers = peers + 1
  name = name or ("p" .. peers)
  local p = tend.node.peer(name, { log_level = "error", timeout = NODE_TIMEOUT,
    code = "package.path = 'spec/?.lua;' .. package.path " .. (code or "") })
  return name, p
end

-- Stops a peer and waits until it is down here (its members with it), so
-- that the next test sees none of its groups.
local function stop_peer(p, name)
  tend.stop(p)
  assert(eventually(function()
    for _, n in ipairs(tend.node.list()) do
      if n == name then return false end
    end
    return true
  end), "node " .. name .. " still up")
end

local function next_msg(t) return (tend.receive(t or 20)) end

local function flush() while select("#", tend.receive(0)) > 0 do end end

TestNode = {}

function TestNode:setUp() flush() end

function TestNode:test_a_peer_is_up_and_listed_and_its_tree_is_readable()
  local name, p = peer()
  lu.assertEquals(tend.node.name(), "spec")
  lu.assertTrue(tend.node.list()[1] ~= nil)
  lu.assertStrContains(tend.node.tree(name), "  node [running]")
  tend.stop(p)
end

function TestNode:test_send_ask_and_reply_across_nodes_in_order()
  local name, p = peer()
  local echo = tend.spawn_on(name, "node_actors.echo", { name = "echo" })
  lu.assertEquals(tostring(echo), "Ref(/system/remote/spec/echo@" .. name .. ")")
  lu.assertEquals(tend.ask(echo, { 1, "two", { three = 3 } }), { 1, "two", { three = 3 } })
  lu.assertEquals(tend.ask(echo, "\0binary\255"), "\0binary\255")
  -- 500 sends from one actor, 500 replies to it, in the order sent
  local got = {}
  local me = tend.self()
  tend.spawn(function(ctx)
    for i = 1, 500 do echo:send(i) end
    local n = 0
    return function(m)
      n = n + 1
      got[n] = m
      if n == 500 then me:send("done") return tend.stopped end
    end
  end)
  lu.assertEquals(next_msg(), "done")
  for i = 1, 500 do lu.assertEquals(got[i], i) end
  -- a remote sender's messages arrive in its order too
  tend.spawn_on(name, "node_actors.sender", { args = { me, 300 } })
  for i = 1, 300 do lu.assertEquals(next_msg(), i) end
  tend.stop(p)
end

function TestNode:test_watch_a_remote_actor_gets_its_reason()
  local name, p = peer()
  local a = tend.spawn_on(name, "node_actors.mortal")
  local b = tend.spawn_on(name, "node_actors.mortal", { restart = "temporary" })
  local me = tend.self()
  local w = tend.spawn(function(ctx)
    ctx:watch(a)
    ctx:watch(b)
    return function(m) me:send(m) end
  end)
  tend.sleep(0.1) -- the watches reach node p
  a:send("stop")
  local t = next_msg()
  lu.assertEquals(t.tend, "terminated")
  lu.assertTrue(t.ref == a)
  lu.assertEquals(t.reason, "normal")
  b:send("fail")
  t = next_msg()
  lu.assertTrue(t.ref == b)
  lu.assertEquals(t.reason.kind, "Boom")
  lu.assertFalse(tend.alive(a))
  tend.stop(w)
  tend.stop(p)
end

function TestNode:test_an_ask_fails_when_the_remote_actor_dies_and_times_out_when_silent()
  local name, p = peer()
  local m = tend.spawn_on(name, "node_actors.mortal")
  local ok, err = pcall(tend.ask, m, "nothing", 0.3)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  local t0 = tend.now()
  tend.after(0.1, function() m:send("stop") end)
  ok, err = pcall(tend.ask, m, "nothing", 10)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertTrue(tend.now() - t0 < 5)
  tend.stop(p)
end

function TestNode:test_a_killed_node_is_down_watchers_get_noconnection_and_sends_are_dropped()
  local name, p = peer()
  local echo = tend.spawn_on(name, "node_actors.echo")
  tend.node.monitor(name)
  local me = tend.self()
  tend.spawn(function(ctx)
    ctx:watch(echo)
    return function(m) me:send(m) end
  end)
  tend.sleep(0.1)
  local dropped = tend.node.stats().dropped
  tend.chaos.signal(p, "KILL")
  local down, term
  while not (down and term) do
    local m = next_msg()
    if m.tend == "nodedown" then down = m end
    if m.tend == "terminated" then term = m end
  end
  lu.assertEquals(down.node, name)
  lu.assertEquals(term.reason, "noconnection")
  lu.assertFalse(tend.alive(echo))
  -- (its ref is disconnected now: see the NATS test for sends and asks)
  local late = tend.spawn_on -- (the node is gone: spawn_on raises NodeDown)
  local ok, err = pcall(late, name, "node_actors.echo")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "NodeDown")
  lu.assertEquals(tend.node.stats().dropped, dropped)
  tend.node.monitor(name, false)
end

function TestNode:test_bad_messages_are_refused_at_the_sender()
  local name, p = peer()
  local echo = tend.spawn_on(name, "node_actors.echo")
  local ok, err = pcall(echo.send, echo, { f = print })
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "NotSerializable")
  lu.assertStrContains(err.message, "msg.f: a function cannot leave the node")
  ok, err = pcall(echo.send, echo, string.rep("x", 2 << 20))
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "MessageTooLarge")
  lu.assertEquals(tend.ask(echo, "still there"), "still there")
  tend.stop(p)
end

-- On this node's own name, spawn_on spawns here, as tend.spawn does with
-- "module.factory" (same parent, same errors).
function TestNode:test_spawn_on_this_nodes_own_name_spawns_here()
  local e = tend.spawn_on("spec", "node_actors.echo", { name = "own_echo" })
  lu.assertEquals(tostring(e), "Ref(/user/own_echo)")
  lu.assertEquals(tend.ask(e, "here"), "here")
  tend.stop(e)
  local ok, err = pcall(tend.spawn_on, "spec", "node_actors.nothing")
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "tend.spawn: factory: 'node_actors.nothing' is not a function")
end

function TestNode:test_remote_spawn_of_a_missing_module_is_a_spawn_error()
  local name, p = peer()
  local ok, err = pcall(tend.spawn_on, name, "no_such_module.factory")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "SpawnError")
  lu.assertStrContains(err.message, "tend.spawn_on: module 'no_such_module' not found:")
  ok, err = pcall(tend.spawn_on, name, "node_actors.nothing")
  lu.assertEquals(err.kind, "SpawnError")
  lu.assertStrContains(err.message, "tend.spawn_on: ctx:spawn: factory: 'node_actors.nothing' is not a function on node ")
  ok, err = pcall(tend.spawn_on, "nowhere", "node_actors.echo")
  lu.assertEquals(err.kind, "NodeDown")
  tend.stop(p)
end

function TestNode:test_a_taken_name_and_an_unreachable_server_are_refused()
  local name, p = peer()
  local exe = require("tend.core").node_exe()
  local r = tend.process.run({ exe, "--node", name, "--nats", url, "-e", "" }, { timeout = 20 })
  lu.assertEquals(r.status, 1)
  lu.assertStrContains(r.stderr, "the name '" .. name .. "' is taken by a live node")
  r = tend.process.run({ exe, "--node", "x", "--nats", "nats://127.0.0.1:1", "-e", "" }, { timeout = 20 })
  lu.assertEquals(r.status, 1)
  lu.assertStrContains(r.stderr, "NatsError")
  lu.assertStrContains(r.stderr, "nats://127.0.0.1:1")
  -- a connect that takes longer than the preemption watchdog's period is
  -- not cut short by its signal (it failed at once with "poll error: 4")
  r = tend.process.run({ exe, "--node", "x", "--nats", "nats://10.255.255.1:4222", "-e", "" }, { timeout = 20 })
  lu.assertEquals(r.status, 1)
  lu.assertStrContains(r.stderr, "NatsError")
  lu.assertNotStrContains(r.stderr, "poll error")
  tend.stop(p)
end

-- NATS goes away and comes back: every node is down meanwhile and up
-- again after, and the refs of a peer that never restarted work again
-- (the same refs: ask, watch, pg membership); a watch made before fired
-- noconnection once and stays fired.
function TestNode:test_nats_killed_midrun_nodes_go_down_and_come_back_with_their_refs()
  local name, p = peer()
  local far = tend.spawn_on(name, "node_actors.member", { args = { "net" } })
  local echo = tend.spawn_on(name, "node_actors.echo")
  local mortal = tend.spawn_on(name, "node_actors.mortal", { restart = "temporary" })
  assert(eventually(function() return #tend.pg.members("net") == 1 end))
  lu.assertEquals(tend.ask(echo, "before"), "before")
  tend.node.monitor(name)
  local me = tend.self()
  local watcher = tend.spawn(function(ctx)
    ctx:watch(mortal)
    return function(m) me:send({ watcher = true, reason = m.reason }) end
  end)
  local counter = 0
  local local_work = tend.spawn(function(ctx)
    ctx:every(0.05, "tick")
    return function() counter = counter + 1 end
  end)
  tend.chaos.signal(nats_proc, "KILL")
  local m
  local seen = {}
  repeat
    m = next_msg()
    seen[#seen + 1] = m.tend or (m.watcher and "watcher " .. tostring(m.reason))
  until seen[2]
  table.sort(seen)
  lu.assertEquals(seen, { "nodedown", "watcher noconnection" })
  lu.assertEquals(tend.pg.members("net"), {})
  lu.assertFalse(tend.alive(echo))
  local ok, err = pcall(tend.ask, echo, "during")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(err.cause, "noconnection")
  local before = counter
  tend.sleep(0.3)
  lu.assertTrue(counter > before) -- local work goes on
  nats_proc = start_nats()
  repeat m = next_msg(30) until m == nil or m.tend == "nodeup"
  lu.assertNotNil(m)
  lu.assertEquals(m.node, name)
  -- the same refs work again: ask, pg membership (the same member). (The
  -- peer may see this node up a heartbeat later than this node sees it,
  -- when its connection flapped while the server came back: the reply to
  -- an ask goes out all the same.)
  lu.assertTrue(eventually(function() return tend.alive(echo) end))
  lu.assertEquals(tend.ask(echo, "after"), "after")
  lu.assertTrue(tend.alive(far))
  lu.assertTrue(eventually(function() return #tend.pg.members("net") == 1 end))
  lu.assertTrue(tend.pg.members("net")[1] == far)
  -- a new watch works and gets the real reason; the old one stays fired
  -- (watcher2 says when its watch is set: a stop sent before would race it)
  local watcher2 = tend.spawn(function(ctx)
    ctx:watch(mortal)
    me:send("watching")
    return function(x) me:send({ watcher2 = true, reason = x.reason }) end
  end)
  lu.assertEquals(next_msg(), "watching")
  mortal:send("stop")
  m = next_msg()
  lu.assertEquals(m, { watcher2 = true, reason = "normal" })
  lu.assertNil(next_msg(0.3))
  tend.node.monitor(name, false)
  tend.stop(local_work)
  tend.stop(watcher)
  tend.stop(watcher2)
  stop_peer(p, name)
end

function TestNode:test_a_restarted_node_is_a_new_incarnation()
  local name, p = peer(nil, "again")
  local echo = tend.spawn_on(name, "node_actors.echo")
  tend.stop(p)
  assert(eventually(function() return #tend.node.list() == 0 or not tend.alive(echo) end))
  lu.assertTrue(eventually(function() return not tend.alive(echo) end))
  local _, p2 = peer(nil, "again")
  local echo2 = tend.spawn_on(name, "node_actors.echo")
  lu.assertFalse(echo2 == echo)
  lu.assertEquals(tend.ask(echo2, 1), 1)
  lu.assertFalse(tend.alive(echo))
  tend.stop(p2)
end

function TestNode:test_global_names_the_older_registration_wins_and_a_dead_holder_lets_go()
  local name, p = peer()
  local echo = tend.spawn_on(name, "node_actors.echo")
  lu.assertTrue(tend.global.register("store", echo))
  -- a second registration of the name loses and is told the holder
  local mine = tend.spawn(function() return function() end end)
  local ok, holder = tend.global.register("store", mine)
  lu.assertFalse(ok)
  lu.assertTrue(holder == echo)
  lu.assertTrue(tend.global.whereis("store") == echo)
  lu.assertEquals(tend.ask(tend.global.whereis("store"), "via the name"), "via the name")
  lu.assertTrue(tend.global.register("mine", mine))
  lu.assertEquals(tend.global.registered(), { "mine", "store" })
  -- the holder's node dies: whereis finds no one; the name can be taken
  tend.chaos.signal(p, "KILL")
  lu.assertTrue(eventually(function() return not tend.alive(echo) end))
  lu.assertNil(tend.global.whereis("store"))
  lu.assertTrue(tend.global.register("store", mine))
  lu.assertTrue(tend.global.whereis("store") == mine)
  -- an actor's death drops its names
  tend.stop(mine)
  lu.assertTrue(eventually(function() return #tend.global.registered() == 0 end))
  lu.assertNil(tend.global.whereis("mine"))
  -- bad input
  local bad_ok, err = pcall(tend.global.register, "no spaces", echo)
  lu.assertFalse(bad_ok)
  lu.assertStrContains(err, "tend.global.register: name: expected letters")
end

function TestNode:test_a_peer_finds_a_global_name()
  lu.assertTrue(tend.global.register("spec_main", tend.self()))
  local name, p = peer([[
    local tend = require "tend"
    -- this node is up at the peer once its heartbeat got there (spec under
    -- valgrind can be later than the peer's code): a holder on a node not
    -- seen up is not alive there
    while #tend.node.list() == 0 do tend.sleep(0.01) end
    tend.global.whereis("spec_main"):send({ peer = tend.node.name(), list = tend.node.list() })
  ]])
  local m = next_msg()
  lu.assertEquals(m, { peer = name, list = { "spec" } })
  tend.stop(p)
  tend.global.unregister("spec_main")
  lu.assertNil(tend.global.whereis("spec_main"))
end

-- A burst on one subscription is taken whole when the loop wakes for it,
-- not a message per wake-up (nothing else wakes this loop for a second:
-- taken one by one, the burst would take minutes).
function TestNode:test_a_burst_on_one_subscription_is_taken_in_one_wake_up()
  local raw = require("tend.core").nats_connect { url = url, name = "burst" }
  local me, got = tend.self(), {}
  raw:subscribe("spec.burst", function(data)
    got[#got + 1] = tonumber(data)
    if #got == 300 then me:send("all") end
  end)
  for i = 1, 300 do lu.assertTrue(raw:publish("spec.burst", tostring(i))) end -- after the
  lu.assertEquals(next_msg(3), "all") -- subscription, on one connection: all, in order
  for i = 1, 300 do lu.assertEquals(got[i], i) end
  raw:close()
end

function TestNode:test_malformed_bytes_from_a_peer_are_dropped_never_a_crash()
  local name, p = peer()
  local echo = tend.spawn_on(name, "node_actors.echo")
  local raw = require("tend.core").nats_connect { url = url, name = "raw" }
  for _, junk in ipairs { "", "\0", "\0\0\0\5abc", "\0\0\0\3\0\1x", string.rep("\255", 100),
    string.pack(">s4", string.pack(">s2", "\193")), string.pack(">s4", string.pack(">s2", "\145\1")) } do
    lu.assertTrue(raw:publish("tend.n.spec", junk))
    lu.assertTrue(raw:publish("tend.n." .. name, junk))
    lu.assertTrue(raw:publish("tend.hb", junk))
  end
  raw:close()
  lu.assertEquals(raw:status(), "closed")
  lu.assertEquals(tend.ask(echo, "still here"), "still here")
  lu.assertTrue(tend.alive(echo))
  tend.stop(p)
end

-- tend.pg across nodes (lua/tend/pg.lua): peers named pg* sort before
-- "spec", so their members come first in members().
local member = require("node_actors").member


function TestNode:test_pg_members_on_another_node_are_seen_in_one_order_and_leaves_and_deaths_go_both_ways()
  local name, p = peer(nil, "pga")
  local me = tend.self()
  local mine = tend.spawn(member, { args = { "room", me } })
  local a = tend.spawn_on(name, "node_actors.member", { args = { "room", me } })
  local b = tend.spawn_on(name, "node_actors.member", { args = { "room", me }, restart = "temporary" })
  local probe = tend.spawn_on(name, "node_actors.pg_probe")
  local function there() return tend.ask(probe, "room") end
  lu.assertTrue(eventually(function() return #tend.pg.members("room") == 3 end))
  lu.assertEquals(tend.pg.members("room"), { a, b, mine }) -- by node, then join order there
  lu.assertEquals(tend.pg.local_members("room"), { mine })
  lu.assertEquals(tend.pg.which_groups(), { "room" })
  local ok, err = pcall(tend.pg.join, "room", a) -- only a node's own actors join there
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tend.pg.join: ref: " .. tostring(a) .. " is an actor of node " .. name
    .. ": join it there")
  local huge = string.rep("x", 2 << 20) -- a group that cannot travel: refused, nothing changed
  ok, err = pcall(tend.pg.join, huge, mine)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "MessageTooLarge")
  lu.assertEquals(tend.pg.local_members(huge), {})
  lu.assertEquals(tend.pg.which_groups(), { "room" })
  lu.assertTrue(eventually(function() return #there().members == 3 end))
  lu.assertEquals(there(), { members = { a, b, mine }, local_members = { a, b }, groups = { "room" } })
  -- a send reaches the members of every node
  lu.assertEquals(tend.pg.send("room", "hi"), 3)
  local from = {}
  for i = 1, 3 do
    local m = next_msg()
    lu.assertEquals(m.msg, "hi")
    from[i] = m.node
  end
  table.sort(from)
  lu.assertEquals(from, { name, name, "spec" })
  -- a monitor of the group is told of every change, here and there
  lu.assertEquals(tend.pg.monitor("room"), { a, b, mine })
  -- a restart there keeps the membership (one membership, one place)
  a:send("fail")
  lu.assertTrue(tend.alive(a))
  lu.assertEquals(tend.ask(probe, "room").members, { a, b, mine })
  -- a leave there, then a death there
  a:send("leave")
  lu.assertEquals(next_msg(), { tend = "pg_leave", group = "room", refs = { a } })
  lu.assertEquals(tend.pg.members("room"), { b, mine })
  lu.assertTrue(tend.alive(a)) -- it left; it lives
  b:send("fail") -- temporary: it dies
  lu.assertEquals(next_msg(), { tend = "pg_leave", group = "room", refs = { b } })
  lu.assertEquals(tend.pg.members("room"), { mine })
  lu.assertTrue(eventually(function() return #there().members == 1 end))
  lu.assertEquals(there(), { members = { mine }, local_members = {}, groups = { "room" } })
  -- a join, a leave and a death here are seen there
  local mine2 = tend.spawn(member, { args = { "room" } })
  lu.assertEquals(next_msg(), { tend = "pg_join", group = "room", refs = { mine2 } })
  lu.assertTrue(eventually(function() return #there().members == 2 end))
  lu.assertEquals(there().members, { mine, mine2 })
  lu.assertTrue(tend.pg.leave("room", mine))
  lu.assertEquals(next_msg(), { tend = "pg_leave", group = "room", refs = { mine } })
  lu.assertTrue(eventually(function() return #there().members == 1 end))
  lu.assertEquals(there().members, { mine2 })
  tend.stop(mine2)
  lu.assertEquals(next_msg(), { tend = "pg_leave", group = "room", refs = { mine2 } })
  lu.assertNil(tend.pg.monitor("room", false))
  lu.assertTrue(eventually(function() return #there().members == 0 end))
  lu.assertEquals(there(), { members = {}, local_members = {}, groups = {} })
  lu.assertEquals(tend.pg.which_groups(), {})
  tend.stop(mine)
  stop_peer(p, name)
end

function TestNode:test_pg_a_killed_node_takes_its_members_with_it_and_its_next_incarnation_brings_its_own()
  local name, p = peer(nil, "pgk")
  for _, g in ipairs { "g1", "g1", "g2" } do
    tend.spawn_on(name, "node_actors.member", { args = { g } })
  end
  lu.assertTrue(eventually(function()
    return #tend.pg.members("g1") == 2 and #tend.pg.members("g2") == 1
  end))
  lu.assertEquals(tend.pg.which_groups(), { "g1", "g2" })
  local before = tend.pg.members("g1")
  lu.assertEquals(tend.pg.monitor("g1"), before)
  tend.node.monitor(name)
  tend.chaos.signal(p, "KILL")
  -- all at once, before the nodedown
  lu.assertEquals(next_msg(), { tend = "pg_leave", group = "g1", refs = before })
  lu.assertEquals(next_msg(), { tend = "nodedown", node = name })
  lu.assertEquals(tend.pg.members("g1"), {})
  lu.assertEquals(tend.pg.members("g2"), {})
  lu.assertEquals(tend.pg.which_groups(), {})
  -- the node again, a new incarnation with a member of its own
  local _, p2 = peer([[
    local tend = require "tend"
    tend.spawn(function(ctx) tend.pg.join("g1", ctx.self) return function() end end, { name = "again" })
  ]], name)
  lu.assertTrue(eventually(function() return #tend.pg.members("g1") == 1 end))
  local again = tend.pg.members("g1")[1]
  lu.assertEquals(tostring(again), "Ref(/user/again@" .. name .. ")")
  lu.assertEquals(tend.pg.which_groups(), { "g1" })
  local got = { next_msg(), next_msg() } -- (its sync may come before its heartbeat)
  table.sort(got, function(x, y) return x.tend < y.tend end)
  lu.assertEquals(got, { { tend = "nodeup", node = name }, { tend = "pg_join", group = "g1", refs = { again } } })
  lu.assertNil(tend.pg.monitor("g1", false))
  tend.node.monitor(name, false)
  stop_peer(p2, name)
end

function TestNode:test_pg_a_node_started_later_gets_the_memberships_at_nodeup()
  local here = { tend.spawn(member, { args = { "late" } }), tend.spawn(member, { args = { "late" } }) }
  local only_here = {} -- a table is a group of this node only
  tend.pg.join(only_here, here[1])
  local name, p = peer([[
    local tend = require "tend"
    tend.spawn(function(ctx) tend.pg.join("late", ctx.self) return function() end end, { name = "early" })
  ]], "pgl")
  local probe = tend.spawn_on(name, "node_actors.pg_probe")
  lu.assertTrue(eventually(function() return #tend.ask(probe, "late").members == 3 end))
  local v = tend.ask(probe, "late")
  lu.assertEquals(#v.local_members, 1)
  lu.assertEquals(tostring(v.local_members[1]), "Ref(/user/early@" .. name .. ")")
  lu.assertEquals(v.members, { v.local_members[1], here[1], here[2] })
  lu.assertEquals(v.groups, { "late" })
  lu.assertTrue(eventually(function() return #tend.pg.members("late") == 3 end))
  lu.assertEquals(tend.pg.members("late"), v.members)
  lu.assertEquals(tend.pg.which_groups(), { "late", only_here })
  lu.assertEquals(tend.pg.members(only_here), { here[1] })
  H.stop_all(here[1], here[2])
  lu.assertTrue(eventually(function() return #tend.ask(probe, "late").members == 1 end))
  lu.assertEquals(tend.pg.which_groups(), { "late" })
  stop_peer(p, name)
  lu.assertEquals(tend.pg.which_groups(), {})
end
