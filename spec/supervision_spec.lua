-- Supervision: windows, group strategies, limits, restart types, hooks,
-- errors in deciders and hooks, InitError, kill, DeathWatch, escalation
-- past the guardian, looking inside.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestSupervision = {}

function TestSupervision:tearDown() H.assert_clean() end

-- A child that counts messages, reports its lifecycle to `log`, and fails
-- on {raise = kind}.
local function worker(ctx, name, log)
  local n = 0
  log = log or {}
  return {
    pre_start = function() log[#log + 1] = name .. ":start" end,
    post_stop = function() log[#log + 1] = name .. ":stop" end,
    receive = function(self, msg, ctx)
      if type(msg) == "table" and msg.raise then tend.raise(msg.raise, "boom") end
      if msg == "get" then ctx:reply(n) return end
      n = n + 1
    end,
  }
end

-- A supervisor with the given strategy and children (names) spawned at start.
local function supervisor(strategy, names, log)
  return tend.spawn(function(ctx)
    for _, name in ipairs(names) do ctx:spawn(worker, { name = name, args = { name, log } }) end
    return function(msg, ctx)
      if msg == "children" then ctx:reply(ctx:children()) end
    end
  end, { supervisor = strategy })
end

local function children(sup)
  return tend.ask(sup, "children", 1)
end

-- crashes `ref` at each of the given times (seconds from now)
local function crash_at(ref, times)
  local t0 = tend.now()
  for _, t in ipairs(times) do
    tend.sleep(t0 + t - tend.now())
    ref:send({ raise = "Boom" })
    H.settle()
  end
end

function TestSupervision:test_fixed_window_reopens_after_within()
  local sup = supervisor(tend.one_for_one { max_retries = 2, within = 10, window = "fixed" }, { "w" })
  local w = children(sup)[1]
  crash_at(w, { 0, 9, 11, 12 })
  lu.assertTrue(tend.alive(w))
  H.stop_all(sup)
end

function TestSupervision:test_sliding_window_counts_the_last_within_seconds()
  local sup = supervisor(tend.one_for_one { max_retries = 2, within = 10, window = "sliding" }, { "w" })
  local w = children(sup)[1]
  local p = tk.probe()
  p:watch(w)
  crash_at(w, { 0, 9, 11 })
  lu.assertTrue(tend.alive(w))
  crash_at(w, { 1 }) -- t = 12: 9 and 11 are within the last 10 s
  local t = p:expect_terminated(w, 1)
  lu.assertEquals(t.reason.kind, "Boom")
  H.stop_all(sup, p.ref)
end

function TestSupervision:test_limit_special_values()
  -- max_retries = -1 with a finite window: one restart per window (Akka)
  local sup = supervisor(tend.one_for_one { max_retries = -1, within = 5 }, { "w" })
  local w = children(sup)[1]
  crash_at(w, { 0 })
  lu.assertTrue(tend.alive(w))
  crash_at(w, { 1 })
  lu.assertFalse(tend.alive(w))
  H.stop_all(sup)
  -- max_retries = n with no window: n restarts in total
  sup = supervisor(tend.one_for_one { max_retries = 3 }, { "w" })
  w = children(sup)[1]
  crash_at(w, { 0, 100, 1000 })
  lu.assertTrue(tend.alive(w))
  crash_at(w, { 5000 })
  lu.assertFalse(tend.alive(w))
  H.stop_all(sup)
end

function TestSupervision:test_all_for_one_restarts_every_child()
  local log = {}
  local sup = supervisor(tend.all_for_one {}, { "a", "b", "c" }, log)
  local a, b, c = table.unpack(children(sup))
  a:send("x") b:send("x") c:send("x")
  H.settle()
  for i = #log, 1, -1 do log[i] = nil end
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(tend.ask(a, "get", 1), 0)
  lu.assertEquals(tend.ask(b, "get", 1), 0)
  lu.assertEquals(tend.ask(c, "get", 1), 0)
  table.sort(log)
  lu.assertEquals(log, { "a:start", "a:stop", "b:start", "b:stop", "c:start", "c:stop" })
  H.stop_all(sup)
end

function TestSupervision:test_rest_for_one_restarts_the_failed_and_younger_children()
  local sup = supervisor(tend.rest_for_one {}, { "a", "b", "c" })
  local a, b, c = table.unpack(children(sup))
  a:send("x") b:send("x") c:send("x")
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(tend.ask(a, "get", 1), 1)
  lu.assertEquals(tend.ask(b, "get", 1), 0)
  lu.assertEquals(tend.ask(c, "get", 1), 0)
  H.stop_all(sup)
end

function TestSupervision:test_group_budget_counts_a_group_restart_once()
  local sup = supervisor(tend.all_for_one { max_retries = 2, within = 60 }, { "a", "b" })
  local a, b = table.unpack(children(sup))
  crash_at(a, { 0 })
  crash_at(b, { 1 })
  lu.assertTrue(tend.alive(a) and tend.alive(b))
  crash_at(a, { 1 })
  lu.assertFalse(tend.alive(a))
  lu.assertFalse(tend.alive(b)) -- all_for_one: the group is stopped
  H.stop_all(sup)
end

function TestSupervision:test_on_limit_escalate_fails_the_supervisor()
  local p = tk.probe()
  local restarts = 0
  local sup = tend.spawn(function(ctx)
    restarts = restarts + 1
    ctx:spawn(worker, { name = "w", args = { "w" } })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = tend.one_for_one { max_retries = 1, on_limit = "escalate" } })
  local w = tend.ask(sup, "children", 1)[1]
  p:watch(w)
  crash_at(w, { 0, 1 })
  -- the guardian restarted the supervisor; its default pre_restart stopped w
  p:expect_terminated(w, 1)
  lu.assertEquals(restarts, 2)
  local w2 = tend.ask(sup, "children", 1)[1]
  lu.assertTrue(tend.alive(w2))
  lu.assertFalse(w2 == w)
  H.stop_all(sup, p.ref)
end

function TestSupervision:test_restart_types()
  local log = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "temp", args = { "temp", log }, restart = "temporary" })
    ctx:spawn(worker, { name = "perm", args = { "perm", log }, restart = "permanent" })
    ctx:spawn(worker, { name = "trans", args = { "trans", log } })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end)
  local temp, perm, trans = table.unpack(tend.ask(sup, "x", 1))
  temp:send({ raise = "Boom" }) -- temporary: a restart directive stops it
  H.settle()
  lu.assertFalse(tend.alive(temp))
  perm:send("x")
  H.settle()
  tend.stop(perm) -- permanent: restarted even after a normal stop
  H.settle()
  lu.assertTrue(tend.alive(perm))
  lu.assertEquals(tend.ask(perm, "get", 1), 0)
  tend.stop(trans) -- transient: a normal stop is final
  H.settle()
  lu.assertFalse(tend.alive(trans))
  -- the supervisor's own stop of a permanent child is final
  H.stop_all(sup)
  lu.assertFalse(tend.alive(perm))
