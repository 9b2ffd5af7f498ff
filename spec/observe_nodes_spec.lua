-- The live observer's nodes (tend.observe.nodes) under the virtual clock:
-- each simulated node is a tree of its own under /@NAME, asked over the
-- node protocol (the world joins as "ctl"); a partition, a crash and a
-- restart through the observer's POST /api/action route are trace events
-- and show in the tree: partitioned, down (its actors gone), up again
-- with its actors.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

TestObserveNodes = {}

local CODE = [[
local tend = require "tend"
tend.spawn(function() return function(m, c) c:reply(m) end end, { name = "echo" })
]]

local live = require "tend.observe.live"
local json = require "tend.observe.json"
local routes

local function tree()
  local t = routes["/api/tree"]({})
  local rows, nodes = {}, {}
  for _, a in ipairs(t.actors) do
    if a.path:sub(1, 2) == "/@" then rows[#rows + 1] = a.path .. " " .. tostring(a.state) end
  end
  for _, n in ipairs(t.nodes) do nodes[n.name] = n end
  return rows, nodes
end

-- POST /api/action?QUERY, as the observer's server calls the route once
-- the token is checked (under --virtual-time the observer listens for
-- real, out of this host's simulated network: the token is checked by
-- spec/realtime/observe_live_spec.lua and observe_clock_spec.lua)
local function act(q)
  local query = {}
  for k, v in q:gmatch("([^&=]+)=([^&]*)") do query[k] = v end
  local value, status, why = routes["/api/action"](query, { body = "" })
  tend.sleep(0.01) -- (trace events reach their listeners between turns)
  if value == nil then return status, json.encode({ error = why }) .. "\n" end
  return 200, json.encode(value) .. "\n"
end

-- Each test starts the observer and stops it (a spec file may share its
-- process with others: make check's valgrind shards), with the trace
-- listeners cleared first (another file's tend.trace(false) would end
-- this one's listener, if it were set once at load).
local trace = {}
function TestObserveNodes:setUp()
  trace = {}
  live.stop()
  tend.trace(false)
  tend.trace(function(e) if e.ev == "chaos" then trace[#trace + 1] = e end end)
  tend.observe { port = 0 } -- (its trace listener tells the nodes' partitions)
  routes = live.routes()
end

function TestObserveNodes:tearDown()
  tend.sim.stop()
  live.stop()
  tend.trace(false)
  tend.sleep(1)
  H.settle()
  H.assert_clean()
end

function TestObserveNodes:test_each_node_a_tree_and_the_node_actions()
  tend.sim.nodes({ a = { code = CODE }, b = { code = CODE } }, { join = "ctl", timeout = 2 })
  tend.sleep(0.5)
  local rows, nodes = tree()
  lu.assertEquals(rows, {
    "/@a up", "/@a/user running", "/@a/user/echo running", "/@a/system running", "/@a/system/node running",
    "/@b up", "/@b/user running", "/@b/user/echo running", "/@b/system running", "/@b/system/node running",
    "/@ctl up",
  })
  lu.assertEquals({ nodes.a.state, nodes.a.sim, nodes.b.up }, { "up", true, true })
  lu.assertStrContains(nodes.ctl.why, "this node")

  -- bad input: named, nothing done
  local status, body = act("do=partition&node=a&to=zz")
  lu.assertEquals({ status, body }, { 404, '{"error":"to: no simulated node named \\"zz\\""}\n' })
  status, body = act("do=crash_node")
  lu.assertEquals({ status, body }, { 404, '{"error":"node: expected a simulated node\'s name, got none"}\n' })
  status, body = act("do=restart_node&node=a")
  lu.assertEquals({ status, body }, { 409, [[{"error":"tend.chaos.restart_node: node 'a' is up (crash it first)"}]] .. "\n" })
  lu.assertEquals(#trace, 0)

  -- partition: a trace event; both nodes show it
  status, body = act("do=partition&node=a&to=b")
  lu.assertEquals({ status, body }, { 200, '{"done":"partition","node":"a","to":"b"}\n' })
  lu.assertEquals({ trace[1].path, trace[1].detail, trace[1].to }, { "/node/a", "partition", "/node/b" })
  rows, nodes = tree()
  lu.assertEquals({ rows[1], nodes.a.state, nodes.a.partitioned, nodes.b.partitioned }, { "/@a partitioned", "partitioned", { "b" }, { "a" } })
  status = act("do=repair&node=b&to=a")
  lu.assertEquals(status, 200)
  lu.assertEquals({ trace[2].path, trace[2].detail, trace[2].to }, { "/node/b", "repair", "/node/a" })
  rows, nodes = tree()
  lu.assertEquals({ rows[1], nodes.a.partitioned }, { "/@a up", {} })

  -- crash: down, its actors gone; restart: up again with its actors
  lu.assertEquals(act("do=crash_node&node=b"), 200)
  lu.assertEquals({ trace[3].path, trace[3].detail }, { "/node/b", "crash_node" })
  rows, nodes = tree()
  lu.assertEquals({ rows[6], rows[7] }, { "/@b down", "/@ctl up" })
  lu.assertEquals({ nodes.b.up, nodes.b.why }, { false, "the node crashed" })
  lu.assertEquals(act("do=restart_node&node=b"), 200)
  lu.assertEquals({ trace[4].path, trace[4].detail }, { "/node/b", "restart_node" })
  tend.sleep(1.5) -- it boots and is seen; the observer asks again (every second)
  rows = tree()
  lu.assertEquals({ rows[6], rows[8] }, { "/@b up", "/@b/user/echo running" })
  lu.assertEquals(#trace, 4)
end

function TestObserveNodes:test_a_world_that_is_no_node_shows_states_and_says_why()
  tend.sim.nodes({ a = { code = CODE } })
  tend.sleep(0.5)
  local rows, nodes = tree()
  local of_a = {} -- (a process that ran other specs may list their NATS node too)
  for _, r in ipairs(rows) do if r:find("^/@a[ /]") then of_a[#of_a + 1] = r end end
  lu.assertEquals(of_a, { "/@a up" })
  lu.assertStrContains(nodes.a.why, "join = NAME")
end
