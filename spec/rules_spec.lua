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

-- OTP's one_for_all and rest_for_one: the members stop youngest first
-- (reverse start order), then all start again in start order.
function TestRules:test_group_restart_restarts_members_in_start_order()
  local log = {}
  local sup = supervisor(tend.all_for_one {}, { "a", "b", "c" }, log)
  local a, b, c = table.unpack(tend.ask(sup, "?", 1))
  H.settle()
  clear(log)
  c:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(log, { "c:stop", "b:stop", "a:stop", "a:start", "b:start", "c:start" })
  clear(log)
  b:send({ raise = "Boom" }) -- the failed one is not first: the youngest is
  H.settle()
  lu.assertEquals(log, { "c:stop", "b:stop", "a:stop", "a:start", "b:start", "c:start" })
  H.stop_all(sup)
  clear(log)
  sup = supervisor(tend.rest_for_one {}, { "a", "b", "c", "d" }, log)
  a, b, c = table.unpack(tend.ask(sup, "?", 1))
  H.settle()
  clear(log)
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(log, { "d:stop", "c:stop", "b:stop", "b:start", "c:start", "d:start" })
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

-- A group restart suspends its members at once: the user messages
-- already waiting in a member's mailbox go to its new instance.
function TestRules:test_system_message_before_queued_user_messages()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local a = ctx:spawn(worker, { name = "a", args = { "a", log } })
    local b = ctx:spawn(worker, { name = "b", args = { "b", log } })
    return function(msg, ctx)
      if msg == "go" then
        a:send("x1")
        a:send("x2") -- queued in a's mailbox ...
        tend.chaos.kill(b) -- ... before the all_for_one restart reaches a
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
  lu.assertEquals(log, { "b:stop", "a:stop", "a:start", "a:x1", "a:x2", "b:start" })
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

-- ------------------------------------------------------------ deciders and directives

-- A decider table: the error's kind first, then "*", and with neither,
-- escalate (the supervisor fails; the guardian restarts it).
function TestRules:test_decider_table_kind_then_star_then_escalate()
  local function sup_with(decider)
    local starts = 0
    local sup = tend.spawn(function(ctx)
      starts = starts + 1
      ctx:spawn(worker, { name = "w", args = { "w", {} } })
      return function(msg, ctx) ctx:reply(ctx:children()[1]) end
    end, { supervisor = tend.one_for_one { decider = decider } })
    return sup, function() return starts end
  end
  local sup, starts = sup_with({ Boom = "resume", ["*"] = "restart" })
  local w = tend.ask(sup, "?", 1)
  w:send("x")
  w:send({ raise = "Boom" }) -- its kind: resume
  lu.assertEquals(tend.ask(w, "get", 1), 1)
  w:send({ raise = "Other" }) -- "*": restart
  lu.assertEquals(tend.ask(w, "get", 1), 0)
  lu.assertEquals(starts(), 1)
  H.stop_all(sup)
  sup, starts = sup_with({ Boom = "resume" })
  tend.ask(sup, "?", 1):send({ raise = "Other" }) -- no match, no "*": escalate
  H.settle()
  lu.assertEquals(starts(), 2)
  H.stop_all(sup)
end

-- When a supervisor that escalated a child's failure is resumed, that
-- child resumes too, with its state.
function TestRules:test_resuming_a_supervisor_resumes_the_child_it_escalated()
  local mid_starts = 0
  local top = tend.spawn(function(ctx)
    local mid = ctx:spawn(function(mctx)
      mid_starts = mid_starts + 1
      mctx:spawn(worker, { name = "leaf", args = { "leaf", {} } })
      return function(msg, c) c:reply(c:children()[1]) end
    end, { name = "mid", supervisor = tend.one_for_one { decider = { Boom = "escalate" } } })
    return function(msg, c) c:reply(mid) end
  end, { supervisor = tend.one_for_one { decider = { Escalated = "resume" } } })
  local leaf = tend.ask(tend.ask(top, "?", 1), "?", 1)
  leaf:send("x")
  leaf:send({ raise = "Boom" }) -- mid escalates; top resumes mid, and leaf with it
  leaf:send("y")
  H.settle()
  lu.assertEquals(tend.ask(leaf, "get", 1), 2)
  lu.assertEquals(mid_starts, 1)
  H.stop_all(top)
end

