-- Actors that spec/realtime/node_spec.lua spawns on other nodes
-- (tend.spawn_on loads this module there: peers run with spec/ in
-- package.path), and spec/pg_nodes_spec.lua on simulated ones.
local tend = require "tend"
local M = {}

-- Answers every message with itself.
function M.echo()
  return function(m, ctx) ctx:reply(m) end
end

-- Forwards every message to `to`, with its own node's name.
function M.forward(_, to)
  return function(m) to:send({ node = tend.node.name(), msg = m }) end
end

-- "stop": stops normally; "fail": raises a Boom error; else nothing
-- (an ask of it times out).
function M.mortal()
  return function(m)
    if m == "stop" then return tend.stopped end
    if m == "fail" then error(tend.error("Boom", "asked to fail"), 0) end
  end
end

-- Sends n numbered messages to `to`, one after the other.
function M.sender(_, to, n)
  for i = 1, n do to:send(i) end
  return function() end
end

-- Joins group on its own node (again at each restart: still one
-- membership). "leave": leaves it; "stop": stops; "fail": fails; anything
-- else goes on to `to` (when given) with its node's name.
function M.member(ctx, group, to)
  tend.pg.join(group, ctx.self)
  return function(m)
    if m == "leave" then
      tend.pg.leave(group, ctx.self)
    elseif m == "stop" then
      return tend.stopped
    elseif m == "fail" then
      error(tend.error("Boom", "asked to fail"), 0)
    elseif to then
      to:send({ node = tend.node.name(), msg = m })
    end
  end
end

-- Answers a group with this node's view of it: members, local members,
-- and the groups.
function M.pg_probe()
  return function(group, ctx)
    ctx:reply({ members = tend.pg.members(group), local_members = tend.pg.local_members(group),
      groups = tend.pg.which_groups() })
  end
end

return M
