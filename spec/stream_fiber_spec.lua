-- map_async's calls are fibers of their stage's task (coroutines whose
-- asks and sleeps wait without holding one another): times, orders and
-- outcomes under the virtual clock, and what a fiber may not do.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local S = tend.stream

TestStreamFiber = {}

function TestStreamFiber:tearDown()
  tend.trace(false)
  H.assert_clean()
end

local function echo()
  return tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
end

function TestStreamFiber:test_asks_and_sleeps_of_the_calls_overlap()
  local e = echo()
  local t0 = tend.now()
  local r = S.range(1, 6):map_async(3, function(x)
    tend.sleep(1)
    return tend.ask(e, x * 10) + tend.ask(e, 1)
  end):run_seq()
  lu.assertEquals(r, { 11, 21, 31, 41, 51, 61 })
  lu.assertEquals(tend.now() - t0, 2) -- two rounds of three sleeps at once
  tend.stop(e)
end

function TestStreamFiber:test_unordered_results_come_as_their_calls_end()
  local t0 = tend.now()
  local delay = { 3, 0.1, 0.2, 0.4, 0.1 }
  local r = S.range(1, 5):map_async_unordered(2, function(x)
    tend.sleep(delay[x])
    return x * 10
  end):run_seq()
  -- 2 ends at 0.1, 3 at 0.3, 4 at 0.7, 5 at 0.8, 1 at 3
  lu.assertEquals(r, { 20, 30, 40, 50, 10 })
  lu.assertEquals(tend.now() - t0, 3)
end

function TestStreamFiber:test_waits_that_end_together_continue_in_the_order_they_ended()
  -- the three timers fire at the same instant, in the order they were armed
  local r = S.range(1, 3):map_async_unordered(3, function(x) tend.sleep(1) return x end):run_seq()
  lu.assertEquals(r, { 1, 2, 3 })
end

function TestStreamFiber:test_an_ask_that_times_out_fails_its_element_only()
  local silent = tend.spawn(function() return function() end end)
  local e = echo()
  local t0 = tend.now()
  local r = S.range(1, 4):map_async(2, function(x)
    if x % 2 == 1 then return tend.ask(silent, x, 0.5) end
    return tend.ask(e, x)
  end):with_supervision("resume"):run_seq()
  lu.assertEquals(r, { 2, 4 })
  lu.assertEquals(tend.now() - t0, 1) -- 1 and 3 each waited 0.5 s
  local ok, err = pcall(function()
    return S.single(1):map_async(1, function(x) return tend.ask(silent, x, 0.25) end):run_seq()
  end)
  lu.assertFalse(ok)
  lu.assertEquals(err.cause.kind, "Timeout")
  lu.assertEquals(err.element, 1)
  lu.assertEquals(err.stage, "map_async#2")
  tend.stop(silent)
  tend.stop(e)
end

function TestStreamFiber:test_an_ask_to_an_actor_that_crashes_fails_with_ask_failed()
  local crashy = tend.spawn(function() return function(m) error("no " .. m) end end)
  local ok, err = pcall(function()
    return S.from({ "a" }):map_async(2, function(x) return tend.ask(crashy, x) end):run_seq()
  end)
  lu.assertFalse(ok)
  lu.assertEquals(err.cause.kind, "AskFailed")
  lu.assertStrContains(err.cause.message, "no a")
  tend.stop(crashy)
end

function TestStreamFiber:test_a_call_may_not_receive_nor_yield_by_itself()
  local ok, err = pcall(function()
    return S.single(1):map_async(1, function() return tend.receive(1) end):run_seq()
  end)
  lu.assertFalse(ok)
  lu.assertStrContains(err.cause, "tend.receive: called in a function of a stream's map_async")
  ok, err = pcall(function()
    return S.single(1):map_async(1, function() return coroutine.yield(1) end):run_seq()
  end)
  lu.assertFalse(ok)
  lu.assertEquals(err.cause.kind, "BadYield")
  lu.assertEquals(err.element, 1)
end

-- an actor that answers each message 2 s after it came, to its sender
local function late_echo()
  return tend.spawn(function()
    return function(m, ctx)
      local to = ctx.sender
      tend.after(2, function() to:send(m) end)
    end
  end)
end

