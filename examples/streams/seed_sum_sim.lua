-- seed_sum on the simulated network: the story of seed_sum.lua with the
-- service as a simulated HTTP server on host "api" (10 ms away, 500 half
-- the time from the seed), then a stream of ticks through throttle,
-- map_async of a flaky call (tend.chaos.flaky) with per-element retry,
-- grouped_within and restart_source. Under --virtual-time --seed N it
-- replays byte for byte: stdout and the trace (spec/stream_replay_spec.lua
-- runs it twice and compares).
-- Run: tend --virtual-time --seed 3 examples/streams/seed_sum_sim.lua
local tend = require "tend"
local S = tend.stream

tend.http.serve({ host = "api", port = 80, handler = function(req)
  if tend.random() < 0.5 then return { status = 500, body = "busy" } end
  local n = tonumber(req.path:match("^/square/(%d+)$"))
  return tostring(n * n)
end })
tend.chaos.latency("localhost", "api", 0.010)

local calls = 0
local function get(id)
  calls = calls + 1
  local r = tend.http.get("http://api/square/" .. id, { timeout = 1 })
  if r.status ~= 200 then tend.raise("HttpError", "status " .. r.status .. " for " .. id) end
  return r.body
end
local function add(a, b) return a + b end
local backoff = { min_backoff = 0.05, max_backoff = 1, random_factor = 0.2, max_restarts = 10 }

local t0 = tend.now()
local sum = S.range(1, 10):map_async(4, function(id)
  return S.restart_source(backoff, function()
    return S.lazy(function() return S.single(get(id)) end)
  end):run_head()
end):map(tonumber):run_fold(0, add)
print(string.format("per-request: sum = %d after %d HTTP calls in %.3f s", sum, calls, tend.now() - t0))

-- ticks, throttled, through a flaky call retried per element, in groups
local flaky = tend.chaos.flaky(function(x) tend.sleep(0.02) return x * 2 end, { p = 0.3 })
local restarts = 0
local groups = S.restart_source({ min_backoff = 0.1, max_backoff = 0.5, max_restarts = 3 }, function()
  restarts = restarts + 1
  return S.tick(0.05, 1):scan(0, add):drop(1):take(12)
end):throttle(10, 1, 2)
  :map_async(3, flaky, { retry = { min_backoff = 0.01, max_backoff = 0.1, max_restarts = 5 } })
  :grouped_within(4, 0.35)
  :take(6)
  :run_seq()
local shown = {}
for i, g in ipairs(groups) do shown[i] = "[" .. table.concat(g, ",") .. "]" end
print(string.format("groups: %s; source made %d times; at %.3f s", table.concat(shown, " "), restarts, tend.now() - t0))
