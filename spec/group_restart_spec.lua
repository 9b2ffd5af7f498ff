-- Group restarts (one_for_all, rest_for_one): the members stop youngest
-- first and start again in start order, with the failed sibling's error;
-- a stop directive stops the group; failures during a group restart join
-- it. Several cases keep the names they have in OTP's supervisor_SUITE and
-- Akka's SupervisorSpec.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestGroupRestart = {}

function TestGroupRestart:tearDown() H.assert_clean() end

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

-- A counting_supervisor with the given strategy and named workers; it answers any
-- message with its children.
local function counting_supervisor(strategy, names, log)
  return tend.spawn(function(ctx)
    for _, name in ipairs(names) do ctx:spawn(counting_worker, { name = name, args = { name, log } }) end
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = strategy })
end

local function clear(t)
  for i = #t, 1, -1 do t[i] = nil end
end

local tk = tend.testkit

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

-- A supervisor with `strategy` whose children (names) start in order;
-- asked "children" it replies with them, {stop = ref} stops one.
local function supervisor(strategy, names, log)
  return tend.spawn(function(ctx)
    for _, name in ipairs(names) do ctx:spawn(worker, { name = name, args = { name, log } }) end
    return function(msg, ctx)
      if msg == "children" then ctx:reply(ctx:children()) end
      if type(msg) == "table" and msg.stop then ctx:stop(msg.stop) end
      if type(msg) == "table" and msg.tend_stop then tend.stop(msg.tend_stop) end
    end
  end, { supervisor = strategy })
end

local function reason_of(p, ref) return p:expect_terminated(ref, 10).reason end

function TestGroupRestart:test_a_stop_directive_stops_the_group_with_shutdown()
  local sup = supervisor(tend.all_for_one { decider = { Boom = "stop" } }, { "a", "b", "c" })
  local kids = tend.ask(sup, "children", 1)
  local p = tk.probe()
  for _, k in ipairs(kids) do p:watch(k) end
  kids[2]:send { raise = "Boom" }
  lu.assertEquals(reason_of(p, kids[1]), "shutdown")
  lu.assertEquals(reason_of(p, kids[2]).kind, "Boom")
  lu.assertEquals(reason_of(p, kids[3]), "shutdown")
  H.stop_all(sup, p.ref)
end

function TestGroupRestart:test_a_temporary_member_of_a_group_restart_is_shutdown()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "a", args = { "a" } })
    ctx:spawn(worker, { name = "t", args = { "t" }, restart = "temporary" })
    return function(m, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = tend.all_for_one() })
  local kids = tend.ask(sup, "?", 1)
  local p = tk.probe()
  p:watch(kids[2])
  kids[1]:send { raise = "Boom" }
  lu.assertEquals(reason_of(p, kids[2]), "shutdown")
  H.stop_all(sup, p.ref)
end

-- supervisor_SUITE one_for_all / rest_for_one: the members stop youngest
-- first, then start again in start order.
function TestGroupRestart:test_one_for_all_stops_youngest_first_then_starts_in_order()
  local log = {}
  local sup = supervisor(tend.all_for_one(), { "a", "b", "c" }, log)
  local kids = tend.ask(sup, "children", 1)
  H.settle()
  for i = #log, 1, -1 do log[i] = nil end
  kids[1]:send { raise = "Boom" }
  H.settle()
  lu.assertEquals(log, { "c:stop", "b:stop", "a:stop", "a:start", "b:start", "c:start" })
  H.stop_all(sup)
end

function TestGroupRestart:test_rest_for_one_stops_the_younger_youngest_first()
  local log = {}
  local sup = supervisor(tend.rest_for_one(), { "a", "b", "c", "d" }, log)
  local kids = tend.ask(sup, "children", 1)
  H.settle()
  for i = #log, 1, -1 do log[i] = nil end
  kids[2]:send { raise = "Boom" }
  H.settle()
  lu.assertEquals(log, { "d:stop", "c:stop", "b:stop", "b:start", "c:start", "d:start" })
  H.stop_all(sup)
end

