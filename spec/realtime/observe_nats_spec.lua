-- The live observer's nodes over a real nats-server (started by this spec
-- on a free port, as node_spec does): this process is node "spec", a peer
-- node is a real tend process; the observer's tree shows the peer as a
-- tree of its own under /@NAME, its rows asked over the node protocol
-- (its /system/node service's ps), and the peer as down once it stopped.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() or H.skip("observe_nats_spec", H.no_nats()) then return end

TestObserveNats = {}

local url, start_nats = H.nats_server()
start_nats()
local TIMEOUT = 0.5
tend.node.start { name = "spec", nats = url, timeout = TIMEOUT }

local function tree(routes)
  local t = routes["/api/tree"]({})
  local rows, nodes = {}, {}
  for _, a in ipairs(t.actors) do
    if a.path:sub(1, 2) == "/@" then rows[a.path] = a.state end
  end
  for _, n in ipairs(t.nodes) do nodes[n.name] = n end
  return rows, nodes
end

function TestObserveNats:test_a_real_peer_is_a_tree_of_its_own_then_down()
  tend.observe { port = 0 }
  local routes = require("tend.observe.live").routes()
  local p = tend.node.peer("p1", { log_level = "error", timeout = TIMEOUT,
    code = "require('tend').spawn(function() return function() end end, { name = 'echo' })" })
  assert(H.eventually(function()
    local rows = tree(routes)
    return rows["/@p1/user/echo"] ~= nil
  end, 10), "the peer's echo never showed")
  local rows, nodes = tree(routes)
  lu.assertEquals({ rows["/@p1"], rows["/@p1/user/echo"], rows["/@p1/system/node"] }, { "up", "running", "running" })
  lu.assertEquals({ nodes.p1.real, nodes.p1.up, nodes.p1.state }, { true, true, "up" })
  tend.stop(p)
  assert(H.eventually(function()
    local _, n = tree(routes)
    return n.p1 and n.p1.up == false
  end, 10), "the stopped peer never showed down")
  rows, nodes = tree(routes)
  lu.assertEquals({ rows["/@p1"], rows["/@p1/user/echo"], nodes.p1.state }, { "down", nil, "down" })
  lu.assertEquals(nodes.p1.why, "not seen within the node timeout")
end
