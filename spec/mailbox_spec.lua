-- The mailbox of the main chunk (and of every task): tend.receive reads
-- what is sent to /user/main, waits under either clock, and what the chunk
-- never read becomes dead letters, counted and logged (design §8.3; the
-- REPL's side is in spec/c/test_repl.c).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestMailbox = {}

local function drain()
  while select("#", tend.receive(0)) > 0 do end
end

function TestMailbox:setUp() drain() end
function TestMailbox:tearDown() drain() H.assert_clean() end

-- An actor that answers every message to its sender.
local function answerer()
  return tend.spawn(function()
    return function(m, ctx) ctx.sender:send("re: " .. tostring(m)) end
  end)
end

function TestMailbox:test_receive_returns_the_message_and_its_sender()
  local r = answerer()
  r:send("x")
  local m, from = tend.receive(1)
  lu.assertEquals(m, "re: x")
  lu.assertTrue(from == r)
  H.stop_all(r)
end

function TestMailbox:test_messages_come_in_the_order_they_were_sent()
  local me = tend.self()
  for i = 1, 5 do me:send(i) end
  local got = {}
  for _ = 1, 5 do got[#got + 1] = tend.receive(0) end
  lu.assertEquals(got, { 1, 2, 3, 4, 5 })
  lu.assertEquals(select("#", tend.receive(0)), 0)
end

function TestMailbox:test_receive_waits_in_virtual_seconds_while_others_run()
  local me, ticks = tend.self(), 0
  local r = tend.spawn(function(ctx)
    ctx:every(0.5, "tick")
    ctx:after(2, "send")
    return function(m)
      if m == "tick" then ticks = ticks + 1 else me:send("at 2") end
    end
  end)
  local t0 = tend.now()
  lu.assertEquals(tend.receive(10), "at 2")
  lu.assertEquals(tend.now() - t0, 2)
  lu.assertEquals(ticks, 4) -- the scheduler ran while main waited
  H.stop_all(r)
end

function TestMailbox:test_timeout_returns_nothing_after_exactly_that_time()
  -- (to the nanosecond, the clock's unit: after other specs in the same
  -- process the time is a float that holds no finer)
  local t0 = tend.now()
  lu.assertEquals(select("#", tend.receive(1.5)), 0)
  lu.assertAlmostEquals(tend.now() - t0, 1.5, 1e-9)
  lu.assertEquals(select("#", tend.receive(0)), 0)
  lu.assertAlmostEquals(tend.now() - t0, 1.5, 1e-9) -- receive(0) does not wait
end

function TestMailbox:test_a_message_ends_the_wait_and_its_timeout_goes()
  local me = tend.self()
  tend.after(1, function() me:send("early") end)
  local t0 = tend.now()
  lu.assertEquals(tend.receive(30), "early")
  lu.assertEquals(tend.now() - t0, 1)
  H.settle()
  lu.assertEquals(tend.stats().timers, 0) -- the 30 s timeout was cancelled
end

function TestMailbox:test_a_nil_message_is_two_values_a_timeout_none()
  tend.self():send(nil)
  local got = table.pack(tend.receive(0))
  lu.assertEquals(got.n, 2) -- (nil, sender)
  lu.assertNil(got[1])
  lu.assertTrue(got[2] == tend.self())
  lu.assertEquals(select("#", tend.receive(0)), 0) -- a timeout: nothing
end

function TestMailbox:test_main_receives_its_terminated_notices()
  local r = tend.spawn(function() return function() end end)
  tend.watch(r)
  tend.stop(r)
  local t = tend.receive(1)
  lu.assertEquals(t.tend, "terminated")
  lu.assertTrue(t.ref == r)
  lu.assertEquals(t.reason, "normal")
  lu.assertEquals(select("#", tend.receive(0)), 0)
end

function TestMailbox:test_a_notice_unwatched_before_it_is_read_is_dropped()
  local r = tend.spawn(function() return function() end end)
  tend.watch(r)
  H.stop_all(r) -- the notice is queued
  tend.unwatch(r)
  tend.self():send("after")
  lu.assertEquals(tend.receive(0), "after")
  lu.assertEquals(select("#", tend.receive(0)), 0)
end

function TestMailbox:test_a_tend_after_task_receives_too()
  local got = {}
  local t = tend.after(0, function()
    got.self = tend.self()
    got.msg = tend.receive(5)
  end)
  lu.assertTrue(t:active())
  H.settle()
  got.self:send("to the task")
  H.settle()
  lu.assertEquals(got.msg, "to the task")
end

function TestMailbox:test_an_actor_cannot_receive_this_way()
  local err
  local r = tend.spawn(function()
    return function(_, ctx)
      local ok, e = pcall(tend.receive, 0)
      err = not ok and e or "no error"
    end
  end)
  r:send("go")
  H.settle()
  lu.assertStrMatches(err, ".*tend%.receive: /user/%$%d+ is an actor: its messages come to its behavior; only a task %(the main chunk, the REPL, a tend%.after function%) receives with tend%.receive")
  H.stop_all(r)
end

function TestMailbox:test_bad_timeout_is_named()
  local ok, err = pcall(tend.receive, -1)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tend.receive: timeout: expected a number of seconds >= 0, got -1")
  ok, err = pcall(tend.receive, "soon")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tend.receive: timeout: expected a number of seconds, got a string")
end

-- Subprocesses: a script that asks and reads, the end of the main chunk,
-- the real clock.

function TestMailbox:test_the_answer_to_main_is_read_in_a_script()
  local out, err, code = H.run({ "-e", [[
local tend = require "tend"
local r = tend.spawn(function(ctx) return function(m, ctx) ctx.sender:send("hi") end end)
r:send("x")
local m, from = tend.receive(1)
print(m, from == r, from:path() == r:path())
]] })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "hi\ttrue\ttrue\n")
  lu.assertEquals(err, "")
end

function TestMailbox:test_unread_messages_are_dead_letters_counted_and_logged()
  local trace = os.tmpname()
  local out, err, code = H.run({ "--virtual-time", "--trace", trace, "-e", [[
local tend = require "tend"
local r = tend.spawn(function(ctx) return function(m, ctx) ctx.sender:send("hi") end end, { name = "a" })
r:send(1) r:send(2)
tend.sleep(1)
print(tend.stats().dead_letters)
]] })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "0\n") -- while main runs, its messages wait
  lu.assertStrContains(err, "warn  /user/main: ended with 2 unread messages (dead letters; tend.receive reads them); the first: \"hi\" from Ref(/user/a)")
  local f = assert(io.open(trace))
  local text = f:read("a")
  f:close()
  os.remove(trace)
  local n = select(2, text:gsub('"ev":"dead_letter","path":"/user/main"', ""))
  lu.assertEquals(n, 2)
