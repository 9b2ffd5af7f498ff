-- tend.ps() and tend.tree() tell an actor blocked in ask or sleep
-- ("waiting") from one preempted in the middle of a long message ("busy",
-- with how long that message has run). Preemption needs the real clock
-- (under the virtual clock the watchdog never preempts), so the busy
-- cases run as subprocesses with --real-time.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestInspect = {}

function TestInspect:tearDown() H.assert_clean() end

local function row(path)
  for _, r in ipairs(tend.ps()) do
    if r.path == path then return r end
  end
end

function TestInspect:test_blocked_in_sleep_or_ask_is_waiting_not_busy()
  local sleeper = tend.spawn(function() return function(m, ctx) ctx:sleep(10) end end, { name = "sleeper" })
  local mute = tend.spawn(function() return function() end end, { name = "mute" })
  local asker = tend.spawn(function() return function(m, ctx) pcall(ctx.ask, ctx, mute, "?", 10) end end,
    { name = "asker" })
  sleeper:send("go")
  asker:send("go")
  H.settle()
  for _, path in ipairs { "/user/sleeper", "/user/asker" } do
    local r = row(path)
    lu.assertEquals(r.state, "waiting", path)
    lu.assertNil(r.busy, path)
  end
  lu.assertEquals(row("/user/mute").state, "running")
  lu.assertStrContains(tend.tree(), "sleeper [waiting] restarts=0 mailbox=0")
  H.stop_all(sleeper, mute, asker)
end

local function run_real(text)
  local path = H.script(text)
  local out, err, code = H.run { "--real-time", path }
  os.remove(path)
  lu.assertEquals(code, 0, err)
  return out
end

function TestInspect:test_a_busy_loop_is_busy_with_its_running_time()
  local out = run_real [[
local tend = require "tend"
local spin = tend.spawn(function()
  return function(m) while true do end end
end, { name = "spin" })
local sleeper = tend.spawn(function() return function(m, ctx) ctx:sleep(100) end end, { name = "sleeper" })
local t0 = tend.now()
spin:send("go")
sleeper:send("go")
tend.sleep(0.3)
local elapsed = tend.now() - t0
for _, r in ipairs(tend.ps()) do
  if r.path == "/user/spin" then
    print(r.state, r.busy >= 0.1 and r.busy <= elapsed + 0.05)
  elseif r.path == "/user/sleeper" then
    print(r.state, r.busy)
  end
end
print((tend.tree():match("spin %[busy %d+%.%d s%] restarts=0 mailbox=0") ~= nil))
tend.chaos.kill(spin) -- tend.kill would wait behind the endless message
tend.sleep(0.05)
print(tend.alive(spin))
tend.shutdown(0)
]]
  lu.assertEquals(out, "busy\ttrue\nwaiting\tnil\ntrue\nfalse\n")
end

-- Once its long message is over, a preempted actor is no longer busy.
function TestInspect:test_busy_ends_with_the_message()
  local out = run_real [[
local tend = require "tend"
local done = false
local function state()
  for _, r in ipairs(tend.ps()) do
    if r.path == "/user/worker" then return r.state, r.busy ~= nil end
  end
end
local worker = tend.spawn(function()
  return function(m, ctx)
    if m == "state?" then ctx:reply(table.pack(state())) end
    if m == "long" then
      local t = tend.now()
      while tend.now() - t < 0.2 do end
      done = true
    end
  end
end, { name = "worker" })
worker:send("long")
tend.sleep(0.1)
print(state())
while not done do tend.sleep(0.05) end
tend.sleep(0.01)
print(state())
local own = tend.ask(worker, "state?", 1) -- its next message: not busy
print(own[1], own[2])
tend.stop(worker)
]]
  lu.assertEquals(out, "busy\ttrue\nrunning\tfalse\nrunning\tfalse\n")
end

-- A task whose call never ends (the main chunk, the REPL's loop) is busy
-- while it runs long, and no longer once it waits.
function TestInspect:test_a_task_that_waits_is_not_busy()
  local out = run_real [[
local tend = require "tend"
local t0 = tend.now()
while tend.now() - t0 < 0.2 do end -- long enough for the watchdog to mark it busy
local seen
tend.after(0.05, function()
  for _, r in ipairs(tend.ps()) do if r.path == "/user/main" then seen = r.state end end
end)
tend.sleep(0.2) -- main waits
local now
for _, r in ipairs(tend.ps()) do if r.path == "/user/main" then now = r.state end end
print(seen, now) -- busy no more once it waited (the REPL's loop after Ctrl-C)
tend.shutdown(0)
]]
  lu.assertEquals(out, "waiting\trunning\n")
end

local function idle() return function() end end

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

function TestInspect:test_an_idle_actors_upvalues_and_counts()
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

function TestInspect:test_a_busy_actor_is_read_without_disturbing_it()
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

function TestInspect:test_a_hook_tables_fields_and_a_busy_receive()
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

function TestInspect:test_restarts_timers_and_watchers()
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

function TestInspect:test_a_dead_actor_gives_nil_a_bad_argument_an_error()
  local c = tend.spawn(counter, { args = { 0 } })
  H.stop_all(c)
  lu.assertNil(tend.inspect(c))
  local ok, err = pcall(tend.inspect, "c")
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "tend.inspect: ref: expected an actor ref, got a string")
end

-- tend.tree() built its text with values left on the stack between
-- luaL_Buffer operations: past the buffer's first KB it corrupted the heap.
function TestInspect:test_tree_of_a_wide_and_deep_tree_is_whole()
  local parents = {}
  for i = 1, 30 do
    parents[i] = tend.spawn(function(ctx)
      ctx:spawn(idle, { name = "child" })
      return idle()
    end, { name = "parent" .. i })
  end
  local deep = tend.spawn(function(ctx)
    local function level(c, n)
      if n > 0 then c:spawn(function(cc) level(cc, n - 1) return idle() end, { name = "l" .. n }) end
    end
    level(ctx, 40)
    return idle()
  end, { name = "deep" })
  H.settle()
  local text
  for _ = 1, 20 do text = tend.tree() end
  local lines = select(2, text:gsub("\n", "\n"))
  -- /user, main, 30 parents and their children, deep and 40 levels, /system
  lu.assertEquals(lines, 1 + 1 + 60 + 1 + 40 + 1)
  lu.assertStrContains(text, "\n  parent30 [running] restarts=0 mailbox=0\n    child [running]")
  lu.assertStrContains(text, "\n" .. string.rep("  ", 41) .. "l1 [running]")
  for i = 1, 30 do tend.stop(parents[i]) end
  H.stop_all(deep)
end
