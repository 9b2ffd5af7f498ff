-- pipeline: a producer process piped through a Lua actor into a consumer
-- process. `seq` writes 1..N, one line each; the filter actor keeps the
-- even numbers and writes their squares to the stdin of `awk`, which sums
-- them; when the producer exits (normally), the filter closes the
-- consumer's stdin and awk prints the sum, which comes back as a line.
-- Run: tend examples/processes/pipeline.lua [N]
local tend = require "tend"
local n = tonumber(arg and arg[1]) or 1000

local done = tend.testkit.probe()
tend.spawn(function(ctx)
  local consumer = ctx:spawn(tend.process {
    cmd = { "awk", "{ s += $1 } END { printf \"%d\\n\", s }" }, stdin = "pipe", to = ctx.self,
  }, { name = "consumer" })
  local producer = ctx:spawn(tend.process { cmd = { "seq", tostring(n) }, to = ctx.self }, { name = "producer" })
  ctx:watch(producer)
  return function(msg, ctx)
    if msg.tend == "stdout" and ctx.sender == producer then
      local x = tonumber(msg.line)
      if x % 2 == 0 then consumer:send { write = (x * x) .. "\n" } end
    elseif msg.tend == "terminated" then
      consumer:send { close_stdin = true }   -- EOF: awk prints its sum
    elseif msg.tend == "stdout" and ctx.sender == consumer then
      done.ref:send(tonumber(msg.line))
      return tend.stopped
    end
  end
end, { name = "filter" })

local sum = done:receive(10).msg
local expect = 0
for x = 2, n, 2 do expect = expect + x * x end
print(string.format("pipeline: sum of the squares of the even numbers 1..%d = %d (%s)", n, sum,
  sum == expect and "right" or "WRONG, expected " .. expect))
assert(sum == expect)
done:stop()
