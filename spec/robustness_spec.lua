-- Robustness: what a script can do that must not crash, hang or corrupt
-- the host (the defects found by fuzzing and fault injection), each pinned
-- by the case that found it.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestRobustness = {}

function TestRobustness:tearDown() H.assert_clean() end

local function idle() return function() end end

-- tend.tree() built its text with values left on the stack between
-- luaL_Buffer operations: past the buffer's first KB it corrupted the heap.
function TestRobustness:test_tree_of_a_wide_and_deep_tree_is_whole()
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

-- tend.describe of a strategy with a big decider table kept a table on the
-- stack while adding to its buffer.
function TestRobustness:test_describe_a_decider_of_many_kinds()
  local clauses = {}
  for i = 1, 200 do clauses[string.format("SomeLongErrorKindName%03d", i)] = "restart" end
  local words = tend.describe(tend.one_for_one { decider = clauses })
  lu.assertStrContains(words, "decider: SomeLongErrorKindName001 -> restart, ")
  lu.assertStrContains(words, "SomeLongErrorKindName200 -> restart, anything else -> escalate")
end

-- coroutine.yield() in an actor's own code lost the message and made the
-- next step crash: it is BadYield, a failure like any other, with the
-- message as the failing one; in a coroutine the actor made, it yields.
function TestRobustness:test_yield_in_a_behavior_is_a_BadYield_failure()
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

function TestRobustness:test_yield_in_a_factory_is_an_InitError_with_cause_BadYield()
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

function TestRobustness:test_yield_in_the_main_chunk_raises_BadYield()
  local ok, err = pcall(coroutine.yield, 1)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "BadYield")
end

-- A stack overflow in a behavior is a failure like any other: its
-- traceback keeps the first 10 and the last 11 levels and says how many it
-- skipped (it counted the levels one by one from the top: minutes).
function TestRobustness:test_stack_overflow_in_a_behavior_is_handled()
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

-- Signals while an actor spins where the watchdog cannot preempt it (a
-- gsub callback, a sort comparator, a __gc metamethod): the loop never
-- runs, so the signal is kept by the watchdog (one signal: exit after a
-- grace of 1 s) or the handler (a second signal: at once), with 128 + sig.
local SPIN = {
  gsub = 'string.gsub("x", "x", function() while true do end end)',
  sort = 'table.sort({3, 2, 1}, function(a, b) while true do end end)',
  gc = 'setmetatable({}, { __gc = function() while true do end end }); collectgarbage()',
}

-- Runs a script whose actor spins in `place`, sends sig `times` times once
-- it spins; returns the exit status and what the host wrote.
local function signalled(place, sig, times)
  local script = H.script(string.format([[
    local tend = require "tend"
    tend.spawn(function(ctx)
      ctx:after(0.01, "go")
      return function()
        io.stdout:write("spinning\n") io.stdout:flush()
        %s
      end
    end)]], SPIN[place]))
  local out = os.tmpname()
  local kills = string.rep("kill -" .. sig .. " $pid; sleep 0.05; ", times)
  local sh = table.concat({
    "'" .. require("tend.internal").executable() .. "' " .. script .. " >" .. out .. " 2>&1 & pid=$!",
    "for i in $(seq 100); do grep -q spinning " .. out .. " && break; sleep 0.05; done",
    kills .. "wait $pid; echo $?",
  }, "\n")
  local p = io.popen("sh -c '" .. sh:gsub("'", "'\\''") .. "'")
  local status = tonumber(p:read("a"):match("(%d+)%s*$"))
  p:close()
  local f = io.open(out, "rb")
  local text = f:read("a")
  f:close()
  os.remove(out)
  os.remove(script)
  return status, text
end

function TestRobustness:test_signal_once_while_spinning_in_gsub_sort_or_gc()
  local status, text = signalled("gsub", "INT", 1)
  lu.assertEquals(status, 130)
  lu.assertStrContains(text, "signal 2 not taken within 1 s")
  lu.assertEquals((signalled("sort", "TERM", 1)), 143)
  lu.assertEquals((signalled("gc", "HUP", 1)), 129)
