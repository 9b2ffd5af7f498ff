-- pingpong: two actors pass one message back and forth N times
-- (one message in flight), then print the rate.
-- Run: tend examples/pingpong.lua [N]
local tend = require "tend"

local n = math.tointeger(tonumber(arg[1] or "")) or 100000

local function ponger()
  return function(msg, ctx)
    ctx.sender:send("pong")
  end
end

local function pinger(ctx, pong, rounds, done)
  local left = rounds
  return function(msg, ctx)
    if msg == "go" or msg == "pong" then
      if left == 0 then
        done:send("done")
        return tend.stopped
      end
      left = left - 1
      pong:send("ping")
    end
  end
end

local pong = tend.spawn(ponger, { name = "pong" })
local t0 = os.clock()
local finished = false
local waiter = tend.spawn(function()
  return function(msg) finished = (msg == "done") end
end)
local ping = tend.spawn(pinger, { name = "ping", args = { pong, n, waiter } })
ping:send("go")
while not finished do tend.sleep(0.001) end
local secs = os.clock() - t0
print(string.format("pingpong: %d round trips, %d messages in %.3f s CPU: %.0f msgs/s",
  n, 2 * n, secs, 2 * n / secs))
tend.stop(pong)
tend.stop(waiter)
