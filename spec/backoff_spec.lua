-- Backoff: Akka's schedule, jitter modes, slotted delays, resets, limits,
-- stash, reply_while_stopped, on_stop, factory failures, stale timers,
-- typed supervision and retry. Exact times under the virtual clock.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestBackoff = {}

function TestBackoff:tearDown() H.assert_clean() end

-- A child that notes when it starts and fails on "crash" (or at once when
-- crash_at_start is set).
local function crasher(starts, crash_at_start)
  return function(ctx)
    starts[#starts + 1] = tend.now()
    if crash_at_start then ctx.self:send("crash") end
    return function(msg, ctx)
      if msg == "crash" then error("boom") end
      if msg == "quit" then return tend.stopped end
      if msg == "ok" then ctx:reset_backoff() return end
      ctx:reply(msg)
    end
  end
end

local gaps = H.gaps

function TestBackoff:test_akkas_documented_schedule()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts, true),
    { min_backoff = 3, max_backoff = 30, random_factor = 0.2 }))
  tend.sleep(200)
  local bases = { 3, 6, 12, 24, 30, 30 }
  local g = gaps(starts)
  lu.assertTrue(#g >= #bases)
  for i, base in ipairs(bases) do
    lu.assertTrue(g[i] >= base and g[i] <= base * 1.2,
      string.format("gap %d is %s, expected within [%s, %s]", i, g[i], base, base * 1.2))
  end
  H.stop_all(sup)
end

function TestBackoff:test_exact_schedule_without_jitter()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts, true),
    { min_backoff = 3, max_backoff = 30, random_factor = 0 }))
  tend.sleep(140)
  lu.assertEquals(gaps(starts), { 3.0, 6.0, 12.0, 24.0, 30.0, 30.0, 30.0 })
  H.stop_all(sup)
end

function TestBackoff:test_jitter_modes_stay_in_their_bounds()
  local function check(jitter, lo, hi)
    for _ = 1, 50 do
      tend.random() -- move the generator so each round draws anew
      local d = tend.backoff.delays({ min_backoff = 1, max_backoff = 8, random_factor = 0.5,
        jitter = jitter }, 6)
      local bases = { 1, 2, 4, 8, 8, 8 }
      local prev = 1
      for i, base in ipairs(bases) do
        local l, h = lo(base, prev), hi(base, prev)
        lu.assertTrue(d[i] >= l - 1e-9 and d[i] <= h + 1e-9,
          string.format("%s delay %d = %s outside [%s, %s]", jitter, i, d[i], l, h))
        prev = d[i]
      end
    end
  end
  check("akka", function(b) return b end, function(b) return b * 1.5 end)
  check("capped", function(b) return b end, function(b) return math.min(8, b * 1.5) end)
  check("full", function() return 0 end, function(b) return b end)
  check("equal", function(b) return b / 2 end, function(b) return b end)
  check("decorrelated", function() return 1 end, function(_, prev) return math.min(8, 3 * prev) end)
  check("none", function(b) return b end, function(b) return b end)
end

function TestBackoff:test_delays_do_not_disturb_the_running_system()
  math.randomseed(42)
  local a = tend.random()
  math.randomseed(42)
  tend.backoff.delays({ min_backoff = 1, max_backoff = 8, random_factor = 0.5 }, 100)
  lu.assertEquals(tend.random(), a)
end

function TestBackoff:test_slotted_delays_and_ceiling()
  local allowed = { [1] = { 0, 1 }, [2] = { 0, 1, 3 }, [3] = { 0, 1, 3, 7 } }
  local function member(x, set)
    for _, v in ipairs(set) do if x == v then return true end end
    return false
  end
  local saw_high_after_reset, saw_high_at_ceiling = false, false
  for _ = 1, 100 do
    tend.random()
    local reset = tend.backoff.delays({ algorithm = "slotted", slot_time = 1, ceiling = 3 }, 6)
    local stay = tend.backoff.delays({ algorithm = "slotted", slot_time = 1, ceiling = 3,
      stay_at_ceiling = true }, 6)
    -- slots 1, 2, 3, then back to 1, 2, 3 (or staying at 3)
    for i, slot in ipairs { 1, 2, 3, 1, 2, 3 } do
      lu.assertTrue(member(reset[i], allowed[slot]), "reset " .. i .. ": " .. reset[i])
      lu.assertTrue(member(stay[i], allowed[math.min(i, 3)]), "stay " .. i .. ": " .. stay[i])
    end
    if reset[4] > 1 then saw_high_after_reset = true end
    if stay[4] > 3 then saw_high_at_ceiling = true end
  end
  lu.assertFalse(saw_high_after_reset)
  lu.assertTrue(saw_high_at_ceiling)
