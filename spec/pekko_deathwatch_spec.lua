-- A port of Apache Pekko's DeathWatchSpec (actor-tests,
-- org.apache.pekko.actor): each test names the case it comes from and
-- checks what it checks, with ctx:watch under the virtual clock. The
-- supervision suites are in pekko_supervision_spec.lua.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestPekkoDeathWatch = {}

function TestPekkoDeathWatch:tearDown() H.assert_clean_and_no_mail() end

local function empty() return function() end end

-- The Watcher: watches target and forwards everything to the probe,
-- a Terminated wrapped.
local function start_watching(p, target)
  return tend.spawn(function(ctx)
    ctx:watch(target)
    return function(msg, ctx)
      if type(msg) == "table" and msg.tend == "terminated" then
        p.ref:send({ wrapped = msg })
      else
        p.ref:tell(msg, ctx.sender)
      end
    end
  end)
end

local function expect_termination_of(p, ref)
  local m = p:expect_msg(function(m) return type(m) == "table" and m.wrapped ~= nil end, 5)
  lu.assertTrue(m.wrapped.ref == ref)
  return m.wrapped
end

-- "notify with one Terminated message when an Actor is stopped"
function TestPekkoDeathWatch:test_notify_with_one_terminated_when_stopped()
  local p = tk.probe()
  local terminal = tend.spawn(empty)
  local w = start_watching(p, terminal)
  w:send("hallo")
  p:expect_msg("hallo")
  tend.poison(terminal)
  local t = expect_termination_of(p, terminal)
  lu.assertTrue(t.existence_confirmed)
  lu.assertEquals(t.reason, "normal")
  p:expect_no_msg(0.5)
  H.stop_all(w, p.ref)
end

-- "notify with one Terminated message when an Actor is already dead"
function TestPekkoDeathWatch:test_notify_when_already_dead()
  local p = tk.probe()
  local terminal = tend.spawn(empty)
  tend.poison(terminal)
  H.settle()
  local w = start_watching(p, terminal)
  local t = expect_termination_of(p, terminal)
  lu.assertFalse(t.existence_confirmed)
  lu.assertEquals(t.reason, "unknown")
  p:expect_no_msg(0.5)
  H.stop_all(w, p.ref)
end

-- "notify with all monitors with one Terminated message when an Actor is
-- stopped" and "notify with _current_ monitors with one Terminated
-- message when an Actor is stopped" (a monitor that watched and
-- unwatched gets none).
function TestPekkoDeathWatch:test_notify_all_current_monitors()
  local p = tk.probe()
  local terminal = tend.spawn(empty)
  local m1, m3 = start_watching(p, terminal), start_watching(p, terminal)
  local m4 = start_watching(p, terminal)
  local m2 = tend.spawn(function(ctx)
    ctx:watch(terminal)
    ctx:unwatch(terminal)
    return function(msg, ctx)
      if msg == "ping" then ctx:reply("pong")
      elseif type(msg) == "table" and msg.tend == "terminated" then p.ref:send({ wrapped = msg }) end
    end
  end)
  p:send_to(m2, "ping")
  p:expect_msg("pong")
  tend.poison(terminal)
  for _ = 1, 3 do expect_termination_of(p, terminal) end
  p:expect_no_msg(0.5)
  H.stop_all(m1, m2, m3, m4, p.ref)
end

-- "notify with a Terminated message once when an Actor is stopped but
-- not when restarted": two Kills restart it (maxNrOfRetries = 2), the
-- third stops it: one Terminated.
function TestPekkoDeathWatch:test_terminated_once_when_stopped_not_when_restarted()
  local p = tk.probe()
  local sup = tend.spawn(function()
    return function(msg, ctx) ctx:reply(ctx:spawn(msg)) end
  end, { children = tend.one_for_one { max_retries = 2,
    decider = tend.decider { ["*"] = "restart" } } })
  local terminal = tend.ask(sup, function() return function(msg, ctx) ctx:reply(msg) end end)
  local w = start_watching(p, terminal)
  tend.kill(terminal)
  tend.kill(terminal)
  lu.assertEquals(tend.ask(terminal, "foo"), "foo")
  tend.kill(terminal)
  local t = expect_termination_of(p, terminal)
  lu.assertEquals(t.reason.kind, "Killed")
  lu.assertFalse(tend.alive(terminal))
  p:expect_no_msg(0.5)
  H.stop_all(sup, w, p.ref)
end

