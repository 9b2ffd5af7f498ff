-- A coroutine an actor made may wait in tend (ask, sleep): the actor
-- waits, and the resume returns what the coroutine yields or returns
-- next, as if its code had run in the actor's own. Where the actor cannot
-- yield (inside a sort's comparator), such a wait raises and nothing is
-- left waiting. Under the virtual clock.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local S = tend.stream

TestCoroutineWait = {}

function TestCoroutineWait:tearDown()
  H.assert_clean()
end

local function echo()
  return tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
end

function TestCoroutineWait:test_a_generator_may_ask()
  local e = echo()
  local gen = coroutine.wrap(function()
    for i = 1, 3 do coroutine.yield(tend.ask(e, i * 10)) end
    return "end"
  end)
  lu.assertEquals({ gen(), gen(), gen(), gen() }, { 10, 20, 30, "end" })
  tend.stop(e)
end

function TestCoroutineWait:test_resume_returns_once_the_sleep_is_over()
  local t0 = tend.now()
  local co = coroutine.create(function(a)
    tend.sleep(1)
    local b = coroutine.yield(a + 1)
    tend.sleep(0.5)
    return b * 2
  end)
  lu.assertEquals({ coroutine.resume(co, 1) }, { true, 2 })
  lu.assertEquals(tend.now() - t0, 1)
  lu.assertEquals({ coroutine.resume(co, 5) }, { true, 10 })
  lu.assertEquals(tend.now() - t0, 1.5)
  lu.assertEquals(coroutine.status(co), "dead")
end

function TestCoroutineWait:test_an_actor_waits_while_its_coroutine_does()
  local e = echo()
  local me = tend.self()
  local a = tend.spawn(function()
    return function(m)
      local co = coroutine.wrap(function() tend.sleep(1) return tend.ask(e, m) end)
      me:send({ m, co(), tend.now() })
    end
  end)
  local t0 = tend.now()
  a:send("x")
  a:send("y") -- waits in the mailbox while the first message's coroutine sleeps
  local r1, r2 = tend.receive(5), tend.receive(5)
  lu.assertEquals({ r1[1], r1[2], r1[3] - t0 }, { "x", "x", 1 })
  lu.assertEquals({ r2[1], r2[2], r2[3] - t0 }, { "y", "y", 2 })
  tend.stop(a)
  tend.stop(e)
end

function TestCoroutineWait:test_where_the_actor_cannot_yield_a_wait_raises()
  local t0 = tend.now()
  local ok, err = pcall(table.sort, { 3, 1, 2 }, function(x, y)
    local co = coroutine.wrap(function() tend.sleep(1) return x < y end)
    return co()
  end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "sleep: cannot wait here")
  lu.assertEquals(tend.now(), t0)
  tend.sleep(0.5) -- nothing was left waiting: the task waits as usual
  lu.assertEquals(tend.now() - t0, 0.5)
end

function TestCoroutineWait:test_a_map_async_call_whose_coroutine_sleeps_holds_its_stage()
  local t0 = tend.now()
  local r = S.range(1, 2):map_async(2, function(x)
    local co = coroutine.wrap(function() tend.sleep(1) return x * 3 end)
    return co()
  end):run_seq()
  lu.assertEquals(r, { 3, 6 })
  lu.assertEquals(tend.now() - t0, 2) -- one after the other: a sleep not the fiber's own
end