end

function TestSupervision:test_hook_arguments_and_order()
  local log = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function(cctx)
      return {
        pre_start = function(self, c) log[#log + 1] = { "pre_start", c == cctx } end,
        receive = function(self, msg) tend.raise("NullPointerError", "null " .. msg) end,
        pre_restart = function(self, err, msg, c)
          log[#log + 1] = { "pre_restart", err.kind, err.message, msg, c == cctx }
        end,
        post_restart = function(self, err, c)
          log[#log + 1] = { "post_restart", err.kind, c == cctx }
        end,
      }
    end, { name = "hooked" })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end)
  local c = tend.ask(sup, "x", 1)
  c:send("m1")
  H.settle()
  lu.assertEquals(log, {
    { "pre_start", true },
    { "pre_restart", "NullPointerError", "null m1", "m1", true },
    { "post_restart", "NullPointerError", true },
  })
  H.stop_all(sup)
end

function TestSupervision:test_restart_stops_children_and_restarts_survivors()
  local log = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function(mctx)
      mctx:spawn(worker, { name = "leaf", args = { "leaf", log } })
      return function(msg) error("middle fails") end
    end, { name = "middle" })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end)
  local middle = tend.ask(sup, "x", 1)
  H.settle()
  middle:send("go")
  H.settle()
  -- default pre_restart stopped leaf; the new instance spawned a new one
  lu.assertEquals(log, { "leaf:start", "leaf:stop", "leaf:start" })
  lu.assertTrue(tend.alive(middle))
  H.stop_all(sup)
