-- Semantics checked against public suites (Akka/Pekko SupervisorSpec,
-- BackoffSupervisorSpec, DeathWatchSpec; OTP supervisor_SUITE): the cases
-- keep the names they have there, under the virtual clock.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestSemantics = {}

function TestSemantics:tearDown() H.assert_clean() end

-- A child that echoes, reports its lifecycle to `log` and fails on
-- {raise = kind}.
local function worker(ctx, name, log)
  log = log or {}
  return {
    pre_start = function() log[#log + 1] = name .. ":start" end,
    post_stop = function() log[#log + 1] = name .. ":stop" end,
    receive = function(self, msg, ctx)
      if type(msg) == "table" and msg.raise then tend.raise(msg.raise, "boom") end
      if type(msg) == "table" and msg.nap then ctx:sleep(msg.nap) return end
      ctx:reply(msg)
    end,
  }
end

-- A supervisor with `strategy` whose children (names) start in order;
-- asked "children" it replies with them, {stop = ref} stops one.
local function supervisor(strategy, names, log)
  return tend.spawn(function(ctx)
    for _, name in ipairs(names) do ctx:spawn(worker, { name = name, args = { name, log } }) end
    return function(msg, ctx)
      if msg == "children" then ctx:reply(ctx:children()) end
      if type(msg) == "table" and msg.stop then ctx:stop(msg.stop) end
      if type(msg) == "table" and msg.tend_stop then tend.stop(msg.tend_stop) end
    end
  end, { supervisor = strategy })
end

------------------------------------------------------------ DeathWatch

-- DeathWatchSpec "discard Terminated when unwatched between sysmsg and
-- processing": the watcher is busy when its target dies; an unwatch sent
-- after the death but before the watcher gets to the notice drops it.
function TestSemantics:test_discard_Terminated_when_unwatched_between_sysmsg_and_processing()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function()
    return function(m, ctx)
      if type(m) == "table" and m.tend == "terminated" then got[#got + 1] = "terminated"
      elseif m == "watch" then ctx:watch(target)
      elseif m == "unwatch" then ctx:unwatch(target)
      elseif m == "block" then ctx:sleep(1)
      else got[#got + 1] = m end
    end
  end)
  w:send("watch")
  w:send("block")
  tend.sleep(0.5)
  tend.stop(target) -- dies while w is blocked
  tend.sleep(0.1)
  w:send("unwatch")
  w:send("identify")
  w:send("identify")
  tend.sleep(2)
  lu.assertEquals(got, { "identify", "identify" })
  lu.assertTrue(tend.alive(w)) -- no DeathPact
  H.stop_all(w)
end

-- A notice that arrives while the watcher is idle comes at once, before
-- what is sent to the watcher afterwards.
function TestSemantics:test_a_notice_to_an_idle_watcher_comes_before_later_mail()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    return function(m)
      got[#got + 1] = type(m) == "table" and m.tend or m
    end
  end)
  H.settle()
  tend.stop(target)
  H.settle()
  w:send("later")
  H.settle()
  lu.assertEquals(got, { "terminated", "later" })
  H.stop_all(w)
end

-- Watching a dead target again before its notice is handled gives no
-- second notice.
function TestSemantics:test_watching_again_before_the_notice_is_handled_gives_one_notice()
  local n = 0
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    return function(m, ctx)
      if m == "block" then ctx:sleep(1) ctx:watch(target) ctx:watch(target) end
      if type(m) == "table" and m.tend == "terminated" then n = n + 1 end
    end
  end)
  w:send("block")
  tend.sleep(0.5)
  tend.stop(target)
  tend.sleep(2)
  lu.assertEquals(n, 1)
  H.stop_all(w)
end

------------------------------------------------------------ Kill

-- DeathWatchSpec "notify with a Terminated message once when an Actor is
-- stopped but not when restarted": two kills are queued; each is a
-- failure handled in turn (restart, restart), the third reaches the limit.
function TestSemantics:test_notify_with_one_Terminated_when_stopped_but_not_when_restarted()
  local sup = tend.spawn(function()
    return function(m, ctx)
      ctx:reply(ctx:spawn(function() return function(x, c) c:reply(x) end end))
    end
  end, { supervisor = tend.one_for_one { max_retries = 2, within = 10, decider = { ["*"] = "restart" } } })
  local terminal = tend.ask(sup, "child", 1)
  local r0 = tend.stats().restarts
  local p = tk.probe()
  p:watch(terminal)
  tend.kill(terminal)
  tend.kill(terminal)
  lu.assertEquals(tend.ask(terminal, "foo", 1), "foo")
  lu.assertEquals(tend.stats().restarts - r0, 2)
  tend.kill(terminal)
  lu.assertEquals(p:expect_terminated(terminal, 1).reason.kind, "Killed")
  p:expect_no_msg(1)
  lu.assertFalse(tend.alive(terminal))
  H.stop_all(sup, p.ref)
end

-- A kill sent while the first failure waits for its decision is queued
-- and handled after the restart.
function TestSemantics:test_a_second_kill_during_the_first_failure_is_handled_after_the_restart()
  local decided = 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "w", args = { "w" } })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function()
    decided = decided + 1
    tend.sleep(1) -- the decision takes a while
    return "restart"
  end } })
  local w = tend.ask(sup, "?", 1)
  local r0 = tend.stats().restarts
  tend.kill(w)
  tend.sleep(0.5) -- deciding
  tend.kill(w)
  tend.sleep(5)
  lu.assertEquals(decided, 2)
  lu.assertEquals(tend.stats().restarts - r0, 2)
  lu.assertTrue(tend.alive(w))
  H.stop_all(sup)
