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

-- ------------------------------------------------------------ text that tells the truth

-- A NUL byte is part of a message: the error value keeps it, the trace
-- writes it as \u0000 and a log line as \0 (text cut there said less).
function TestErrors:test_a_NUL_byte_in_a_message_is_kept_in_the_value_the_trace_and_the_log()
  lu.assertEquals(tend.error("K", "before\0after").message, "before\0after")
  local ok, e = pcall(tend.raise, "K", "before\0after")
  lu.assertFalse(ok)
  lu.assertEquals({ e.kind, e.message }, { "K", "before\0after" })
  lu.assertErrorMsgContains("kind must not hold a NUL byte", tend.error, "K\0x")
  local script = H.script([[
    local tend = require "tend"
    local a = tend.spawn(function() return function() tend.raise("K", "before\0after") end end,
      { restart = "temporary", name = "a" })
    a:send("go")
    tend.sleep(0.1)
  ]])
  local trace = os.tmpname()
  local _, err, code = H.run({ "--log-level", "debug", "--trace", trace, script })
  lu.assertEquals(code, 0)
  lu.assertStrContains(err, "debug /user/a: fail (K: before\\0after)\n")
  lu.assertStrContains(err, "warn  /user/a: " .. script .. ":2: K: before\\0after; stop")
  local f = assert(io.open(trace))
  local text = f:read("a")
  f:close()
  lu.assertStrContains(text, '"ev":"fail","path":"/user/a","kind":"K","message":"before\\u0000after"}')
  os.remove(trace)
  os.remove(script)
end

-- Lua's tracebacks (debug.traceback, the REPL's, an argument error) name a
-- C function by the first loaded module that holds it: tend.core, which
-- the user never wrote, holds none itself (it is a view of the module).
function TestErrors:test_tracebacks_name_tend_ask_not_tend_core_ask()
  local core = require "tend.core"
  lu.assertNil(next(core)) -- (raw: what luaL_traceback searches)
  lu.assertIs(core.ask, tend.ask) -- reads go through
  local names = {}
  for k in pairs(core) do names[#names + 1] = k end
  lu.assertTrue(#names > 50) -- and pairs
  local b = tend.spawn(function() return function() error("no") end end)
  local _, tb = xpcall(tend.ask, function(e) return debug.traceback(tostring(e)) end, b, "hi", 1)
  lu.assertStrContains(tb, "[C]: in function 'tend.ask'")
  lu.assertNotStrContains(tb, "tend.core")
  H.stop_all(b)
  local input = H.script('local b = tend.spawn(function() return function() error("x") end end) tend.ask(b, 1)\n')
  local p = io.popen(string.format("cat %s | %s -i 2>&1", input, require("tend.internal").executable()))
  local out = p:read("a") -- the REPL's own traceback (a pipe: the REPL reads it)
  p:close()
  os.remove(input)
  lu.assertStrContains(out, "AskFailed")
  lu.assertStrContains(out, "[C]: in function 'tend.ask'")
  lu.assertNotStrContains(out, "tend.core")
end

-- A configuration the environment refuses (a port taken, a node that
-- cannot start) ends the main chunk with one line naming the script's
-- line; a traceback into tend would only hide it. Other errors keep theirs.
function TestErrors:test_a_configuration_error_of_the_main_chunk_is_one_line()
  local script = H.script([[
    local tend = require "tend"
    local l = tend.tcp.listen { port = 0, handler = function() end }
    local port = tend.ask(l, "port")
    tend.tcp.listen { port = port, handler = function() end }
  ]])
  local out, err, code = H.run({ "--real-time", script })
  lu.assertEquals({ out, code }, { "", 1 })
  lu.assertStrMatches(err, "tend: " .. script:gsub("%p", "%%%0") ..
    ":4: ListenError: tend%.tcp%.listen: 127%.0%.0%.1:%d+: address already in use\n")
  os.remove(script)
  script = H.script('local tend = require "tend"\n\ntend.node.start { name = "x", nats = "local" }\n')
  out, err, code = H.run({ "--virtual-time", script })
  lu.assertEquals({ out, code }, { "", 1 })
  lu.assertEquals(err, "tend: " .. script .. ":3: NodeError: tend.node.start: a node on NATS cannot run " ..
    "under the virtual clock (--virtual-time): simulate the nodes with tend.sim.nodes\n")
  os.remove(script)
  script = H.script('local tend = require "tend"\ntend.raise("Mine", "my own")\n')
  _, err, code = H.run({ script })
  lu.assertEquals(code, 1)
  lu.assertStrContains(err, "tend: " .. script .. ":2: Mine: my own\nstack traceback:\n")
  os.remove(script)
end

function TestErrors:test_tend_kinds_names_the_kinds_of_errkind_h_and_refuses_others()
  local K = require "tend.kinds"
  lu.assertEquals(K.Timeout, "Timeout")
  lu.assertEquals(K.InitError, "InitError")
  lu.assertEquals(K.ChaosCrash, "ChaosCrash")
  local n = 0
  for name, v in pairs(K) do
    lu.assertEquals(v, name)
    n = n + 1
  end
  lu.assertEquals(n, 37)
  lu.assertErrorMsgContains("tend.kinds: no error kind 'Timout'", function() return K.Timout end)
  -- the default decider's words come from the same list
  lu.assertStrContains(tend.describe(tend.one_for_one {}),
    "decider: InitError, Killed, DeathPact -> stop, anything else -> restart")
end

local tk = tend.testkit

local function idle() return function() end end

-- A non-string error value is kept: err.value is what was raised.
function TestErrors:test_a_non_string_error_is_kept_as_the_errors_value()
  local seen
  local raised = { code = 7 }
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function() error(raised) end end, { name = "w" })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function(err) seen = err return "resume" end } })
  tend.ask(sup, "?", 1):send("x")
  H.settle()
  lu.assertEquals(seen.kind, "Error")
  lu.assertIs(seen.value, raised)
  H.stop_all(sup)