end

function TestSupervision:test_error_in_a_decider_escalates()
  local p = tk.probe()
  local sup_starts = 0
  local sup = tend.spawn(function(ctx)
    sup_starts = sup_starts + 1
    ctx:spawn(worker, { name = "w", args = { "w" } })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function(err, child) error("decider broke") end } })
  local w = tend.ask(sup, "x", 1)
  p:watch(w)
  w:send({ raise = "Boom" })
  p:expect_terminated(w, 1) -- escalated; the guardian restarted sup
  lu.assertEquals(sup_starts, 2)
  H.stop_all(sup, p.ref)
end

function TestSupervision:test_decider_returning_junk_escalates()
  local sup_starts = 0
  local sup = tend.spawn(function(ctx)
    sup_starts = sup_starts + 1
    ctx:spawn(worker, { name = "w", args = { "w" } })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function() return "retry" end } })
  tend.ask(sup, "x", 1):send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(sup_starts, 2)
  H.stop_all(sup)
end

function TestSupervision:test_decider_function_gets_error_and_child()
  local seen
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "w", args = { "w" } })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function(err, child)
    seen = { err.kind, child:path() }
    return "resume"
  end } })
  local w = tend.ask(sup, "x", 1)
  w:send("x")
  w:send({ raise = "Oops" })
  H.settle()
  lu.assertEquals(seen[1], "Oops")
  lu.assertStrContains(seen[2], "/w")
  lu.assertEquals(tend.ask(w, "get", 1), 1) -- resumed: state kept
  H.stop_all(sup)
end

function TestSupervision:test_errors_in_pre_restart_and_post_stop_do_not_stop_the_restart()
  local starts = 0
  local a = tend.spawn(function()
    starts = starts + 1
    return {
      receive = function(self, msg, ctx)
        if msg == "get" then ctx:reply(starts) else error("fail") end
      end,
      pre_restart = function() error("pre_restart broke") end,
      post_stop = function() error("post_stop broke") end,
    }
  end)
  a:send("x")
  H.settle()
  lu.assertEquals(tend.ask(a, "get", 1), 2)
  H.stop_all(a) -- post_stop fails again: logged, the actor still dies
  lu.assertFalse(tend.alive(a))
end

function TestSupervision:test_init_error_stops_by_default()
  local p = tk.probe()
  local a = tend.spawn(function(ctx)
    return { pre_start = function() error("no db") end, receive = function() end }
  end)
  p:watch(a)
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason.kind, "InitError")
  lu.assertStrContains(t.reason.message, "pre_start failed")
  H.stop_all(p.ref)
end

function TestSupervision:test_init_error_during_restart()
  local p = tk.probe()
  local starts = 0
  local a = tend.spawn(function()
    starts = starts + 1
    if starts > 1 then error("cannot start again") end
    return function() error("first failure") end
  end)
  p:watch(a)
  a:send("x")
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason.kind, "InitError")
  lu.assertEquals(starts, 2)
  H.stop_all(p.ref)
end

