-- leader: three simulated nodes elect a leader with a global name and a
-- lease (tend.global), and the leader runs /user/duty. Invariant: at most
-- one node runs its duty at a time. The nemesis partitions pairs of nodes
-- and crashes nodes (each healed 1-5 s later); a candidate's naive "the
-- leader is gone, I lead" cache (examples/explore/leader_node.lua) breaks
-- the invariant behind a partition longer than the node timeout.
-- Run: tend scenario examples/explore/leader.lua --seed 3
--      tend explore examples/explore/leader.lua --seeds 1..100 --shrink
-- With `-- fixed` the nodes run the fixed candidate.
local tend = require "tend"

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local node = { script = here .. "leader_node.lua", args = { ... } }

local acting, inc = {}, {} -- node -> its /user/duty lives; node -> incarnation
tend.trace(function(e)
  if e.node and e.path == "/user/duty" then
    if e.ev == "start" then acting[e.node] = true
    elseif e.ev == "terminated" then acting[e.node] = nil end
  end
end)

tend.sim.nodes({ a = node, b = node, c = node }, { timeout = 2, latency = 0.002, jitter = 0.003 })

tend.invariant("at most one leader", function()
  local leaders = 0
  for _, n in ipairs(tend.sim.list()) do
    if n.state ~= "up" or n.inc ~= inc[n.name] then acting[n.name] = nil end -- crashed: no duty
    inc[n.name] = n.state == "up" and n.inc or nil
    if acting[n.name] then leaders = leaders + 1 end
  end
  return leaders <= 1
end)

tend.chaos.nemesis {
  faults = { "partition_nodes", "crash_node" }, targets = { "a", "b", "c" },
  every = { 2, 6 }, heal_after = { 1, 5 }, from = 3, to = 50,
}
tend.sleep(60)
tend.sim.stop()
