-- Simulated nodes (tend.sim.nodes) under the virtual clock: several
-- hosts in one process over a simulated bus, with the node API of real
-- nodes (send, ask, DeathWatch, monitors, spawn_on, global names), the
-- chaos verbs partition / repair / crash_node / restart_node, and a
-- byte-for-byte replay. Times are exact. Run by `tend test spec`.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

TestSimNodes = {}

-- A node's program: an echo actor named "echo" that answers with its
-- node's name.
local ECHO = [[
local tend = require "tend"
local me = tend.node.name()
tend.spawn(function() return function(m, c)
  if m == "fail" then error("boom") end
  c:reply({ node = me, echo = m })
end end, { name = "echo" })
]]

local T = 2 -- the node timeout of these specs: heartbeats every 0.5 s

local function start(names, opts)
  local list = {}
  for _, n in ipairs(names) do list[n] = { code = ECHO } end
  opts = opts or {}
  opts.join, opts.timeout = "ctl", T
  return tend.sim.nodes(list, opts)
end

function TestSimNodes:setUp() while select("#", tend.receive(0)) > 0 do end end
function TestSimNodes:tearDown()
  tend.sim.stop()
  tend.sleep(1) -- the nodes' trees stop; the world's node actor too
  H.settle()
  H.assert_clean()
end

function TestSimNodes:test_nodes_see_each_other_and_talk_with_the_node_api()
  lu.assertEquals(start({ "b", "a" }), { "a", "b" })
  lu.assertEquals(tend.node.name(), "ctl")
  tend.sleep(0.1)
  lu.assertEquals(tend.node.list(), { "a", "b" })
  local states = {}
  for _, n in ipairs(tend.sim.list()) do states[n.name] = n.state end
  lu.assertEquals(states.ctl, "up")
  lu.assertEquals(states.a, "up")
  lu.assertEquals(states.b, "up")
  -- remote spawn and ask, refs printed with their node
  local e = tend.spawn_on("a", "simnode_actors.echo", { name = "echo" })
  lu.assertEquals(tostring(e), "Ref(/system/remote/ctl/echo@a)")
  lu.assertEquals(tend.ask(e, { 1, "two", x = true }), { node = "a", echo = { 1, "two", x = true } })
  -- the tree of a node
  lu.assertStrContains(tend.node.tree("b"), "  echo [running]")
  -- a missing module comes back as SpawnError
  local ok, err = pcall(tend.spawn_on, "a", "no_such_module.f")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "SpawnError")
end