end

function TestBackoff:test_auto_reset_after_a_stable_run_and_not_before()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts), { min_backoff = 1,
    max_backoff = 100, random_factor = 0 }):with_auto_reset(5))
  local function crash_after(s) tend.sleep(s) sup:send("crash") end
  crash_after(0.5)  -- delay 1
  crash_after(1.5)  -- ran 0.5 s: delay 2
  crash_after(4.9)  -- ran 2.9 s (< 5): no reset, delay 4
  crash_after(9.5)  -- ran 5.5 s: reset, delay 1
  tend.sleep(2)
  lu.assertEquals(gaps(starts), { 1.5, 2.5, 6.9, 6.5 })
  H.stop_all(sup)
end

-- One auto reset armed at a time: each new child's replaces the last
-- child's (they piled up until each ran out, one per restart).
function TestBackoff:test_one_auto_reset_timer_whatever_the_restarts()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts), { min_backoff = 0.01,
    max_backoff = 0.01, random_factor = 0 }):with_auto_reset(1000))
  tend.sleep(0.05)
  local before = tend.stats().timers -- the first child's reset
  for _ = 1, 50 do
    sup:send("crash")
    tend.sleep(0.05) -- the delay runs out, the next child starts
  end
  lu.assertEquals(#starts, 51)
  lu.assertEquals(tend.stats().timers, before)
  H.stop_all(sup)
end

-- A child's auto reset goes with it: while the backoff delay runs only
-- the start of the next child is pending (the dead child's reset stayed
-- armed until then, to fire as a no-op), on_failure and on_stop alike.
function TestBackoff:test_a_dead_childs_reset_timer_is_cancelled()
  for _, mode in ipairs { "on_failure", "on_stop" } do
    local starts = {}
    local sup = tend.spawn(tend.backoff[mode](crasher(starts), { min_backoff = 1,
      max_backoff = 1, random_factor = 0 }):with_auto_reset(1000))
    tend.sleep(0.5)
    local base = tend.stats().timers - 1 -- the first child's reset
    sup:send(mode == "on_failure" and "crash" or "quit")
    tend.sleep(0.5) -- the child is dead, the delay runs
    lu.assertEquals(#starts, 1)
    lu.assertEquals(tend.stats().timers - base, 1) -- the start alone
    tend.sleep(1) -- the next child: its reset alone
    lu.assertEquals(#starts, 2)
    lu.assertEquals(tend.stats().timers - base, 1)
    H.stop_all(sup)
    lu.assertEquals(tend.stats().timers - base, 0)
  end
end

-- The supervisor restarted by its parent: its timers go first, its child
-- after them (the reset timer's record is then free or another's: not
-- cancelled again); the new child has one reset timer, and its own death
-- cancels it as before.
function TestBackoff:test_a_restarted_backoff_supervisor_keeps_one_reset_timer()
  local starts = {}
  local parent = tend.spawn(function(ctx)
    local b = ctx:spawn(tend.backoff.on_failure(crasher(starts), { min_backoff = 1,
      max_backoff = 1, random_factor = 0 }):with_auto_reset(1000), { name = "b" })
    return function(_, ctx) ctx:reply(b) end
  end, { supervisor = tend.one_for_one { decider = function() return "restart" end } })
  local b = tend.ask(parent, "?")
  tend.sleep(0.5)
  local base = tend.stats().timers - 1 -- the first child's reset
  tend.kill(b) -- b restarts: a new child at once
  tend.sleep(0.5)
  lu.assertEquals(#starts, 2)
  lu.assertEquals(tend.stats().timers - base, 1)
  b:send("crash") -- the delay: the start alone
  tend.sleep(0.5)
  lu.assertEquals(tend.stats().timers - base, 1)
  tend.sleep(1)
  lu.assertEquals(#starts, 3)
  lu.assertEquals(tend.stats().timers - base, 1)
  H.stop_all(parent)
  lu.assertEquals(tend.stats().timers - base, 0)
end

function TestBackoff:test_manual_reset()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts), { min_backoff = 1,
    max_backoff = 100, random_factor = 0 }):with_manual_reset())
  sup:send("crash")   -- delay 1
  tend.sleep(10)      -- no auto reset
  sup:send("crash")   -- delay 2
  tend.sleep(10)
  sup:send("ok")      -- the child resets
  sup:send("crash")   -- delay 1 again
  tend.sleep(5)
  lu.assertEquals(gaps(starts), { 1.0, 11.0, 9.0 })
  H.stop_all(sup)
end

function TestBackoff:test_max_retries_stops_the_supervisor()
  local starts = {}
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts, true), { min_backoff = 1,
    max_backoff = 10, random_factor = 0 }):with_max_retries(2))
  p:watch(sup)
  p:expect_terminated(sup, 10)
  lu.assertEquals(#starts, 3)
  H.stop_all(p.ref)
end

function TestBackoff:test_stash_keeps_order_and_drops_the_oldest()
  local got = {}
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    return function(msg) if msg == "crash" then error("x") end got[#got + 1] = msg end
  end, { min_backoff = 2, max_backoff = 2 }):with_stash(3))
  sup:send("crash")
  H.settle() -- the child is stopped now; 2 s until the next
  local d0 = tend.stats().dead_letters
  for i = 1, 5 do sup:send(i) end
  H.settle()
  lu.assertEquals(tend.stats().dead_letters - d0, 2)
  tend.sleep(3)
  sup:send(6)
  H.settle()
  lu.assertEquals(got, { 3, 4, 5, 6 })
  H.stop_all(sup)
