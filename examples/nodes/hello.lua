-- Run as `tend cluster 2 examples/nodes/hello.lua`: each node waits for
-- the other, says whom it sees, and ends; the cluster ends with them.
local tend = require "tend"
while #tend.node.list() < 1 do tend.sleep(0.05) end
print(tend.node.name() .. " sees " .. table.concat(tend.node.list(), ","))
tend.sleep(0.5) -- the other one sees this one too before it goes
tend.shutdown()
