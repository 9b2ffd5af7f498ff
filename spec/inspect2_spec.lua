-- tend.inspect(ref) (design §3.5): an actor's state as OTP's
-- sys:get_state, read without stopping it: its behavior's upvalues (or a
-- hook table's fields), mailbox length, the message it is in the middle
-- of, restarts, timers, watchers. The prompt's inspect() is in
-- spec/c/test_repl.c.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestInspect2 = {}

function TestInspect2:tearDown() H.assert_clean() end

local function counter(ctx, start)
  local n, seen = start, {}
  local step = 1
  return function(msg, ctx)
    if msg == "slow" then tend.sleep(5) end
    if msg == "boom" then error("boom") end
    n = n + step
    seen[#seen + 1] = msg
  end
end

function TestInspect2:test_an_idle_actors_upvalues_and_counts()
  local c = tend.spawn(counter, { name = "c", args = { 10 } })
  c:send("a")
  c:send("b")
  H.settle()
  local s = tend.inspect(c)
  lu.assertEquals(s.path, "/user/c")
  lu.assertEquals(s.state, "running")
  lu.assertEquals(s.behavior, "function")
  lu.assertEquals(s.vars, { n = 12, seen = { "a", "b" }, step = 1 }) -- no tend, no functions
  lu.assertEquals(s.mailbox, 0)
  lu.assertFalse(s.busy)
  lu.assertNil(s.current)
  lu.assertEquals(s.restarts, 0)
  lu.assertEquals(s.timers, 0)
  lu.assertEquals(s.watchers, {})
  lu.assertIs(s.factory, counter)
  H.stop_all(c)
end

function TestInspect2:test_a_busy_actor_is_read_without_disturbing_it()
  local c = tend.spawn(counter, { name = "busy", args = { 0 } })
  c:send("slow")
  c:send("next")
  H.settle()
  local t0 = tend.now()
  local s = tend.inspect(c)
  lu.assertTrue(s.busy)
  lu.assertEquals(s.doing, "receive")
  lu.assertEquals(s.current, "slow")
  lu.assertEquals(s.state, "waiting")
  lu.assertEquals(s.mailbox, 1) -- "next" waits
  lu.assertEquals(s.timers, 1) -- the sleep's wake-up
  lu.assertEquals(s.vars.n, 0)
  -- it goes on as if nobody looked: both messages, in order, after 5 s
  tend.sleep(6)
  s = tend.inspect(c)
  lu.assertFalse(s.busy)
  lu.assertEquals(s.vars.seen, { "slow", "next" })
  lu.assertEquals(s.vars.n, 2)
  lu.assertEquals(s.mailbox, 0)
  lu.assertTrue(tend.now() - t0 >= 5)
  H.stop_all(c)
end

function TestInspect2:test_a_hook_tables_fields_and_a_busy_receive()
  local h = tend.spawn(function()
    return {
      count = 3, label = "h",
      receive = function(self, msg)
        if msg == "wait" then tend.sleep(1) end
        self.count = self.count + 1
      end,
    }
  end, { name = "hooks" })
  h:send("wait")
  H.settle()
  local s = tend.inspect(h)
  lu.assertEquals(s.behavior, "hooks")
  lu.assertEquals(s.vars, { count = 3, label = "h" })
  lu.assertEquals(s.current, "wait")
  tend.sleep(2)
  lu.assertEquals(tend.inspect(h).vars.count, 4)
  H.stop_all(h)
end

function TestInspect2:test_restarts_timers_and_watchers()
  local c = tend.spawn(function(ctx)
    ctx:every(10, "tick")
    ctx:after(20, "later")
    local n = 0
    return function(msg) if msg == "boom" then error("boom") end n = n + 1 end
  end, { name = "w" })
  c:send("boom")
  H.settle()
  local watcher = tend.spawn(function(ctx) ctx:watch(c) return function() end end, { name = "watcher" })
  H.settle()
  local s = tend.inspect(c)
  lu.assertEquals(s.restarts, 1)
  lu.assertEquals(s.timers, 2)
  lu.assertEquals(s.vars, { n = 0 })
  lu.assertEquals(#s.watchers, 1)
  lu.assertTrue(s.watchers[1] == watcher)
  lu.assertEquals(#tend.inspect(watcher).watching, 1)
  lu.assertTrue(tend.inspect(watcher).watching[1] == c)
  H.stop_all(c, watcher)
end

function TestInspect2:test_a_dead_actor_gives_nil_a_bad_argument_an_error()
  local c = tend.spawn(counter, { args = { 0 } })
  H.stop_all(c)
  lu.assertNil(tend.inspect(c))
  local ok, err = pcall(tend.inspect, "c")
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "tend.inspect: ref: expected an actor ref, got a string")
end