-- "fail a monitor which does not handle Terminated()": the brother
-- leaves the Terminated unhandled and fails with DeathPact; the
-- supervisor's strategy sees the Killed failure first, then the
-- DeathPact, then the brother's watcher its Terminated.
function TestPekkoDeathWatch:test_fail_a_monitor_which_does_not_handle_terminated()
  local p = tk.probe()
  local sup = tend.spawn(function()
    return function(msg, ctx) ctx:reply(ctx:spawn(msg)) end
  end, { children = tend.one_for_one { decider = function(err, child)
    p.ref:send({ failed = err.kind, child = child })
    return "stop" -- the default decider: Killed and DeathPact stop
  end } })
  local failed = tend.ask(sup, empty)
  local brother = tend.ask(sup, function(ctx)
    ctx:watch(failed)
    return function() return tend.unhandled end -- Actor.emptyBehavior
  end)
  local w = start_watching(p, brother)
  tend.kill(failed)
  local m1 = p:expect_msg(function() return true end)
  lu.assertEquals(m1.failed, "Killed")
  lu.assertTrue(m1.child == failed)
  local m2 = p:expect_msg(function() return true end)
  lu.assertEquals(m2.failed, "DeathPact")
  lu.assertTrue(m2.child == brother)
  expect_termination_of(p, brother)
  H.stop_all(sup, w, p.ref)
end

-- "be able to watch a child with the same name after the old died"
function TestPekkoDeathWatch:test_watch_a_child_with_the_same_name_after_the_old_died()
  local p = tk.probe()
  local parent = tend.spawn(function()
    local idle
    idle = function(msg, ctx)
      if msg ~= "NKOTB" then return end
      local kid = ctx:watch(ctx:spawn(function()
        return function(m) if m == "NKOTB" then return tend.stopped end end
      end, { name = "kid" }))
      kid:send("NKOTB")
      return function(m)
        if type(m) == "table" and m.tend == "terminated" and m.ref == kid then
          p.ref:send("GREEN")
          return idle -- unbecome
        end
      end
    end
    return idle
  end)
  parent:send("NKOTB")
  p:expect_msg("GREEN")
  parent:send("NKOTB")
  p:expect_msg("GREEN")
  H.stop_all(parent, p.ref)
end

-- "discard Terminated when unwatched between sysmsg and processing": the
-- watcher is busy when its target dies, then unwatches it: it never
-- processes the Terminated (an unhandled one would fail it).
function TestPekkoDeathWatch:test_discard_terminated_when_unwatched_before_processing()
  local p = tk.probe()
  local target = tend.spawn(empty)
  local w = tend.spawn(function()
    return function(msg, ctx)
      if type(msg) == "table" and msg.w then ctx:watch(msg.w)
      elseif type(msg) == "table" and msg.u then ctx:unwatch(msg.u)
      elseif msg == "latches" then p.ref:send("t1") ctx:sleep(1)
      elseif msg == "identify" then ctx:reply(ctx.self)
      else return tend.unhandled end
    end
  end, { name = "myDearWatcher" })
  w:send({ w = target })
  w:send("latches")
  p:expect_msg("t1")
  p:watch(target)
  tend.stop(target)
  p:expect_terminated(target)
  w:send({ u = target })
  p:send_to(w, "identify")
  lu.assertTrue(p:expect_msg(function() return true end, 2) == w)
  p:send_to(w, "identify")
  lu.assertTrue(p:expect_msg(function() return true end) == w)
  lu.assertTrue(tend.alive(w))
  H.stop_all(w, p.ref)
end

-- "watch with custom message" and "stash watchWith termination message
-- correctly"
function TestPekkoDeathWatch:test_watch_with_custom_message()
  for _, stash_first in ipairs { false, true } do
    local p = tk.probe()
    local verifier = tend.spawn(function()
      local stashing, n = false, 0
      return function(msg, ctx)
        if type(msg) == "table" and msg.start_stashing then
          stashing, n = true, msg.start_stashing
          ctx:reply("stashing started")
        elseif type(msg) == "table" and msg.watch_this then
          ctx:watch(msg.watch_this, { custom = msg.watch_this })
          ctx:reply("watching")
        elseif stashing then
          ctx:stash()
          n = n - 1
          if n == 0 then stashing = false ctx:unstash_all() end
        elseif type(msg) == "table" and msg.custom then
          p.ref:send(msg)
        end
      end
    end, { stash = 10 })
    local subject = tend.spawn(empty)
    lu.assertEquals(tend.ask(verifier, { watch_this = subject }), "watching")
    if stash_first then
      lu.assertEquals(tend.ask(verifier, { start_stashing = 1 }), "stashing started")
    end
    tend.poison(subject)
    local m = p:expect_msg(function() return true end)
    lu.assertTrue(m.custom == subject)
    H.stop_all(verifier, p.ref)
  end
end

-- Not ported: "only notify when watching" sends a DeathWatchNotification
-- system message by hand; tend has no way to send one (watch.c alone
-- makes them).