function TestRules:test_stop_directive_stops_the_group_in_start_order()
  local log = {}
  local sup = supervisor(tend.all_for_one { decider = { Boom = "stop" } }, { "a", "b", "c" }, log)
  local b = tend.ask(sup, "?", 1)[2]
  H.settle()
  clear(log)
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(log, { "a:stop", "b:stop", "c:stop" })
  lu.assertEquals(#tend.ask(sup, "?", 1), 0)
  H.stop_all(sup)
end

-- Every failure of a child reaches the decider, even when the child is
-- stopping by the time its supervisor gets to it.
function TestRules:test_every_failure_reaches_the_decider_even_of_a_stopping_child()
  local decided = {}
  local sup = tend.spawn(function(ctx)
    local c = ctx:spawn(worker, { name = "c", args = { "c", {} } })
    local m = ctx:spawn(worker, { name = "m", args = { "m", {} }, restart = "temporary" })
    return function(msg, ctx)
      tend.chaos.kill(c)
      tend.chaos.kill(m)
      tend.stop(m)
    end
  end, { supervisor = tend.all_for_one { decider = function(err, child)
    decided[#decided + 1] = child:name() .. " " .. err.kind
    return "restart"
  end } })
  H.settle()
  sup:send("go")
  H.settle()
  lu.assertEquals(decided, { "c Killed", "m Killed" })
  H.stop_all(sup)
end

-- With no window, max_retries counts restarts in total whatever the
-- window kind, even a count no sliding ring could hold.
function TestRules:test_no_window_counts_restarts_in_total_whatever_the_window_kind()
  local sup = supervisor(tend.one_for_one { max_retries = 1 << 31, window = "sliding" }, { "w" }, {})
  local w = tend.ask(sup, "?", 1)[1]
  crash_at(w, tend.now(), { 0, 1, 2 })
  lu.assertTrue(tend.alive(w))
  lu.assertEquals(tend.ask(w, "get", 1), 0)
  H.stop_all(sup)
end

-- ------------------------------------------------------------ restart types

function TestRules:test_a_permanent_child_that_stops_during_a_shutdown_is_not_restarted()
  local path = H.script([[
local tend = require "tend"
local starts = 0
local p
tend.spawn(function(ctx)
  p = ctx:spawn(function()
    starts = starts + 1
    return function(m) if m == "quit" then return tend.stopped end end
  end, { name = "p", restart = "permanent" })
  return { receive = function() end, post_stop = function() print("starts " .. starts) end }
end, { name = "a" })
tend.spawn(function()
  return { receive = function() end,
           post_stop = function(self, ctx) p:send("quit") ctx:sleep(1) end }
end, { name = "b" })
tend.sleep(0)
tend.shutdown(0)
]])
  local out, _, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "starts 1\n")
  os.remove(path)
end

function TestRules:test_a_permanent_child_that_stops_while_its_supervisor_stops_is_not_restarted()
  local p = tk.probe()
  local starts = 0
  local sup = tend.spawn(function(ctx)
    local c1 = ctx:spawn(function()
      starts = starts + 1
      return function(m) if m == "quit" then return tend.stopped end end
    end, { name = "c1", restart = "permanent" })
    ctx:spawn(function()
      return { receive = function() end, post_stop = function() c1:send("quit") end }
    end, { name = "c2" })
    return function(m, ctx) ctx:reply(c1) end
  end)
  local c1 = tend.ask(sup, "?", 1)
  p:watch(c1)
  tend.stop(sup) -- c2 first: its post_stop makes c1 stop by itself
  lu.assertEquals(p:expect_terminated(c1, 1).reason, "normal")
  lu.assertEquals(starts, 1)
  H.stop_all(p.ref)
end

-- ------------------------------------------------------------ the restart sequence

function TestRules:test_a_restart_cancels_the_actors_timers()
  local got = {}
  local a = tend.spawn(function(ctx)
    return function(msg, ctx)
      if msg == "arm" then
        ctx:after(1, "late")
        ctx:every(0.5, "tick")
      elseif msg == "fail" then
        error("fail")
      else
        got[#got + 1] = msg
      end
    end
  end)
  a:send("arm")
  a:send("fail")
  tend.sleep(3)
  lu.assertEquals(got, {})
  lu.assertEquals(tend.stats().timers, 0)
  H.stop_all(a)
end

-- The members of a group restart get the failed child's error in
-- pre_restart and post_restart: stopped youngest first, rebuilt in start
-- order (OTP).
function TestRules:test_group_members_restart_with_the_failed_siblings_error()
  local seen = {}
  local function member(ctx, name)
    return {
      receive = function(self, msg) if msg == "boom" then tend.raise("Boom", name) end end,
      pre_restart = function(self, err) seen[#seen + 1] = name .. " pre " .. err.kind .. " " .. err.message end,
      post_restart = function(self, err) seen[#seen + 1] = name .. " post " .. err.kind .. " " .. err.message end,
    }
  end
  local sup = tend.spawn(function(ctx)
    ctx:spawn(member, { name = "a", args = { "a" } })
    ctx:spawn(member, { name = "b", args = { "b" } })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = tend.all_for_one {} })
  tend.ask(sup, "?", 1)[2]:send("boom")
  H.settle()
  lu.assertEquals(seen, { "b pre Boom b", "a pre Boom b", "a post Boom b", "b post Boom b" })
  H.stop_all(sup)
end

-- A restart whose factory fails is an InitError; restarted again, the
-- actor then takes its messages as before.
function TestRules:test_an_init_error_during_a_restart_can_be_restarted_again()
  local starts = 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      starts = starts + 1
      if starts == 2 then error("not yet") end
      local n = 0
      return function(msg, ctx)
        if msg == "boom" then error("boom") end
        if msg == "get" then ctx:reply(n) else n = n + 1 end
      end
    end, { name = "w" })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function() return "restart" end } })
  local w = tend.ask(sup, "?", 1)
  w:send("boom")
  H.settle()
  w:send("x")
  lu.assertEquals(tend.ask(w, "get", 1), 1)
  lu.assertEquals(starts, 3)
  H.stop_all(sup)
