-- Timers and the clock: after, every, cancel, tend.after, sleep, virtual
-- time.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestTimers = {}

function TestTimers:tearDown() H.assert_clean() end

-- An actor that records (time, msg) for every message, relative to t0.
local function timed_recorder(log, t0, setup)
  return tend.spawn(function(ctx)
    if setup then setup(ctx) end
    return function(msg, ctx) log[#log + 1] = { tend.now() - t0, msg } end
  end)
end

function TestTimers:test_ctx_after_delivers_once_at_its_time()
  local log, t0 = {}, tend.now()
  local r = timed_recorder(log, t0, function(ctx)
    ctx:after(1.5, "b")
    ctx:after(0.5, "a")
  end)
  tend.sleep(5)
  lu.assertEquals(log, { { 0.5, "a" }, { 1.5, "b" } })
  H.stop_all(r)
end

function TestTimers:test_ctx_every_repeats_and_cancel_stops_it()
  local log, t0 = {}, tend.now()
  local timer
  local r = timed_recorder(log, t0, function(ctx) timer = ctx:every(1, "tick") end)
  tend.sleep(3.5)
  lu.assertEquals(log, { { 1.0, "tick" }, { 2.0, "tick" }, { 3.0, "tick" } })
  lu.assertTrue(timer:active())
  lu.assertTrue(timer:cancel())
  lu.assertFalse(timer:cancel())
  lu.assertFalse(timer:active())
  tend.sleep(5)
  lu.assertEquals(#log, 3)
  H.stop_all(r)
end

function TestTimers:test_cancelled_after_never_fires()
  local log, t0 = {}, tend.now()
  local r = timed_recorder(log, t0, function(ctx)
    local t = ctx:after(1, "never")
    ctx:after(2, "yes")
    t:cancel()
  end)
  tend.sleep(3)
  lu.assertEquals(log, { { 2.0, "yes" } })
  H.stop_all(r)
end

function TestTimers:test_timers_die_with_their_actor()
  local r = timed_recorder({}, tend.now(), function(ctx) ctx:every(1, "tick") end)
  H.settle()
  lu.assertEquals(tend.stats().timers, 1)
  H.stop_all(r)
  lu.assertEquals(tend.stats().timers, 0)
end

function TestTimers:test_tend_after_runs_a_function_later()
  local at
  local t0 = tend.now()
  local t = tend.after(4, function() at = tend.now() - t0 end)
  lu.assertStrContains(tostring(t), "Timer(due at")
  tend.sleep(10)
  lu.assertEquals(at, 4)
end

function TestTimers:test_tend_after_function_can_sleep_and_ask()
  local e = tend.spawn(function() return function(m, ctx) ctx:reply(m * 2) end end)
  local result
  tend.after(1, function()
    tend.sleep(1)
    result = tend.ask(e, 21, 1)
  end)
  tend.sleep(3)
  lu.assertEquals(result, 42)
  H.stop_all(e)
end

function TestTimers:test_sleep_in_one_actor_while_others_run()
  local log, t0 = {}, tend.now()
  local sleeper = tend.spawn(function()
    return function(msg, ctx)
      log[#log + 1] = { tend.now() - t0, "sleeper starts" }
      ctx:sleep(10)
      log[#log + 1] = { tend.now() - t0, "sleeper wakes" }
    end
  end)
  local worker = tend.spawn(function()
    return function(msg, ctx) log[#log + 1] = { tend.now() - t0, "worker " .. msg } end
  end)
  sleeper:send("go")
  H.settle()
  worker:send(1)
  tend.sleep(3)
  worker:send(2)
  tend.sleep(10)
  lu.assertEquals(log, {
    { 0.0, "sleeper starts" }, { 0.0, "worker 1" }, { 3.0, "worker 2" },
    { 10.0, "sleeper wakes" },
  })
  H.stop_all(sleeper, worker)
end

function TestTimers:test_messages_wait_while_an_actor_sleeps()
  local log = {}
  local a = tend.spawn(function()
    return function(msg, ctx)
      if msg == "nap" then ctx:sleep(5) end
      log[#log + 1] = msg
    end
  end)
  a:send("nap")
  a:send("x")
  tend.sleep(1)
  lu.assertEquals(log, {})
  tend.sleep(5)
  lu.assertEquals(log, { "nap", "x" })
  H.stop_all(a)
end

function TestTimers:test_virtual_sleep_of_an_hour_is_exact_and_cheap()
  lu.assertTrue(tend.virtual_time())
  local t0, c0 = tend.now(), os.clock()
  tend.sleep(3600)
  lu.assertEquals(tend.now() - t0, 3600)
  lu.assertTrue(os.clock() - c0 < 0.05)
end

function TestTimers:test_equal_due_times_fire_in_arming_order()
  local log = {}
  local r = timed_recorder(log, tend.now(), function(ctx)
    for i = 1, 5 do ctx:after(1, i) end
  end)
  tend.sleep(2)
  lu.assertEquals(#log, 5)
  for i = 1, 5 do lu.assertEquals(log[i][2], i) end
  H.stop_all(r)
end

function TestTimers:test_bad_delays()
  lu.assertErrorMsgContains("sleep: seconds: expected a number of seconds >= 0, got -1",
    tend.sleep, -1)
  lu.assertErrorMsgContains("tend.after: seconds: expected a number of seconds, got a string",
    tend.after, "soon", function() end)
  lu.assertErrorMsgContains("tend.after: fn: expected a function, got nil", tend.after, 1)
  local errs = {}
  local a = tend.spawn(function()
    return function(msg, ctx)
      errs[1] = select(2, pcall(ctx.every, ctx, 0, "x"))
      errs[2] = select(2, pcall(ctx.after, ctx, "1", "x"))
    end
  end)
  a:send("go")
  H.settle()
  lu.assertStrContains(errs[1], "ctx:every: seconds: expected a number of seconds > 0, got 0")
  lu.assertStrContains(errs[2], "ctx:after: seconds: expected a number of seconds, got a string")
  lu.assertEquals(tend.stats().timers, 0)
  H.stop_all(a)
end

-- Under the virtual clock a positive wait always moves the clock, by at
-- least its one nanosecond: a loop that waits for what is left until a
-- float deadline (an ulp off the clock's whole nanoseconds) ends. From
-- 1.000000003 s, now + 1 is 4.4e-16 s past where 100 waits of 0.01 s land
-- (examples/scenarios/partition.lua spun so). In a child of its own: the
-- clock starts at 0, where floats hold every nanosecond.
function TestTimers:test_a_positive_wait_shorter_than_a_nanosecond_moves_the_clock()
  local script = H.script([[
    local tend = require "tend"
    local function ns() return math.floor(tend.now() * 1e9 + 0.5) end
    tend.sleep(1e-12)
    print(ns())
    tend.sleep(1.000000003 - tend.now())
    local deadline, waits = tend.now() + 1, 0
    while deadline - tend.now() > 0 and waits < 1000 do -- bounded: it spun here
      tend.sleep(math.min(deadline - tend.now(), 0.01))
      waits = waits + 1
    end
    print(waits, ns())
    print(select("#", tend.receive(1e-10)), ns()) -- a receive's timeout too]])
  local out, code = H.run_bounded(20, { "--virtual-time", script })
  os.remove(script)
  lu.assertEquals({ out, code }, { "1\n101\t2000000004\n0\t2000000005\n", 0 })
end

local function idle() return function() end end

function TestTimers:test_a_restart_cancels_the_actors_timers()
  local got = {}
  local a = tend.spawn(function(ctx)
    return function(msg, ctx)
      if msg == "arm" then
        ctx:after(1, "late")
        ctx:every(0.5, "tick")
      elseif msg == "fail" then
        error("fail")
      else
        got[#got + 1] = msg
      end
    end
  end)
  a:send("arm")
  a:send("fail")
  tend.sleep(3)
  lu.assertEquals(got, {})
  lu.assertEquals(tend.stats().timers, 0)
  H.stop_all(a)
end

-- Under the real clock a ctx:every that falls behind skips the ticks it
-- missed instead of firing them in a burst.
function TestTimers:test_every_skips_missed_ticks_under_the_real_clock()
  local path = H.script([[
local tend = require "tend"
local ticks = 0
tend.spawn(function(ctx)
  ctx:every(0.05, "tick")
  return function() ticks = ticks + 1 end
end)
tend.sleep(0.12)
local before = ticks
os.execute("sleep 0.6") -- the host stands still: 12 ticks missed
tend.sleep(0.01)
print(ticks - before)
tend.shutdown(0)
]])
  local out, _, code = H.run({ path })
  lu.assertEquals(code, 0)
  local n = tonumber(out)
  lu.assertTrue(n >= 1 and n <= 3, "ticks after falling behind: " .. out)
  os.remove(path)
end

-- One actor with 10^5 pending timers: each fire walked the owner's list
-- of timers (minutes); now each leaves it at once. All fire, in order.
function TestTimers:test_an_actor_with_many_timers()
  local got, n = {}, 100000
  local a = tend.spawn(function(ctx)
    for i = 1, n do ctx:after(i % 7 / 1000, i) end
    return function(msg) got[#got + 1] = msg end
  end)
  tend.sleep(0.01)
  lu.assertEquals(#got, n)
  lu.assertEquals(got[1], 7) -- due at 0: 7, 14, ... in the order armed
  lu.assertEquals(got[n], 99994) -- the last armed of those due last
  H.stop_all(a)
end

-- Durations past what the clock holds (about 2.3e9 s) were clamped
-- silently (sleep(9.3e9) came back 7e9 s early): beyond 1e9 s is refused.
function TestTimers:test_durations_beyond_1e9_seconds_are_refused()
  local function err(f, ...)
    local ok, e = pcall(f, ...)
    lu.assertFalse(ok)
    return tostring(e)
  end
  lu.assertStrContains(err(tend.sleep, 9.3e9), "sleep: seconds: expected a number of seconds <= 1e9 (or math.huge)")
  lu.assertStrContains(err(tend.after, 2e9, function() end), "tend.after: seconds: expected")
  lu.assertStrContains(err(tend.one_for_one, { within = 5e9 }), "option 'within': expected a number of seconds <= 1e9")
  lu.assertStrContains(err(tend.backoff.on_failure, idle, { min_backoff = 1, max_backoff = 3e9 }),
    "option 'max_backoff': expected a number of seconds <= 1e9")
  lu.assertStrContains(err(tend.spawn, idle, { shutdown = 4e9 }), "option 'shutdown': expected a number of seconds <= 1e9")
  local t0 = tend.now()
  tend.sleep(1e9) -- the longest allowed, exact under the virtual clock
  lu.assertEquals(tend.now() - t0, 1e9)
end
