-- Factories the simulated-node specs spawn on other nodes (tend.spawn_on
-- loads this module there).
local tend = require "tend"
local M = {}

-- Answers every message with its node's name and the message.
function M.echo()
  local me = tend.node.name()
  return function(m, c) c:reply({ node = me, echo = m }) end
end

-- Takes every message and answers none.
function M.sink()
  return function() end
end

-- Stops itself on "quit" (or `after` seconds after it started).
function M.quitter(ctx, after)
  if after then ctx:after(after, "quit") end
  return function(m, c) if m == "quit" then c:stop() end end
end

-- On "crash": this node's /system/node fails once, at its next tick.
function M.saboteur()
  return function(m, c)
    if m == "crash" then
      local once = true
      tend.chaos.crash_on("/system/node", function(x)
        if x == "tick" and once then once = false return true end
        return false
      end, { nth = 1 })
      c:reply("armed")
    end
  end
end

-- Registers `ref` as the global `name` when it starts, then idles.
function M.claim(ctx, name, ref)
  tend.global.register(name, ref)
  return function() end
end

return M
