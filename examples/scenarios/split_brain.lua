-- split_brain: three simulated nodes elect a leader with a global name
-- (tend.global: the older registration wins; the store stands for NATS
-- JetStream and keeps each name as a lease its node renews).
--   t = 5   node a is cut off from b and c: they see it down (nodedown
--           after the 2 s node timeout) and claim the name, but a still
--           renews it behind the partition: they are told they lost, and
--           no second leader rises (a split brain the store prevents);
--   t = 12  node a crashes: its lease runs out and one of b and c leads;
--   t = 20  the partition is repaired and a restarts as a new
--           incarnation: it follows the new leader.
-- Every node is a host of its own, all on one virtual clock over a
-- simulated bus with a seeded latency: the run replays byte for byte.
-- Run: tend scenario examples/scenarios/split_brain.lua --seed 3 --svg split.svg
local tend = require "tend"

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local node = here .. "split_brain_node.lua"

local downs = {} -- "b saw a down" events, from the trace
tend.trace(function(e)
  if e.ev == "node" and e.node and e.detail:match("^down") then
    downs[#downs + 1] = string.format("%s saw %s down at %.2f", e.node, e.path:match("[^/]+$"), e.t)
  end
end)

tend.sim.nodes({ a = node, b = node, c = node }, { timeout = 2, latency = 0.002, jitter = 0.003 })
tend.sleep(5)
tend.chaos.partition("a", "b")
tend.chaos.partition("a", "c")
tend.sleep(7)
tend.chaos.crash_node("a")
tend.sleep(8)
tend.chaos.repair("a", "b")
tend.chaos.repair("a", "c")
tend.chaos.restart_node("a")
tend.sleep(5)
for _, d in ipairs(downs) do print(d) end
tend.sim.stop()
