-- The scheduler and the virtual clock: system messages before user mail,
-- at most 64 messages per turn, back to the loop every 20000 steps, the run
-- queue's order, sleeps and their wake-ups, the clock standing still while
-- an actor can run.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestScheduler = {}

function TestScheduler:tearDown() H.assert_clean() end

-- A child that logs its lifecycle and its messages to `log`, counts its
-- messages (answers "get" with the count) and fails on {raise = kind}.
local function worker(ctx, name, log)
  local n = 0
  return {
    pre_start = function() log[#log + 1] = name .. ":start" end,
    post_stop = function() log[#log + 1] = name .. ":stop" end,
    receive = function(self, msg, ctx)
      if type(msg) == "table" and msg.raise then tend.raise(msg.raise, "boom") end
      if msg == "get" then ctx:reply(n) return end
      n = n + 1
      log[#log + 1] = name .. ":" .. tostring(msg)
    end,
  }
end

local function clear(t)
  for i = #t, 1, -1 do t[i] = nil end
end

-- A group restart suspends its members at once: the user messages
-- already waiting in a member's mailbox go to its new instance.
function TestScheduler:test_system_message_before_queued_user_messages()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local a = ctx:spawn(worker, { name = "a", args = { "a", log } })
    local b = ctx:spawn(worker, { name = "b", args = { "b", log } })
    return function(msg, ctx)
      if msg == "go" then
        a:send("x1")
        a:send("x2") -- queued in a's mailbox ...
        tend.chaos.kill(b) -- ... before the all_for_one restart reaches a
      else
        ctx:reply({ a, b })
      end
    end
  end, { supervisor = tend.all_for_one { decider = { Killed = "restart" } } })
  local a = tend.ask(sup, "?", 1)[1]
  H.settle()
  clear(log)
  sup:send("go")
  H.settle()
  lu.assertEquals(log, { "b:stop", "a:stop", "a:start", "a:x1", "a:x2", "b:start" })
  lu.assertEquals(tend.ask(a, "get", 1), 2) -- the new instance got both
  H.stop_all(sup)
end

-- Under the virtual clock, time moves only when no actor can run: a busy
-- actor that runs far past a scheduler quantum (20 000 steps) never sees
-- tend.now() jump to the next timer.
function TestScheduler:test_virtual_clock_stands_still_while_an_actor_can_run()
  local n, lo, hi = 0, math.huge, -math.huge
  local busy = tend.spawn(function()
    return function(msg, ctx)
      n = n + 1
      local t = tend.now()
      if t < lo then lo = t end
      if t > hi then hi = t end
      if n < 50000 then ctx.self:send("again") end
    end
  end)
  local t0 = tend.now()
  busy:send("go")
  tend.sleep(5) -- the next timer: our own wake-up at t0 + 5
  lu.assertEquals(n, 50000)
  lu.assertEquals(lo, t0)
  lu.assertEquals(hi, t0)
  lu.assertEquals(tend.now() - t0, 5)
  H.stop_all(busy)
end

-- An actor takes at most 64 messages in one turn; then the others run.
function TestScheduler:test_an_actor_takes_at_most_64_messages_per_turn()
  local runs = {}
  local function rec(name)
    return tend.spawn(function()
      return function()
        local last = runs[#runs]
        if last and last[1] == name then last[2] = last[2] + 1 else runs[#runs + 1] = { name, 1 } end
      end
    end)
  end
  local a, b = rec("a"), rec("b")
  H.settle()
  for i = 1, 100 do a:send(i) end
  for i = 1, 100 do b:send(i) end
  H.settle()
  lu.assertEquals(runs, { { "a", 64 }, { "b", 64 }, { "a", 36 }, { "b", 36 } })
  H.stop_all(a, b)
end

-- While actors are busy the scheduler returns to the event loop every
-- 20 000 steps (messages, hooks, starts; the turn in progress ends
-- first): trace listeners run there.
function TestScheduler:test_the_scheduler_returns_to_the_loop_every_20000_steps()
  local progress, seen = 0, nil
  tend.trace(function(e)
    if e.ev == "spawn" and e.path:match("/qchild$") then seen = progress end
  end)
  local busy = tend.spawn(function()
    local n = 0
    return function(msg, ctx)
      n = n + 1
      progress = n
      if n == 1 then ctx:spawn(function() return function() end end, { name = "qchild" }) end
      if n < 50000 then ctx.self:send("again") end
    end
  end)
  busy:send("go")
  tend.sleep(1)
  tend.trace(false)
  lu.assertEquals(progress, 50000)
  lu.assertTrue(seen >= 19900 and seen <= 20100, "the listener ran after " .. tostring(seen) .. " messages")
  H.stop_all(busy)
end

-- Mail for a suspended actor waits; the actor is queued when it is
-- resumed, behind the actors queued meanwhile.
function TestScheduler:test_a_resumed_actor_queues_behind_those_already_queued()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local x = ctx:spawn(worker, { name = "x", args = { "x", log } })
    local y = ctx:spawn(worker, { name = "y", args = { "y", log } })
    return function(msg, ctx)
      tend.chaos.kill(x) -- suspended until this supervisor resumes it
      x:send("m1")
      y:send("m2")
    end
  end, { supervisor = tend.one_for_one { decider = { Killed = "resume" } } })
  H.settle()
  clear(log)
  sup:send("go")
  H.settle()
  lu.assertEquals(log, { "y:m2", "x:m1" })
  H.stop_all(sup)
end

-- After a killed sleep is resumed, its wake-up timer is stale: it never
-- ends the next sleep.
function TestScheduler:test_a_stale_wake_up_never_ends_a_newer_sleep()
  local slept = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      return function(secs, ctx)
        local t0 = tend.now()
        ctx:sleep(secs)
        slept[#slept + 1] = tend.now() - t0
      end
    end, { name = "sleeper" })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = { Killed = "resume" } } })
  local s = tend.ask(sup, "?", 1)
  s:send(10)
  tend.sleep(1)
  tend.chaos.kill(s) -- its sleep of 10 s ends with the failure; resumed
  s:send(20)
  tend.sleep(30) -- the old wake-up comes 9 s into the new sleep
  lu.assertEquals(slept, { 20 })
  H.stop_all(sup)
