-- per_request_retry: ten requests to a service that fails half the time
-- (seeded), each retried with tend.retry (at most 10 retries, backoff from
-- 10 ms), four requests in flight at a time; prints the sum of the replies.
-- Run: tend --virtual-time --seed 5 examples/per_request_retry.lua
local tend = require "tend"

-- The service squares its argument, or fails (half the time).
local service = tend.spawn(function()
  return function(id, ctx)
    if tend.random() < 0.5 then ctx:reply({ busy = true }) else ctx:reply(id * id) end
  end
end, { name = "service" })

local function call_service(id)
  local r = tend.ask(service, id, 1)
  if type(r) == "table" then tend.raise("ServiceBusy", "service busy for " .. id) end
  return r
end

local queue, next_id, results, attempts = {}, 1, {}, 0
for id = 1, 10 do queue[id] = id end

-- A worker takes ids one by one; four work at once.
local function worker(ctx)
  return function(msg, ctx)
    while next_id <= #queue do
      local id = queue[next_id]
      next_id = next_id + 1
      results[id] = tend.retry(function()
        attempts = attempts + 1
        return call_service(id)
      end, { min_backoff = 0.01, max_backoff = 30, random_factor = 0.2, max_restarts = 10 })
    end
  end
end

local workers = {}
for i = 1, 4 do
  workers[i] = tend.spawn(worker, { name = "worker" .. i })
  workers[i]:send("go")
end
local t0 = tend.now()
while #results < 10 or next(results) == nil do tend.sleep(0.01) end
for i = 1, 10 do while results[i] == nil do tend.sleep(0.01) end end
local sum = 0
for i = 1, 10 do sum = sum + results[i] end
print(string.format("sum of squares 1..10 = %d after %d calls in %.3f s (virtual)",
  sum, attempts, tend.now() - t0))
for _, w in ipairs(workers) do tend.stop(w) end
tend.stop(service)