end

------------------------------------------------------------ exit reasons

local function reason_of(p, ref) return p:expect_terminated(ref, 10).reason end

function TestSemantics:test_a_child_stopped_by_its_supervisor_is_shutdown()
  local sup = supervisor(nil, { "a", "b" })
  local kids = tend.ask(sup, "children", 1)
  local p = tk.probe()
  p:watch(kids[1])
  p:watch(kids[2])
  sup:send { stop = kids[1] }      -- ctx:stop(child)
  sup:send { tend_stop = kids[2] } -- tend.stop from its supervisor
  lu.assertEquals(reason_of(p, kids[1]), "shutdown")
  lu.assertEquals(reason_of(p, kids[2]), "shutdown")
  H.stop_all(sup, p.ref)
end

function TestSemantics:test_a_stop_directive_stops_the_group_with_shutdown()
  local sup = supervisor(tend.all_for_one { decider = { Boom = "stop" } }, { "a", "b", "c" })
  local kids = tend.ask(sup, "children", 1)
  local p = tk.probe()
  for _, k in ipairs(kids) do p:watch(k) end
  kids[2]:send { raise = "Boom" }
  lu.assertEquals(reason_of(p, kids[1]), "shutdown")
  lu.assertEquals(reason_of(p, kids[2]).kind, "Boom")
  lu.assertEquals(reason_of(p, kids[3]), "shutdown")
  H.stop_all(sup, p.ref)
end

function TestSemantics:test_a_temporary_member_of_a_group_restart_is_shutdown()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "a", args = { "a" } })
    ctx:spawn(worker, { name = "t", args = { "t" }, restart = "temporary" })
    return function(m, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = tend.all_for_one() })
  local kids = tend.ask(sup, "?", 1)
  local p = tk.probe()
  p:watch(kids[2])
  kids[1]:send { raise = "Boom" }
  lu.assertEquals(reason_of(p, kids[2]), "shutdown")
  H.stop_all(sup, p.ref)
end

function TestSemantics:test_an_actor_stopping_itself_or_stopped_by_another_is_normal()
  local sup = supervisor(nil, { "a", "b" })
  local kids = tend.ask(sup, "children", 1)
  local p = tk.probe()
  p:watch(kids[1])
  p:watch(kids[2])
  tend.stop(kids[1]) -- from the main chunk: not its supervisor
  local self_stop = tend.spawn(function() return function() return tend.stopped end end)
  p:watch(self_stop)
  self_stop:send("bye")
  lu.assertEquals(reason_of(p, kids[1]), "normal")
  lu.assertEquals(reason_of(p, self_stop), "normal")
  H.stop_all(sup, p.ref)
end

function TestSemantics:test_a_post_stop_that_overruns_its_shutdown_is_killed()
  local a = tend.spawn(function()
    return { receive = function() end, post_stop = function() tend.sleep(10) end }
  end, { shutdown = 1 })
  local p = tk.probe()
  p:watch(a)
  tend.stop(a)
  lu.assertEquals(reason_of(p, a), "killed")
  H.stop_all(p.ref)
end

------------------------------------------------------------ group restarts

