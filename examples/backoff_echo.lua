-- backoff_echo: Akka's BackoffSupervisor sample. An echo actor under
-- on_failure with min 3 s, max 30 s, random factor 0.2; it crashes as soon
-- as it starts, so the supervisor waits 3, 6, 12, 24, 30, 30 s (+0-20 %).
-- Run: tend --virtual-time --seed 1 examples/backoff_echo.lua
local tend = require "tend"

local starts = {}
local function echo(ctx)
  starts[#starts + 1] = tend.now()
  if #starts <= 7 then ctx.self:send("crash") end -- the resource is down
  return function(msg, ctx)
    if msg == "crash" then tend.raise("ResourceDown", "echo cannot reach its resource") end
    ctx:reply(msg)
  end
end

local opts = tend.backoff.on_failure(echo, {
  name = "myEcho", min_backoff = 3, max_backoff = 30, random_factor = 0.2,
})
print(tend.describe(opts))
local sup = tend.spawn(opts, { name = "echoSupervisor" })
tend.sleep(200)
for i = 2, #starts do
  print(string.format("start %d at %7.3f s, %6.3f s after the previous one", i, starts[i],
    starts[i] - starts[i - 1]))
end
print("the echo answers again: " .. tend.ask(sup, "hello", 1))
tend.stop(sup)
