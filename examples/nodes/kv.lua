-- A key-value store on node a, clients on nodes b and c; node a is killed
-- (SIGKILL: nothing is said) and each client is told by DeathWatch, with
-- the reason "noconnection", once a's heartbeats are missed.
-- Run from the repository's root: tend examples/nodes/kv.lua
-- This process is node "main" on a nats-server of its own (nats = "local");
-- nodes a, b and c are child processes started with tend.node.peer.
local tend = require "tend"

tend.node.start { name = "main", nats = "local", timeout = 1 }
local procs = {}
for _, name in ipairs { "a", "b", "c" } do
  procs[name] = tend.node.peer(name, { process_name = "node_" .. name }) -- /user/node_a ...
end

local store = tend.spawn_on("a", "examples.nodes.kv_store.store", { name = "kv" })
print("kv: the store is " .. tostring(store))
local me = tend.self()
for _, name in ipairs { "b", "c" } do
  tend.spawn_on(name, "examples.nodes.kv_store.client", { args = { store, me } })
end
local lines = {}
for _ = 1, 2 do
  local m = tend.receive(10)
  lines[#lines + 1] = string.format("%s read %q", m.node, m.read)
end
table.sort(lines)
print("kv: " .. table.concat(lines, ", "))

tend.chaos.signal(procs.a, "KILL") -- node a dies at once
local told, t0 = {}, tend.now()
while #told < 2 do
  local m = tend.receive(10)
  assert(m, "the clients were not told")
  if m.lost then told[#told + 1] = m.node .. ": " .. tostring(m.lost) end
end
table.sort(told)
print(string.format("kv: node a killed; clients told within %.0f s: %s", math.ceil(tend.now() - t0),
  table.concat(told, ", ")))
tend.shutdown()