function TestSupervision:test_kill_fails_with_Killed_and_stops()
  local p = tk.probe()
  local a = tend.spawn(function() return function() end end, { name = "victim" })
  p:watch(a)
  tend.kill(a)
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason.kind, "Killed")
  H.stop_all(p.ref)
end

function TestSupervision:test_chaos_kill_a_sleeping_actor()
  local a = tend.spawn(function() return function(m, ctx) ctx:sleep(100) end end)
  a:send("nap")
  H.settle()
  tend.chaos.kill(a) -- now, wherever it is
  H.settle()
  lu.assertFalse(tend.alive(a))
end

-- tend.kill is Akka's Kill: a message, reached after the current one.
function TestSupervision:test_kill_waits_for_the_message_in_progress()
  local a = tend.spawn(function() return function(m, ctx) ctx:sleep(100) end end)
  a:send("nap")
  H.settle()
  local t0 = tend.now()
  tend.kill(a)
  tend.sleep(99)
  lu.assertTrue(tend.alive(a))
  tend.sleep(2)
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(tend.now() - t0, 101)
end

function TestSupervision:test_unwatch_drops_a_queued_terminated()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    return function(msg, ctx)
      if msg == "go" then
        tend.stop(target)
        ctx:sleep(1) -- target dies; its terminated waits in our queue
        ctx:unwatch(target)
      else
        got[#got + 1] = msg
      end
    end
  end)
  w:send("go")
  w:send("after")
  tend.sleep(2)
  lu.assertEquals(got, { "after" })
  H.stop_all(w)
end

function TestSupervision:test_watch_with_a_custom_message()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target, "it is gone")
    return function(msg) got[#got + 1] = msg end
  end)
  H.settle()
  tend.stop(target)
  H.settle()
  lu.assertEquals(got, { "it is gone" })
  H.stop_all(w)
end

function TestSupervision:test_unhandled_terminated_is_a_death_pact()
  local p = tk.probe()
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    return function(msg) return tend.unhandled end
  end)
  p:watch(w)
  H.settle()
  tend.stop(target)
  local t = p:expect_terminated(w, 1)
  lu.assertEquals(t.reason.kind, "DeathPact")
  H.stop_all(p.ref)
end

function TestSupervision:test_watch_a_dead_ref()
  local p = tk.probe()
  local a = tend.spawn(function() return function() end end)
  H.stop_all(a)
  p:watch(a)
  local t = p:expect_terminated(a, 1)
  lu.assertFalse(t.existence_confirmed)
  H.stop_all(p.ref)
end

function TestSupervision:test_terminated_reasons()
  local p = tk.probe()
  local a = tend.spawn(function() return function() return tend.stopped end end)
  local b = tend.spawn(function() return function() end end)
  p:watch(a)
  p:watch(b)
  a:send("bye")
  lu.assertEquals(p:expect_terminated(a, 1).reason, "normal")
  tend.stop(b)
  lu.assertEquals(p:expect_terminated(b, 1).reason, "normal")
  H.stop_all(p.ref)
end

function TestSupervision:test_stopping_strategy_stops_on_any_error()
  local sup = supervisor(tend.stopping, { "w" })
  local w = children(sup)[1]
  w:send({ raise = "Anything" })
  H.settle()
  lu.assertFalse(tend.alive(w))
  H.stop_all(sup)
end