end

function TestRobustness:test_second_signal_while_spinning_exits_at_once()
  local status, text = signalled("sort", "INT", 2)
  lu.assertEquals(status, 130)
  lu.assertNotStrContains(text, "not taken within") -- the handler, not the watchdog
  lu.assertEquals((signalled("gc", "TERM", 2)), 143)
  lu.assertEquals((signalled("gsub", "HUP", 2)), 129) -- HUP never forces: the grace
end

-- An actor with a max_message_time stuck where no hook runs (a __gc
-- metamethod): the watchdog ends the host after max(10 x 0.1 s, 10 s), with
-- status 70 (an OS supervisor restarts it) and the actor's name; the trace
-- keeps what it held.
function TestRobustness:test_a_budgeted_actor_stuck_in_gc_ends_the_host_with_70()
  local script = H.script([[
local tend = require "tend"
tend.spawn(function()
  return function() ]] .. SPIN.gc .. [[ end
end, { name = "stuck", max_message_time = 0.1 }):send(1)
]])
  local trace = os.tmpname()
  local t0 = require("tend.internal").wall_clock()
  local _, err, code = H.run({ "--trace", trace, script })
  local took = require("tend.internal").wall_clock() - t0
  lu.assertEquals(code, 70, err)
  lu.assertStrMatches(err, "tend: /user/stuck: stuck for 10%.%d s where it cannot be preempted " ..
    "%(a __gc metamethod or a long C call%), past 10 x its max_message_time %(0%.1 s%) " ..
    "and at least 10 s: exiting with status 70\n")
  lu.assertTrue(took >= 10 and took < 60, took)
  local f = io.open(trace, "rb")
  lu.assertStrContains(f:read("a"), '"ev":"start","path":"/user/stuck","incarnation":1}\n')
  f:close()
  os.remove(trace)
  os.remove(script)
end

-- Lua's hooks belong to one coroutine: the watchdog armed only the actor's
-- own, so a loop in a coroutine the actor made (wrap or resume) reached no
-- hook and ended the host with 70 at 10 s. It is bounded by the budget as
-- the actor's own code: BudgetExceeded, the actor restarts, the host lives.
function TestRobustness:test_a_loop_in_a_coroutine_the_actor_made_is_bounded_by_its_budget()
  local script = H.script([[
local tend = require "tend"
local clock = require("tend.internal").wall_clock
local t0 = clock()
local function spin() while true do end end
local a = tend.spawn(function() return {
  receive = function(self, msg, ctx)
    if msg == "wrap" then coroutine.wrap(spin)()
    elseif msg == "resume" then coroutine.resume(coroutine.create(spin)) print("resume returned")
    else ctx:reply(string.format("%.1f", clock() - t0)) end
  end,
  pre_restart = function(self, err, msg) print(msg, err.kind) end } end, { max_message_time = 0.2 })
a:send("wrap")
a:send("resume")
print("pong after", tend.ask(a, "ping"))
]])
  local t0 = require("tend.internal").wall_clock()
  local out, code = H.run_bounded(30, { script })
  local took = require("tend.internal").wall_clock() - t0
  lu.assertEquals(code, 0, out)
  lu.assertStrMatches(out, ".*\nwrap\tBudgetExceeded\n.*\nresume\tBudgetExceeded\n.*")
  lu.assertStrContains(out, "warn  /user/$4: BudgetExceeded: the message ran longer than " ..
    "max_message_time (0.2 s); restart (restarts 1)\n")
  lu.assertStrContains(out, "\npong after\t0.4\n") -- two budgets of 0.2 s
  lu.assertNotStrContains(out, "resume returned") -- the actor's own code fails too
  lu.assertTrue(took < 5, took)
  os.remove(script)
end

