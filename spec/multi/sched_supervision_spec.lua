-- Supervision across schedulers (--schedulers 3): a supervisor on one
-- scheduler with children on others (lua/tend/away.lua's stand-ins): its
-- strategies, decider, limits, backoff and stop order as within one. Run
-- by scripts/test under the virtual clock and under the real clock.
local lu = require "luaunit"
local tend = require "tend"

TestSchedSupervision = {}

-- A log actor here: collects what the workers tell it, in order.
local function new_log()
  return tend.spawn(function()
    local lines = {}
    return function(msg, ctx)
      if msg == "lines" then ctx:reply(lines) else lines[#lines + 1] = msg end
    end
  end)
end

-- The log's lines once it holds n of them (the workers' notes cross
-- schedulers), as "start a 1" / "stop b" strings.
local function lines(log, n)
  local got
  for _ = 1, 200 do
    got = tend.ask(log, "lines")
    if #got >= n then break end
    tend.sleep(0.01)
  end
  local out = {}
  for i, l in ipairs(got) do out[i] = table.concat(l, " ") end
  return out
end

-- A supervisor with the strategy and the children {id, scheduler}, started
-- in order; answers "kids" with their refs by id.
local function supervisor(strategy, log, kids)
  return tend.spawn(function(ctx)
    local refs = {}
    for _, k in ipairs(kids) do
      refs[k[1]] = ctx:spawn("sched_actors.worker",
        { scheduler = k[2], name = k[1], args = { log, k[1] } })
    end
    return function(msg, ctx) if msg == "kids" then ctx:reply(refs) end end
  end, { children = strategy })
end

-- The lines from..to, sorted (starts across schedulers arrive in any
-- order: each scheduler's note comes when it gets its turn).
local function sorted(t, from, to)
  local out = table.move(t, from, to, 1, {})
  table.sort(out)
  return out
end

function TestSchedSupervision:test_a_child_there_restarts_with_a_fresh_state()
  local log = new_log()
  local sup = supervisor(tend.one_for_one {}, log, { { "a", 1 } })
  local a = tend.ask(sup, "kids").a
  lu.assertEquals(tostring(a), "Ref(/user/" .. tostring(sup):match("/user/([^)]+)") .. "/a)")
  tend.send(a, 5)
  lu.assertEquals(tend.ask(a, "get"), 5)
  tend.send(a, "crash") -- its post_stop runs, then a new one starts there
  lu.assertEquals(lines(log, 3), { "start a 1", "stop a", "start a 1" })
  lu.assertEquals(tend.ask(a, "get"), 0) -- the same ref, a new actor there
  lu.assertEquals(tend.children(sup)[1].restarts, 1)
  tend.stop(sup)
  lu.assertEquals(lines(log, 4)[4], "stop a")
end

function TestSchedSupervision:test_the_decider_sees_the_error_kind()
  local log = new_log()
  local seen = {}
  local decider = function(err) seen[#seen + 1] = err.kind; return err.kind == "Bad" and "stop" or "restart" end
  local sup = supervisor(tend.one_for_one { decider = decider }, log, { { "a", 2 } })
  local a = tend.ask(sup, "kids").a
  tend.send(a, "fail")
  lu.assertEquals(lines(log, 2), { "start a 2", "stop a" })
  lu.assertEquals(seen, { "Bad" })
  tend.sleep(0.01)
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(#tend.children(sup), 0)
  tend.stop(sup)
end

function TestSchedSupervision:test_all_for_one_restarts_the_children_here_and_there()
  local log = new_log()
  local sup = supervisor(tend.all_for_one {}, log, { { "a", 0 }, { "b", 1 }, { "c", 2 } })
  local kids = tend.ask(sup, "kids")
  lu.assertEquals(sorted(lines(log, 3), 1, 3), { "start a 0", "start b 1", "start c 2" })
  tend.send(kids.b, "crash")
  -- the others stop youngest first, each after the one before it died;
  -- then all start again
  local got = lines(log, 9)
  lu.assertEquals(table.move(got, 4, 6, 1, {}), { "stop b", "stop c", "stop a" })
  lu.assertEquals(sorted(got, 7, 9), { "start a 0", "start b 1", "start c 2" })
  lu.assertEquals(#got, 9)
  tend.stop(sup)
end

function TestSchedSupervision:test_rest_for_one_and_the_stop_order()
  local log = new_log()
  local sup = supervisor(tend.rest_for_one {}, log, { { "a", 1 }, { "b", 2 }, { "c", 0 }, { "d", 1 } })
  local kids = tend.ask(sup, "kids")
  lines(log, 4)
  tend.send(kids.b, "crash")
  local got = lines(log, 10)
  lu.assertEquals(table.move(got, 5, 7, 1, {}), { "stop b", "stop d", "stop c" })
  lu.assertEquals(sorted(got, 8, 10), { "start b 2", "start c 0", "start d 1" })
  tend.stop(sup) -- youngest first, each after the one before it died
  got = lines(log, 14)
  lu.assertEquals(table.move(got, 11, 14, 1, {}), { "stop d", "stop c", "stop b", "stop a" })
  lu.assertEquals(#got, 14)
end

function TestSchedSupervision:test_the_restart_limit_counts_failures_there()
  local log = new_log()
  local sup = supervisor(tend.one_for_one { max_retries = 2, within = 60 }, log, { { "a", 1 } })
  local a = tend.ask(sup, "kids").a
  lines(log, 1)
  for i = 1, 2 do
    tend.send(a, "crash")
    lines(log, 1 + 2 * i) -- its stop, a new one's start
  end
  tend.send(a, "crash") -- the third failure is past the limit: stopped
  lu.assertEquals(lines(log, 6)[6], "stop a")
  tend.sleep(0.05)
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(#lines(log, 6), 6)
  tend.stop(sup)
end

function TestSchedSupervision:test_a_backoff_supervisor_with_its_child_there()
  local log = new_log()
  local sup = tend.spawn(tend.backoff.on_failure("sched_actors.worker", {
    scheduler = 2, name = "w", args = { log, "w" }, min_backoff = 0.5, max_backoff = 1,
  }))
  lu.assertEquals(lines(log, 1), { "start w 2" })
  local t0 = tend.now()
  tend.send(sup, 7) -- forwarded to its child, and by the child's stand-in there
  lu.assertEquals(tend.ask(sup, "get"), 7)
  tend.send(sup, "crash")
  lu.assertEquals(lines(log, 3), { "start w 2", "stop w", "start w 2" })
  local dt = tend.now() - t0
  if tend.virtual_time() then
    lu.assertTrue(dt >= 0.5 and dt < 0.52, tostring(dt))
  else
    lu.assertTrue(dt >= 0.5 and dt < 0.8, tostring(dt))
  end
  lu.assertEquals(tend.ask(sup, "get"), 0)
  lu.assertEquals(tend.backoff.restart_count(sup), 1)
  local ok, e = pcall(tend.backoff.on_failure, function() end, { scheduler = 1, min_backoff = 1, max_backoff = 2 })
  lu.assertFalse(ok)
  lu.assertStrContains(e, "a closure")
  tend.stop(sup)
end

function TestSchedSupervision:test_what_cannot_be_a_child_there_is_refused()
  local sup = tend.spawn(function(ctx)
    return function(msg, ctx)
      local ok, e = pcall(ctx.spawn, ctx, msg, { scheduler = 1 })
      ctx:reply(tostring(e))
    end
  end)
  lu.assertStrContains(tend.ask(sup, function() end), "a closure")
  lu.assertStrContains(tend.ask(sup, {}), "\"module.factory\"")
  -- a module that is not there: the stand-in's start fails (InitError)
  local r = tend.spawn(function(ctx)
    return function(msg, ctx) ctx:reply(ctx:spawn("nomodule.x", { scheduler = 2 })) end
  end)
  local c = tend.ask(r, "go")
  tend.watch(c)
  local down = tend.receive(5)
  lu.assertEquals(down.ref, c)
  lu.assertEquals(down.reason.kind, "InitError")
  lu.assertStrContains(down.reason.message, "nomodule")
  tend.stop(sup)
  tend.stop(r)
end

function TestSchedSupervision:test_a_spread_pool_has_members_on_every_scheduler()
  local log = new_log()
  local pool = tend.pool { size = 4, factory = "sched_actors.worker", args = { log, "m" }, spread = true }
  local got = lines(log, 4)
  lu.assertEquals(sorted(got, 1, 4), { "start m 0", "start m 0", "start m 1", "start m 2" })
  for i = 1, 8 do tend.send(pool, i) end -- round robin: 1+5, 2+6, 3+7, 4+8
  local sums = {}
  for _ = 1, 4 do sums[#sums + 1] = tend.ask(pool, "get") end
  table.sort(sums)
  lu.assertEquals(sums, { 6, 8, 10, 12 })
  local ok, e = pcall(tend.pool, { size = 2, factory = function() end, spread = true })
  lu.assertFalse(ok)
  lu.assertStrContains(e, "option 'factory': expected \"module.factory\"")
  tend.stop(pool)
  lu.assertEquals(#lines(log, 8), 8)
end
