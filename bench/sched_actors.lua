-- The actors of bench/schedulers.lua, a module so that any scheduler can
-- load them ("sched_actors.pinger" on scheduler k).
local tend = require "tend"
local M = {}

-- Answers every message with the same message.
function M.ponger()
  return function(msg, ctx) tend.send(ctx.sender, msg) end
end

-- Plays n round trips with a ponger of its own scheduler, then tells
-- `done` (on scheduler 0) that it is done.
function M.pinger(ctx, n, done)
  local pong = tend.spawn(M.ponger)
  local left = n
  return function(msg, ctx)
    if msg == "go" or type(msg) == "number" then
      left = left - 1
      if left < 0 then tend.send(done, "done") return tend.stopped end
      tend.send(pong, left)
    end
  end
end

-- Sums 1..n of squares, then tells `done`: CPU-bound work.
function M.worker(ctx, n, done)
  return function(msg)
    local s = 0
    for i = 1, n do s = s + i * i % 7 end
    tend.send(done, s)
  end
end

return M
