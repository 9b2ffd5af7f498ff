-- Factories the simulated-node specs spawn on other nodes (tend.spawn_on
-- loads this module there).
local tend = require "tend"
local M = {}

-- Answers every message with its node's name and the message.
function M.echo()
  local me = tend.node.name()
  return function(m, c) c:reply({ node = me, echo = m }) end
end

-- Registers `ref` as the global `name` when it starts, then idles.
function M.claim(ctx, name, ref)
  tend.global.register(name, ref)
  return function() end
end

return M