-- A group restart ends the waits (sleep, ask) of its members at once: the
-- old instance gets nothing raised into it, no Timeout counts as a second
-- failure, and each restart event says whose failure caused it.
function TestGroupRestart:test_a_group_restart_reaches_members_waiting_in_sleep_or_ask()
  local events, woke = {}, {}
  tend.trace(function(e) if e.ev == "restart" then events[#events + 1] = e end end)
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function() error("boom") end end, { name = "a" })
    ctx:spawn(function()
      return function(m, c) c:sleep(10) woke[#woke + 1] = "b" end
    end, { name = "b" })
    local silent = ctx:spawn(function() return function() end end, { name = "silent" })
    ctx:spawn(function()
      return function(m, c) pcall(tend.ask, silent, "?", 5) woke[#woke + 1] = "c" end
    end, { name = "c" })
    return function(m, c) c:reply(c:children()) end
  end, { supervisor = tend.all_for_one() })
  local kids = tend.ask(sup, "?", 1)
  local f0 = tend.stats().failures
  kids[2]:send("nap")
  kids[4]:send("ask")
  tend.sleep(1)
  local t0 = tend.now()
  kids[1]:send("crash")
  tend.sleep(20)
  tend.trace(false)
  lu.assertEquals(woke, {})
  lu.assertEquals(tend.stats().failures - f0, 1)
  lu.assertEquals(#events, 4)
  local a_path = kids[1]:path()
  for _, e in ipairs(events) do
    lu.assertEquals(e.t, t0)
    if e.path ~= a_path then lu.assertEquals(e.detail, "for " .. a_path) end
  end
  H.stop_all(sup)
end

-- A second failure in the group while its restart is under way joins it:
-- one restart of each member.
function TestGroupRestart:test_a_failure_during_a_group_restart_joins_it()
  local log = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "a", args = { "a", log } })
    ctx:spawn(function(c2)
      return {
        pre_start = function() log[#log + 1] = "b:start" end,
        post_stop = function() log[#log + 1] = "b:stop" tend.sleep(1) end,
        receive = function() end,
      }
    end, { name = "b" })
    return function(m, c) c:reply(c:children()) end
  end, { supervisor = tend.all_for_one() })
  local kids = tend.ask(sup, "?", 1)
  H.settle()
  for i = #log, 1, -1 do log[i] = nil end
  local r0 = tend.stats().restarts
  kids[1]:send { raise = "Boom" } -- b stops first, for 1 s ...
  tend.sleep(0.5)
  tend.chaos.kill(kids[1]) -- ... a fails again meanwhile
  tend.sleep(5)
  lu.assertEquals(log, { "b:stop", "a:stop", "a:start", "b:start" })
  lu.assertEquals(tend.stats().restarts - r0, 2)
  tend.stop(sup)
  tend.sleep(2) -- b's post_stop takes 1 s
end

-- ... and it counts once against the limit: one allowed restart is enough.
function TestGroupRestart:test_a_failure_joining_a_group_restart_counts_once()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(worker, { name = "a", args = { "a" } })
    ctx:spawn(worker, { name = "m", args = { "m" } })
    ctx:spawn(function()
      return { post_stop = function() tend.sleep(1) end, receive = function() end }
    end, { name = "slow" })
    return function(m, c) c:reply(c:children()) end
  end, { supervisor = tend.all_for_one { max_retries = 1, within = 100,
    decider = { ["*"] = "restart" } } })
  local kids = tend.ask(sup, "?", 1)
  kids[1]:send { raise = "Boom" }
  tend.sleep(0.5) -- slow is stopping; m waits for its turn
  tend.chaos.kill(kids[2]) -- joins the restart under way
  tend.sleep(5)
  for _, k in ipairs(kids) do lu.assertTrue(tend.alive(k)) end
  tend.stop(sup)
  tend.sleep(2)
end

-- OTP's one_for_all and rest_for_one: the members stop youngest first
-- (reverse start order), then all start again in start order.
function TestGroupRestart:test_group_restart_restarts_members_in_start_order()
  local log = {}
  local sup = counting_supervisor(tend.all_for_one {}, { "a", "b", "c" }, log)
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
  sup = counting_supervisor(tend.rest_for_one {}, { "a", "b", "c", "d" }, log)
  a, b, c = table.unpack(tend.ask(sup, "?", 1))
  H.settle()
  clear(log)
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(log, { "d:stop", "c:stop", "b:stop", "b:start", "c:start", "d:start" })
  H.stop_all(sup)
end

function TestGroupRestart:test_stop_directive_stops_the_group_in_start_order()
  local log = {}
  local sup = counting_supervisor(tend.all_for_one { decider = { Boom = "stop" } }, { "a", "b", "c" }, log)
  local b = tend.ask(sup, "?", 1)[2]
  H.settle()
  clear(log)
  b:send({ raise = "Boom" })
  H.settle()
  lu.assertEquals(log, { "a:stop", "b:stop", "c:stop" })
  lu.assertEquals(#tend.ask(sup, "?", 1), 0)
  H.stop_all(sup)
end

-- The members of a group restart get the failed child's error in
-- pre_restart and post_restart: stopped youngest first, rebuilt in start
-- order (OTP).
function TestGroupRestart:test_group_members_restart_with_the_failed_siblings_error()
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