end

-- A behavior is a function or a table whose receive is a function; a
-- factory that returns anything else fails with InitError.
function TestErrors:test_a_table_without_a_receive_function_is_no_behavior()
  local p = tk.probe()
  local a = tend.spawn(function() return { receive = "not a function" } end)
  p:watch(a)
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason.kind, "InitError")
  lu.assertStrContains(t.reason.message, "table; expected a behavior (function or table with receive)")
  H.stop_all(p.ref)
end

-- coroutine.yield() in an actor's own code lost the message and made the
-- next step crash: it is BadYield, a failure like any other, with the
-- message as the failing one; in a coroutine the actor made, it yields.
function TestErrors:test_yield_in_a_behavior_is_a_BadYield_failure()
  local kinds, failed_msgs = {}, {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      return {
        receive = function(self, msg, ctx)
          if msg == "yield" then coroutine.yield() end
          local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
          ctx:reply(co(msg) + co(10))
        end,
        pre_restart = function(self, err, msg) failed_msgs[#failed_msgs + 1] = msg end,
      }
    end, { name = "c" })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function(err)
    kinds[#kinds + 1] = err.kind
    return "restart"
  end } })
  local c = tend.ask(sup, "child")
  local before = tend.stats().failures
  local ok, err = pcall(tend.ask, c, "yield", 0.5)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "AskFailed") -- the message failed; no reply
  lu.assertEquals(err.cause.kind, "BadYield")
  lu.assertEquals(kinds, { "BadYield" })
  lu.assertEquals(failed_msgs, { "yield" })
  lu.assertEquals(tend.stats().failures - before, 1)
  lu.assertEquals(tend.ask(c, 1), 22) -- restarted, and user coroutines work
  H.stop_all(sup)
end

function TestErrors:test_yield_in_a_factory_is_an_InitError_with_cause_BadYield()
  local seen
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() coroutine.yield() return idle() end)
    return idle()
  end, { supervisor = tend.one_for_one { decider = function(err)
    seen = err
    return "stop"
  end } })
  H.settle()
  lu.assertEquals(seen.kind, "InitError")
  lu.assertEquals(seen.cause.kind, "BadYield")
  H.stop_all(sup)
end

function TestErrors:test_yield_in_the_main_chunk_raises_BadYield()
  local ok, err = pcall(coroutine.yield, 1)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "BadYield")
end

-- A stack overflow in a behavior is a failure like any other: its
-- traceback keeps the first 10 and the last 11 levels and says how many it
-- skipped (it counted the levels one by one from the top: minutes).
function TestErrors:test_stack_overflow_in_a_behavior_is_handled()
  local seen
  local function f(n) return 1 + f(n + 1) end
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function() f(1) end end, { name = "deep" })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function(err)
    seen = err
    return "stop"
  end } })
  tend.ask(sup, "child"):send("go")
  H.settle()
  lu.assertStrContains(seen.message, "stack overflow")
  local skipped = tonumber(seen.traceback:match("%(skipping (%d+) levels%)"))
  lu.assertTrue(skipped > 100000)
  lu.assertEquals(select(2, seen.traceback:gsub("\n", "")), 22)
  H.stop_all(sup)
end

