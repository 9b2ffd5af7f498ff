-- ask: replies, Timeout, late replies, asking from inside an actor.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestAsk = {}

function TestAsk:tearDown() H.assert_clean() end

local function echo() return function(msg, ctx) ctx:reply(msg) end end

function TestAsk:test_ask_returns_the_reply()
  local e = tend.spawn(echo)
  lu.assertEquals(tend.ask(e, "hello", 1), "hello")
  lu.assertEquals(tend.ask(e, 42, 1), 42)
  lu.assertEquals(tend.ask(e, false, 1), false)
  local t = {}
  lu.assertIs(tend.ask(e, t, 1), t)
  H.stop_all(e)
end

function TestAsk:test_timeout_raises_a_Timeout_error_after_exactly_the_timeout()
  local mute = tend.spawn(function() return function() end end, { name = "mute" })
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, mute, "anyone?", 2.5)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertStrContains(err.message, "/user/mute")
  lu.assertEquals(tend.now() - t0, 2.5)
  H.stop_all(mute)
end

function TestAsk:test_late_reply_is_a_dead_letter()
  local slow = tend.spawn(function()
    return function(msg, ctx) ctx:sleep(2) ctx:reply("late") end
  end)
  local ok, err = pcall(tend.ask, slow, "q", 1)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  local before = tend.stats().dead_letters
  tend.sleep(2)
  lu.assertEquals(tend.stats().dead_letters - before, 1)
  H.stop_all(slow)
end

function TestAsk:test_ask_a_dead_actor_raises_NoActor_at_once()
  local e = tend.spawn(echo)
  H.stop_all(e)
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, e, "x", 0.5)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "NoActor")
  lu.assertEquals(tend.now(), t0)
end

function TestAsk:test_ctx_ask_from_an_actor_while_others_run()
  local e = tend.spawn(echo)
  local asker = tend.spawn(function()
    return function(msg, ctx)
      local a = ctx:ask(e, msg .. "?", 1)
      ctx:reply(a .. "!")
    end
  end)
  lu.assertEquals(tend.ask(asker, "x", 1), "x?!")
  H.stop_all(e, asker)
end

function TestAsk:test_stopping_a_waiting_asker_frees_it()
  local mute = tend.spawn(function() return function() end end)
  local asker = tend.spawn(function()
    return function(msg, ctx) ctx:ask(mute, "x", 100) end
  end)
  asker:send("go")
  H.settle()
  tend.stop(asker)
  H.settle()
  lu.assertFalse(tend.alive(asker))
  H.stop_all(mute)
  lu.assertEquals(tend.stats().timers, 0)
end

function TestAsk:test_bad_arguments()
  local e = tend.spawn(echo)
  lu.assertErrorMsgContains("ask: timeout: expected a number of seconds > 0, got -1",
    tend.ask, e, "x", -1)
  lu.assertErrorMsgContains("NoActor: no actor registered as 'e'",
    tend.ask, "e", "x", 1) -- a string is a registered name (names_spec)
  lu.assertErrorMsgContains("ask: ref: expected an actor ref, got a table",
    tend.ask, {}, "x", 1)
  H.stop_all(e)
end

function TestAsk:test_cannot_wait_inside_a_metamethod()
  local e = tend.spawn(echo)
  local obj = setmetatable({}, { __tostring = function() return tend.ask(e, "x", 1) end })
  lu.assertErrorMsgContains("cannot wait here", tostring, obj)
  H.stop_all(e)
end

function TestAsk:test_ask_times_out_after_5_s_by_default()
  local mute = tend.spawn(function() return function() end end)
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, mute, "anyone?")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertEquals(tend.now() - t0, 5)
  local inner
  local asker = tend.spawn(function()
    return function(msg, ctx)
      local t1 = tend.now()
      local ok2, e = pcall(ctx.ask, ctx, mute, "you?")
      inner = { ok2, e.kind, tend.now() - t1 }
    end
  end)
  asker:send("go")
  tend.sleep(6)
  lu.assertEquals(inner, { false, "Timeout", 5 })
  H.stop_all(mute, asker)
end

-- An ask whose timeout is under a nanosecond times out after 1 ns (a
-- positive duration is at least 1 ns); it never waits forever.
function TestAsk:test_an_ask_timeout_under_a_nanosecond_times_out_after_1_ns()
  local mute = tend.spawn(function() return function() end end)
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, mute, "x", 1e-12)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertTrue(tend.now() - t0 < 2e-9) -- t0 + 1 ns (or t0 where the
  -- clock's float holds no nanosecond any more)
  H.stop_all(mute)
  -- the clock back on whole seconds from t0: the specs run after this one
  -- in the same process compare durations exactly
  tend.sleep(1 - (tend.now() - t0))
end

-- Asking yourself fails at once (OTP's calling_self), not after the timeout.
function TestAsk:test_asking_yourself_fails_at_once()
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, tend.self(), "x", 5)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(tend.now(), t0)
end