-- After the main chunk returns, actors busy in one long call (preempted,
-- no max_message_time) are all that is left: the host's end begins; a call
-- that ends within its actor's shutdown time is followed by post_stop, one
-- still running then is killed (no post_stop, reason "killed"), as OTP's
-- shutdown timeout; the host exits 0 instead of spinning for ever.
function TestRobustness:test_a_spinning_actor_is_killed_at_the_end_of_its_shutdown_time()
  local script = H.script([[
local tend = require "tend"
local clock = require("tend.internal").wall_clock
tend.spawn(function() return {
  receive = function() while true do end end,
  post_stop = function() print("spin post_stop") end } end, { name = "spin", shutdown = 1 }):send(1)
tend.spawn(function() return {
  receive = function() local t = clock() while clock() - t < 0.5 do end print("short done") end,
  post_stop = function() print("short post_stop") end } end, { name = "short" }):send(1)
tend.sleep(0.1)
print("main returns")
]])
  local trace = os.tmpname()
  local t0 = require("tend.internal").wall_clock()
  local out, err, code = H.run({ "--trace", trace, script })
  local took = require("tend.internal").wall_clock() - t0
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "main returns\nshort done\nshort post_stop\n")
  lu.assertStrMatches(err, "^%[[%d.]+%] warn  /user/spin: still in its call at the end of its " ..
    "shutdown time; killed\n$")
  lu.assertTrue(took >= 1 and took < 30, took)
  local f = io.open(trace, "rb")
  local text = f:read("a")
  f:close()
  lu.assertStrContains(text, '"ev":"terminated","path":"/user/short","reason":"shutdown"}')
  lu.assertStrContains(text, '"ev":"terminated","path":"/user/spin","reason":"killed"}')
  os.remove(trace)
  os.remove(script)
end

