-- A health check over HTTP, all in one program on real loopback sockets:
-- a worker under a supervisor, an HTTP endpoint (tend.tcp.listen, raw
-- framing, enough HTTP/1.1 by hand) that reports the worker's health, and
-- a checker actor that polls the endpoint with tend.http.get and restarts
-- the worker after three failed checks in a row. The worker's first
-- instance goes bad on purpose after four checks; its restart is healthy.
-- Run: build/tend examples/net/health_check.lua
local tend = require "tend"

local POLL = 0.05      -- seconds between checks
local FAILS = 3        -- failed checks in a row before a restart

-- The worker: answers "health" asks. Instance 1 degrades after 4 asks
-- (a leak, a stuck pool...); a "restart" message makes it fail, and its
-- supervisor starts a fresh instance.
local instances = 0
local function worker()
  instances = instances + 1
  local instance, asked = instances, 0
  return function(msg, ctx)
    if msg == "health" then
      asked = asked + 1
      ctx:reply((instance == 1 and asked > 4) and "degraded" or "ok")
    elseif msg == "restart" then
      error("restarted by the health check")
    end
  end
end

-- The endpoint: GET /health -> 200 "ok" or 503 "degraded" (it asks the
-- worker); anything else 404. One request per connection.
local function http_handler(ctx)
  local buf = ""
  return function(msg, ctx)
    if msg.tend ~= "data" then return end
    buf = buf .. msg.data
    if not buf:find("\r\n\r\n", 1, true) then return end
    local method, path = buf:match("^(%u+) (%S+) HTTP/1%.[01]\r\n")
    local status, body = 404, "not found"
    if method == "GET" and path == "/health" then
      local ok, health = pcall(tend.ask, "/user/service/worker", "health", 0.2)
      health = ok and health or "no answer"
      status, body = health == "ok" and 200 or 503, health
    end
    ctx:write(string.format("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
      .. "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
      status, status == 200 and "OK" or "Unavailable", #body, body))
    ctx:close()
  end
end

-- The checker: polls url; after FAILS failures in a row it restarts the
-- worker; once healthy again after a restart, it reports to `report`.
local function checker(url, report)
  return function(ctx)
    local checks, failed, in_a_row, restarts, healthy_after = 0, 0, 0, 0, 0
    ctx.self:send("tick")
    return function(msg, ctx)
      checks = checks + 1
      local ok, res = pcall(tend.http.get, url, { timeout = 1 })
      if ok and res.status == 200 then
        in_a_row = 0
        if restarts > 0 then healthy_after = healthy_after + 1 end
      else
        failed, in_a_row = failed + 1, in_a_row + 1
        ctx:log("warn", "check %d failed: %s", checks,
          ok and (res.status .. " " .. res.body) or res.reason)
        if in_a_row == FAILS then
          ctx:log("warn", "%d failed checks in a row: restarting the worker", FAILS)
          tend.send("/user/service/worker", "restart")
          restarts, in_a_row = restarts + 1, 0
        end
      end
      if healthy_after == FAILS then
        report:send({ checks = checks, failed = failed, restarts = restarts })
        return tend.stopped
      end
      tend.sleep(POLL)
      ctx.self:send("tick")
    end
  end
end

tend.spawn(function(ctx)
  ctx:spawn(worker, { name = "worker" })
  return function() end
end, { name = "service" })
local endpoint = tend.tcp.listen({ host = "127.0.0.1", port = 0, framing = "raw",
  handler = http_handler }, { name = "endpoint" })
local url = "http://127.0.0.1:" .. tend.ask(endpoint, "port") .. "/health"
tend.spawn(checker(url, tend.self()), { name = "checker" })

local r = tend.receive(10)
assert(r, "no report within 10 s")
print(string.format("health_check: %d checks, %d failed, worker restarted %d time%s "
  .. "after %d failed checks in a row; healthy again", r.checks, r.failed, r.restarts,
  r.restarts == 1 and "" or "s", FAILS))
tend.shutdown(0)