end

-- Killing an actor just woken from its sleep (queued to resume, last in
-- the run queue) leaves the run queue whole.
function TestScheduler:test_killing_a_woken_actor_keeps_the_run_queue_whole()
  local sleeper = tend.spawn(function()
    return function(msg, ctx) ctx:sleep(1) end
  end)
  local killer = tend.spawn(function()
    return function(msg, ctx)
      if msg == "arm" then ctx:after(1, "kill") else tend.kill(sleeper) end
    end
  end)
  killer:send("arm") -- its timer is armed first, so it fires first
  H.settle()
  sleeper:send("nap")
  H.settle()
  tend.sleep(2)
  lu.assertFalse(tend.alive(sleeper))
  lu.assertEquals(tend.stats().runnable, 0)
  H.stop_all(killer)
end

-- Mail that arrives while an actor sleeps waits for the sleep to end.
function TestScheduler:test_mail_that_arrives_during_a_sleep_waits_for_it()
  local log = {}
  local a = tend.spawn(function()
    return function(msg, ctx)
      if msg == "nap" then ctx:sleep(5) end
      log[#log + 1] = msg
    end
  end)
  a:send("nap")
  H.settle() -- asleep
  a:send("x")
  tend.sleep(1)
  lu.assertEquals(log, {})
  tend.sleep(5)
  lu.assertEquals(log, { "nap", "x" })
  H.stop_all(a)
end

function TestScheduler:test_stats_count_each_message()
  local a = tend.spawn(function() return function() end end)
  H.settle()
  local m0 = tend.stats().messages
  for i = 1, 3 do a:send(i) end
  H.settle()
  lu.assertEquals(tend.stats().messages - m0, 3)
  H.stop_all(a)
end