-- supervisor_SUITE one_for_all / rest_for_one: the members stop youngest
-- first, then start again in start order.
function TestSemantics:test_one_for_all_stops_youngest_first_then_starts_in_order()
  local log = {}
  local sup = supervisor(tend.all_for_one(), { "a", "b", "c" }, log)
  local kids = tend.ask(sup, "children", 1)
  H.settle()
  for i = #log, 1, -1 do log[i] = nil end
  kids[1]:send { raise = "Boom" }
  H.settle()
  lu.assertEquals(log, { "c:stop", "b:stop", "a:stop", "a:start", "b:start", "c:start" })
  H.stop_all(sup)
end

function TestSemantics:test_rest_for_one_stops_the_younger_youngest_first()
  local log = {}
  local sup = supervisor(tend.rest_for_one(), { "a", "b", "c", "d" }, log)
  local kids = tend.ask(sup, "children", 1)
  H.settle()
  for i = #log, 1, -1 do log[i] = nil end
  kids[2]:send { raise = "Boom" }
  H.settle()
  lu.assertEquals(log, { "d:stop", "c:stop", "b:stop", "b:start", "c:start", "d:start" })
  H.stop_all(sup)
end

-- A group restart ends the waits (sleep, ask) of its members at once: the
-- old instance gets nothing raised into it, no Timeout counts as a second
-- failure, and each restart event says whose failure caused it.
function TestSemantics:test_a_group_restart_reaches_members_waiting_in_sleep_or_ask()
  local events, woke = {}, {}
  tend.trace(function(e) if e.ev == "restart" then events[#events + 1] = e end end)
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function() error("boom") end end, { name = "a" })
    ctx:spawn(function()
      return function(m, c) c:sleep(10) woke[#woke + 1] = "b" end
    end, { name = "b" })
    local silent = ctx:spawn(function() return function() end end, { name = "silent" })
    ctx:spawn(function()
      return function(m, c) pcall(tend.ask, silent, "?", 5) woke[#woke + 1] = "c" end
    end, { name = "c" })
    return function(m, c) c:reply(c:children()) end
  end, { supervisor = tend.all_for_one() })
  local kids = tend.ask(sup, "?", 1)
  local f0 = tend.stats().failures
  kids[2]:send("nap")
  kids[4]:send("ask")
  tend.sleep(1)
  local t0 = tend.now()
  kids[1]:send("crash")
  tend.sleep(20)
  tend.trace(false)
  lu.assertEquals(woke, {})
  lu.assertEquals(tend.stats().failures - f0, 1)
  lu.assertEquals(#events, 4)
  local a_path = kids[1]:path()
  for _, e in ipairs(events) do
    lu.assertEquals(e.t, t0)
    if e.path ~= a_path then lu.assertEquals(e.detail, "for " .. a_path) end
  end
  H.stop_all(sup)
end

-- A second failure in the group while its restart is under way joins it:
-- one restart of each member.
function TestSemantics:test_a_failure_during_a_group_restart_joins_it()
  local log = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "a", args = { "a", log } })
    ctx:spawn(function(c2)
      return {
        pre_start = function() log[#log + 1] = "b:start" end,
        post_stop = function() log[#log + 1] = "b:stop" tend.sleep(1) end,
        receive = function() end,
      }
    end, { name = "b" })
    return function(m, c) c:reply(c:children()) end
  end, { supervisor = tend.all_for_one() })
  local kids = tend.ask(sup, "?", 1)
  H.settle()
  for i = #log, 1, -1 do log[i] = nil end
  local r0 = tend.stats().restarts
  kids[1]:send { raise = "Boom" } -- b stops first, for 1 s ...
  tend.sleep(0.5)
  tend.chaos.kill(kids[1]) -- ... a fails again meanwhile
  tend.sleep(5)
  lu.assertEquals(log, { "b:stop", "a:stop", "a:start", "b:start" })
  lu.assertEquals(tend.stats().restarts - r0, 2)
  tend.stop(sup)
  tend.sleep(2) -- b's post_stop takes 1 s
end

------------------------------------------------------------ backoff

-- A backoff child that fails on "boom"; starts counted in `starts`.
local function boomer(starts)
  return function()
    starts[#starts + 1] = tend.now()
    return function(m) if m == "boom" then error("boom") end end
  end
end

-- BackoffSupervisorSpec "respect maxNrOfRetries property of
-- OneForOneStrategy": the count is the supervisor's, across its children;
-- the 6th failure stops the supervisor.
function TestSemantics:test_respect_maxNrOfRetries_property_of_OneForOneStrategy()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 1, max_backoff = 1,
    random_factor = 0, reset_after = 1000 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 5, within = 30 }))
  local p = tk.probe()
  p:watch(sup)
  for i = 1, 5 do
    sup:send("boom")
    tend.sleep(1.5)
    lu.assertEquals(#starts, i + 1)
  end
  lu.assertTrue(tend.alive(sup))
  sup:send("boom")
  lu.assertEquals(p:expect_terminated(sup, 1).reason, "normal")
  lu.assertEquals(#starts, 6)
  H.stop_all(p.ref)
end

-- The strategy's `within` under a backoff supervisor, as Akka counts it
-- (backoff_spec has Akka's own case): the count is the backoff's, and the
-- window only starts over a lone restart. Three quick restarts (the
-- window's reset at 1 s finds 3, not 1), then 2 s without a failure but
-- no auto reset (reset_after 1000): the fourth failure is over the limit.
function TestSemantics:test_a_backoff_window_does_not_reset_three_restarts()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 0.1, max_backoff = 0.1,
    random_factor = 0, reset_after = 1000 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 3, within = 1 }))
  local p = tk.probe()
  p:watch(sup)
  for _ = 1, 3 do sup:send("boom") tend.sleep(0.2) end
  tend.sleep(2) -- longer than the window
  lu.assertTrue(tend.alive(sup))
  lu.assertEquals(#starts, 4)
  lu.assertEquals(tend.backoff.restart_count(sup), 3)
  sup:send("boom")
  p:expect_terminated(sup, 1)
  lu.assertEquals(#starts, 4)
  H.stop_all(p.ref)
end

-- A backoff reset starts the strategy's count over too.
function TestSemantics:test_a_backoff_reset_starts_the_strategys_count_over()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 1, max_backoff = 1,
    random_factor = 0, reset_after = 5 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 2, within = 1000 }))
  for _ = 1, 2 do sup:send("boom") tend.sleep(1.5) end
  tend.sleep(6) -- ran 5 s: reset
  for _ = 1, 2 do sup:send("boom") tend.sleep(1.5) end
  lu.assertTrue(tend.alive(sup))
  lu.assertEquals(#starts, 5)
  H.stop_all(sup)
end

-- min_backoff = 0 is allowed (Akka): every delay is 0.
function TestSemantics:test_min_backoff_0_restarts_at_once()
  lu.assertEquals(tend.backoff.delays(tend.backoff.on_failure(function() end,
    { min_backoff = 0, max_backoff = 0, random_factor = 0 }), 4), { 0, 0, 0, 0 })
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 0, max_backoff = 10,
    random_factor = 0.5 }))
  local t0 = tend.now()
  for _ = 1, 3 do sup:send("boom") H.settle() end
  lu.assertEquals(starts, { t0, t0, t0, t0 })
  H.stop_all(sup)
