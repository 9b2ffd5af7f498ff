-- A supervisor's strategy: the decider (kinds, '*', escalate, resume), the
-- restart limit and its windows (sliding, fixed, none), and the order of a
-- failure's handling against the supervisor's mail.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestStrategy = {}

function TestStrategy:tearDown() H.assert_clean() end

local tk = tend.testkit

-- A child that logs its lifecycle and its messages to `log`, counts its
-- messages (answers "get" with the count) and fails on {raise = kind}.
local function counting_worker(ctx, name, log)
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
    for _, name in ipairs(names) do ctx:spawn(counting_worker, { name = name, args = { name, log } }) end
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

-- A backoff child that fails on "boom"; starts counted in `starts`.
local function boomer(starts)
  return function()
    starts[#starts + 1] = tend.now()
    return function(m) if m == "boom" then error("boom") end end
  end
end

-- A kill sent while the first failure waits for its decision is queued
-- and handled after the restart.
function TestStrategy:test_a_second_kill_during_the_first_failure_is_handled_after_the_restart()
  local decided = 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "w", args = { "w" } })
    return function(m, ctx) ctx:reply(ctx:children()[1]) end
  end, { supervisor = tend.one_for_one { decider = function()
    decided = decided + 1
    tend.sleep(1) -- the decision takes a while
    return "restart"
  end } })
  local w = tend.ask(sup, "?", 1)
  local r0 = tend.stats().restarts
  tend.kill(w)
  tend.sleep(0.5) -- deciding
  tend.kill(w)
  tend.sleep(5)
  lu.assertEquals(decided, 2)
  lu.assertEquals(tend.stats().restarts - r0, 2)
  lu.assertTrue(tend.alive(w))
  H.stop_all(sup)
end

-- BackoffSupervisorSpec "respect maxNrOfRetries property of
-- OneForOneStrategy": the count is the supervisor's, across its children;
-- the 6th failure stops the supervisor.
function TestStrategy:test_respect_maxNrOfRetries_property_of_OneForOneStrategy()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 1, max_backoff = 1,
    random_factor = 0, reset_after = 1000 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 5, within = 30 }))
  local p = tk.probe()
  p:watch(sup)
  for i = 1, 5 do
    sup:send("boom")
    tend.sleep(1.5)
    lu.assertEquals(#starts, i + 1)
  end
  lu.assertTrue(tend.alive(sup))
  sup:send("boom")
  lu.assertEquals(p:expect_terminated(sup, 1).reason, "normal")
  lu.assertEquals(#starts, 6)
  H.stop_all(p.ref)
end

-- OTP's boundary (add_restart keeps entries >= Now - Period): a restart
-- exactly `within` seconds old is still in the sliding window.
function TestStrategy:test_sliding_window_keeps_a_restart_exactly_within_old()
  local sup = supervisor(tend.one_for_one { max_retries = 2, within = 10, window = "sliding" },
    { "w" }, {})
  local w = tend.ask(sup, "?", 1)[1]
  local p = tk.probe()
  p:watch(w)
  crash_at(w, tend.now(), { 0, 5, 10 }) -- at 10, the restart at 0 still counts
  lu.assertEquals(p:expect_terminated(w, 1).reason.kind, "Boom")
  H.stop_all(sup, p.ref)
end

function TestStrategy:test_sliding_window_drops_a_restart_just_over_within_old()
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
function TestStrategy:test_fixed_window_is_open_exactly_within_after_it_opened()
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

-- A decider table: the error's kind first, then "*", and with neither,
-- escalate (the supervisor fails; the guardian restarts it).
function TestStrategy:test_decider_table_kind_then_star_then_escalate()
  local function sup_with(decider)
    local starts = 0
    local sup = tend.spawn(function(ctx)
      starts = starts + 1
      ctx:spawn(counting_worker, { name = "w", args = { "w", {} } })
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
function TestStrategy:test_resuming_a_supervisor_resumes_the_child_it_escalated()
  local mid_starts = 0
  local top = tend.spawn(function(ctx)
    local mid = ctx:spawn(function(mctx)
      mid_starts = mid_starts + 1
      mctx:spawn(counting_worker, { name = "leaf", args = { "leaf", {} } })
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

-- Every failure of a child reaches the decider, even when the child is
-- stopping by the time its supervisor gets to it.
function TestStrategy:test_every_failure_reaches_the_decider_even_of_a_stopping_child()
  local decided = {}
  local sup = tend.spawn(function(ctx)
    local c = ctx:spawn(counting_worker, { name = "c", args = { "c", {} } })
    local m = ctx:spawn(counting_worker, { name = "m", args = { "m", {} }, restart = "temporary" })
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
function TestStrategy:test_no_window_counts_restarts_in_total_whatever_the_window_kind()
  local sup = supervisor(tend.one_for_one { max_retries = 1 << 31, window = "sliding" }, { "w" }, {})
  local w = tend.ask(sup, "?", 1)[1]
  crash_at(w, tend.now(), { 0, 1, 2 })
  lu.assertTrue(tend.alive(w))
  lu.assertEquals(tend.ask(w, "get", 1), 0)
  H.stop_all(sup)
end

-- A restart whose factory fails is an InitError; restarted again, the
-- actor then takes its messages as before.
function TestStrategy:test_an_init_error_during_a_restart_can_be_restarted_again()
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
function TestStrategy:test_a_stopping_supervisor_decides_nothing()
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

-- A supervisor handles a child's failure (a system message) before the
-- user messages already in its mailbox.
function TestStrategy:test_a_childs_failure_comes_before_the_supervisors_queued_mail()
  local log = {}
  local sup = tend.spawn(function(ctx)
    local x = ctx:spawn(counting_worker, { name = "x", args = { "x", log } })
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
function TestStrategy:test_a_failed_actors_children_wait_for_the_decision()
  local log = {}
  local top = tend.spawn(function(ctx)
    local p = ctx:spawn(function(pctx)
      local c = pctx:spawn(counting_worker, { name = "c", args = { "c", log } })
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

function TestStrategy:test_directive_window_without_within_has_no_length()
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

-- on_limit = "escalate": the supervisor fails with Escalated, saying the
-- restart limit was reached for the child.
function TestStrategy:test_on_limit_escalate_says_the_limit_was_reached()
  local seen = {}
  local top = tend.spawn(function(ctx)
    local sup = ctx:spawn(function(sctx)
      sctx:spawn(counting_worker, { name = "w", args = { "w", {} } })
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

function TestStrategy:test_default_pre_restart_stops_children_youngest_first()
  local log = {}
  local parent = tend.spawn(function(ctx)
    for _, name in ipairs { "c1", "c2", "c3" } do
      ctx:spawn(counting_worker, { name = name, args = { name, log } })
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

-- tend.describe of a strategy with a big decider table kept a table on the
-- stack while adding to its buffer.
function TestStrategy:test_describe_a_decider_of_many_kinds()
  local clauses = {}
  for i = 1, 200 do clauses[string.format("SomeLongErrorKindName%03d", i)] = "restart" end
  local words = tend.describe(tend.one_for_one { decider = clauses })
  lu.assertStrContains(words, "decider: SomeLongErrorKindName001 -> restart, ")
  lu.assertStrContains(words, "SomeLongErrorKindName200 -> restart, anything else -> escalate")
end