function TestSimNodes:test_watch_and_monitor_across_a_crash_and_a_restart()
  start({ "a", "b" })
  tend.sleep(0.1)
  local e = tend.spawn_on("a", "simnode_actors.echo")
  local got = {}
  local w = tend.spawn(function(ctx)
    ctx:watch(e)
    tend.node.monitor("a")
    return function(m) got[#got + 1] = { tend.now(), m.tend, m.node or m.reason } end
  end)
  tend.sleep(1)
  local t0 = tend.now()
  tend.chaos.crash_node("a")
  tend.sleep(T + 1)
  -- down after missing heartbeats for the node timeout (its last one was
  -- at t0 - 0.1 + 1.0 = t0 - 0.1 + k * 0.5 <= t0): noconnection, nodedown
  lu.assertEquals(#got, 2)
  table.sort(got, function(x, y) return x[2] < y[2] end) -- (two mechanisms: no order between them)
  lu.assertEquals(got[1][2], "nodedown")
  lu.assertEquals(got[1][3], "a")
  lu.assertEquals(got[2][2], "terminated")
  lu.assertEquals(got[2][3], "noconnection")
  lu.assertTrue(got[1][1] > t0 + T - 0.5 and got[1][1] <= t0 + T + 0.5, "down at " .. got[1][1])
  lu.assertEquals(got[1][1], got[2][1])
  lu.assertEquals(tend.node.list(), { "b" })
  -- its node is down: a send to it is dropped and counted (its proxy
  -- waits for that incarnation's return), an ask fails at once
  local dl, dropped = tend.stats().dead_letters, tend.node.stats().dropped
  e:send("lost")
  lu.assertEquals(tend.stats().dead_letters, dl)
  lu.assertEquals(tend.node.stats().dropped, dropped + 1)
  local ok, err = pcall(tend.ask, e, "x")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(err.cause, "noconnection")
  -- a restart is a new incarnation: nodeup at once, old refs stay dead
  local function inc_of(name)
    for _, n in ipairs(tend.sim.list()) do if n.name == name then return n.inc end end
  end
  local inc = inc_of("a")
  tend.chaos.restart_node("a")
  tend.sleep(0.1)
  lu.assertEquals(got[3][2], "nodeup")
  lu.assertEquals(inc_of("a"), inc + 1)
  lu.assertFalse(tend.alive(e))
  local e2 = tend.spawn_on("a", "simnode_actors.echo")
  lu.assertEquals(tend.ask(e2, "again").node, "a")
  lu.assertFalse(e2 == e)
  -- a late heartbeat of the old incarnation (on NATS it can come after
  -- the new one's first: two connections) changes nothing
  -- (published by this world's node ctl, so node b hears it)
  local core = require "tend.core"
  local seen = {}
  tend.trace(function(ev) if ev.ev == "node" and ev.node == "b" then seen[#seen + 1] = ev.detail end end)
  core.sim_publish("tend.hb", string.pack(">s2", core.codec_encode({ 4, "a", inc })))
  tend.sleep(0.1)
  tend.sleep(0) -- (the listener runs once this turn has ended)
  tend.trace(false)
  lu.assertEquals(seen, {})
  lu.assertEquals(#got, 3)
  lu.assertTrue(tend.alive(e2))
  tend.stop(w)
end

-- A node that restarts before the others saw it down: its first
-- heartbeat takes the old incarnation down and the new one up, and the
-- new one's refs (its node service among them) stay alive.
function TestSimNodes:test_a_restart_seen_before_the_crash_keeps_the_new_incarnations_refs()
  start({ "a" })
  tend.sleep(0.1)
  local old = tend.spawn_on("a", "simnode_actors.echo")
  tend.chaos.crash_node("a")
  tend.chaos.restart_node("a")
  tend.sleep(0.1)
  lu.assertEquals(tend.node.list(), { "a" })
  lu.assertFalse(tend.alive(old))
  local e = tend.spawn_on("a", "simnode_actors.echo")
  lu.assertEquals(tend.ask(e, "new").node, "a")
end

function TestSimNodes:test_a_partition_downs_both_sides_and_a_repair_brings_them_back()
  start({ "a", "b" })
  tend.sleep(0.1)
  local seen = {}
  tend.trace(function(ev)
    if ev.ev == "node" and ev.node == "a" and ev.path == "/node/b" then seen[#seen + 1] = ev.detail end
  end)
  local e = tend.spawn_on("b", "simnode_actors.echo")
  tend.chaos.partition("a", "b")
  tend.sleep(T + 1)
  lu.assertEquals(seen, { "down: no heartbeat" })
  -- ctl still reaches both
  lu.assertEquals(tend.node.list(), { "a", "b" })
  lu.assertEquals(tend.ask(e, "hi").node, "b")
  tend.chaos.repair("a", "b")
  tend.sleep(1)
  lu.assertEquals(seen, { "down: no heartbeat", "up" })
  tend.trace(false)
end

-- A ref of an actor of node b outlives a partition that heals (Erlang: a
-- pid of a node that reconnects with the same creation; Akka: an
-- unreachable node that becomes reachable keeps its refs). While b is
-- down for ctl: watches made before fire noconnection once, an ask held
-- fails, a new ask or watch fails at once, sends are dropped. Once b is
-- up again the same refs deliver, answer and can be watched again, and a
-- death during the partition is told; after b restarts (a new
-- incarnation) the old refs are dead for good.
function TestSimNodes:test_a_ref_survives_a_partition_that_heals()
  start({ "a", "b" })
  tend.sleep(0.1)
  local e = tend.spawn_on("b", "simnode_actors.echo")
  local q = tend.spawn_on("b", "simnode_actors.quitter")
  local q2 = tend.spawn_on("b", "simnode_actors.quitter", { args = { 2 } }) -- quits at 2.1, apart
  lu.assertEquals(tend.ask(e, "before"), { node = "b", echo = "before" })
  local got = {}
  local function watcher(name, ref)
    return tend.spawn(function(ctx)
      ctx:watch(ref)
      return function(m) got[#got + 1] = { name, tend.now(), m.reason } end
    end)
  end
  local w1 = watcher("w1", q)
  local asked
  tend.after(0, function()
    local ok, err = pcall(tend.ask, e, "held", 30)
    asked = { tend.now(), ok, err.kind, err.cause }
  end)
  tend.chaos.latency("ctl", "b", 0.5) -- the held ask is on its way when the link goes
  tend.sleep(0.1)
  local t0 = tend.now()
  tend.chaos.partition("ctl", "b")
  tend.sleep(T + 1)
  lu.assertEquals(tend.node.list(), { "a" })
  local down_at = got[1][2]
  lu.assertTrue(down_at > t0 + T - 0.5 and down_at <= t0 + T + 0.5, "down at " .. down_at)
  lu.assertEquals(got, { { "w1", down_at, "noconnection" } })
  lu.assertEquals(asked, { down_at, false, "AskFailed", "noconnection" })
  -- while b is down: not alive, an ask and a watch fail at once, a send is dropped
  lu.assertFalse(tend.alive(e))
  local t = tend.now()
  local ok, err = pcall(tend.ask, e, "during")
  lu.assertFalse(ok)
  lu.assertEquals({ err.kind, err.cause, tend.now() }, { "AskFailed", "noconnection", t })
  lu.assertStrContains(err.message, "is on a node that is not connected (noconnection)")
  local w2 = watcher("w2", q)
  tend.sleep(0)
  lu.assertEquals(got[2], { "w2", t, "noconnection" })
  local dropped = tend.node.stats().dropped
  q:send("quit") -- (dropped: q lives on)
  lu.assertEquals(tend.node.stats().dropped, dropped + 1)
  -- the partition heals: the same refs work again
  tend.chaos.repair("ctl", "b")
  tend.chaos.latency("ctl", "b", 0)
  tend.sleep(1)
  lu.assertEquals(tend.node.list(), { "a", "b" })
  lu.assertTrue(tend.alive(e))
  lu.assertEquals(tend.ask(e, "after"), { node = "b", echo = "after" })
  -- q2 died during the partition: its node told this one when it was
  -- watched again at the heal (its proxy ended), so a watch now fires at once
  lu.assertFalse(tend.alive(q2))
  t = tend.now()
  local w3 = watcher("w3", q2)
  local w4 = watcher("w4", q)
  tend.sleep(0)
  lu.assertEquals(got[3], { "w3", t, "unknown" })
  lu.assertEquals(#got, 3)
  -- a watch made after the heal fires with the real reason; w1's, made
  -- before the partition, fired once and stays fired
  q:send("quit")
  tend.sleep(0.1)
  lu.assertEquals(#got, 4)
  lu.assertEquals({ got[4][1], got[4][3] }, { "w4", "normal" })
  -- b restarts: a new incarnation, the old refs are dead for good
  tend.chaos.crash_node("b")
  tend.chaos.restart_node("b")
  tend.sleep(0.1)
  lu.assertEquals(tend.node.list(), { "a", "b" })
  lu.assertFalse(tend.alive(e))
  ok, err = pcall(tend.ask, e, "old")
  lu.assertEquals(err.kind, "NoActor")
  lu.assertEquals(#got, 4)
  for _, w in ipairs({ w1, w2, w3, w4 }) do tend.stop(w) end
end

function TestSimNodes:test_a_message_across_a_partition_is_dropped_and_traced()
  start({ "a", "b" })
  tend.sleep(0.1)
  local drops = 0
  tend.trace(function(ev) if ev.ev == "node" and ev.detail == "drop: partitioned" then drops = drops + 1 end end)
  local e = tend.spawn_on("a", "simnode_actors.echo")
  tend.chaos.partition("ctl", "a")
  local ok, err = pcall(tend.ask, e, "x", 0.5)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertEquals(drops, 1)
  tend.trace(false)
end

function TestSimNodes:test_latency_delays_each_delivery_and_keeps_order()
  start({ "a" }, { latency = 0.25 })
  tend.sleep(1)
  local e = tend.spawn_on("a", "simnode_actors.echo")
  local t0 = tend.now()
  lu.assertEquals(tend.ask(e, "x").echo, "x")
  lu.assertAlmostEquals(tend.now() - t0, 0.5, 1e-9) -- there and back
  -- a seeded jitter on the link: each delivery takes 0.1..0.3 s, and
  -- none overtakes one sent before it
  tend.chaos.latency("ctl", "a", 0.1, 0.2)
  local got = {}
  local p = tend.spawn(function() return function(m) got[#got + 1] = m.echo end end)
  for i = 1, 50 do e:tell(i, p) end
  tend.sleep(1)
  local want = {}
  for i = 1, 50 do want[i] = i end
  lu.assertEquals(got, want)
  tend.stop(p)
end

function TestSimNodes:test_global_names_conflict_and_expire_with_a_crashed_node()
  start({ "a", "b" })
  tend.sleep(0.1)
  local ea = tend.spawn_on("a", "simnode_actors.echo")
  local eb = tend.spawn_on("b", "simnode_actors.echo")
  lu.assertTrue(tend.spawn_on("a", "simnode_actors.claim", { args = { "leader", ea } }) ~= nil)
  lu.assertTrue(tend.spawn_on("a", "simnode_actors.claim", { args = { "second", ea } }) ~= nil)
  tend.sleep(0.1)
  lu.assertTrue(tend.global.whereis("leader") == ea)
  -- a later registration loses and is told the holder
  local ok, holder = tend.global.register("leader", eb)
  lu.assertFalse(ok)
  lu.assertTrue(holder == ea)
  -- node a crashes: its name is taken over once its lease is not renewed
  tend.chaos.crash_node("a")
  tend.sleep(T + 1)
  lu.assertNil(tend.global.whereis("leader"))
  local t0 = tend.now()
  lu.assertTrue(tend.global.register("leader", eb))
  lu.assertEquals(tend.now() - t0, 2) -- waited lease/2 (lease 4 s) for a renewal
  lu.assertTrue(tend.global.whereis("leader") == eb)
  -- by now (5 s after the crash) a's lease on "second" ran out (4 s): the
  -- name is free, taken at once
  t0 = tend.now()
  lu.assertTrue(tend.global.register("second", eb))
  lu.assertEquals(tend.now() - t0, 0)
  lu.assertEquals(tend.global.registered(), { "leader", "second" })
end

function TestSimNodes:test_bad_input_is_named()
  local function err_of(...) local ok, e = pcall(...) lu.assertFalse(ok) return tostring(e) end
  lu.assertStrContains(err_of(tend.sim.nodes, "a"), "tend.sim.nodes: nodes: expected a table")
  lu.assertStrContains(err_of(tend.sim.nodes, { ["a b"] = "x.lua" }), "node name: expected letters")
  lu.assertStrContains(err_of(tend.sim.nodes, { a = 3 }), "expected a script path or a table")
  lu.assertStrContains(err_of(tend.sim.nodes, { a = "x.lua" }, { frob = 1 }), "opts: expected the options")
  lu.assertStrContains(err_of(tend.sim.nodes, { a = "x.lua" }, { latency = 1e300 }),
    "tend.sim.nodes: latency: expected a number of seconds >= 0 and <= 1e9, got 1e+300")
  lu.assertStrContains(err_of(tend.sim.nodes, { a = "x.lua" }, { jitter = math.huge }),
    "tend.sim.nodes: jitter: expected a number of seconds >= 0 and <= 1e9, got inf")
  lu.assertStrContains(err_of(tend.sim.nodes, { a = "/nonexistent/app.lua" }),
    "tend.sim.nodes: node 'a': cannot open /nonexistent/app.lua")
  local state
  for _, n in ipairs(tend.sim.list()) do if n.name == "a" then state = n.state end end
  lu.assertEquals(state, "crashed")
  lu.assertStrContains(err_of(tend.sim.nodes, { a = { code = "error(" } }), "tend.sim.nodes: node 'a': ")
  -- a main chunk that fails at run time ends its node (its error on stderr)
  tend.sim.nodes({ a = { code = "require('tend').sleep(1) error('no way')" } })
  tend.sleep(2)
  for _, n in ipairs(tend.sim.list()) do if n.name == "a" then state = n.state end end
  lu.assertEquals(state, "ended")
  lu.assertStrContains(err_of(tend.node.start, { name = "x", nats = "local" }),
    "tend.node.start: a node on NATS cannot run under the virtual clock (--virtual-time): simulate the nodes with tend.sim.nodes")
  lu.assertStrContains(err_of(tend.chaos.crash_node, "zz"),
    "tend.chaos.crash_node: node: expected the name of a simulated node")
  start({ "b" })
  tend.sleep(0.1)
  lu.assertStrContains(err_of(tend.chaos.restart_node, "b"), "node 'b' is up (crash it first)")
  lu.assertStrContains(err_of(tend.sim.nodes, { b = { code = "" } }), "node 'b' is up already")
end

-- The split-brain scenario replays byte for byte from its seed: its trace
-- (with one band per node in the timeline) and its output.
function TestSimNodes:test_the_split_brain_scenario_replays_byte_for_byte()
  local runs = {}
  for i = 1, 2 do
    local trace, svg = os.tmpname(), os.tmpname()
    local out, err, code = H.run({ "scenario", "examples/scenarios/split_brain.lua", "--seed", "3",
      "--trace", trace, "--svg", svg })
    lu.assertEquals(code, 0, err)
    local g = io.open(svg, "rb")
    local drawn = g:read("a")
    g:close()
    local f = io.open(trace, "rb")
    runs[i] = { out = out, trace = f:read("a"), svg = drawn }
    f:close()
    os.remove(trace)
    os.remove(svg)
  end
  -- node b sees node a go down at 7 s: a red mark in b's band
  lu.assertStrMatches(runs[1].svg, '.*<g class="lane" data%-path="/@b/node/a">.*')
  lu.assertStrContains(runs[1].svg, 'fill="#d62728"><title>t=7 node down: no heartbeat\n')
  for _, band in ipairs({ "/@a", "/@b", "/@c" }) do
    lu.assertStrContains(runs[1].svg, 'data-path="' .. band .. '"')
  end
  lu.assertStrContains(runs[1].out, "1.00 a: I lead")
  lu.assertStrContains(runs[1].out, "14.00 b: I lead")
  lu.assertStrContains(runs[1].out, "b saw a down at 7.00")
  lu.assertNotStrContains(runs[1].out, "c: I lead")
  lu.assertStrContains(runs[1].trace, '"node":"b","path":"/global/leader","detail":"claim lost to Ref(/user/candidate@a)"')
  lu.assertEquals(runs[2].trace, runs[1].trace)
  lu.assertEquals(runs[2].out, runs[1].out)
  -- another seed draws other latencies: another trace
  local _, _, code = H.run({ "scenario", "examples/scenarios/split_brain.lua", "--seed", "4" })
  lu.assertEquals(code, 0)
end

-- A script that starts a world and returns without tend.sim.stop() ends
-- there (with join or without): each node's tree stops when the main chunk
-- returns, as tend scenario ends it; the heartbeats no longer move the
-- clock for ever.
function TestSimNodes:test_the_world_ends_when_the_main_chunk_returns()
  local node = [[
local tend = require "tend"
tend.spawn(function() return { receive = function() end,
  post_stop = function() print(tend.node.name() .. " stops at " .. tend.now()) end } end)
]]
  for _, join in ipairs { "nil", "{ join = 'w' }" } do
    local script = H.script(string.format([[
local tend = require "tend"
tend.sim.nodes({ a = { code = %q }, b = { code = %q } }, %s)
tend.sleep(2)
print("main returns at " .. tend.now())
]], node, node, join))
    local exe = require("tend.internal").executable()
    local p = io.popen("timeout 60 '" .. exe .. "' --virtual-time " .. script .. " 2>&1", "r")
    local out = p:read("a")
    local _, _, code = p:close()
    lu.assertEquals(code, 0, out)
    lu.assertEquals(out, "main returns at 2.0\na stops at 2.0\nb stops at 2.0\n")
    os.remove(script)
  end
end
