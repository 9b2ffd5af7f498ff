-- Factories for the schedulers example (docs/guide/schedulers.md): an
-- actor placed on another scheduler is named as "module.factory", and its
-- module is loaded on that scheduler, in that scheduler's Lua state.
local tend = require "tend"

local M = {}

-- Sums the squares of the numbers it is sent; "total" replies with the
-- sum, {report = ref} sends ref the sum with this actor's path.
function M.squares(ctx)
  local sum = 0
  return function(msg, ctx)
    if msg == "total" then
      ctx:reply(sum)
    elseif type(msg) == "table" and msg.report then
      tend.send(msg.report, { path = ctx.self:path(), sum = sum })
    else
      sum = sum + msg * msg
    end
  end
end

return M
