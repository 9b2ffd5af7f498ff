-- poison_message: one message crashes its receiver every time it is
-- handled. The decider restarts the worker on a PoisonError, with at most
-- 3 restarts per 10 s, then stops it; the other messages get through, and
-- the sender learns about the stop through DeathWatch.
-- Run: tend scenario examples/scenarios/poison_message.lua --seed 1
local tend = require "tend"

local handled = {}
local function worker()
  return function(msg, ctx)
    if msg == "poison" then tend.raise("PoisonError", "cannot digest this message") end
    handled[#handled + 1] = msg
  end
end

local sup = tend.spawn(function(ctx)
  return function(msg, ctx) ctx:reply(ctx:spawn(worker, { name = "worker" })) end
end, { name = "pool", children = tend.one_for_one {
  max_retries = 3, within = 10, decider = tend.decider { PoisonError = "restart" } } })

local probe = tend.testkit.probe()
local w = tend.ask(sup, "worker please", 1)
probe:watch(w)
-- a producer re-sends the poison message (as a queue would redeliver it)
for i = 1, 6 do
  w:send("job " .. i)
  w:send("poison")
  tend.sleep(1)
end
local t = probe:expect_terminated(w, 5)
assert(t.reason.kind == "PoisonError", "stopped by the poison")
assert(#handled == 4, "the jobs before the limit got through: " .. #handled)
print(string.format("handled %d jobs; the worker was stopped after %d restarts", #handled, 3))
tend.stop(sup)
probe:stop()
