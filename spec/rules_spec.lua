-- Rules of the runtime that no other spec pins, one test per rule, named
-- for it. Each was once a mutant of the C core that `make test` let
-- through (scripts/mutate, scripts/mutants.txt): a rule is only real when
-- a mutant of it fails a spec.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestRules = {}

function TestRules:tearDown() H.assert_clean() end

-- A child that logs its lifecycle and its messages to `log`, counts its
-- messages (answers "get" with the count) and fails on {raise = kind}.
local function worker(ctx, name, log)
  local n = 0
  return {
    pre_start = function() log[#log + 1] = name .. ":start" end,
    post_stop = function() log[#log + 1] = name .. ":stop" end,
    receive = function(self, msg, ctx)
      if type(msg) == "table" and msg.raise then tend.raise(msg.raise, "boom") end
      if msg == "get" then ctx:reply(n) return end
      n = n + 1
      log[#log + 1] = name .. ":" .. tostring(msg)
    end,
  }
end

-- A supervisor with the given strategy and named workers; it answers any
-- message with its children.
local function supervisor(strategy, names, log)
  return tend.spawn(function(ctx)
    for _, name in ipairs(names) do ctx:spawn(worker, { name = name, args = { name, log } }) end
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = strategy })
end

local function clear(t)
  for i = #t, 1, -1 do t[i] = nil end
end

-- crashes `ref` at each of the given times (seconds from t0)
local function crash_at(ref, t0, times)
  for _, t in ipairs(times) do
    tend.sleep(t0 + t - tend.now())
    ref:send({ raise = "Boom" })
    H.settle()
  end
end

-- ------------------------------------------------------------ groups

function TestRules:test_group_restart_restarts_members_in_start_order()
  local log = {}
  local sup = supervisor(tend.all_for_one {}, { "a", "b", "c" }, log)
  local a, b, c = table.unpack(tend.ask(sup, "?", 1))
  H.settle()
  clear(log)
  c:send({ raise = "Boom" }) -- the youngest fails: the oldest still goes first
  H.settle()
  lu.assertEquals(log, { "a:stop", "a:start", "b:stop", "b:start", "c:stop", "c:start" })
  clear(log)
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(log, { "a:stop", "a:start", "b:stop", "b:start", "c:stop", "c:start" })
  H.stop_all(sup)
  clear(log)
  sup = supervisor(tend.rest_for_one {}, { "a", "b", "c", "d" }, log)
  a, b, c = table.unpack(tend.ask(sup, "?", 1))
  H.settle()
  clear(log)
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(log, { "b:stop", "b:start", "c:stop", "c:start", "d:stop", "d:start" })
  H.stop_all(sup)
end

function TestRules:test_default_pre_restart_stops_children_youngest_first()
  local log = {}
  local parent = tend.spawn(function(ctx)
    for _, name in ipairs { "c1", "c2", "c3" } do
      ctx:spawn(worker, { name = name, args = { name, log } })
    end
    return function(msg) error("parent fails") end
  end)
  H.settle()
  clear(log)
  parent:send("go")
  H.settle()
  -- the old children stop youngest first; the new instance's start in order
  lu.assertEquals(log, { "c3:stop", "c2:stop", "c1:stop", "c1:start", "c2:start", "c3:start" })
  H.stop_all(parent)
end

-- A restart of a group member is a system message: it is handled before
-- the user messages already waiting in that member's mailbox.
function TestRules:test_system_message_before_queued_user_messages()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local a = ctx:spawn(worker, { name = "a", args = { "a", log } })
    local b = ctx:spawn(worker, { name = "b", args = { "b", log } })
    return function(msg, ctx)
      if msg == "go" then
        a:send("x1")
        a:send("x2") -- queued in a's mailbox ...
        tend.kill(b) -- ... before the all_for_one restart reaches a
      else
        ctx:reply({ a, b })
      end
    end
  end, { supervisor = tend.all_for_one { decider = { Killed = "restart" } } })
  local a = tend.ask(sup, "?", 1)[1]
  H.settle()
  clear(log)
  sup:send("go")
  H.settle()
  lu.assertEquals(log, { "a:stop", "a:start", "a:x1", "a:x2", "b:stop", "b:start" })
  lu.assertEquals(tend.ask(a, "get", 1), 2) -- the new instance got both
  H.stop_all(sup)
end

-- ------------------------------------------------------------ DeathWatch

function TestRules:test_watching_the_same_target_twice_delivers_one_terminated()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    ctx:watch(target)
    return function(msg) got[#got + 1] = msg end
  end)
  H.settle()
  tend.stop(target)
  H.settle()
  tend.sleep(1)
  lu.assertEquals(#got, 1)
  lu.assertEquals(got[1].tend, "terminated")
  lu.assertTrue(got[1].ref == target)
  -- twice with messages: one delivery, the last message
  got = {}
  local t2 = tend.spawn(function() return function() end end)
  local w2 = tend.spawn(function(ctx)
    ctx:watch(t2, "first")
    ctx:watch(t2, "second")
    return function(msg) got[#got + 1] = msg end
  end)
  H.settle()
  tend.stop(t2)
  H.settle()
  tend.sleep(1)
  lu.assertEquals(got, { "second" })
  H.stop_all(w, w2)
end

-- ------------------------------------------------------------ the clock

-- Under the virtual clock, time moves only when no actor can run: a busy
-- actor that runs far past a scheduler quantum (20 000 steps) never sees
-- tend.now() jump to the next timer.
function TestRules:test_virtual_clock_stands_still_while_an_actor_can_run()
  local n, lo, hi = 0, math.huge, -math.huge
  local busy = tend.spawn(function()
    return function(msg, ctx)
      n = n + 1
      local t = tend.now()
      if t < lo then lo = t end
      if t > hi then hi = t end
      if n < 50000 then ctx.self:send("again") end
    end
  end)
  local t0 = tend.now()
  busy:send("go")
  tend.sleep(5) -- the next timer: our own wake-up at t0 + 5
  lu.assertEquals(n, 50000)
  lu.assertEquals(lo, t0)
  lu.assertEquals(hi, t0)
  lu.assertEquals(tend.now() - t0, 5)
  H.stop_all(busy)
end

-- ------------------------------------------------------------ ask

function TestRules:test_ask_times_out_after_5_s_by_default()
  local mute = tend.spawn(function() return function() end end)
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, mute, "anyone?")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertEquals(tend.now() - t0, 5)
  local inner
  local asker = tend.spawn(function()
    return function(msg, ctx)
      local t1 = tend.now()
      local ok2, e = pcall(ctx.ask, ctx, mute, "you?")
      inner = { ok2, e.kind, tend.now() - t1 }
    end
  end)
  asker:send("go")
  tend.sleep(6)
  lu.assertEquals(inner, { false, "Timeout", 5 })
  H.stop_all(mute, asker)
end

-- ------------------------------------------------------------ windows

-- OTP's boundary (add_restart keeps entries >= Now - Period): a restart
-- exactly `within` seconds old is still in the sliding window.
function TestRules:test_sliding_window_keeps_a_restart_exactly_within_old()
  local sup = supervisor(tend.one_for_one { max_retries = 2, within = 10, window = "sliding" },
    { "w" }, {})
  local w = tend.ask(sup, "?", 1)[1]
  local p = tk.probe()
  p:watch(w)
  crash_at(w, tend.now(), { 0, 5, 10 }) -- at 10, the restart at 0 still counts
  lu.assertEquals(p:expect_terminated(w, 1).reason.kind, "Boom")
  H.stop_all(sup, p.ref)
end

function TestRules:test_sliding_window_drops_a_restart_just_over_within_old()
  local sup = supervisor(tend.one_for_one { max_retries = 2, within = 10, window = "sliding" },
    { "w" }, {})
  local w = tend.ask(sup, "?", 1)[1]
  crash_at(w, tend.now(), { 0, 5, 10 + 1 / 512 }) -- 1/512 s: exact in ns and in floats
  lu.assertTrue(tend.alive(w))
  lu.assertEquals(tend.ask(w, "get", 1), 0)
  H.stop_all(sup)
end

-- The fixed window follows the same rule: exactly `within` after it
-- opened it is still open; just after, a new one opens.
function TestRules:test_fixed_window_is_open_exactly_within_after_it_opened()
  local sup = supervisor(tend.one_for_one { max_retries = 2, within = 10, window = "fixed" },
    { "w" }, {})
  local w = tend.ask(sup, "?", 1)[1]
  crash_at(w, tend.now(), { 0, 5, 10 })
  lu.assertFalse(tend.alive(w))
  H.stop_all(sup)
  sup = supervisor(tend.one_for_one { max_retries = 2, within = 10, window = "fixed" }, { "w" }, {})
  w = tend.ask(sup, "?", 1)[1]
  crash_at(w, tend.now(), { 0, 5, 10 + 1 / 512 }) -- 1/512 s: exact in ns and in floats
  lu.assertTrue(tend.alive(w))
  H.stop_all(sup)
end

-- ------------------------------------------------------------ generator

-- xoshiro256** seeded by splitmix64: a known seed gives a known sequence
-- (the same numbers as the C test and the reference implementation).
function TestRules:test_seed_42_gives_a_known_sequence()
  local out, _, code = H.run({ "--seed", "42", "-e", [[
local tend = require "tend"
local t = {}
for i = 1, 5 do t[#t + 1] = string.format("%.17g", tend.random()) end
print(table.concat(t, " "))
t = {}
for i = 1, 5 do t[#t + 1] = tostring(tend.random(1, 1000)) end
print(table.concat(t, " "))
]] })
  lu.assertEquals(code, 0)
  lu.assertEquals(out,
    "0.083862971059882163 0.37898025066266861 0.68004341102813937 0.92469294532538759 0.99180391428210279\n"
    .. "569 435 136 127 62\n")
end

-- ------------------------------------------------------------ trace

function TestRules:test_trace_start_events_carry_the_incarnation()
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
