-- How an actor stops: the reason it stops with (normal, shutdown,
-- killed), its post_stop, a PoisonPill, a task that returns or stops itself.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestStop = {}

function TestStop:tearDown() H.assert_clean() end

local tk = tend.testkit

-- A child that echoes, reports its lifecycle to `log` and fails on
-- {raise = kind}.
local function worker(ctx, name, log)
  log = log or {}
  return {
    pre_start = function() log[#log + 1] = name .. ":start" end,
    post_stop = function() log[#log + 1] = name .. ":stop" end,
    receive = function(self, msg, ctx)
      if type(msg) == "table" and msg.raise then tend.raise(msg.raise, "boom") end
      if type(msg) == "table" and msg.nap then ctx:sleep(msg.nap) return end
      ctx:reply(msg)
    end,
  }
end

-- A supervisor with `strategy` whose children (names) start in order;
-- asked "children" it replies with them, {stop = ref} stops one.
local function supervisor(strategy, names, log)
  return tend.spawn(function(ctx)
    for _, name in ipairs(names) do ctx:spawn(worker, { name = name, args = { name, log } }) end
    return function(msg, ctx)
      if msg == "children" then ctx:reply(ctx:children()) end
      if type(msg) == "table" and msg.stop then ctx:stop(msg.stop) end
      if type(msg) == "table" and msg.tend_stop then tend.stop(msg.tend_stop) end
    end
  end, { supervisor = strategy })
end

local function reason_of(p, ref) return p:expect_terminated(ref, 10).reason end

function TestStop:test_a_child_stopped_by_its_supervisor_is_shutdown()
  local sup = supervisor(nil, { "a", "b" })
  local kids = tend.ask(sup, "children", 1)
  local p = tk.probe()
  p:watch(kids[1])
  p:watch(kids[2])
  sup:send { stop = kids[1] }      -- ctx:stop(child)
  sup:send { tend_stop = kids[2] } -- tend.stop from its supervisor
  lu.assertEquals(reason_of(p, kids[1]), "shutdown")
  lu.assertEquals(reason_of(p, kids[2]), "shutdown")
  H.stop_all(sup, p.ref)
end

function TestStop:test_an_actor_stopping_itself_or_stopped_by_another_is_normal()
  local sup = supervisor(nil, { "a", "b" })
  local kids = tend.ask(sup, "children", 1)
  local p = tk.probe()
  p:watch(kids[1])
  p:watch(kids[2])
  tend.stop(kids[1]) -- from the main chunk: not its supervisor
  local self_stop = tend.spawn(function() return function() return tend.stopped end end)
  p:watch(self_stop)
  self_stop:send("bye")
  lu.assertEquals(reason_of(p, kids[1]), "normal")
  lu.assertEquals(reason_of(p, self_stop), "normal")
  H.stop_all(sup, p.ref)
end

function TestStop:test_a_post_stop_that_overruns_its_shutdown_is_killed()
  local a = tend.spawn(function()
    return { receive = function() end, post_stop = function() tend.sleep(10) end }
  end, { shutdown = 1 })
  local p = tk.probe()
  p:watch(a)
  tend.stop(a)
  lu.assertEquals(reason_of(p, a), "killed")
  H.stop_all(p.ref)
end

-- Akka's PoisonPill: the messages before it are processed, post_stop runs,
-- the ones after it are dead letters; a watcher sees reason "normal".
function TestStop:test_a_PoisonPill_stops_after_the_messages_before_it()
  local got = {}
  local a = tend.spawn(function()
    return { receive = function(_, m) got[#got + 1] = m end,
             post_stop = function() got[#got + 1] = "post_stop" end }
  end)
  local dead0 = tend.stats().dead_letters
  local w = tend.spawn(function(ctx)
    ctx:watch(a)
    return function(m) if m.tend == "terminated" then got[#got + 1] = m.reason end end
  end)
  tend.sleep(0)
  a:send(1) a:send(2) tend.poison(a) a:send(3)
  tend.sleep(0.01)
  lu.assertEquals(got, { 1, 2, "post_stop", "normal" })
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(tend.stats().dead_letters - dead0, 1)
  tend.stop(w)
  tend.poison(a) -- a dead actor: nothing
end

-- A behavior returned by an actor that has begun stopping is ignored: the
-- post_stop that runs is the one in place when it stopped.
function TestStop:test_a_behavior_returned_while_stopping_is_ignored()
  local log = {}
  local a = tend.spawn(function()
    return {
      receive = function(self, msg, ctx)
        ctx:stop()
        return { receive = function() end, post_stop = function() log[#log + 1] = "new" end }
      end,
      post_stop = function() log[#log + 1] = "old" end,
    }
  end)
  a:send("bye")
  H.settle()
  lu.assertEquals(log, { "old" })
  lu.assertFalse(tend.alive(a))
end

-- A task (the main chunk, a tend.after function) that returns stops
-- normally: its watchers see "normal".
function TestStop:test_a_task_that_returns_stops_normally()
  local path = H.script([[
local tend = require "tend"
local main = tend.self()
tend.spawn(function(ctx)
  ctx:watch(main)
  return function(m) print(m.reason) tend.shutdown(0) end
end)
tend.sleep(0)
]])
  local out, _, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "normal\n")
  os.remove(path)
end

-- tend.stop(tend.self()) in the main chunk did nothing: a task that stops
-- itself ends there.
function TestStop:test_a_task_that_stops_itself_ends_there()
  local out, _, code = H.run({ "-e", [[
    local tend = require "tend"
    tend.spawn(function() return { receive = function() end, post_stop = function() print("child stopped") end } end)
    print("before")
    tend.stop(tend.self())
    print("after")]] })
  lu.assertEquals(out, "before\nchild stopped\n")
  lu.assertEquals(code, 0)
end
