-- tend.testkit probes, under the virtual clock here and under the real
-- clock in a subprocess.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestProbe = {}

function TestProbe:tearDown() H.assert_clean() end

local function echo() return function(msg, ctx) ctx:reply(msg) end end

function TestProbe:test_expect_msg_by_value_and_predicate()
  local p = tk.probe()
  local e = tend.spawn(echo)
  p:send_to(e, { a = 1, b = { 2 } })
  lu.assertEquals(p:expect_msg({ a = 1, b = { 2 } }, 1), { a = 1, b = { 2 } })
  p:send_to(e, 41)
  lu.assertEquals(p:expect_msg(function(m) return m > 40 end, 1), 41)
  lu.assertTrue(p.last_sender == e)
  H.stop_all(e, p.ref)
end

function TestProbe:test_expect_msg_failures_name_what_was_expected()
  local p = tk.probe()
  p.ref:send("other")
  local ok, err = pcall(p.expect_msg, p, "this", 1)
  lu.assertFalse(ok)
  lu.assertStrContains(err, 'expect_msg: got "other", expected "this"')
  local t0 = tend.now()
  ok, err = pcall(p.expect_msg, p, "this", 2.5)
  lu.assertFalse(ok)
  lu.assertStrContains(err, 'expect_msg: no message within 2.5 s (expected "this")')
  lu.assertEquals(tend.now() - t0, 2.5)
  H.stop_all(p.ref)
end

function TestProbe:test_expect_msg_waits_exactly_until_the_message()
  local p = tk.probe()
  local t0 = tend.now()
  tend.after(7, function() p.ref:send("late") end)
  p:expect_msg("late", 10)
  lu.assertEquals(tend.now() - t0, 7)
  H.stop_all(p.ref)
end

function TestProbe:test_expect_no_msg_takes_its_time()
  local p = tk.probe()
  local t0 = tend.now()
  p:expect_no_msg(30)
  lu.assertEquals(tend.now() - t0, 30)
  p.ref:send("x")
  local ok, err = pcall(p.expect_no_msg, p, 1)
  lu.assertFalse(ok)
  lu.assertStrContains(err, 'expect_no_msg: got "x" within 1 s')
  H.stop_all(p.ref)
end

function TestProbe:test_expect_terminated_and_messages_stay_in_order()
  local p = tk.probe()
  local a = tend.spawn(function() return function(m, ctx) return tend.stopped end end)
  p:watch(a)
  p.ref:send(1)
  a:send("bye")
  H.settle()
  p.ref:send(2)
  lu.assertEquals(p:expect_msg(1, 1), 1)
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason, "normal")
  lu.assertEquals(p:expect_msg(2, 1), 2)
  H.stop_all(p.ref)
end

function TestProbe:test_a_timed_out_wait_loses_no_message()
  local p = tk.probe()
  lu.assertNil(p:receive(1))
  p.ref:send("kept")
  lu.assertEquals(p:expect_msg("kept", 1), "kept")
  H.stop_all(p.ref)
end

function TestProbe:test_probes_under_the_real_clock()
  local path = H.script([[
local tend = require "tend"
local p = tend.testkit.probe()
local e = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
p:send_to(e, "real")
print(p:expect_msg("real", 1))
local t0 = tend.now()
p:expect_no_msg(0.05)
print(tend.now() - t0 >= 0.05)
p:watch(e)
tend.stop(e)
print(p:expect_terminated(e, 1).reason)
p:stop()
]])
  local out, err, code = H.run({ path })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "real\ntrue\nnormal\n")
  os.remove(path)
end

-- tend.testkit.within(min, max, fn): fn's results when the virtual time it
-- took is in [min, max]; otherwise an error saying how long it took.
function TestProbe:test_within_checks_the_virtual_time_fn_took()
  local within = require("tend.testkit").within
  local a, b = within(0.5, 1, function() tend.sleep(0.75) return "done", 2 end)
  lu.assertEquals({ a, b }, { "done", 2 })
  local ok, err = pcall(within, 0, 0.2, function() tend.sleep(0.3) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "within: took 0.300000 s, expected between 0 and 0.2 s")
  ok, err = pcall(within, 1, 2, function() end)
  lu.assertStrContains(err, "within: took 0.000000 s, expected between 1 and 2 s")
  lu.assertEquals(tend.testkit.within, within)
end