end

-- Backoff restarts count in stats().restarts and in the child's restarts;
-- each failure is one warn line with its cause and what was done.
function TestSemantics:test_backoff_restarts_are_counted_and_logged()
  local path = H.script([[
local tend = require "tend"
local b = tend.spawn(tend.backoff.on_failure(function() return function() error("y") end end,
  { name = "c", min_backoff = 1, max_backoff = 1, random_factor = 0 }), { name = "b" })
b:send(1)
tend.sleep(1.5)
b:send(1)
tend.sleep(1.5)
print(tend.stats().restarts, tend.ps()[4].path, tend.ps()[4].restarts)
tend.stop(b)
]])
  local out, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "2\t/user/b/c\t2\n")
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/b/c: Error: F:2: y; restart after a backoff (restarts 1)\n"
    .. "[1.500] warn  /user/b/c: Error: F:2: y; restart after a backoff (restarts 2)\n")
end

-- A temporary child is stopped, and the log says so.
function TestSemantics:test_a_temporary_childs_failure_logs_stop()
  local path = H.script([[
local tend = require "tend"
local sup = tend.spawn(function(ctx)
  ctx:spawn(function() return function() error("x") end end, { name = "t", restart = "temporary" })
  return function(m, c) c:reply(c:children()[1]) end
end, { name = "sup" })
tend.ask(sup, "?"):send(1)
tend.sleep(1)
tend.stop(sup)
]])
  local _, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/sup/t: Error: F:3: x; stop (temporary: never restarted) (restarts 0)\n")
end

