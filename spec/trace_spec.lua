-- Trace and determinism: JSON lines with fixed keys, byte-identical replay
-- by seed, another seed another trace; tend.trace listeners.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local timeline = require "tend.timeline"

TestTrace = {}

function TestTrace:tearDown() H.assert_clean() end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A restart storm with jitter: backoff supervisors, random crashes.
local storm = [[
local tend = require "tend"
local function flaky(ctx, id)
  return function(msg, ctx)
    if tend.random() < 0.3 then tend.raise("Flaky", "worker " .. id) end
    ctx:reply(id)
  end
end
local sups = {}
for i = 1, 10 do
  sups[i] = tend.spawn(tend.backoff.on_failure(flaky, { name = "w", args = { i },
    min_backoff = 0.5, max_backoff = 20, random_factor = 0.2 }), { name = "s" .. i })
end
for round = 1, 30 do
  for i = 1, 10 do sups[i]:send(round) end
  tend.sleep(1)
end
local s = tend.stats()
print(s.failures, s.spawned, tend.now())
]]

function TestTrace:test_same_seed_same_trace_and_stdout_byte_for_byte()
  local script = H.script(storm)
  local t1, t2, t3 = os.tmpname(), os.tmpname(), os.tmpname()
  local out1, _, c1 = H.run({ "--virtual-time", "--seed", "11", "--trace", t1, script })
  local out2, _, c2 = H.run({ "--virtual-time", "--seed", "11", "--trace", t2, script })
  local out3 = H.run({ "--virtual-time", "--seed", "12", "--trace", t3, script })
  lu.assertEquals(c1, 0)
  lu.assertEquals(c2, 0)
  local a, b, c = read(t1), read(t2), read(t3)
  lu.assertTrue(#a > 10000, "a real storm: " .. #a .. " bytes")
  lu.assertEquals(a, b)
  lu.assertEquals(out1, out2)
  lu.assertNotEquals(a, c)
  lu.assertNotEquals(out1, out3)
  for _, p in ipairs { t1, t2, t3, script } do os.remove(p) end
end

function TestTrace:test_lines_have_fixed_keys_and_formats()
  local script = H.script([[
local tend = require "tend"
local a = tend.spawn(function() return function() tend.raise("Boom", "bad \"quote\"") end end,
  { name = "a", supervisor = nil })
a:send(1)
tend.sleep(1)
tend.stop(a)
]])
  local t = os.tmpname()
  local _, _, code = H.run({ "--virtual-time", "--seed", "3", "--trace", t, script })
  lu.assertEquals(code, 0)
  local lines = {}
  for l in read(t):gmatch("[^\n]+") do lines[#lines + 1] = l end
  lu.assertEquals(lines[1], '{"t":0.000000,"ev":"trace","path":"/","detail":"seed 3"}')
  local text = table.concat(lines, "\n")
  lu.assertStrContains(text, '{"t":0.000000,"ev":"spawn","path":"/user/a"}')
  lu.assertStrContains(text, '{"t":0.000000,"ev":"fail","path":"/user/a","kind":"Boom","message":"bad \\"quote\\""}')
  lu.assertStrContains(text, '{"t":0.000000,"ev":"directive","path":"/user/a","directive":"restart","clause":"default","count":0}')
  lu.assertStrContains(text, '{"t":0.000000,"ev":"restart","path":"/user/a","count":1,"incarnation":2}')
  lu.assertStrContains(text, '{"t":1.000000,"ev":"terminated","path":"/user/a","reason":"normal"}')
  for i, l in ipairs(lines) do
    local e = timeline.parse_line(l)
    lu.assertNotNil(e, "line " .. i .. " is JSON: " .. l)
    lu.assertStrMatches(l, '^{"t":%d+%.%d%d%d%d%d%d,"ev":"[%w_]+","path":"[^"]*".*}$')
  end
  os.remove(t)
  os.remove(script)
end

function TestTrace:test_window_use_in_directive_events()
  local events = {}
  tend.trace(function(e) if e.ev == "directive" then events[#events + 1] = e end end)
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function() error("x") end end, { name = "c" })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { max_retries = 3, within = 10, window = "sliding" } })
  local c = tend.ask(sup, "c", 1)
  c:send(1) H.settle()
  c:send(2) H.settle()
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(#events, 2)
  lu.assertEquals(events[1].window, { 1, 3, 10.0 })
  lu.assertEquals(events[2].window, { 2, 3, 10.0 })
  lu.assertEquals(events[2].clause, "default")
  H.stop_all(sup)
end

function TestTrace:test_listeners_get_tables_between_turns()
  local seen = {}
  tend.trace(function(e) seen[#seen + 1] = e.ev .. " " .. e.path end)
  local a = tend.spawn(function() return function() end end, { name = "listened" })
  H.settle()
  H.stop_all(a)
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(seen, { "spawn /user/listened", "start /user/listened",
    "stop /user/listened", "terminated /user/listened" })
end

function TestTrace:test_backoff_events_carry_delay_draw_and_algorithm()
  local seen = {}
  tend.trace(function(e) if e.ev == "backoff" then seen[#seen + 1] = e end end)
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    return function() error("x") end
  end, { min_backoff = 2, max_backoff = 2, random_factor = 0.5 }))
  sup:send(1)
  H.settle()
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(#seen, 1)
  lu.assertEquals(seen[1].algorithm, "exponential")
  lu.assertEquals(seen[1].count, 1)
  lu.assertAlmostEquals(seen[1].delay, 2 * (1 + seen[1].draw * 0.5), 1e-6)
  H.stop_all(sup)
end

function TestTrace:test_trace_file_that_cannot_be_opened_is_a_usage_error()
  local _, err, code = H.run({ "--trace", "/nonexistent/dir/t.jsonl", "-e", "" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "--trace: cannot open /nonexistent/dir/t.jsonl")
end

-- os.exit writes what the trace file and the listeners hold before the
-- process ends (with or without its close argument); the actors' post_stop
-- do not run (tend.shutdown is the ending that stops them).
function TestTrace:test_os_exit_writes_the_buffered_trace()
  for _, close in ipairs { "", ", false", ", true" } do
    local script = H.script([[
local tend = require "tend"
tend.trace(function(e) if e.ev == "stop" then print("listener: stop " .. e.path) end end)
local a = tend.spawn(function()
  return { receive = function() end, post_stop = function() print("post_stop ran") end }
end, { name = "a" })
tend.sleep(1)
print("exiting")
tend.stop(a) -- its stop event is queued for the listener; post_stop never runs
os.exit(3]] .. close .. [[)
]])
    local t, o, e = os.tmpname(), os.tmpname(), os.tmpname()
    -- os.exit ends the process without closing the host (as Lua's leaves
    -- the state): an ASan build's leak check would report its records
    local _, _, code = os.execute("ASAN_OPTIONS=detect_leaks=0 '" ..
      require("tend.internal").executable() .. "' --virtual-time --seed 5 --trace " .. t ..
      " " .. script .. " >" .. o .. " 2>" .. e .. " </dev/null")
    local out, err = read(o), read(e)
    os.remove(o)
    os.remove(e)
    lu.assertEquals(code, 3, err)
    lu.assertEquals(out, "exiting\nlistener: stop /user/a\n")
    lu.assertEquals(read(t), table.concat({
      '{"t":0.000000,"ev":"trace","path":"/","detail":"seed 5"}',
      '{"t":0.000000,"ev":"spawn","path":"/user/main"}',
      '{"t":0.000000,"ev":"spawn","path":"/user/a"}',
      '{"t":0.000000,"ev":"start","path":"/user/a","incarnation":1}',
      '{"t":1.000000,"ev":"stop","path":"/user/a","reason":"normal"}', "" }, "\n"))
    os.remove(t)
    os.remove(script)
  end
end

function TestTrace:test_trace_start_events_carry_the_incarnation()
  local starts, restarts = {}, {}
  tend.trace(function(e)
    if e.ev == "start" and e.path:match("/crashy$") then starts[#starts + 1] = e.incarnation end
    if e.ev == "restart" and e.path:match("/plain$") then restarts[#restarts + 1] = e.incarnation end
    if e.ev == "start" and e.path:match("/plain$") then starts.plain = e.incarnation end
  end)
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    return function(msg) error("crash") end
  end, { name = "crashy", min_backoff = 1, max_backoff = 1, random_factor = 0 }))
  sup:send("x")
  tend.sleep(1.5)
  sup:send("x")
  tend.sleep(1.5)
  local plain = tend.spawn(function() return function() error("x") end end, { name = "plain" })
  plain:send(1)
  plain:send(2)
  H.settle()
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals({ starts[1], starts[2], starts[3], #starts }, { 1, 2, 3, 3 })
  lu.assertEquals(starts.plain, 1)
  lu.assertEquals(restarts, { 2, 3 })
  H.stop_all(sup, plain)
end

-- A dead letter to no actor is traced at /deadLetters; mail left in a
-- mailbox at death, at the actor's path.
function TestTrace:test_dead_letters_are_traced_at_deadLetters_or_the_actors_path()
  local seen = {}
  tend.trace(function(e) if e.ev == "dead_letter" then seen[#seen + 1] = e.path end end)
  local gone = tend.spawn(function() return function() end end, { name = "gone" })
  H.stop_all(gone)
  gone:send("late")
  local gate = tend.spawn(function() return function(m, ctx) ctx:sleep(10) end end, { name = "gate" })
  gate:send("block")
  H.settle()
  gate:send("left")
  H.stop_all(gate)
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(seen, { "/deadLetters", "/user/gate" })
end

-- The trace gives the reason of each stop: a child stopped by its
-- stopping parent "shutdown", an actor stopped by another "normal".
function TestTrace:test_trace_reasons_of_stops()
  local seen = {}
  tend.trace(function(e)
    if (e.ev == "stop" or e.ev == "terminated") and e.path:match("/tparent") then
      seen[#seen + 1] = e.ev .. " " .. e.path:match("[^/]+$") .. " " .. e.reason
    end
  end)
  local parent = tend.spawn(function(ctx)
    ctx:spawn(function() return function() end end, { name = "kid" })
    return function() end
  end, { name = "tparent" })
  H.settle()
  H.stop_all(parent)
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(seen, { "stop tparent normal", "stop kid shutdown", "terminated kid shutdown",
    "terminated tparent normal" })
end

-- Trace strings are JSON: quotes, backslashes, newlines, tabs and other
-- control characters escaped; times rounded to the microsecond.
function TestTrace:test_trace_lines_escape_strings_and_round_times()
  local script = H.script([[
local tend = require "tend"
tend.sleep(0.0000015)
local a = tend.spawn(function()
  return function() tend.raise("Boom", 'a "quote", a \\ backslash,\na newline,\ta tab and \1') end
end, { name = "a" })
a:send(1)
tend.sleep(1)
tend.stop(a)
]])
  local t = os.tmpname()
  local _, _, code = H.run({ "--virtual-time", "--seed", "1", "--trace", t, script })
  lu.assertEquals(code, 0)
  local f = assert(io.open(t, "rb"))
  local text = f:read("a")
  f:close()
  lu.assertStrContains(text, '{"t":0.000002,"ev":"spawn","path":"/user/a"}\n')
  lu.assertStrContains(text, '"kind":"Boom","message":"a \\"quote\\", a \\\\ backslash,\\na newline,\\ta tab and \\u0001"}\n')
  os.remove(t)
  os.remove(script)
end

-- A trace that cannot be written (a full disk): said once on stderr, the
-- file keeps its whole lines only, and the run ends with status 1 (it
-- ended 0 with nothing said).
function TestTrace:test_trace_write_error_is_said_once_and_fails_the_run()
  local out, err, code = H.run({ "--trace", "/dev/full", "-e",
    'local tend = require "tend"; for i = 1, 3 do tend.spawn(function() return function() end end) end; print("ran")' })
  lu.assertEquals(out, "ran\n")
  lu.assertEquals(code, 1)
  lu.assertEquals(err, "tend: --trace /dev/full: No space left on device; the trace stops at its last whole line\n")
end
