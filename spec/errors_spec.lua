-- Errors: structured values, failures in actors, InitError, bad returns.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestErrors = {}

function TestErrors:tearDown() H.assert_clean() end

function TestErrors:test_tend_error_is_a_structured_value()
  local e = tend.error("Timeout", "no reply in 1 s", { after = 1 })
  lu.assertEquals(e.kind, "Timeout")
  lu.assertEquals(e.message, "no reply in 1 s")
  lu.assertEquals(e.data, { after = 1 })
  lu.assertEquals(tostring(e), "Timeout: no reply in 1 s")
end

function TestErrors:test_raise_carries_kind_message_data_where_and_traceback()
  local caught
  local a = tend.spawn(function()
    return function(msg, ctx)
      local ok, e = xpcall(function()
        tend.raise("ArithmeticError", "division by zero", { x = 1 })
      end, function(e) e.traceback = debug.traceback("", 2) return e end)
      caught = e
    end
  end)
  a:send("go")
  H.settle()
  lu.assertEquals(caught.kind, "ArithmeticError")
  lu.assertEquals(caught.message, "division by zero")
  lu.assertEquals(caught.data.x, 1)
  lu.assertStrMatches(caught.where, ".*errors_spec%.lua:%d+: ")
  lu.assertStrContains(tostring(caught), "errors_spec.lua")
  H.stop_all(a)
end

function TestErrors:test_bad_kind()
  lu.assertErrorMsgContains("bad argument #1", tend.error, nil)
  lu.assertErrorMsgContains("data: expected a table, got number", tend.error, "K", "m", 3)
end

function TestErrors:test_failing_actor_is_restarted_and_the_message_dropped()
  local s0 = tend.stats()
  local seen, starts = {}, 0
  local a = tend.spawn(function()
    starts = starts + 1
    return function(msg) seen[#seen + 1] = msg if msg == "boom" then error("kaboom") end end
  end)
  a:send("fine")
  a:send("boom")
  a:send("after")
  H.settle()
  lu.assertTrue(tend.alive(a))
  lu.assertEquals(starts, 2)
  lu.assertEquals(seen, { "fine", "boom", "after" })
  local s1 = tend.stats()
  lu.assertEquals(s1.failures - s0.failures, 1)
  lu.assertEquals(s1.restarts - s0.restarts, 1)
  lu.assertEquals(s1.dead_letters - s0.dead_letters, 0)
  H.stop_all(a)
end

function TestErrors:test_factory_error_is_an_init_error()
  local f0 = tend.stats().failures
  local a = tend.spawn(function() error("no config") end)
  H.settle()
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(tend.stats().failures - f0, 1)
end

function TestErrors:test_factory_must_return_a_behavior()
  local f0 = tend.stats().failures
  local a = tend.spawn(function() return 42 end)
  local b = tend.spawn(function() return { pre_start = function() end } end)
  H.settle()
  lu.assertFalse(tend.alive(a))
  lu.assertFalse(tend.alive(b))
  lu.assertEquals(tend.stats().failures - f0, 2)
end

function TestErrors:test_pre_start_error_stops_before_any_message()
  local got = {}
  local a = tend.spawn(function()
    return { pre_start = function() error("not ready") end,
             receive = function(self, m) got[#got + 1] = m end }
  end)
  a:send(1)
  H.settle()
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(got, {})
end

function TestErrors:test_behavior_returning_junk_fails()
  local f0 = tend.stats().failures
  local a = tend.spawn(function() return function() return 17 end end)
  a:send("x")
  H.settle()
  lu.assertEquals(tend.stats().failures - f0, 1)
  H.stop_all(a)
end

function TestErrors:test_non_string_error_values_are_kept()
  local a = tend.spawn(function() return function() error({ code = 7 }) end end)
  local f0 = tend.stats().failures
  a:send("x")
  H.settle()
  lu.assertEquals(tend.stats().failures - f0, 1)
  H.stop_all(a)
end

function TestErrors:test_post_stop_error_is_logged_and_the_actor_still_dies()
  local a = tend.spawn(function()
    return { receive = function() end, post_stop = function() error("cleanup failed") end }
  end)
  H.stop_all(a)
  lu.assertFalse(tend.alive(a))
end