-- Around the skip: a failure's traceback lists every level up to 22 and,
-- from 23, the first 10, "(skipping N levels)" and the last 11 (a stack
-- shorter than the skip is walked to its end, a deeper one counted first).
function TestErrors:test_a_traceback_skips_from_the_23rd_level_on()
  local seen
  local function rec(k)
    if k == 0 then error("deep") end
    return (rec(k - 1)) -- (not a tail call: a level each)
  end
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function(k) rec(k) end end, { name = "rec" })
    return function(msg, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { max_retries = 100, decider = function(err)
    seen = err.traceback
    return "resume"
  end } })
  local child = tend.ask(sup, "child")
  local function levels(k)
    child:send(k)
    H.settle()
    local _, n = seen:gsub("\n", "")
    return n, tonumber(seen:match("%(skipping (%d+) levels%)"))
  end
  local base = levels(0) -- error, rec, the behavior, the worker
  lu.assertTrue(base >= 3 and base < 10)
  for k = 1, 25 - base do
    local n, skipped = levels(k)
    local all = base + k
    if all <= 22 then
      lu.assertEquals({ n, skipped }, { all, nil }, "levels " .. all)
    else
      lu.assertEquals({ n, skipped }, { 22, all - 21 }, "levels " .. all)
    end
  end
  lu.assertStrContains(seen, "in upvalue 'rec'")
  H.stop_all(sup)
end

-- error() with a message longer than its short buffer: the same words.
function TestErrors:test_error_with_a_long_message_keeps_its_position()
  local long = ("x"):rep(3000)
  local line = debug.getinfo(1, "l").currentline
  local _, e = pcall(function() error(long) end)
  local src = debug.getinfo(1, "S").short_src
  lu.assertEquals(e, src .. ":" .. (line + 1) .. ": " .. long)
end

-- An error that is a table or a function was described by its address
-- ("table: 0x55e2..."), so one seed gave two traces: now by its type, or
-- by its __tostring when that works.
function TestErrors:test_raised_tables_and_functions_are_described_without_addresses()
  local messages = {}
  local sup = tend.spawn(function(ctx)
    for _, v in ipairs {
      {}, print, setmetatable({}, { __tostring = function() return "nice" end }),
      setmetatable({}, { __tostring = function() error("bad") end }),
      setmetatable({}, { __name = "My.Type" }),
    } do
      ctx:spawn(function() return function() error(v) end end)
    end
    return function(msg, ctx) for _, c in ipairs(ctx:children()) do c:send("fail") end end
  end, { supervisor = tend.one_for_one { decider = function(err)
    messages[#messages + 1] = err.message
    return "stop"
  end } })
  sup:send("go")
  H.settle()
  lu.assertEquals(messages, { "(error object is a table value)", "(error object is a function value)",
    "nice", "(error object is a table value)", "(error object is a My.Type value)" })
  H.stop_all(sup)
end

-- A message with a NUL byte was cut there, invalid UTF-8 made the trace
-- line invalid JSON, and a newline split the log line.
function TestErrors:test_nul_invalid_utf8_and_newlines_in_error_messages()
  local trace = os.tmpname()
  local _, err = H.run({ "--trace", trace, "-e", [[
    local tend = require "tend"
    tend.spawn(function() return function() error("a\0b\255c\nd \xe2\x82\xac", 0) end end):send(1)
    tend.sleep(0.1)]] })
  local f = assert(io.open(trace, "rb"))
  local fail
  for line in f:lines() do
    local e = assert(require("tend.timeline").parse_line(line))
    if e.ev == "fail" then fail = e end
  end
  f:close()
  os.remove(trace)
  lu.assertEquals(fail.message, "a\0b\u{FFFD}c\nd €")
  lu.assertEquals(select(2, err:gsub("\n", "")), 1) -- one log line
  lu.assertStrContains(err, "Error: a\\0b\255c\\nd €; restart")
end

-- A behavior (or hook) table whose __index raises made the lookup of
-- `receive` raise in the scheduler, outside any pcall: the worker died.
-- The lookup is protected now: the actor fails as if the hook had raised.
function TestErrors:test_a_behavior_whose_index_raises_fails_the_actor_only()
  local kinds = {}
  local raising = setmetatable({}, { __index = function(_, k) error("no " .. k) end })
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return raising end, { name = "bad" })
    ctx:spawn(function()
      return function(msg) if msg == "become" then return raising end end
    end, { name = "becomes" })
    return function(msg, ctx) for _, c in ipairs(ctx:children()) do c:send(msg) end end
  end, { supervisor = tend.one_for_one { decider = function(err, child)
    kinds[#kinds + 1] = child:name() .. " " .. err.kind .. " " .. err.message:match("no [%w_]+")
    return "stop"
  end } })
  H.settle()
  sup:send("become")
  H.settle()
  sup:send("next")
  H.settle()
  table.sort(kinds)
  lu.assertEquals(kinds, { "bad InitError no pre_start", "becomes Error no receive" })
  H.stop_all(sup)
end
