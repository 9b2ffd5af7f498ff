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

-- tend's global error() (a faster build of the position) says what Lua's
-- own says: the position of the level asked for, none at level 0 or for a
-- value that is not a string, NUL bytes kept, a bad level refused.
function TestErrors:test_error_says_what_lua_error_says()
  local line = debug.getinfo(1, "l").currentline
  local function two() error("up two", 2) end
  local _, e1 = pcall(error, "plain")
  local _, e2 = pcall(function() error("here") end)
  local _, e3 = pcall(function() two() end)
  local _, e4 = pcall(function() error("none", 0) end)
  local _, e5 = pcall(function() error({ code = 7 }) end)
  local _, e6 = pcall(function() error("a\0b") end)
  local ok7, e7 = pcall(error, "x", "z")
  local _, e8 = pcall(function() error(42) end)
  local src = debug.getinfo(1, "S").short_src
  lu.assertEquals(e1, "plain") -- level 1 is pcall itself, a C function: no line
  lu.assertEquals(e2, src .. ":" .. (line + 3) .. ": here")
  lu.assertEquals(e3, src .. ":" .. (line + 4) .. ": up two")
  lu.assertEquals(e4, "none")
  lu.assertEquals(e5, { code = 7 })
  lu.assertEquals(e6, src .. ":" .. (line + 7) .. ": a\0b")
  lu.assertFalse(ok7)
  lu.assertStrContains(e7, "bad argument #2 to 'error' (number expected, got string)")
  lu.assertEquals(e8, 42) -- a number stays a number
end

-- A child that fails the same way again and again gets the same traceback
-- (its text is reused); a failure elsewhere gets its own.
function TestErrors:test_each_failure_has_the_traceback_of_where_it_failed()
  local seen = {}
  local function fail_a() error("in a") end
  local function fail_b() error("in b") end
  local sup = tend.spawn(function(ctx)
    local c = ctx:spawn(function()
      return function(m) if m == "a" then fail_a() else fail_b() end end
    end)
    return function(m) c:send(m) end
  end, { supervisor = tend.one_for_one { max_retries = 100, decider = function(err)
    seen[#seen + 1] = err
    return "restart"
  end } })
  for _, m in ipairs { "a", "a", "b", "a" } do
    sup:send(m)
    H.settle()
  end
  lu.assertEquals(#seen, 4)
  local line_a = debug.getinfo(fail_a, "S").linedefined
  local line_b = debug.getinfo(fail_b, "S").linedefined
  for i, which in ipairs { "a", "a", "b", "a" } do
    local line = which == "a" and line_a or line_b
    lu.assertStrContains(seen[i].message, "in " .. which)
    lu.assertStrContains(seen[i].traceback, "errors_spec.lua:" .. line .. ": in upvalue 'fail_" .. which .. "'")
  end
  lu.assertEquals(seen[1].traceback, seen[2].traceback)
  lu.assertNotEquals(seen[3].traceback, seen[1].traceback)
  lu.assertEquals(seen[4].traceback, seen[1].traceback)
  H.stop_all(sup)
end