end

function TestBackoff:test_messages_while_stopped_are_dead_letters_by_default()
  local sup = tend.spawn(tend.backoff.on_failure(crasher({}), { min_backoff = 2, max_backoff = 2 }))
  sup:send("crash")
  H.settle()
  local d0 = tend.stats().dead_letters
  sup:send("lost")
  H.settle()
  lu.assertEquals(tend.stats().dead_letters - d0, 1)
  H.stop_all(sup)
end

function TestBackoff:test_reply_while_stopped_answers_an_ask()
  local sup = tend.spawn(tend.backoff.on_failure(crasher({}), { min_backoff = 2, max_backoff = 2 })
    :with_reply_while_stopped("unavailable"))
  lu.assertEquals(tend.ask(sup, "hello", 1), "hello")
  sup:send("crash")
  H.settle()
  lu.assertEquals(tend.ask(sup, "hello", 1), "unavailable")
  tend.sleep(3)
  lu.assertEquals(tend.ask(sup, "hello", 1), "hello")
  H.stop_all(sup)
end

function TestBackoff:test_on_stop_restarts_after_a_normal_stop_and_ends_on_the_final_message()
  local starts = {}
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_stop(crasher(starts), { min_backoff = 1, max_backoff = 5,
    random_factor = 0 }):with_final_stop_message(function(m) return m == "quit" end))
  p:watch(sup)
  sup:send("crash") -- default strategy: an immediate, ordinary restart
  tend.sleep(0.5)
  lu.assertEquals(#starts, 2)
  local child
  for _, r in ipairs(tend.ps()) do if r.path:match("/child$") then child = r.ref end end
  local t0 = tend.now()
  tend.stop(child) -- the child stops normally: restarted after 1 s
  tend.sleep(2)
  lu.assertEquals(#starts, 3)
  lu.assertEquals(starts[3] - t0, 1.0)
  sup:send("quit") -- the final stop message: the child stops, so does sup
  p:expect_terminated(sup, 1)
  H.stop_all(p.ref)
end

function TestBackoff:test_on_stop_with_default_stopping_strategy_backs_off_failures()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_stop(crasher(starts, true), { min_backoff = 1,
    max_backoff = 5, random_factor = 0 }):with_default_stopping_strategy())
  tend.sleep(7.5)
  lu.assertEquals(gaps(starts), { 1.0, 2.0, 4.0 })
  H.stop_all(sup)
end

function TestBackoff:test_on_failure_ends_on_a_normal_stop()
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(crasher({}), { min_backoff = 1, max_backoff = 5 }))
  p:watch(sup)
  sup:send("quit")
  local t = p:expect_terminated(sup, 1)
  lu.assertEquals(t.reason, "normal")
  H.stop_all(p.ref)