-- A call killed at the end of its shutdown time never gets its post_stop,
-- even when its supervisor restarts in the middle of a group restart (the
-- group's "build it anew" went to every held child, and the killed actor
-- took it as leave to run post_stop once its own children were gone). m is
-- stopped by c while busy, so it is not in p's group restart that c's
-- failure begins; r's busy child keeps that group waiting; y makes p fail
-- (g restarts it) after m was killed and before m's child k is.
function TestRobustness:test_a_call_killed_at_the_end_runs_no_post_stop_when_its_group_is_abandoned()
  local script = H.script([[
local tend = require "tend"
local clock = require("tend.internal").wall_clock
local function spin(s) local t = clock() while clock() - t < s do end end
local function forever() return function() while true do end end end
local refs, made = {}, 0
tend.spawn(function(gctx)
  gctx:spawn(function(ctx)
    made = made + 1
    if made == 1 then
      refs.c = ctx:spawn(function() return function()
        spin(0.2) tend.stop(refs.m) error("c fails") end end, { name = "c" })
      refs.m = ctx:spawn(function(mctx)
        refs.k = mctx:spawn(forever, { name = "k", shutdown = 2 })
        return { receive = function() while true do end end,
                 post_stop = function() print("m post_stop") end }
      end, { name = "m", shutdown = 0.3 })
      refs.r = ctx:spawn(function(rctx)
        refs.kk = rctx:spawn(forever, { name = "kk", shutdown = 2.5 })
        return function() end
      end, { name = "r" })
    end
    return function(msg) if msg == "boom" then error("p fails") end end
  end, { name = "p", children = tend.all_for_one {} })
  return function() end
end, { name = "g" })
tend.sleep(0.1)
tend.spawn(function() return function()
  spin(1.2) tend.send("/user/g/p", "boom") while true do end end end, { name = "y", shutdown = 3.5 }):send(1)
refs.k:send(1) refs.kk:send(1) refs.m:send(1) refs.c:send(1)
print("main returns")
]])
  local trace = os.tmpname()
  local out, err, code = H.run({ "--trace", trace, script })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "main returns\n")
  local killed = {}
  for p in err:gmatch("warn  (%S+): still in its call at the end of its shutdown time; killed\n") do
    killed[#killed + 1] = p
  end
  lu.assertEquals(killed, { "/user/g/p/m", "/user/g/p/m/k", "/user/g/p/r/kk", "/user/y" })
  local f = io.open(trace, "rb")
  local text = f:read("a")
  f:close()
  -- m was killed before p failed, and p restarted before m was gone
  local at = {}
  for t, what in text:gmatch('{"t":([%d.]+),"ev":"([^"]+","path":"[^"]+)"') do
    at[what] = at[what] or tonumber(t)
  end
  lu.assertTrue(at['fail","path":"/user/g/p'] < at['terminated","path":"/user/g/p/m'], text)
  lu.assertStrContains(text, '"ev":"terminated","path":"/user/g/p/m","reason":"killed"}')
  lu.assertStrContains(text, '"ev":"restart","path":"/user/g/p","count":1,"incarnation":2}')
  os.remove(trace)
  os.remove(script)
end

-- max_message_time covers the factory and the hooks, not only messages;
-- a decider has a budget too (its supervisor's max_message_time, else 1 s).
function TestRobustness:test_budget_stops_a_looping_factory_hook_and_decider()
  local seen, looped = {}, {}
  local function once(what) -- loops forever the first time only
    if not looped[what] then looped[what] = true while true do end end
  end
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() once("factory") return idle() end, { max_message_time = 0.05, name = "factory" })
    ctx:spawn(function()
      return { receive = function() error("once") end,
               pre_restart = function() once("hook") end }
    end, { max_message_time = 0.05, name = "hook" })
    ctx:spawn(function() return function() error("decide me") end end, { name = "decided" })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { max_message_time = 0.05, supervisor = tend.one_for_one { decider = function(err, child)
    seen[#seen + 1] = child:name() .. " " .. err.kind .. (err.cause and ("<" .. err.cause.kind) or "")
    if child:name() == "decided" then once("decider") end
    return child:name() == "hook" and "restart" or "stop"
  end } })
  H.settle()
  local kids = tend.ask(sup, "children")
  lu.assertEquals(#kids, 2) -- the factory was stopped
  local function restarts()
    local r = {}
    for _, row in ipairs(tend.ps()) do r[row.path:match("[^/]+$")] = row.restarts end
    return r
  end
  kids[1]:send("fail")
  H.settle()
  lu.assertEquals(restarts().hook, 1) -- its pre_restart was cut short; it restarted
  kids[2]:send("fail")
  H.settle()
  lu.assertEquals(seen, { "factory InitError<BudgetExceeded", "hook Error", "decided Error" })
  lu.assertEquals(looped, { factory = true, hook = true, decider = true })
  lu.assertEquals(restarts()[sup:name()], 1) -- the decider's failure escalated
  H.stop_all(sup)
end

-- tend timeline: "t":1e400 is valid JSON (infinity) and drew an axis of
-- endless ticks; a directory gave a Lua traceback.
function TestRobustness:test_timeline_refuses_infinity_and_directories()
  local trace = os.tmpname()
  local f = assert(io.open(trace, "wb"))
  f:write('{"t":0.5,"ev":"spawn","path":"/user/a"}\n{"t":1e400,"ev":"spawn","path":"/user/b"}\n')
  f:close()
  local svg = os.tmpname()
  local _, err, code = H.run({ "timeline", trace, "-o", svg })
  lu.assertEquals(code, 1)
  lu.assertStrContains(err, trace .. ":2: malformed trace line: number out of range: 1e400")
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir " .. dir)
  _, err, code = H.run({ "timeline", dir, "-o", svg })
  lu.assertEquals(code, 1)
  lu.assertEquals(err, "tend timeline: " .. dir .. ": Is a directory\n")
  os.remove(trace)
  os.remove(svg)
  os.execute("rmdir " .. dir)
end

-- A trace that cannot be written (a full disk): said once on stderr, the
-- file keeps its whole lines only, and the run ends with status 1 (it
-- ended 0 with nothing said).
function TestRobustness:test_trace_write_error_is_said_once_and_fails_the_run()
  local out, err, code = H.run({ "--trace", "/dev/full", "-e",
    'local tend = require "tend"; for i = 1, 3 do tend.spawn(function() return function() end end) end; print("ran")' })
  lu.assertEquals(out, "ran\n")
  lu.assertEquals(code, 1)
  lu.assertEquals(err, "tend: --trace /dev/full: No space left on device; the trace stops at its last whole line\n")
end

-- An error that is a table or a function was described by its address
-- ("table: 0x55e2..."), so one seed gave two traces: now by its type, or
-- by its __tostring when that works.
function TestRobustness:test_raised_tables_and_functions_are_described_without_addresses()
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
function TestRobustness:test_nul_invalid_utf8_and_newlines_in_error_messages()
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

-- overflow = "fail": a flood counted one failure per overflowing send but
-- made one decision and one restart. The first overflow fails the actor;
-- while that failure waits for its decision, the others are dead letters
-- only, so counts, trace and log agree: one failure, one restart.
function TestRobustness:test_a_flood_into_a_failing_mailbox_is_one_failure()
  local decisions, got = 0, {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function(msg) got[#got + 1] = msg end end,
      { name = "small", mailbox = { capacity = 2, overflow = "fail" } })
    return function(msg, ctx)
      local c = ctx:children()[1]
      for i = 1, 100 do c:send(i) end -- before c can run
    end
  end, { supervisor = tend.one_for_one { decider = function(err)
    decisions = decisions + 1
    lu.assertEquals(err.kind, "MailboxOverflow")
    return "restart"
  end } })
  local before = tend.stats()
  sup:send("flood")
  H.settle()
  local after = tend.stats()
  lu.assertEquals(after.failures - before.failures, 1)
  lu.assertEquals(after.restarts - before.restarts, 1)
  lu.assertEquals(decisions, 1)
  lu.assertEquals(after.dead_letters - before.dead_letters, 98)
  lu.assertEquals(got, { 1, 2 }) -- kept through the restart, then taken
  H.stop_all(sup)
end

-- Durations past what the clock holds (about 2.3e9 s) were clamped
-- silently (sleep(9.3e9) came back 7e9 s early): beyond 1e9 s is refused.
function TestRobustness:test_durations_beyond_1e9_seconds_are_refused()
  local function err(f, ...)
    local ok, e = pcall(f, ...)
    lu.assertFalse(ok)
    return tostring(e)
  end
  lu.assertStrContains(err(tend.sleep, 9.3e9), "sleep: seconds: expected a number of seconds <= 1e9 (or math.huge)")
  lu.assertStrContains(err(tend.after, 2e9, function() end), "tend.after: seconds: expected")
  lu.assertStrContains(err(tend.one_for_one, { within = 5e9 }), "option 'within': expected a number of seconds <= 1e9")
  lu.assertStrContains(err(tend.backoff.on_failure, idle, { min_backoff = 1, max_backoff = 3e9 }),
    "option 'max_backoff': expected a number of seconds <= 1e9")
  lu.assertStrContains(err(tend.spawn, idle, { shutdown = 4e9 }), "option 'shutdown': expected a number of seconds <= 1e9")
  local t0 = tend.now()
  tend.sleep(1e9) -- the longest allowed, exact under the virtual clock
  lu.assertEquals(tend.now() - t0, 1e9)
end

-- Errors named tend's internals ('chaos_event', local 'opts').
function TestRobustness:test_chaos_bad_arguments_are_named_for_the_caller()
  local function err(f, ...) return tostring(select(2, pcall(f, ...))) end
  lu.assertStrContains(err(tend.chaos.flaky, function() end, 5),
    "tend.chaos.flaky: options: expected a table {p = ..., error = ...}, got number")
  lu.assertStrContains(err(tend.chaos.crash, 5), "tend.chaos.crash: ref: expected an actor ref, got number")
  lu.assertStrContains(err(tend.chaos.kill, {}), "tend.chaos.kill: ref: expected an actor ref, got table")
  lu.assertStrContains(err(tend.chaos.freeze, "/user/x", 1), "tend.chaos.freeze: ref: expected an actor ref")
  lu.assertStrContains(err(tend.chaos.crash_on, "*", function() end, 3), "tend.chaos.crash_on: options: expected a table")
end

-- tend.stop(tend.self()) in the main chunk did nothing: a task that stops
-- itself ends there.
function TestRobustness:test_a_task_that_stops_itself_ends_there()
  local out, _, code = H.run({ "-e", [[
    local tend = require "tend"
    tend.spawn(function() return { receive = function() end, post_stop = function() print("child stopped") end } end)
    print("before")
    tend.stop(tend.self())
    print("after")]] })
  lu.assertEquals(out, "before\nchild stopped\n")
  lu.assertEquals(code, 0)
end

-- A closed stdout (the reader of a pipe went away) killed the host with
-- SIGPIPE before any post_stop ran: now it is said once and the tree stops.
function TestRobustness:test_a_closed_stdout_stops_the_tree_gracefully()
  local script = H.script([[
    local tend = require "tend"
    tend.spawn(function() return { receive = function() end,
      post_stop = function() io.stderr:write("post_stop ran\n") end } end)
    for i = 1, 100000 do print(i) end]])
  local err = os.tmpname()
  os.execute("(\"" .. require("tend.internal").executable() .. "\" " .. script .. " 2>" .. err
    .. "; echo $? >>" .. err .. ") | head -n 1 >/dev/null")
  local f = io.open(err, "rb")
  local text = f:read("a")
  f:close()
  os.remove(err)
  os.remove(script)
  lu.assertStrContains(text, "tend: stdout is closed (EPIPE); stopping every actor\npost_stop ran\n141\n")
end

-- A behavior (or hook) table whose __index raises made the lookup of
-- `receive` raise in the scheduler, outside any pcall: the worker died.
-- The lookup is protected now: the actor fails as if the hook had raised.
function TestRobustness:test_a_behavior_whose_index_raises_fails_the_actor_only()
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

-- One actor with 10^5 pending timers: each fire walked the owner's list
-- of timers (minutes); now each leaves it at once. All fire, in order.
function TestRobustness:test_an_actor_with_many_timers()
  local got, n = {}, 100000
  local a = tend.spawn(function(ctx)
    for i = 1, n do ctx:after(i % 7 / 1000, i) end
    return function(msg) got[#got + 1] = msg end
  end)
  tend.sleep(0.01)
  lu.assertEquals(#got, n)
  lu.assertEquals(got[1], 7) -- due at 0: 7, 14, ... in the order armed
  lu.assertEquals(got[n], 99994) -- the last armed of those due last
  H.stop_all(a)
end

-- A typed actor restarted by its parent (a group restart) while it waited
-- for its own backoff restart stayed "waiting" for good: its clauses were
-- skipped from then on. The parent's restart ends the wait.
function TestRobustness:test_a_typed_actor_restarted_by_its_parent_while_backing_off()
  local decided = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.supervise(function()
      return function(msg) if msg == "fail" then tend.raise("Flaky", "x") end end
    end):on_failure("Flaky", tend.restart_with_backoff(10, 10)), { name = "typed" })
    ctx:spawn(function() return function() error("sibling") end end, { name = "sibling" })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = tend.all_for_one { decider = function(err, child)
    decided[#decided + 1] = child:name() .. " " .. err.kind
    return "restart"
  end } })
  local kids = tend.ask(sup, "children")
  kids[1]:send("fail") -- typed: backs off for 10 s
  H.settle()
  kids[2]:send("boom") -- the group restarts, typed included
  H.settle()
  kids[1]:send("fail") -- its own clause handles it again: not its parent
  H.settle()
  lu.assertEquals(decided, { "sibling Error" })
  H.stop_all(sup)
end
