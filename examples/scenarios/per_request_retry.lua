-- per_request_retry, as a scenario: ten requests to a service whose calls
-- fail half the time (tend.chaos.flaky, seeded), each retried with
-- tend.retry (at most 10 retries), four in flight; checks the sum.
-- Run: tend scenario examples/scenarios/per_request_retry.lua --seed 5
local tend = require "tend"

local square = tend.chaos.flaky(function(id) return id * id end, { p = 0.5, error = "ServiceBusy" })
local service = tend.spawn(function()
  return function(id, ctx)
    local ok, v = pcall(square, id)
    ctx:reply(ok and v or { busy = v.kind })
  end
end, { name = "service" })

local function call_service(id)
  local r = tend.ask(service, id, 1)
  if type(r) == "table" then tend.raise(r.busy, "service busy for " .. id) end
  return r
end

local results, next_id, calls = {}, 1, 0
local function worker()
  return function(msg, ctx)
    while next_id <= 10 do
      local id = next_id
      next_id = next_id + 1
      results[id] = tend.retry(function() calls = calls + 1 return call_service(id) end,
        { min_backoff = 0.01, max_backoff = 30, random_factor = 0.2, max_restarts = 10 })
    end
    ctx:stop()
  end
end
local workers = {}
for i = 1, 4 do
  workers[i] = tend.spawn(worker, { name = "worker" .. i })
  workers[i]:send("go")
end
tend.sleep(60)
local sum = 0
for i = 1, 10 do sum = sum + assert(results[i], "request " .. i .. " answered") end
assert(sum == 385, "sum of squares: " .. sum)
print(string.format("sum %d after %d calls", sum, calls))
tend.stop(service)