end

function TestMailbox:test_a_message_after_main_ended_is_a_dead_letter()
  local trace = os.tmpname()
  local _, err, code = H.run({ "--virtual-time", "--trace", trace, "-e", [[
local tend = require "tend"
local main = tend.self()
tend.spawn(function(ctx) ctx:after(1, "go") return function() main:send("late") end end)
]] })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(err, "") -- nothing was unread when the chunk ended
  local f = assert(io.open(trace))
  local text = f:read("a")
  f:close()
  os.remove(trace)
  lu.assertStrContains(text, '{"t":1.000000,"ev":"dead_letter","path":"/deadLetters"}')
end

function TestMailbox:test_receive_times_out_under_the_real_clock()
  local out, err, code = H.run({ "--real-time", "-e", [[
local tend = require "tend"
local t0 = tend.now()
local n = select("#", tend.receive(0.05))
print(n, tend.now() - t0 >= 0.05)
]] })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "0\ttrue\n")
end

-- overflow = "fail": the message that did not fit is a dead letter, the
-- actor fails, and the next instance gets the mail that was in the box.
function TestMailbox:test_overflow_fail_drops_the_message_that_did_not_fit()
  local log = {}
  local gate = tend.spawn(function()
    return function(msg, ctx)
      if msg == "block" then ctx:sleep(1) else log[#log + 1] = tostring(msg) end
    end
  end, { mailbox = { capacity = 1, overflow = "fail" } })
  gate:send("block")
  H.settle()
  local dead = tend.stats().dead_letters
  gate:send(1)
  gate:send(2)
  tend.sleep(2)
  lu.assertEquals(log, { "1" })
  lu.assertEquals(tend.stats().dead_letters - dead, 1)
  H.stop_all(gate)
end

-- overflow = "fail": a flood counted one failure per overflowing send but
-- made one decision and one restart. The first overflow fails the actor;
-- while that failure waits for its decision, the others are dead letters
-- only, so counts, trace and log agree: one failure, one restart.
function TestMailbox:test_a_flood_into_a_failing_mailbox_is_one_failure()
  local decisions, got = 0, {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function(msg) got[#got + 1] = msg end end,
      { name = "small", mailbox = { capacity = 2, overflow = "fail" } })
    return function(msg, ctx)
      local c = ctx:children()[1]
      for i = 1, 100 do c:send(i) end -- before c can run
    end
  end, { supervisor = tend.one_for_one { decider = function(err)
    decisions = decisions + 1
    lu.assertEquals(err.kind, "MailboxOverflow")
    return "restart"
  end } })
  local before = tend.stats()
  sup:send("flood")
  H.settle()
  local after = tend.stats()
  lu.assertEquals(after.failures - before.failures, 1)
  lu.assertEquals(after.restarts - before.restarts, 1)
  lu.assertEquals(decisions, 1)
  lu.assertEquals(after.dead_letters - before.dead_letters, 98)
  lu.assertEquals(got, { 1, 2 }) -- kept through the restart, then taken
  H.stop_all(sup)
end
