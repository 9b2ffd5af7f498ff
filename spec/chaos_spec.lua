-- tend.chaos: crash, kill, flaky, crash_on, delay, drop, freeze, heal; the
-- testkit's receive_while, fish_for and within.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit
local chaos = tend.chaos

TestChaos = {}

function TestChaos:tearDown()
  chaos.heal()
  H.assert_clean()
end

local function recorder(log)
  return tend.spawn(function()
    local n = 0
    return function(msg, ctx)
      n = n + 1
      log[#log + 1] = msg
    end
  end)
end

function TestChaos:test_crash_fails_as_if_the_behavior_raised()
  local seen
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function() end end, { name = "victim" })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function(err) seen = err.kind return "resume" end } })
  local v = tend.ask(sup, "?", 1)
  chaos.crash(v, "DiskFull")
  H.settle()
  lu.assertEquals(seen, "DiskFull")
  chaos.crash(v, tend.error("Custom", "made up"))
  H.settle()
  lu.assertEquals(seen, "Custom")
  H.stop_all(sup)
end

function TestChaos:test_kill()
  local p = tk.probe()
  local a = tend.spawn(function() return function() end end)
  p:watch(a)
  chaos.kill(a)
  lu.assertEquals(p:expect_terminated(a, 1).reason.kind, "Killed")
  H.stop_all(p.ref)
end

function TestChaos:test_flaky_is_seeded()
  local function run()
    local f = chaos.flaky(function() return true end, { p = 0.3, error = "Glitch" })
    local pattern = {}
    for i = 1, 40 do pattern[i] = pcall(f) and "." or "x" end
    return table.concat(pattern)
  end
  math.randomseed(77)
  local a = run()
  math.randomseed(77)
  local b = run()
  lu.assertEquals(a, b)
  lu.assertStrContains(a, "x")
  lu.assertStrContains(a, ".")
  local ok, err = pcall(chaos.flaky(function() end, { p = 1, error = "Glitch" }))
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Glitch")
end

function TestChaos:test_crash_on_every_nth_matching_message()
  local got = {}
  local a = recorder(got)
  local f0 = tend.stats().failures
  chaos.crash_on(a, function(m) return type(m) == "number" end, { nth = 2 })
  for i = 1, 6 do a:send(i) end
  a:send("text")
  H.settle()
  lu.assertEquals(tend.stats().failures - f0, 3)
  lu.assertEquals(got, { 1, 3, 5, "text" })
  H.stop_all(a)
end