end

-- A supervisor that is stopping decides nothing: a child that fails
-- meanwhile is not restarted, it is stopped with the others.
function TestRules:test_a_stopping_supervisor_decides_nothing()
  local starts = 0
  local p = tk.probe()
  local sup = tend.spawn(function(ctx)
    local c1 = ctx:spawn(function()
      starts = starts + 1
      return function(m) if m == "boom" then error("boom") end end
    end, { name = "c1" })
    ctx:spawn(function()
      return { receive = function() end,
               post_stop = function(self, c) c1:send("boom") c:sleep(1) end }
    end, { name = "c2" })
    return function(m, ctx) ctx:reply(c1) end
  end)
  local c1 = tend.ask(sup, "?", 1)
  p:watch(c1)
  tend.stop(sup)
  lu.assertEquals(p:expect_terminated(c1, 2).reason, "shutdown")
  lu.assertEquals(starts, 1)
  H.stop_all(p.ref)
end

-- ------------------------------------------------------------ DeathWatch

function TestRules:test_watchers_are_told_in_the_order_they_watched()
  local log = {}
  local target = tend.spawn(function() return function() end end)
  local function watcher(name)
    return tend.spawn(function(ctx)
      return function(msg, ctx)
        if msg == "watch" then ctx:watch(target) else log[#log + 1] = name end
      end
    end)
  end
  local w1, w2, w3 = watcher("w1"), watcher("w2"), watcher("w3")
  w2:send("watch") H.settle()
  w3:send("watch") H.settle()
  w1:send("watch") H.settle()
  tend.stop(target)
  H.settle()
  lu.assertEquals(log, { "w2", "w3", "w1" })
  H.stop_all(w1, w2, w3)
end

-- ------------------------------------------------------------ backoff supervisors

local function crasher(starts)
  return function(ctx)
    starts[#starts + 1] = tend.now()
    return function(msg, ctx)
      if msg == "crash" then error("boom") end
    end
  end
end

local gaps = H.gaps

-- max_retries counts the restarts since the last reset.
function TestRules:test_a_reset_starts_max_retries_over()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts),
    { min_backoff = 1, max_backoff = 1, random_factor = 0 }):with_max_retries(2))
  sup:send("crash") tend.sleep(1.5) -- restart 1
  sup:send("crash") tend.sleep(3)   -- restart 2, then 1 s of running: reset
  sup:send("crash") tend.sleep(1.5) -- restart 1 again, not the end
  lu.assertTrue(tend.alive(sup))
  lu.assertEquals(#starts, 4)
  H.stop_all(sup)
end

-- A backoff supervisor forwards to its child; what the child sends it goes
-- to the supervisor's parent.
function TestRules:test_a_backoff_childs_messages_go_to_the_supervisors_parent()
  local got = {}
  local parent = tend.spawn(function(ctx)
    local sup = ctx:spawn(tend.backoff.on_failure(function()
      return function(msg, c) if msg == "hi" then c.parent:send("from the child") end end
    end, { name = "kid", min_backoff = 1, max_backoff = 1 }), { name = "bsup" })
    return function(msg, ctx)
      if msg == "go" then sup:send("hi") else got[#got + 1] = msg end
    end
  end)
  parent:send("go")
  H.settle()
  lu.assertEquals(got, { "from the child" })
  H.stop_all(parent)
end

-- ------------------------------------------------------------ typed supervision

function TestRules:test_typed_reset_after_defaults_to_min_backoff()
  local starts = {}
  local a = tend.spawn(tend.supervise(crasher(starts))
    :on_failure("*", tend.restart_with_backoff(1, 10, 0)))
  a:send("crash") tend.sleep(1.5) -- delay 1
  a:send("crash") tend.sleep(3.5) -- ran 0.5 s: delay 2; then 1.5 s: reset
  a:send("crash") tend.sleep(1.5) -- delay 1 again (4 without the reset)
  lu.assertEquals(gaps(starts), { 1.0, 2.5, 2.5 })
  H.stop_all(a)
end

function TestRules:test_typed_first_matching_clause_wins()
  local function counter()
    local n = 0
    return function(msg, ctx)
      if msg == "get" then ctx:reply(n) return end
      n = n + 1
      if msg == "bad" then tend.raise("Recoverable", "x") end
    end
  end
  local a = tend.spawn(tend.supervise(counter)
    :on_failure("Recoverable", tend.resume):on_failure("*", tend.restart))
  local b = tend.spawn(tend.supervise(counter)
    :on_failure("*", tend.resume):on_failure("Recoverable", tend.restart))
  for _, r in ipairs { a, b } do
    r:send("ok")
    r:send("bad")
  end
  lu.assertEquals(tend.ask(a, "get", 1), 2)
  lu.assertEquals(tend.ask(b, "get", 1), 2)
  H.stop_all(a, b)
end

-- ------------------------------------------------------------ mailboxes and scheduling

-- overflow = "fail": the message that did not fit is a dead letter, the
-- actor fails, and the next instance gets the mail that was in the box.
function TestRules:test_overflow_fail_drops_the_message_that_did_not_fit()
  local log = {}
  local gate = tend.spawn(function()
    return function(msg, ctx)
      if msg == "block" then ctx:sleep(1) else log[#log + 1] = tostring(msg) end
    end
  end, { mailbox = { capacity = 1, overflow = "fail" } })
  gate:send("block")
  H.settle()
  local dead = tend.stats().dead_letters
  gate:send(1)
  gate:send(2)
  tend.sleep(2)
  lu.assertEquals(log, { "1" })
  lu.assertEquals(tend.stats().dead_letters - dead, 1)
  H.stop_all(gate)
end

-- An actor takes at most 64 messages in one turn; then the others run.
function TestRules:test_an_actor_takes_at_most_64_messages_per_turn()
  local runs = {}
  local function rec(name)
    return tend.spawn(function()
      return function()
        local last = runs[#runs]
        if last and last[1] == name then last[2] = last[2] + 1 else runs[#runs + 1] = { name, 1 } end
      end
    end)
  end
  local a, b = rec("a"), rec("b")
  H.settle()
  for i = 1, 100 do a:send(i) end
  for i = 1, 100 do b:send(i) end
  H.settle()
  lu.assertEquals(runs, { { "a", 64 }, { "b", 64 }, { "a", 36 }, { "b", 36 } })
  H.stop_all(a, b)
end

-- While actors are busy the scheduler returns to the event loop every
-- 20 000 steps (messages, hooks, starts; the turn in progress ends
-- first): trace listeners run there.
function TestRules:test_the_scheduler_returns_to_the_loop_every_20000_steps()
  local progress, seen = 0, nil
  tend.trace(function(e)
    if e.ev == "spawn" and e.path:match("/qchild$") then seen = progress end
  end)
  local busy = tend.spawn(function()
    local n = 0
    return function(msg, ctx)
      n = n + 1
      progress = n
      if n == 1 then ctx:spawn(function() return function() end end, { name = "qchild" }) end
      if n < 50000 then ctx.self:send("again") end
    end
  end)
  busy:send("go")
  tend.sleep(1)
  tend.trace(false)
  lu.assertEquals(progress, 50000)
  lu.assertTrue(seen >= 19900 and seen <= 20100, "the listener ran after " .. tostring(seen) .. " messages")
  H.stop_all(busy)
end

-- Mail for a suspended actor waits; the actor is queued when it is
-- resumed, behind the actors queued meanwhile.
function TestRules:test_a_resumed_actor_queues_behind_those_already_queued()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local x = ctx:spawn(worker, { name = "x", args = { "x", log } })
    local y = ctx:spawn(worker, { name = "y", args = { "y", log } })
    return function(msg, ctx)
      tend.chaos.kill(x) -- suspended until this supervisor resumes it
      x:send("m1")
      y:send("m2")
    end
  end, { supervisor = tend.one_for_one { decider = { Killed = "resume" } } })
  H.settle()
  clear(log)
  sup:send("go")
  H.settle()
  lu.assertEquals(log, { "y:m2", "x:m1" })
  H.stop_all(sup)
end

-- A supervisor handles a child's failure (a system message) before the
-- user messages already in its mailbox.
function TestRules:test_a_childs_failure_comes_before_the_supervisors_queued_mail()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local x = ctx:spawn(worker, { name = "x", args = { "x", log } })
    return function(msg, ctx)
      if msg == "go" then
        ctx.self:send("queued") -- in the mailbox ...
        tend.chaos.kill(x)      -- ... before the failure is reported
      else
        log[#log + 1] = "sup:" .. msg
      end
    end
  end, { supervisor = tend.one_for_one { decider = function()
    log[#log + 1] = "decide"
    return "resume"
  end } })
  H.settle()
  clear(log)
  sup:send("go")
  H.settle()
  lu.assertEquals(log, { "decide", "sup:queued" })
  H.stop_all(sup)
end

-- A failed actor's children are suspended with it: they take no message
-- until its supervisor has decided.
function TestRules:test_a_failed_actors_children_wait_for_the_decision()
  local log = {}
  local top = tend.spawn(function(ctx)
    local p = ctx:spawn(function(pctx)
      local c = pctx:spawn(worker, { name = "c", args = { "c", log } })
      return function(msg, c2) c2:reply(c) end
    end, { name = "p" })
    return function(msg, ctx) ctx:reply(p) end
  end, { supervisor = tend.one_for_one { decider = function()
    log[#log + 1] = "decide"
    return "resume"
  end } })
  local p = tend.ask(top, "?", 1)
  local c = tend.ask(p, "?", 1)
  local driver = tend.spawn(function()
    return function(msg)
      c:send("m") -- c is queued ...
      tend.chaos.kill(p) -- ... then suspended with p, before top decides
    end
  end)
  H.settle()
  clear(log)
  driver:send("go")
  H.settle()
  lu.assertEquals(log, { "decide", "c:m" })
  H.stop_all(top, driver)
end

-- Under the real clock a ctx:every that falls behind skips the ticks it
-- missed instead of firing them in a burst.
function TestRules:test_every_skips_missed_ticks_under_the_real_clock()
  local path = H.script([[
local tend = require "tend"
local ticks = 0
tend.spawn(function(ctx)
  ctx:every(0.05, "tick")
  return function() ticks = ticks + 1 end
end)
tend.sleep(0.12)
local before = ticks
os.execute("sleep 0.6") -- the host stands still: 12 ticks missed
tend.sleep(0.01)
print(ticks - before)
tend.shutdown(0)
]])
  local out, _, code = H.run({ path })
  lu.assertEquals(code, 0)
  local n = tonumber(out)
  lu.assertTrue(n >= 1 and n <= 3, "ticks after falling behind: " .. out)
  os.remove(path)
end

-- ------------------------------------------------------------ dead letters

function TestRules:test_sending_to_a_guardian_is_a_dead_letter()
  local a = tend.spawn(function() return function(msg, ctx) ctx:reply(ctx.parent) end end)
  local user = tend.ask(a, "?", 1)
  lu.assertEquals(user:path(), "/user")
  local dead = tend.stats().dead_letters
  user:send("hello")
  H.settle()
  lu.assertEquals(tend.stats().dead_letters - dead, 1)
  H.stop_all(a)
end

-- A dead letter to no actor is traced at /deadLetters; mail left in a
-- mailbox at death, at the actor's path.
function TestRules:test_dead_letters_are_traced_at_deadLetters_or_the_actors_path()
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

-- ------------------------------------------------------------ trace and log

function TestRules:test_backoff_events_carry_their_draw_even_0()
  local draws = {}
  tend.trace(function(e) if e.ev == "backoff" then draws[#draws + 1] = e.draw end end)
  math.randomseed(7)
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    ctx.self:send("crash")
    return function() error("boom") end
  end, { algorithm = "slotted", slot_time = 0.001, ceiling = 3, stay_at_ceiling = true })
    :with_max_retries(4))
  local p = tk.probe()
  p:watch(sup)
  p:expect_terminated(sup, 1)
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(draws, { 0, 2, 2, 0 })
  H.stop_all(p.ref)
end

function TestRules:test_directive_window_without_within_has_no_length()
  local windows = {}
  tend.trace(function(e) if e.ev == "directive" then windows[#windows + 1] = e.window end end)
  local sup = supervisor(tend.one_for_one { max_retries = 3 }, { "w" }, {})
  tend.ask(sup, "?", 1)[1]:send({ raise = "Boom" })
  H.settle()
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(windows, { { 1, 3 } })
  H.stop_all(sup)
end

-- Lifecycle events log at debug, even when they are made for a trace;
-- backoff, reset, give_up, stash_drop and chaos at info; each handled
-- failure at warn.
function TestRules:test_lifecycle_events_log_at_debug_backoff_events_at_info()
  local path = H.script([[
local tend = require "tend"
local a = tend.spawn(function() return function() error("x") end end, { name = "a" })
a:send(1)
tend.sleep(1)
local b = tend.spawn(tend.backoff.on_failure(function() return function() error("y") end end,
  { name = "c", min_backoff = 1, max_backoff = 1, random_factor = 0 }), { name = "b" })
b:send(1)
tend.sleep(2)
tend.stop(a)
tend.stop(b)
]])
  local trace = os.tmpname() -- traced, every event is made; still only these log at info
  local _, err, code = H.run({ "--virtual-time", "--log-level", "info", "--trace", trace, path })
  os.remove(trace)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/a: Error: F:2: x; restart (restarts 1)\n"
    .. "[1.000] warn  /user/b/c: Error: F:5: y; restart after a backoff (restarts 1)\n"
    .. "[1.000] info  /user/b: backoff #1 in 1.000 s\n"
    .. "[3.000] info  /user/b: reset\n")
  os.remove(path)
end

-- shutdown = math.huge: post_stop is never killed, however long it takes;
-- the longest finite shutdown (1e9 s: longer is refused, see
-- robustness_spec) waits as long as it says.
function TestRules:test_shutdown_math_huge_never_kills_post_stop()
  for _, shutdown in ipairs { "math.huge", "1e9" } do
    local path = H.script([[
local tend = require "tend"
local a = tend.spawn(function()
  return { receive = function() end,
           post_stop = function(self, ctx) ctx:sleep(1e9 - 1) print("post_stop done") end }
end, { shutdown = ]] .. shutdown .. [[ })
tend.stop(a)
]])
    local out, err, code = H.run({ "--virtual-time", path })
    lu.assertEquals(code, 0)
    lu.assertEquals(out, "post_stop done\n", "shutdown = " .. shutdown)
    lu.assertEquals(err, "")
    os.remove(path)
  end
end

-- ------------------------------------------------------------ a second round

-- Messages keep their values and types: integers, floats, booleans,
-- strings, tables by reference.
function TestRules:test_messages_keep_their_values_and_types()
  local got = {}
  local r = tend.spawn(function()
    return function(msg) got[#got + 1] = { math.type(msg) or type(msg), msg } end
  end)
  local t = {}
  for _, v in ipairs { 1, 1.0, 2.5, -7, math.huge, math.mininteger, true, false, "s", t } do r:send(v) end
  H.settle()
  lu.assertEquals(got, { { "integer", 1 }, { "float", 1.0 }, { "float", 2.5 }, { "integer", -7 },
    { "float", math.huge }, { "integer", math.mininteger }, { "boolean", true }, { "boolean", false },
    { "string", "s" }, { "table", t } })
  lu.assertIs(got[10][2], t)
  H.stop_all(r)
end

-- A non-string error value is kept: err.value is what was raised.
function TestRules:test_a_non_string_error_is_kept_as_the_errors_value()
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

-- Anonymous actors are named by their spawn number, which is never reused
-- (their ids are).
function TestRules:test_anonymous_actors_are_named_by_spawn_number()
  local a = tend.spawn(function() return function() end end)
  local n = tonumber(a:path():match("^/user/%$(%d+)$"))
  lu.assertNotNil(n, a:path())
  H.stop_all(a)
  local b = tend.spawn(function() return function() end end)
  lu.assertEquals(b:path(), "/user/$" .. (n + 1))
  lu.assertEquals(a:path(), "/user/$" .. n)
  H.stop_all(b)
end

function TestRules:test_stats_count_each_message()
  local a = tend.spawn(function() return function() end end)
  H.settle()
  local m0 = tend.stats().messages
  for i = 1, 3 do a:send(i) end
  H.settle()
  lu.assertEquals(tend.stats().messages - m0, 3)
  H.stop_all(a)
end

-- A behavior returned by an actor that has begun stopping is ignored: the
-- post_stop that runs is the one in place when it stopped.
function TestRules:test_a_behavior_returned_while_stopping_is_ignored()
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

-- Only an unhandled `terminated` is a DeathPact; a custom watch message
-- left unhandled is just unhandled.
function TestRules:test_an_unhandled_custom_watch_message_is_no_death_pact()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target, "gone")
    return function(msg) got[#got + 1] = msg return tend.unhandled end
  end)
  H.settle()
  tend.stop(target)
  H.settle()
  lu.assertEquals(got, { "gone" })
  lu.assertTrue(tend.alive(w))
  H.stop_all(w)
end

-- After a killed sleep is resumed, its wake-up timer is stale: it never
-- ends the next sleep.
function TestRules:test_a_stale_wake_up_never_ends_a_newer_sleep()
  local slept = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      return function(secs, ctx)
        local t0 = tend.now()
        ctx:sleep(secs)
        slept[#slept + 1] = tend.now() - t0
      end
    end, { name = "sleeper" })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = { Killed = "resume" } } })
  local s = tend.ask(sup, "?", 1)
  s:send(10)
  tend.sleep(1)
  tend.chaos.kill(s) -- its sleep of 10 s ends with the failure; resumed
  s:send(20)
  tend.sleep(30) -- the old wake-up comes 9 s into the new sleep
  lu.assertEquals(slept, { 20 })
  H.stop_all(sup)
end

-- Killing an actor just woken from its sleep (queued to resume, last in
-- the run queue) leaves the run queue whole.
function TestRules:test_killing_a_woken_actor_keeps_the_run_queue_whole()
  local sleeper = tend.spawn(function()
    return function(msg, ctx) ctx:sleep(1) end
  end)
  local killer = tend.spawn(function()
    return function(msg, ctx)
      if msg == "arm" then ctx:after(1, "kill") else tend.kill(sleeper) end
    end
  end)
  killer:send("arm") -- its timer is armed first, so it fires first
  H.settle()
  sleeper:send("nap")
  H.settle()
  tend.sleep(2)
  lu.assertFalse(tend.alive(sleeper))
  lu.assertEquals(tend.stats().runnable, 0)
  H.stop_all(killer)
end

-- An ask whose timeout is under a nanosecond times out after 1 ns (a
-- positive duration is at least 1 ns); it never waits forever.
function TestRules:test_an_ask_timeout_under_a_nanosecond_times_out_after_1_ns()
  local mute = tend.spawn(function() return function() end end)
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, mute, "x", 1e-12)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertTrue(tend.now() - t0 < 2e-9) -- t0 + 1 ns (or t0 where the
  -- clock's float holds no nanosecond any more)
  H.stop_all(mute)
end

-- A backoff supervisor that reaches max_retries stops itself: watchers
-- see "normal".
function TestRules:test_max_retries_stops_the_backoff_supervisor_normally()
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    ctx.self:send("crash")
    return function() error("boom") end
  end, { min_backoff = 1, max_backoff = 1, random_factor = 0 }):with_max_retries(1))
  p:watch(sup)
  lu.assertEquals(p:expect_terminated(sup, 5).reason, "normal")
  H.stop_all(p.ref)
end

-- The trace gives the reason of each stop: a child stopped by its
-- stopping parent "shutdown", an actor stopped by another "normal".
function TestRules:test_trace_reasons_of_stops()
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
function TestRules:test_trace_lines_escape_strings_and_round_times()
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

-- ------------------------------------------------------------ a third round

-- Nothing can be spawned once a shutdown has begun, and a stopping actor
-- takes no new children.
function TestRules:test_no_spawn_during_a_shutdown_or_by_a_stopping_actor()
  local errs = {}
  local a = tend.spawn(function()
    return { receive = function() end, post_stop = function(self, ctx)
      errs[1] = select(2, pcall(ctx.spawn, ctx, function() return function() end end))
    end }
  end)
  H.stop_all(a)
  lu.assertStrContains(errs[1], "the parent is stopping; it cannot take new children")
  local path = H.script([[
local tend = require "tend"
tend.spawn(function()
  return { receive = function() end, post_stop = function()
    print(select(2, pcall(tend.spawn, function() return function() end end)))
  end }
end)
tend.shutdown(0)
]])
  local out, _, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertStrContains(out, "the host is shutting down; nothing can be spawned")
  os.remove(path)
end

-- A tend.after function due once a shutdown has begun does not run.
function TestRules:test_tend_after_functions_do_not_run_during_a_shutdown()
  local path = H.script([[
local tend = require "tend"
tend.after(0.5, function() print("ran") end)
tend.spawn(function()
  return { receive = function() end, post_stop = function(self, ctx) ctx:sleep(1) print("stopped") end }
end)
tend.shutdown(0)
]])
  local out, _, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "stopped\n")
  os.remove(path)
end

function TestRules:test_watching_a_dead_ref_gives_reason_unknown()
  local p = tk.probe()
  local a = tend.spawn(function() return function() end end)
  H.stop_all(a)
  p:watch(a)
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason, "unknown")
  lu.assertFalse(t.existence_confirmed)
  H.stop_all(p.ref)
