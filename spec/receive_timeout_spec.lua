-- Receive timeout (Akka's ReceiveTimeout, OTP's `after`): the message
-- comes through the mailbox after that long without a message, again
-- after each idle period; any message starts the countdown again; nil
-- clears it; it is kept across restarts; never while busy. Exact times
-- under the virtual clock.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestReceiveTimeout = {}

function TestReceiveTimeout:tearDown() H.assert_clean() end

-- An actor that notes (time, message) and obeys a few commands.
local function noter(log, seconds, msg)
  return function(ctx)
    ctx:set_receive_timeout(seconds, msg)
    return function(m, c)
      log[#log + 1] = string.format("%g %s", tend.now() - log.t0, tostring(m))
      if m == "clear" then c:set_receive_timeout(nil) end
      if m == "crash" then error("boom") end
      if m == "sleep" then c:sleep(5) end
      if m == "get" then c:reply(c:receive_timeout()) end
    end
  end
end

function TestReceiveTimeout:test_fires_after_each_idle_period()
  local log = { t0 = tend.now() }
  local a = tend.spawn(noter(log, 1))
  tend.sleep(3.5)
  lu.assertEquals(log, { t0 = log.t0, "1 receive_timeout", "2 receive_timeout",
    "3 receive_timeout" })
  H.stop_all(a)
end

function TestReceiveTimeout:test_a_message_starts_the_countdown_again()
  local log = { t0 = tend.now() }
  local a = tend.spawn(noter(log, 1, { idle = true }))
  tend.sleep(0.5)
  a:send("x")
  tend.sleep(0.8)
  a:send("y") -- at 1.3: nothing fired yet
  tend.sleep(1.5)
  lu.assertEquals(#log, 3)
  lu.assertEquals(log[1], "0.5 x")
  lu.assertEquals(log[2], "1.3 y")
  lu.assertStrContains(log[3], "2.3 table:") -- the given message, as given
  H.stop_all(a)
end

function TestReceiveTimeout:test_nil_clears_it()
  local log = { t0 = tend.now() }
  local a = tend.spawn(noter(log, 2))
  lu.assertEquals(tend.ask(a, "get", 1), 2)
  tend.sleep(2.5)
  a:send("clear")
  tend.sleep(10)
  lu.assertEquals(log, { t0 = log.t0, "0 get", "2 receive_timeout", "2.5 clear" })
  lu.assertNil(tend.ask(a, "get", 1))
  lu.assertEquals(tend.stats().timers, 0)
  H.stop_all(a)
end

function TestReceiveTimeout:test_kept_across_a_restart()
  local log = { t0 = tend.now() }
  local starts = 0
  local a = tend.spawn(function(ctx)
    starts = starts + 1
    if starts == 1 then ctx:set_receive_timeout(1) end -- set once only
    return function(m, c)
      log[#log + 1] = string.format("%g %s", tend.now() - log.t0, m)
      if m == "crash" then error("boom") end
    end
  end)
  tend.sleep(0.5)
  a:send("crash")
  tend.sleep(1.2)
  lu.assertEquals(starts, 2)
  lu.assertEquals(log, { t0 = log.t0, "0.5 crash", "1.5 receive_timeout" })
  H.stop_all(a)
end

function TestReceiveTimeout:test_not_while_busy_in_a_message()
  local log = { t0 = tend.now() }
  local a = tend.spawn(noter(log, 1))
  a:send("sleep") -- busy 0..5
  tend.sleep(6.5)
  lu.assertEquals(log, { t0 = log.t0, "0 sleep", "6 receive_timeout" })
  H.stop_all(a)
end

function TestReceiveTimeout:test_it_goes_through_the_mailbox_in_order()
  local log = { t0 = tend.now() }
  local a = tend.spawn(noter(log, 1))
  tend.sleep(1) -- due now: queued behind nothing
  a:send("after")
  H.settle()
  lu.assertEquals(log, { t0 = log.t0, "1 receive_timeout", "1 after" })
  H.stop_all(a)
end

function TestReceiveTimeout:test_bad_input_and_outside_use()
  local ctx_seen
  local a = tend.spawn(function(ctx)
    ctx_seen = ctx
    return function(m, c)
      local ok, err = pcall(c.set_receive_timeout, c, m)
      c:reply(err)
    end
  end)
  lu.assertStrContains(tend.ask(a, 0, 1),
    "ctx:set_receive_timeout: seconds: expected a number of seconds > 0, got 0")
  lu.assertStrContains(tend.ask(a, "soon", 1),
    "ctx:set_receive_timeout: seconds: expected a number of seconds, got a string")
  lu.assertStrContains(tend.ask(a, math.huge, 1), "<= 1e9")
  lu.assertErrorMsgContains("ctx:set_receive_timeout called outside its actor",
    ctx_seen.set_receive_timeout, ctx_seen, 1)
  H.stop_all(a)
end
