-- One restart count: a restart is an attempt to start a new incarnation,
-- counted when it begins, whether its factory then succeeds or fails. The
-- same number shows in tend.stats().restarts, ps(), children(), the
-- "restart" events (the scenario summary) and the limits.
local lu = require "luaunit"
local H = require "helper"

TestRestartCount = {}

-- Three shapes of restart, each of a child whose factory fails on its
-- second and third incarnation (after a first failure in a message):
-- under a backoff supervisor, an ordinary supervisor and a typed backoff.
local script = [[
local tend = require "tend"
local function flaky(ctx, made)
  made.n = made.n + 1
  if made.n == 2 or made.n == 3 then error("factory down") end
  return function(msg) if msg == "crash" then error("boom") end end
end
local function report(what, path, ref)
  local ps
  for _, r in ipairs(tend.ps()) do if r.path == path then ps = r.restarts end end
  print(what, "stats " .. tend.stats().restarts, "ps " .. tostring(ps),
    ref and "children " .. tend.children(ref)[1].restarts or "")
end
local web = tend.spawn(tend.backoff.on_failure(flaky, { name = "client", args = { { n = 0 } },
  min_backoff = 1, max_backoff = 10, random_factor = 0 }), { name = "web" })
tend.sleep(0.5)
web:send "crash"
tend.sleep(20)
report("backoff", "/user/web/client", web)
local sup = tend.spawn(function(ctx)
  ctx:spawn(flaky, { name = "c", args = { { n = 0 } } })
  return function() end
end, { name = "sup", children = tend.one_for_one { decider = function() return "restart" end } })
tend.sleep(0.5)
tend.children(sup)[1].ref:send "crash"
tend.sleep(1)
report("plain", "/user/sup/c", sup)
local ty = tend.spawn(tend.supervise(flaky):on_failure("*", tend.restart_with_backoff(1, 10, 0)),
  { name = "typed", args = { { n = 0 } } })
tend.sleep(0.5)
ty:send "crash"
tend.sleep(20)
report("typed", "/user/typed")
tend.shutdown(0)
]]

function TestRestartCount:test_stats_ps_children_and_the_summary_agree()
  local path = H.script(script)
  local out, err, code = H.run({ "scenario", path, "--seed", "1" })
  lu.assertEquals(code, 0, err)
  lu.assertStrContains(out, "backoff\tstats 3\tps 3\tchildren 3\n")
  lu.assertStrContains(out, "plain\tstats 6\tps 3\tchildren 3\n")
  lu.assertStrContains(out, "typed\tstats 9\tps 3\t\n")
  local summary = {}
  for p, n in out:gmatch("restarts  (%S+)%s+(%d+)\n") do summary[p] = tonumber(n) end
  lu.assertEquals(summary, { ["/user/web/client"] = 3, ["/user/sup/c"] = 3, ["/user/typed"] = 3 })
  lu.assertStrContains(out, ", 9 restarts, 9 failures\n")
  -- each restart is one "restart" event, numbered from 1
  local events = {}
  for p, n in out:gmatch("t=[%d.]+%s+(%S+)%s+restart%s+#(%d+)") do
    events[p] = (events[p] or "") .. n
  end
  lu.assertEquals(events, { ["/user/web/client"] = "123", ["/user/sup/c"] = "123", ["/user/typed"] = "123" })
  os.remove(path)
end

-- The limits count the same restarts: a backoff's max_retries = 2 and a
-- strategy's max_retries = 2 give up after the second restart, both of
-- which failed in the factory; each counted 2.
local limits = [[
local tend = require "tend"
local function flaky(ctx, made)
  made.n = made.n + 1
  if made.n > 1 then error("factory down") end
  return function(msg) if msg == "crash" then error("boom") end end
end
local p = tend.testkit.probe()
local web = tend.spawn(tend.backoff.on_failure(flaky, { name = "client", args = { { n = 0 } },
  min_backoff = 1, max_backoff = 10, random_factor = 0 }):with_max_retries(2), { name = "web" })
p:watch(web)
tend.sleep(0.5)
web:send "crash"
p:expect_terminated(web, 60)
print("backoff gave up at", tend.now(), "stats " .. tend.stats().restarts)
local sup = tend.spawn(function(ctx)
  ctx:spawn(flaky, { name = "c", args = { { n = 0 } } })
  return function(msg, ctx) if msg == "kids" then ctx:reply(#ctx:children()) end end
end, { name = "sup", children = tend.one_for_one { max_retries = 2, within = 100,
  decider = function() return "restart" end } })
tend.sleep(0.5)
tend.children(sup)[1].ref:send "crash"
tend.sleep(1)
print("plain children left", tend.ask(sup, "kids"), "stats " .. tend.stats().restarts)
tend.shutdown(0)
]]

function TestRestartCount:test_the_limits_count_failed_restarts_too()
  local path = H.script(limits)
  local out, err, code = H.run({ "scenario", path, "--seed", "1" })
  lu.assertEquals(code, 0, err)
  lu.assertStrContains(out, "backoff gave up at\t3.5\tstats 2\n")
  lu.assertStrContains(out, "plain children left\t0\tstats 4\n")
  local summary = {}
  for p, n in out:gmatch("restarts  (%S+)%s+(%d+)\n") do summary[p] = tonumber(n) end
  lu.assertEquals(summary, { ["/user/web/client"] = 2, ["/user/sup/c"] = 2 })
  os.remove(path)
end

-- The warn line of a restart shows the count with that restart in it, the
-- number tend.ps() and tend.stats() give right after: the first restart
-- logs "(restarts 1)", for a plain supervisor and a typed restart alike;
-- a directive that restarts nothing (resume) logs the count as it is.
function TestRestartCount:test_the_warn_line_shows_the_count_after_the_restart()
  local path = H.script([[
local tend = require "tend"
local function crashy() return function(msg) if msg == "crash" then error("boom") end end end
local function restarts(p)
  for _, r in ipairs(tend.ps()) do if r.path == p then return r.restarts end end
end
local sup = tend.spawn(function(ctx)
  ctx:spawn(crashy, { name = "c" })
  return function() end
end, { name = "sup" })
local ty = tend.spawn(tend.supervise(crashy):on_failure("*", tend.restart), { name = "ty" })
tend.sleep(0.5)
for i = 1, 2 do
  tend.send("/user/sup/c", "crash")
  tend.sleep(0.5)
  print("plain", restarts("/user/sup/c"), tend.stats().restarts)
end
ty:send "crash"
tend.sleep(0.5)
print("typed", restarts("/user/ty"), tend.stats().restarts)
tend.shutdown(0)
]])
  local out, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "plain\t1\t1\nplain\t2\t2\ntyped\t1\t3\n")
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.500] warn  /user/sup/c: Error: F:2: boom; restart (restarts 1)\n"
    .. "[1.000] warn  /user/sup/c: Error: F:2: boom; restart (restarts 2)\n"
    .. "[1.500] warn  /user/ty: Error: F:2: boom; restart (restarts 1)\n")
end
