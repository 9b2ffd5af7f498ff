-- Backoff supervisor queries (Akka's GetCurrentChild, GetRestartCount,
-- Reset) and with_handler_while_stopped (Akka's withHandlerWhileStopped).
-- Exact times under the virtual clock.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestBackoffQuery = {}

function TestBackoffQuery:tearDown() H.assert_clean() end

local function crasher(starts)
  return function(ctx)
    starts[#starts + 1] = tend.now()
    return function(msg, c)
      if msg == "crash" then error("boom") end
      c:reply("child: " .. tostring(msg))
    end
  end
end

local function spec(starts)
  return tend.backoff.on_failure(crasher(starts), { min_backoff = 1, max_backoff = 8,
    random_factor = 0, reset = "manual", name = "conn" })
end

function TestBackoffQuery:test_child_and_restart_count()
  local starts = {}
  local sup = tend.spawn(spec(starts), { name = "db" })
  H.settle()
  local c = tend.backoff.child(sup)
  lu.assertEquals(c:path(), "/user/db/conn")
  lu.assertEquals(tend.backoff.restart_count(sup), 0)
  c:send("crash")
  H.settle()
  lu.assertNil(tend.backoff.child(sup)) -- stopped, backing off 1 s
  lu.assertEquals(tend.backoff.restart_count(sup), 1)
  tend.sleep(1.5)
  local c2 = tend.backoff.child(sup)
  lu.assertTrue(c2 ~= nil and c2 ~= c) -- a new incarnation, a new ref
  tend.backoff.child(sup):send("crash")
  H.settle()
  lu.assertEquals(tend.backoff.restart_count(sup), 2)
  tend.sleep(3)
  lu.assertEquals(#starts, 3)
  lu.assertEquals(H.gaps(starts), { 1, 2.5 }) -- the second crash at 1.5, then 2 s
  H.stop_all(sup)
  local none, why = tend.backoff.child(sup)
  lu.assertNil(none)
  lu.assertEquals(why, "tend.backoff.child: Ref(/user/db) is not alive")
end

function TestBackoffQuery:test_reset_starts_the_delays_over()
  local starts = {}
  local sup = tend.spawn(spec(starts))
  H.settle()
  for _ = 1, 3 do -- delays 1, 2, 4
    tend.backoff.child(sup):send("crash")
    H.settle()
    tend.sleep(5)
  end
  lu.assertEquals(tend.backoff.restart_count(sup), 3)
  lu.assertTrue(tend.backoff.reset(sup))
  lu.assertEquals(tend.backoff.restart_count(sup), 0)
  tend.backoff.child(sup):send("crash")
  H.settle()
  tend.sleep(5)
  -- crashes at 0, 5, 10 (delays 1, 2, 4: starts 1, 7, 14), reset, a crash at
  -- 15: 1 s again (start 16), not 8
  lu.assertEquals(H.gaps(starts), { 1, 6, 7, 2 })
  H.stop_all(sup)
end

function TestBackoffQuery:test_queries_accept_names_and_check_their_argument()
  local sup = tend.spawn(spec({}))
  tend.register("db", sup)
  H.settle()
  lu.assertEquals(tend.backoff.restart_count("db"), 0)
  lu.assertEquals(tend.backoff.child("db"):name(), "conn")
  local plain = tend.spawn(function() return function() end end, { name = "plain" })
  lu.assertErrorMsgContains(
    "tend.backoff.child: sup: expected a backoff supervisor, got Ref(/user/plain)",
    tend.backoff.child, plain)
  lu.assertErrorMsgContains("tend.backoff.reset: sup: expected an actor ref",
    tend.backoff.reset, 42)
  H.stop_all(sup, plain)
end

function TestBackoffQuery:test_handler_while_stopped()
  local got = {}
  local handler = tend.spawn(function()
    return function(msg, ctx)
      got[#got + 1] = msg
      ctx:reply("handler: " .. msg)
    end
  end)
  local sup = tend.spawn(spec({}):with_handler_while_stopped(handler))
  lu.assertEquals(tend.ask(sup, "a", 1), "child: a")
  tend.backoff.child(sup):send("crash")
  H.settle()
  lu.assertEquals(tend.ask(sup, "b", 1), "handler: b") -- the sender is kept
  tend.sleep(2)
  lu.assertEquals(tend.ask(sup, "c", 1), "child: c")
  lu.assertEquals(got, { "b" })
  lu.assertStrContains(tend.describe(spec({}):with_handler_while_stopped(handler)),
    "while stopped, messages go to a handler")
  H.stop_all(sup, handler)
end

function TestBackoffQuery:test_handler_while_stopped_options()
  lu.assertErrorMsgContains("option 'handler_while_stopped': expected an actor ref",
    function() return spec({}):with_handler_while_stopped("h") end)
  lu.assertErrorMsgContains(
    "option 'handler_while_stopped' excludes 'stash' and 'reply_while_stopped'",
    function() return spec({}):with_stash(3):with_handler_while_stopped(tend.self()) end)
end