function TestChaos:test_crash_on_by_path_and_probability()
  local got = {}
  local a = tend.spawn(function() return function(m) got[#got + 1] = m end end, { name = "target" })
  chaos.crash_on("/user/target", function() return true end, { p = 1 })
  a:send(1)
  H.settle()
  lu.assertEquals(got, {})
  H.stop_all(a)
end

function TestChaos:test_delay_between_two_actors()
  local got = {}
  local to = tend.spawn(function() return function(m, ctx) got[#got + 1] = { m, tend.now(), ctx.sender } end end)
  local from = tend.spawn(function() return function(m) to:send(m) end end)
  chaos.delay(from, to, 3)
  local t0 = tend.now()
  from:send("late")
  to:send("direct") -- from main: not delayed
  tend.sleep(5)
  lu.assertEquals(#got, 2)
  lu.assertEquals(got[1][1], "direct")
  lu.assertEquals(got[2][1], "late")
  lu.assertAlmostEquals(got[2][2] - t0, 3, 1e-9)
  lu.assertTrue(got[2][3] == from)
  H.stop_all(from, to)
end

function TestChaos:test_drop()
  local got = {}
  local to = recorder(got)
  chaos.drop("*", to, 1)
  local d0 = tend.stats().dead_letters
  to:send(1)
  to:send(2)
  H.settle()
  lu.assertEquals(got, {})
  lu.assertEquals(tend.stats().dead_letters - d0, 2)
  chaos.heal()
  to:send(3)
  H.settle()
  lu.assertEquals(got, { 3 })
  H.stop_all(to)
end

function TestChaos:test_freeze_fills_the_mailbox_then_thaws()
  local got = {}
  local a = recorder(got)
  chaos.freeze(a, 10)
  for i = 1, 5 do a:send(i) end
  tend.sleep(9)
  lu.assertEquals(got, {})
  local row
  for _, r in ipairs(tend.ps()) do if r.ref == a then row = r end end
  lu.assertEquals(row.mailbox, 5)
  lu.assertEquals(row.state, "suspended")
  tend.sleep(2)
  lu.assertEquals(got, { 1, 2, 3, 4, 5 })
  H.stop_all(a)
end

function TestChaos:test_heal_thaws_at_once()
  local got = {}
  local a = recorder(got)
  chaos.freeze(a, 100)
  a:send(1)
  H.settle()
  lu.assertEquals(got, {})
  chaos.heal()
  H.settle()
  lu.assertEquals(got, { 1 })
  tend.sleep(101) -- the pending thaw does no harm
  H.stop_all(a)
end

function TestChaos:test_each_injection_is_a_trace_event()
  local seen = {}
  tend.trace(function(e) if e.ev == "chaos" then seen[#seen + 1] = e.detail end end)
  local a = recorder({})
  chaos.freeze(a, 1)
  tend.sleep(2)
  chaos.drop("*", a, 1)
  a:send(1)
  H.settle()
  chaos.heal()
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(seen, { "freeze 1.000 s", "thaw", "drop", "heal" })
  H.stop_all(a)
end

function TestChaos:test_bad_arguments()
  lu.assertErrorMsgContains("tend.chaos.drop: p: expected a number in [0, 1], got 2", chaos.drop, "*", "*", 2)
  lu.assertErrorMsgContains("tend.chaos.freeze: seconds: expected a number > 0", chaos.freeze, tend.self(), 0)
  -- durations are bounded as every other one: 1e9 s at most
  lu.assertErrorMsgContains("tend.chaos.delay: seconds: expected a number of seconds <= 1e9, got 1e+300",
    chaos.delay, "*", "*", 1e300)
  lu.assertErrorMsgContains("tend.chaos.delay: seconds: expected a number of seconds <= 1e9, got inf",
    chaos.delay, "*", "*", math.huge)
  lu.assertErrorMsgContains("tend.chaos.delay: seconds: expected a number >= 0, got ",
    chaos.delay, "*", "*", 0 / 0)
  local echo = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
  lu.assertErrorMsgContains(
    "tend.chaos.freeze: seconds: expected a number of seconds <= 1e9 (or math.huge), got 1e+300",
    chaos.freeze, echo, 1e300)
  lu.assertEquals(tend.ask(echo, "still here", 1), "still here") -- refused before it froze
  H.stop_all(echo)
  lu.assertErrorMsgContains("option 'nth'", chaos.crash_on, "*", function() end, { nth = 0 })
  lu.assertErrorMsgContains("tend.chaos.flaky: fn: expected a function", chaos.flaky, 3)
end

TestTestkit = {}

function TestTestkit:tearDown() H.assert_clean() end

function TestTestkit:test_receive_while_and_fish_for()
  local p = tk.probe()
  for _, m in ipairs { 1, 2, 3, "stop", 4, "noise", "fish" } do p.ref:send(m) end
  local nums = p:receive_while(function(m) return type(m) == "number" end, 1)
  lu.assertEquals(nums, { 1, 2, 3 })
  lu.assertEquals(p:expect_msg("stop", 1), "stop")
  lu.assertEquals(p:fish_for(function(m) return m == "fish" end, 1), "fish")
  local ok, err = pcall(p.fish_for, p, function() return false end, 2)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "fish_for: no matching message within 2 s")
  H.stop_all(p.ref)
end

function TestTestkit:test_within_asserts_the_virtual_time_taken()
  lu.assertEquals(tk.within(2, 3, function() tend.sleep(2.5) return "done" end), "done")
  local ok, err = pcall(tk.within, 0, 1, function() tend.sleep(2) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "within: took 2.000000 s, expected between 0 and 1 s")
end

-- Errors named tend's internals ('chaos_event', local 'opts').
function TestChaos:test_chaos_bad_arguments_are_named_for_the_caller()
  local function err(f, ...) return tostring(select(2, pcall(f, ...))) end
  lu.assertStrContains(err(tend.chaos.flaky, function() end, 5),
    "tend.chaos.flaky: options: expected a table {p = ..., error = ...}, got number")
  lu.assertStrContains(err(tend.chaos.crash, 5), "tend.chaos.crash: ref: expected an actor ref, got number")
  lu.assertStrContains(err(tend.chaos.kill, {}), "tend.chaos.kill: ref: expected an actor ref, got table")
  lu.assertStrContains(err(tend.chaos.freeze, "/user/x", 1), "tend.chaos.freeze: ref: expected an actor ref")
  lu.assertStrContains(err(tend.chaos.crash_on, "*", function() end, 3), "tend.chaos.crash_on: options: expected a table")
end