end

-- on_limit = "escalate": the supervisor fails with Escalated, saying the
-- restart limit was reached for the child.
function TestRules:test_on_limit_escalate_says_the_limit_was_reached()
  local seen = {}
  local top = tend.spawn(function(ctx)
    local sup = ctx:spawn(function(sctx)
      sctx:spawn(worker, { name = "w", args = { "w", {} } })
      return function(m, c) c:reply(c:children()[1]) end
    end, { name = "sup", supervisor = tend.one_for_one { max_retries = 0, on_limit = "escalate" } })
    return function(m, c) c:reply(sup) end
  end, { supervisor = tend.one_for_one { decider = function(err)
    seen[#seen + 1] = err.kind .. ": " .. err.message
    return "resume"
  end } })
  local sup = tend.ask(top, "?", 1)
  local w = tend.ask(sup, "?", 1)
  w:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(#seen, 1)
  lu.assertStrContains(seen[1], "Escalated: restart limit reached for " .. w:path() .. ": ")
  lu.assertStrContains(seen[1], "Boom: boom")
  H.stop_all(top)
end

-- A task (the main chunk, a tend.after function) that returns stops
-- normally: its watchers see "normal".
function TestRules:test_a_task_that_returns_stops_normally()
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

-- A behavior is a function or a table whose receive is a function; a
-- factory that returns anything else fails with InitError.
function TestRules:test_a_table_without_a_receive_function_is_no_behavior()
  local p = tk.probe()
  local a = tend.spawn(function() return { receive = "not a function" } end)
  p:watch(a)
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason.kind, "InitError")
  lu.assertStrContains(t.reason.message, "table; expected a behavior (function or table with receive)")
  H.stop_all(p.ref)
end

-- Mail that arrives while an actor sleeps waits for the sleep to end.
function TestRules:test_mail_that_arrives_during_a_sleep_waits_for_it()
  local log = {}
  local a = tend.spawn(function()
    return function(msg, ctx)
      if msg == "nap" then ctx:sleep(5) end
      log[#log + 1] = msg
    end
  end)
  a:send("nap")
  H.settle() -- asleep
  a:send("x")
  tend.sleep(1)
  lu.assertEquals(log, {})
  tend.sleep(5)
  lu.assertEquals(log, { "nap", "x" })
  H.stop_all(a)
end

-- A typed actor waiting for its backoff restart takes no mail: it waits
-- (bounded by with_stash) for the new instance.
function TestRules:test_a_typed_actor_takes_no_mail_while_it_backs_off()
  local got = {}
  local a = tend.spawn(tend.supervise(function()
    return function(msg) if msg == "crash" then error("boom") end got[#got + 1] = msg end
  end):on_failure("*", tend.restart_with_backoff(1, 10, 0):with_stash(2)))
  a:send("crash")
  H.settle()
  for i = 1, 3 do a:send(i) end
  tend.sleep(0.5)
  lu.assertEquals(got, {})
  tend.sleep(1)
  lu.assertEquals(got, { 2, 3 })
  H.stop_all(a)
end