function TestStreamFiber:test_a_cancelled_stream_leaves_late_replies_as_dead_letters()
  local late = late_echo()
  local letters = 0
  tend.trace(function(e) if e.ev == "dead_letter" then letters = letters + 1 end end)
  local h = S.range(1, 3):map_async(3, function(x) return tend.ask(late, x) end)
    :run_async(S.sink.seq())
  tend.sleep(1)
  h:cancel()
  lu.assertErrorMsgContains("cancelled", function() h:await() end)
  tend.sleep(2) -- the three replies come after the stream is gone
  H.settle()
  lu.assertEquals(letters, 3)
  tend.stop(late)
end

function TestStreamFiber:test_a_call_may_run_a_stream_of_its_own()
  local t0 = tend.now()
  local r = S.range(1, 3):map_async(3, function(x)
    return S.range(1, x):map_async(2, function(y) tend.sleep(1) return y end):run_fold(0, function(a, b) return a + b end)
  end):run_seq()
  lu.assertEquals(r, { 1, 3, 6 })
  lu.assertEquals(tend.now() - t0, 2) -- the inner streams run side by side
end

function TestStreamFiber:test_a_stage_that_ends_with_calls_in_flight_leaves_its_task_idle()
  -- take(1) ends the producer while three calls still sleep: their
  -- outcomes must not keep its task busy (the clock would never move)
  local t0 = tend.now()
  local a = S.range(1, 100):map_async(4, function(x) tend.sleep(0.05 * x) return x end):take(1)
  local b = S.range(1, 20):map(function(x) tend.sleep(0.1) return x end)
  lu.assertEquals(#a:merge(b):run_seq(), 21)
  lu.assertEquals(tend.now() - t0, 2)
end

function TestStreamFiber:test_an_outcome_taken_and_dropped_leaves_no_value_behind()
  -- what a cancelled stage's outcome comes to: taken, its fiber never
  -- resumed; the task's next plain ask must free it
  local core = require "tend.core"
  local e = tend.spawn(function() return function(m, ctx) ctx:reply(string.rep("x", 10000) .. m) end end)
  collectgarbage()
  local before = tend.stats().lua_bytes
  for _ = 1, 200 do
    local co = coroutine.create(function() return tend.ask(e, "a") end)
    core.fiber_resume(co, 7)
    lu.assertTrue(tend.receive() == core.fiber_ready)
    lu.assertEquals(core.fiber_take(), 7)
    tend.ask(e, "b")
  end
  collectgarbage()
  collectgarbage()
  lu.assertTrue(tend.stats().lua_bytes - before < 1000000,
    "Lua heap grew by " .. (tend.stats().lua_bytes - before))
  tend.stop(e)
end

function TestStreamFiber:test_a_sleep_of_zero_in_a_call_ends_at_once()
  local t0 = tend.now()
  local r = S.range(1, 3):map_async(2, function(x) tend.sleep(0) return x * 2 end):run_seq()
  lu.assertEquals(r, { 2, 4, 6 })
  lu.assertEquals(tend.now() - t0, 0)
end

function TestStreamFiber:test_a_restarted_flow_ends_the_waits_of_its_old_calls()
  -- the first incarnation of the flow fails on 2 while 1's ask is in
  -- flight: the restart ends that ask's promise at once, so its late
  -- reply is a dead letter (not an outcome kept for a fiber gone)
  local late = late_echo()
  local letters, incarnation = 0, 0
  tend.trace(function(e) if e.ev == "dead_letter" then letters = letters + 1 end end)
  local flow = S.restart_flow({ min_backoff = 0.1, max_backoff = 0.1, random_factor = 0 }, function()
    incarnation = incarnation + 1
    local mine = incarnation
    return S.flow():map_async_unordered(2, function(x)
      if mine == 1 and x == 1 then return tend.ask(late, x) end
      if mine == 1 and x == 2 then error("boom") end
      tend.sleep(3)
      return x
    end)
  end)
  local t0 = tend.now()
  local r = S.range(1, 3):via(flow):run_seq()
  lu.assertEquals(r, { 3 }) -- 1 and 2 were lost with the first incarnation
  lu.assertEquals(incarnation, 2)
  lu.assertAlmostEquals(tend.now() - t0, 3.1, 1e-9)
  lu.assertEquals(letters, 1) -- 1's reply, at 2 s
  tend.stop(late)
end
