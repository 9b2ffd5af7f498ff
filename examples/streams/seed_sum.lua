-- seed_sum: the story tend was built from, ending with a stream. Ten ids go
-- through map_async(4) of an HTTP call to a service on 127.0.0.1 that
-- answers 500 half the time (seeded), then are parsed and summed. Three
-- versions side by side, as in the seed's Scala:
--   plain: the first 500 fails the stream (StreamFailed);
--   restart_source around the whole stream: a 500 starts it all again;
--   restart_source around each request (inside map_async): one request's
--     retries leave the others alone.
-- Each prints the sum or the failure and the number of HTTP calls made.
-- Run: tend --seed 7 examples/streams/seed_sum.lua
local tend = require "tend"
local S = tend.stream

-- The service: GET /square/<n> answers n*n, or 500 half the time (tend.random: seeded).
local server = tend.http.serve({
  host = "127.0.0.1", port = tend.virtual_time() and 8080 or 0,
  handler = tend.http.router({
    { "GET", "/square/:n", function(req)
      if tend.random() < 0.5 then return { status = 500, body = "busy" } end
      local n = tonumber(req.params.n)
      return tostring(n * n)
    end },
  }),
})
local base = "http://127.0.0.1:" .. tend.ask(server, "port") .. "/square/"

local calls = 0
local function get(id) -- the seed's getResponse: a 500 is an error
  calls = calls + 1
  local r = tend.http.get(base .. id)
  if r.status ~= 200 then tend.raise("HttpError", "status " .. r.status .. " for " .. id) end
  return r.body
end
local function add(a, b) return a + b end
local backoff = { min_backoff = 0.01, max_backoff = 0.2, random_factor = 0.2, max_restarts = 10 }

local function report(name, fn)
  calls = 0
  local ok, v = pcall(fn)
  if ok then
    print(string.format("%-12s sum = %d after %d HTTP calls", name, v, calls))
  else
    print(string.format("%-12s failed: %s (cause %s) after %d HTTP calls", name, v.kind,
      v.cause and v.cause.kind or "?", calls))
  end
end

-- 1. plain
report("plain", function()
  return S.range(1, 10):map_async(4, get):map(tonumber):run_fold(0, add)
end)

-- 2. the whole stream restarted with backoff
report("whole", function()
  return S.restart_source(backoff, function()
    return S.range(1, 10):map_async(4, get):map(tonumber):fold(0, add)
  end):run_head()
end)

-- 3. each request restarted with backoff (the point of the story)
report("per-request", function()
  return S.range(1, 10):map_async(4, function(id)
    return S.restart_source(backoff, function()
      return S.lazy(function() return S.single(get(id)) end)
    end):run_head()
  end):map(tonumber):run_fold(0, add)
end)
tend.shutdown()