-- ... and it counts once against the limit: one allowed restart is enough.
function TestSemantics:test_a_failure_joining_a_group_restart_counts_once()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "a", args = { "a" } })
    ctx:spawn(worker, { name = "m", args = { "m" } })
    ctx:spawn(function()
      return { post_stop = function() tend.sleep(1) end, receive = function() end }
    end, { name = "slow" })
    return function(m, c) c:reply(c:children()) end
  end, { supervisor = tend.all_for_one { max_retries = 1, within = 100,
    decider = { ["*"] = "restart" } } })
  local kids = tend.ask(sup, "?", 1)
  kids[1]:send { raise = "Boom" }
  tend.sleep(0.5) -- slow is stopping; m waits for its turn
  tend.chaos.kill(kids[2]) -- joins the restart under way
  tend.sleep(5)
  for _, k in ipairs(kids) do lu.assertTrue(tend.alive(k)) end
  tend.stop(sup)
  tend.sleep(2)
end

-- A failure handled by an actor's own clauses (tend.supervise) is one warn
-- line too, with the cause and the action taken.
function TestSemantics:test_a_typed_actors_failure_is_logged()
  local path = H.script([[
local tend = require "tend"
local a = tend.spawn(tend.supervise(function() return function(m) error("x") end end)
  :on_failure("*", tend.restart_with_backoff(1, 2, 0)), { name = "a" })
a:send(1)
tend.sleep(1.5)
tend.stop(a)
]])
  local _, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/a: Error: F:2: x; restart_with_backoff (restarts 1)\n")
end

------------------------------------------------------------ found by trying tend as a new user

-- Watching an actor that is already dead: the notice's ref is the very ref
-- the watcher gave (its path, and a key of the watcher's tables).
function TestSemantics:test_watching_a_dead_actor_gives_back_its_own_ref()
  local d = tend.spawn(function() return function() end end, { name = "gone" })
  tend.stop(d)
  H.settle()
  local got
  local w = tend.spawn(function()
    return function(m, ctx)
      if m == "watch" then ctx:watch(d) else got = m end
    end
  end)
  w:send("watch")
  H.settle()
  lu.assertTrue(rawequal(got.ref, d))
  lu.assertEquals(got.ref:path(), "/user/gone")
  lu.assertEquals(({ [d] = "A" })[got.ref], "A")
  lu.assertFalse(got.existence_confirmed)
  H.stop_all(w)
end

-- The warn line says what was done: a typed limit reached stops, a backoff
-- supervisor at max_retries stops.
function TestSemantics:test_a_limit_reached_is_logged_as_a_stop()
  local path = H.script([[
local tend = require "tend"
local a = tend.spawn(tend.supervise(function() return function() error("x") end end)
  :on_failure("*", tend.restart_with_limit(1, 10)), { name = "t" })
a:send(1) tend.sleep(0.1) a:send(2) tend.sleep(0.1)
tend.spawn(tend.backoff.on_failure(function() return function() error("y") end end,
  { name = "c", min_backoff = 1, max_backoff = 1, random_factor = 0, reset_after = 100 }):with_max_retries(1), { name = "b" })
tend.sleep(0.1)
tend.send("/user/b", 1) tend.sleep(2)
tend.send("/user/b", 1) tend.sleep(2)
]])
  local _, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/t: Error: F:2: x; restart_with_limit (restarts 1)\n"
    .. "[0.100] warn  /user/t: Error: F:2: x; restart_with_limit: limit reached; stop (restarts 1)\n"
    .. "[0.300] warn  /user/b/c: Error: F:5: y; restart after a backoff (restarts 1)\n"
    .. "[2.300] warn  /user/b/c: Error: F:5: y; max_retries reached; the supervisor stops (restarts 1)\n")
end

-- Asking yourself fails at once (OTP's calling_self), not after the timeout.
function TestSemantics:test_asking_yourself_fails_at_once()
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, tend.self(), "x", 5)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(tend.now(), t0)
end

-- Akka's PoisonPill: the messages before it are processed, post_stop runs,
-- the ones after it are dead letters; a watcher sees reason "normal".
function TestSemantics:test_a_PoisonPill_stops_after_the_messages_before_it()
  local got = {}
  local a = tend.spawn(function()
    return { receive = function(_, m) got[#got + 1] = m end,
             post_stop = function() got[#got + 1] = "post_stop" end }
  end)
  local dead0 = tend.stats().dead_letters
  local w = tend.spawn(function(ctx)
    ctx:watch(a)
    return function(m) if m.tend == "terminated" then got[#got + 1] = m.reason end end
  end)
  tend.sleep(0)
  a:send(1) a:send(2) tend.poison(a) a:send(3)
  tend.sleep(0.01)
  lu.assertEquals(got, { 1, 2, "post_stop", "normal" })
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(tend.stats().dead_letters - dead0, 1)
  tend.stop(w)
  tend.poison(a) -- a dead actor: nothing
end