end

function TestBackoff:test_factory_failure_goes_through_the_backoff()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    starts[#starts + 1] = tend.now()
    if #starts < 4 then error("not yet") end
    return function(msg, ctx) ctx:reply(msg) end
  end, { min_backoff = 1, max_backoff = 10, random_factor = 0 }))
  tend.sleep(10)
  lu.assertEquals(gaps(starts), { 1.0, 2.0, 4.0 })
  lu.assertEquals(tend.ask(sup, "up", 1), "up")
  H.stop_all(sup)
end

function TestBackoff:test_stale_reset_timers_do_nothing()
  -- reset_after 3 s; each child crashes 2.5 s after it starts: the reset
  -- timer of an earlier child fires while a later one runs, and must not
  -- reset the delays.
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    starts[#starts + 1] = tend.now()
    ctx:after(2.5, "crash")
    return function(msg) if msg == "crash" then error("late crash") end end
  end, { min_backoff = 1, max_backoff = 100, random_factor = 0 }):with_auto_reset(3))
  tend.sleep(40)
  lu.assertEquals(gaps(starts), { 3.5, 4.5, 6.5, 10.5 })
  H.stop_all(sup)
end

function TestBackoff:test_the_supervisor_ref_and_describe()
  local spec = tend.backoff.on_failure(crasher({}), { name = "myEcho", min_backoff = 3,
    max_backoff = 30, random_factor = 0.2 }):with_auto_reset(10):with_max_retries(5)
  lu.assertEquals(tend.describe(spec),
    "backoff on failure: restart the child after a failure; delays 3, 6, 12, 24, 30 s +0-20 %; "
    .. "at most 5 restarts, then stop; reset after 10 s of running (a child that usually runs longer before "
    .. "it fails restarts after the first delay every time: the delay never grows); "
    .. "while stopped, messages go to dead letters")
  local sup = tend.spawn(spec, { name = "echoSupervisor" })
  H.settle()
  lu.assertEquals(tend.ask(sup, "x", 1), "x")
  local paths = {}
  for _, r in ipairs(tend.ps()) do paths[#paths + 1] = r.path end
  lu.assertStrContains(table.concat(paths, " "), "/user/echoSupervisor/myEcho")
  local same = tend.backoff { mode = "on_failure", factory = crasher({}), min_backoff = 3,
    max_backoff = 30 }
  lu.assertStrContains(tend.describe(same), "delays 3, 6, 12, 24, 30 s")
  H.stop_all(sup)
end

function TestBackoff:test_typed_restart_with_limit()
  local starts = {}
  local a = tend.spawn(tend.supervise(crasher(starts))
    :on_failure("IllegalStateError", tend.restart_with_limit(2, 10))
    :on_failure("*", tend.stop_on_failure))
  local p = tk.probe()
  p:watch(a)
  a:send("crash") -- kind Error: the "*" clause stops it
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason.kind, "Error")
  local b = tend.spawn(tend.supervise(function(ctx)
    starts[#starts + 1] = tend.now()
    return function(msg) tend.raise("IllegalStateError", "bad") end
  end):on_failure("IllegalStateError", tend.restart_with_limit(2, 10)))
  p:watch(b)
  H.settle()
  local n0 = #starts
  b:send(1) H.settle()
  b:send(2) H.settle()
  lu.assertTrue(tend.alive(b))
  lu.assertEquals(#starts - n0, 2)
  b:send(3)
  lu.assertEquals(p:expect_terminated(b, 1).reason.kind, "IllegalStateError")
  H.stop_all(p.ref)
end

function TestBackoff:test_typed_resume_keeps_state()
  local a = tend.spawn(tend.supervise(function()
    local n = 0
    return function(msg, ctx)
      if msg == "get" then ctx:reply(n) return end
      n = n + 1
      if msg == "bad" then tend.raise("Recoverable", "x") end
    end
  end):on_failure("Recoverable", tend.resume))
  a:send("ok")
  a:send("bad")
  lu.assertEquals(tend.ask(a, "get", 1), 2)
  H.stop_all(a)
end

function TestBackoff:test_typed_restart_with_backoff_and_stash()
  local starts, got = {}, {}
  local a = tend.spawn(tend.supervise(function(ctx)
    starts[#starts + 1] = tend.now()
    return function(msg) if msg == "crash" then error("boom") end got[#got + 1] = msg end
  end):on_failure("*", tend.restart_with_backoff(1, 10, 0):with_stash(2):with_max_restarts(3)))
  a:send("crash")
  H.settle()
  for i = 1, 3 do a:send(i) end -- waiting 1 s; stash 2: the oldest goes
  tend.sleep(1.5)
  lu.assertEquals(got, { 2, 3 })
  a:send("crash") tend.sleep(2.5) -- ran 0.5 s (< reset_after = 1): delay 2
  a:send("crash") tend.sleep(4.5) -- ran 0.5 s: delay 4; starts at 8
  lu.assertEquals(gaps(starts), { 1.0, 2.5, 4.5 })
  local p = tk.probe()
  p:watch(a)
  a:send("crash") -- max_restarts 3 reached: stopped
  lu.assertEquals(p:expect_terminated(a, 1).reason.kind, "Error")
  H.stop_all(p.ref)
end

function TestBackoff:test_typed_backoff_resets_after_a_stable_run()
  local starts = {}
  local a = tend.spawn(tend.supervise(crasher(starts))
    :on_failure("*", tend.restart_with_backoff(1, 10, 0):with_reset_after(5)))
  a:send("crash") tend.sleep(2)    -- delay 1
  a:send("crash") tend.sleep(10)   -- delay 2, then 8 s of running: reset
  a:send("crash") tend.sleep(2)    -- delay 1 again
  lu.assertEquals(gaps(starts), { 1.0, 3.0, 9.0 })
  H.stop_all(a)
end

function TestBackoff:test_retry_succeeds_after_failures()
  local calls = 0
  local t0 = tend.now()
  local v = tend.retry(function()
    calls = calls + 1
    if calls < 3 then error("busy") end
    return "value", 2
  end, { min_backoff = 0.5, max_backoff = 10, random_factor = 0, max_restarts = 5 })
  lu.assertEquals(v, "value")
  lu.assertEquals(calls, 3)
  lu.assertEquals(tend.now() - t0, 1.5)
end

function TestBackoff:test_retry_raises_RetriesExhausted()
  local calls = 0
  local ok, err = pcall(tend.retry, function()
    calls = calls + 1
    tend.raise("DatabaseBusy", "try later")
  end, { min_backoff = 0.1, max_backoff = 1, max_restarts = 3 })
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "RetriesExhausted")
  lu.assertEquals(err.attempts, 4)
  lu.assertEquals(err.last.kind, "DatabaseBusy")
  lu.assertEquals(calls, 4)
end

function TestBackoff:test_only_the_caller_waits_during_retry()
  local pinged = {}
  local pinger = tend.spawn(function() return function(m) pinged[#pinged + 1] = tend.now() end end)
  local t0 = tend.now()
  tend.after(0.5, function() pinger:send(1) end)
  pcall(tend.retry, function() error("no") end, { min_backoff = 1, max_backoff = 1, max_restarts = 1 })
  lu.assertEquals(pinged[1] - t0, 0.5)
  H.stop_all(pinger)
end

function TestBackoff:test_bad_backoff_options()
  local f = crasher({})
  local function err(fn, ...)
    local before = tend.stats().spawned
    local ok, e = pcall(fn, ...)
    lu.assertFalse(ok)
    lu.assertEquals(tend.stats().spawned, before)
    return e
  end
  lu.assertStrContains(err(tend.backoff.on_failure, f, { min_backoff = -1, max_backoff = 1 }),
    "option 'min_backoff': expected a number of seconds >= 0, got -1")
  lu.assertStrContains(err(tend.backoff.on_failure, f, { min_backoff = "1", max_backoff = 1 }),
    "option 'min_backoff'")
  lu.assertStrContains(err(tend.backoff.on_failure, f, { min_backoff = 3, max_backoff = 1 }),
    "option 'max_backoff': expected a number >= min_backoff (3), got 1")
  lu.assertStrContains(err(tend.backoff.on_failure, f, { min_backoff = 1, max_backoff = 2,
    random_factor = 1.5 }), "option 'random_factor': expected a number in [0, 1], got 1.5")
  lu.assertStrContains(err(tend.backoff.on_failure, f, { min_backoff = 1, max_backoff = 2,
    jitter = "wild" }), "option 'jitter'")
  lu.assertStrContains(err(tend.backoff.on_failure, f, { min_backoff = 1, max_backoff = 2,
    algorithm = "fibonacci" }), "option 'algorithm'")
  lu.assertStrContains(err(tend.backoff.on_failure, f, { min_bakoff = 1, max_backoff = 2 }),
    "unknown option 'min_bakoff'")
  local spec = tend.backoff.on_failure(f, { min_backoff = 1, max_backoff = 2 })
  lu.assertStrContains(err(spec.with_final_stop_message, spec, function() end),
    "option 'final_stop_message' is for on_stop only")
  local stop_spec = tend.backoff.on_stop(f, { min_backoff = 1, max_backoff = 2 })
  lu.assertStrContains(err(stop_spec.with_final_stop_message, stop_spec, "quit"),
    "option 'final_stop_message': expected a function(msg) -> boolean")
  lu.assertStrContains(err(tend.spawn, tend.backoff { mode = "on_failure", factory = f,
    min_backoff = 1, max_backoff = 2 }, { supervisor = tend.stopping }), "option 'supervisor'")
  local ok, e = pcall(function()
    tend.backoff.on_failure(f, { min_backoff = -1, max_backoff = 2 }) -- this line
  end)
  lu.assertStrMatches(e, ".*backoff_spec%.lua:%d+: tend%.backoff%.on_failure: option 'min_backoff'.*")
  lu.assertStrContains(err(tend.restart_with_backoff, 2, 1, 0), "max_backoff")
  lu.assertStrContains(err(tend.retry, function() end, { min_backoff = 1, max_backoff = 1, tries = 3 }),
    "tend.retry: unknown option 'tries'")
end

-- BackoffOnRestartSupervisorSpec "respect withinTimeRange property of
-- OneForOneStrategy", as Akka runs it: min 0.3 s, max 10 s, random 0,
-- max_retries -1, a strategy of 3 within 1 s. The strategy's count is the
-- backoff's; it starts over only by a reset that still matches it: the
-- window's (1 s after the first restart, if that restart is still the only
-- one) or the auto reset (a started child that ran min_backoff). Three
-- throws (starts at 0.3, 0.9, 2.1; the last child runs 0.3 s: reset at
-- 2.4); wait 1 s; three more restart (3.4, 4.0, 5.2; the window's reset at
-- 4.1 finds 3 restarts, not 1, and the child started at 5.2 has not run
-- 0.3 s); the seventh stops the supervisor.
function TestBackoff:test_akka_respect_withinTimeRange_property_of_OneForOneStrategy()
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(function()
    p.ref:send("STARTED")
    return function(msg) if msg == "THROW" then tend.raise("NormalException", "normal exception") end end
  end, { name = "someChildName", min_backoff = 0.3, max_backoff = 10, random_factor = 0 })
    :with_max_retries(-1)
    :with_supervisor_strategy(tend.one_for_one { max_retries = 3, within = 1 }))
  local t0 = tend.now()
  p:expect_msg("STARTED", 1)
  p:watch(sup)
  local starts = {}
  local function throw()
    sup:send("THROW")
    p:expect_msg("STARTED", 5)
    starts[#starts + 1] = math.floor((tend.now() - t0) * 1e6 + 0.5) / 1e6
  end
  for _ = 1, 3 do throw() end
  tend.sleep(1) -- the length of the window
  for _ = 1, 3 do throw() end
  lu.assertEquals(starts, { 0.3, 0.9, 2.1, 3.4, 4.0, 5.2 })
  sup:send("THROW")
  lu.assertEquals(p:expect_terminated(sup, 1).reason, "normal")
  lu.assertEquals(math.floor((tend.now() - t0) * 1e6 + 0.5) / 1e6, 5.2)
  H.stop_all(p.ref)
end

-- The window's reset: one restart, then `within` without another, and
-- the count starts over (with reset_after long, only the window resets).
function TestBackoff:test_the_strategys_window_resets_a_lone_restart()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts), { min_backoff = 0.1, max_backoff = 0.1,
    random_factor = 0, reset_after = 1000 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 1, within = 1 }))
  local p = tk.probe()
  p:watch(sup)
  for _ = 1, 4 do sup:send("crash") tend.sleep(1.5) end -- each alone in its window
  lu.assertEquals(#starts, 5)
  lu.assertEquals(tend.backoff.restart_count(sup), 0)
  sup:send("crash")
  tend.sleep(0.5)
  sup:send("crash") -- a second restart within 1 s: over the limit of 1
  lu.assertEquals(p:expect_terminated(sup, 1).reason, "normal")
  lu.assertEquals(#starts, 6)
  H.stop_all(p.ref)
end

-- The trap of the default reset_after (min_backoff): a child that runs
-- 10 s before each failure finds its backoff reset each time, so every
-- restart waits the first delay (1 s). One warn line says so, once, at the
-- third such failure in a row (the 4th failure: the first had no restart
-- to undo); a child failing fast (the delays grow) never gets it. The
-- same for a typed restart_with_backoff.
function TestBackoff:test_a_reset_after_shorter_than_the_run_warns_once()
  local path = H.script([[
local tend = require "tend"
local function worker(ctx)
  print("start at " .. tend.now())
  return function(m) if m == "crash" then error("boom") end end
end
local web = tend.spawn(tend.backoff.on_failure(worker, { name = "c", min_backoff = 1, max_backoff = 30,
  random_factor = 0 }), { name = "web" })
for _ = 1, 6 do tend.sleep(10) web:send("crash") end
tend.sleep(1)
local fast = tend.spawn(tend.backoff.on_failure(worker, { name = "c", min_backoff = 1, max_backoff = 30,
  random_factor = 0 }), { name = "fast" })
for _ = 1, 6 do fast:send("crash") tend.sleep(0.5) end
tend.stop(fast)
local ty = tend.spawn(tend.supervise(worker):on_failure("*", tend.restart_with_backoff(1, 30, 0)),
  { name = "typed" })
for _ = 1, 5 do tend.sleep(10) ty:send("crash") end
tend.shutdown(0)
]])
  local out, err, code = H.run({ "--virtual-time", "--log-level", "warn", path })
  lu.assertEquals(code, 0, err)
  local starts = {}
  for t in out:gmatch("start at ([%d.]+)") do starts[#starts + 1] = tonumber(t) end
  -- web: each restart 1 s after its failure, never more
  lu.assertEquals({ table.unpack(starts, 1, 7) }, { 0, 11, 21, 31, 41, 51, 61 })
  local warns = {}
  for line in err:gmatch("[^\n]+") do
    if line:find("in a row", 1, true) then warns[#warns + 1] = line end
  end
  lu.assertEquals(warns, {
    "[40.000] warn  /user/web: 3 failures in a row, each after more than reset_after (1 s) of running: "
      .. "the backoff was reset each time, so every restart waits the first delay and the delay never grows; "
      .. "set reset_after (:with_auto_reset(s)) above the usual run time",
    "[104.000] warn  /user/typed: 3 failures in a row, each after more than reset_after (1 s) of running: "
      .. "the backoff was reset each time, so every restart waits the first delay and the delay never grows; "
      .. "set reset_after (:with_reset_after(s)) above the usual run time",
  })
  os.remove(path)
end

-- tend.describe says the same of a typed restart_with_backoff, whose
-- reset_after also defaults to min_backoff; and of the other actions.
function TestBackoff:test_describe_of_typed_actions()
  lu.assertEquals(tend.describe(tend.restart_with_backoff(0.2, 10, 0.1):with_max_restarts(20)),
    "restart with backoff; delays 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 10 s +0-10 %; at most 20 restarts, then stop; "
    .. "reset after 0.2 s of running (a child that usually runs longer before it fails restarts after the "
    .. "first delay every time: the delay never grows)")
  lu.assertStrContains(tend.describe(tend.restart_with_backoff(1, 8):with_reset_after(30)),
    "delays 1, 2, 4, 8 s; reset after 30 s of running")
  lu.assertEquals(tend.describe(tend.restart_with_limit(3, 1.5)), "restart at most 3 times within 1.5 s, then stop")
  lu.assertEquals(tend.describe(tend.resume), "resume")
  lu.assertErrorMsgContains("tend.describe: expected a strategy, a backoff spec or a typed action "
    .. "(tend.restart_with_backoff, ...), got an integer", tend.describe, 3)
end