function TestSupervision:test_shutdown_order_nested()
  local order = {}
  local function node(ctx, name, kids)
    for _, k in ipairs(kids or {}) do
      ctx:spawn(node, { name = k[1], args = { k[1], k[2] } })
    end
    return { receive = function() end, post_stop = function() order[#order + 1] = name end }
  end
  local root = tend.spawn(node, { name = "root", args = { "root",
    { { "a", { { "a1" }, { "a2" } } }, { "b" }, { "c", { { "c1" } } } } } })
  H.settle()
  H.stop_all(root)
  lu.assertEquals(order, { "c1", "c", "b", "a2", "a1", "a", "root" })
end

function TestSupervision:test_tree_ps_stats_describe()
  local s0 = tend.stats()
  local sup = supervisor(tend.one_for_one { max_retries = 10, within = 60 }, { "w" })
  local w = children(sup)[1]
  w:send({ raise = "Boom" })
  H.settle()
  local s1 = tend.stats()
  lu.assertEquals(s1.restarts - s0.restarts, 1)
  lu.assertEquals(s1.failures - s0.failures, 1)
  local rows = {}
  for _, r in ipairs(tend.ps()) do rows[r.path] = r end
  local wp = w:path()
  lu.assertEquals(rows[wp].restarts, 1)
  lu.assertEquals(rows[wp].state, "running")
  lu.assertEquals(rows[wp].mailbox, 0)
  lu.assertStrContains(tend.tree(), "  " .. sup:name() .. " [running] restarts=0 mailbox=0\n")
  lu.assertStrContains(tend.tree(), "    w [running] restarts=1 mailbox=0\n")
  lu.assertEquals(tend.describe(tend.one_for_one { max_retries = 10, within = 60 }),
    "one_for_one: at most 10 restarts per 60 s (fixed window) per child, then stop the child; "
    .. "directives apply to the child; decider: InitError, Killed, DeathPact -> stop, anything else -> restart")
  lu.assertEquals(tend.describe(tend.all_for_one { max_retries = 3, within = 1.5, window = "sliding",
    on_limit = "escalate", decider = { Timeout = "resume", ["*"] = "stop" } }),
    "all_for_one: at most 3 restarts per 1.5 s (sliding window) for the group, then escalate; "
    .. "directives apply to all children; decider: Timeout -> resume, anything else -> stop")
  lu.assertEquals(tend.describe(tend.stopping), "stopping: every failure stops the child")
  H.stop_all(sup)
end

function TestSupervision:test_bad_strategies()
  local function err(f, ...)
    local ok, e = pcall(f, ...)
    lu.assertFalse(ok)
    return e
  end
  lu.assertStrContains(err(tend.decider, { Boom = "explode" }),
    "tend.decider: directive for 'Boom': expected \"resume\", \"restart\", \"stop\" or \"escalate\", got explode")
  lu.assertStrContains(err(tend.one_for_one, { retries = 3 }), "tend.one_for_one: unknown option 'retries'")
  lu.assertStrContains(err(tend.one_for_one, { max_retries = 1.5 }),
    "option 'max_retries': expected an integer >= -1, got 1.5")
  lu.assertStrContains(err(tend.all_for_one, { max_retries = -2 }), "option 'max_retries'")
  lu.assertStrContains(err(tend.rest_for_one, { within = 0 }), "option 'within': expected a number of seconds > 0")
  lu.assertStrContains(err(tend.one_for_one, { within = -1 }), "option 'within'")
  lu.assertStrContains(err(tend.one_for_one, { decider = "restart" }),
    "option 'decider': expected a function(err, child) or tend.decider{...}, got restart (string)")
  lu.assertStrContains(err(tend.one_for_one, { window = "rolling" }), "option 'window'")
  lu.assertStrContains(err(tend.one_for_one, { on_limit = "panic" }), "option 'on_limit'")
  lu.assertStrContains(err(tend.one_for_one, { decider = { X = "retry" } }), "directive for 'X'")
  local before = tend.stats().spawned
  lu.assertStrContains(err(tend.spawn, function() return function() end end, { supervisor = {} }),
    "option 'supervisor': expected a strategy")
  lu.assertEquals(tend.stats().spawned, before)
end

function TestSupervision:test_escalation_past_the_guardian_exits_1()
  local path = H.script([[
local tend = require "tend"
tend.guardian_strategy(tend.one_for_one { decider = function() return "escalate" end })
local a = tend.spawn(function() return function() tend.raise("Fatal", "cannot go on") end end,
  { name = "doomed" })
a:send("x")
tend.sleep(1)
print("not reached")
]])
  local out, err, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 1)
  lu.assertEquals(out, "")
  lu.assertStrContains(err, "tend: failure escalated past the guardian: ")
  lu.assertStrContains(err, "Escalated: failure of /user/doomed")
  lu.assertStrContains(err, "Fatal: cannot go on")
  lu.assertStrContains(err, "stack traceback:")
  os.remove(path)
end

function TestSupervision:test_each_handled_failure_is_logged_once_at_warn()
  local path = H.script([[
local tend = require "tend"
local a = tend.spawn(function() return function() tend.raise("Boom", "bad") end end, { name = "w" })
a:send(1)
a:send(2)
tend.sleep(1)
tend.stop(a)
]])
  local _, err, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  local lines = {}
  for l in err:gmatch("[^\n]+") do lines[#lines + 1] = l end
  lu.assertEquals(#lines, 2)
  lu.assertStrMatches(lines[1], "%[0%.000%] warn  /user/w: .*Boom: bad; restart %(restarts 1%)")
  lu.assertStrMatches(lines[2], "%[0%.000%] warn  /user/w: .*Boom: bad; restart %(restarts 2%)")
  local _, quiet = H.run({ "--virtual-time", "--log-level", "error", path })
  lu.assertEquals(quiet, "")
  os.remove(path)
end

-- An InitError hid the factory's own kind from a decider table: a table
-- with no InitError clause matches the cause's kind (design §3.3).
function TestSupervision:test_decider_table_matches_the_kind_a_factory_raised()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local tries = 0
    ctx:spawn(function()
      tries = tries + 1
      log[#log + 1] = "try " .. tries
      if tries < 3 then tend.raise("ConnectError", "no db") end
      return function() end
    end, { name = "db" })
    ctx:spawn(function() tend.raise("Other", "x") end, { name = "other" })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = tend.one_for_one { decider = tend.decider {
    ConnectError = "restart", Other = "stop" } } })
  H.settle()
  -- db: restarted until its factory works (before: InitError matched no
  -- clause and escalated); other: stopped by its own kind's clause
  lu.assertEquals(log, { "try 1", "try 2", "try 3" })
  lu.assertEquals(#tend.ask(sup, "children"), 1)
  H.stop_all(sup)
end

-- tend.default_strategy is the strategy an actor without `children` uses:
-- shown as docs/guide/supervision.md says, InitError stops a child, anything else restarts
-- it without limit.
function TestSupervision:test_the_default_strategy_is_what_a_plain_actor_uses()
  lu.assertEquals(tostring(tend.default_strategy), "one_for_one: restarts without limit; "
    .. "directives apply to the child; decider: InitError, Killed, DeathPact -> stop, "
    .. "anything else -> restart")
  local starts = 0
  local parent = tend.spawn(function(ctx)
    local c = ctx:spawn(function()
      starts = starts + 1
      return function() error("again") end
    end, { name = "c" })
    local bad = ctx:spawn(function() error("no start") end, { name = "bad" })
    return function(msg, cx) if msg == "refs" then cx:reply({ c, bad }) end end
  end)
  local refs = tend.ask(parent, "refs")
  for _ = 1, 25 do refs[1]:send("x") tend.sleep(0.001) end
  lu.assertEquals(starts, 26)
  lu.assertEquals(tend.inspect(refs[1]).restarts, 25)
  lu.assertFalse(tend.alive(refs[2]))
  H.stop_all(parent)
end

-- tend.version is the version `tend --version` prints.
function TestSupervision:test_tend_version_is_the_cli_version()
  local out = H.run({ "--version" })
  lu.assertEquals(out:match("^tend (%S+) "), tend.version)
  lu.assertStrMatches(tend.version, "%d+%.%d+%.%d+")
end
