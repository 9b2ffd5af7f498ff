-- A health check over HTTP, all in one program on real loopback sockets:
-- a worker under a supervisor, an HTTP endpoint (tend.http.serve: each
-- request in an actor of its own) that reports the worker's health, and
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

-- The endpoint: GET /health -> 200 "ok" or 503 and why (it asks the
-- worker; no answer within 0.2 s is a failed check too); anything else
-- 404, another method on /health 405 (the router's).
local endpoint_handler = tend.http.router({
  { "GET", "/health", function()
    local ok, health = pcall(tend.ask, "/user/service/worker", "health", 0.2)
    health = ok and health or "no answer"
    if health == "ok" then return "ok" end
    return { status = 503, body = health }
  end },
})

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
local endpoint = tend.http.serve({ host = "127.0.0.1", port = 0, name = "endpoint",
  handler = endpoint_handler })
local url = "http://127.0.0.1:" .. tend.ask(endpoint, "port") .. "/health"
tend.spawn(checker(url, tend.self()), { name = "checker" })

local r = tend.receive(10)
assert(r, "no report within 10 s")
print(string.format("health_check: %d checks, %d failed, worker restarted %d time%s "
  .. "after %d failed checks in a row; healthy again", r.checks, r.failed, r.restarts,
  r.restarts == 1 and "" or "s", FAILS))
tend.shutdown(0)
