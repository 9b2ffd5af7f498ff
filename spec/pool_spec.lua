-- tend.pool: a pool of members behind one ref, supervised by the pool
-- with its strategy, each routing rule, the sender kept for replies, and
-- the pool stops once every member is gone (Akka's pool routers).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestPool = {}

function TestPool:tearDown() H.assert_clean() end

-- Members note "name:msg" in log; "crash" fails one; "slow" sleeps 1 s.
local function member(log)
  return function(ctx)
    return function(m, c)
      log[#log + 1] = c.self:name() .. ":" .. tostring(m)
      if m == "crash" then error("boom") end
      if m == "slow" then c:sleep(1) end
      if m == "who" then c:reply(c.self:name()) end
    end
  end
end

function TestPool:test_round_robin_and_members_under_the_pool()
  local log = {}
  local p = tend.pool{ size = 3, factory = member(log), name = "jobs" }
  for i = 1, 5 do p:send(i) end
  H.settle()
  lu.assertEquals(log, { "1:1", "1:4", "2:2", "2:5", "3:3" })
  local paths = {}
  for i, c in ipairs(tend.children(p)) do paths[i] = c.path end
  lu.assertEquals(paths, { "/user/jobs/1", "/user/jobs/2", "/user/jobs/3" })
  lu.assertEquals(tend.count_children(p).specs, 3)
  -- the sender is kept: a member's reply answers the asker
  lu.assertEquals(tend.ask(p, "who", 1), "3")
  lu.assertEquals(tend.ask(p, "who", 1), "1")
  H.stop_all(p)
end

function TestPool:test_members_restart_under_the_pool_strategy()
  local log = {}
  local p = tend.pool{ size = 2, factory = member(log),
    strategy = tend.all_for_one{ max_retries = 5, within = 60 } }
  p:send("crash")
  H.settle()
  local restarts = {}
  for i, c in ipairs(tend.children(p)) do restarts[i] = c.restarts end
  lu.assertEquals(restarts, { 1, 1 }) -- all_for_one: both
  H.stop_all(p)
end

function TestPool:test_broadcast_sends_to_every_member()
  local log = {}
  local p = tend.pool{ size = 3, factory = member(log), routing = "broadcast" }
  p:send("all")
  H.settle()
  lu.assertEquals(log, { "1:all", "2:all", "3:all" })
  H.stop_all(p)
end

function TestPool:test_smallest_mailbox_prefers_idle_members()
  local log = {}
  local p = tend.pool{ size = 2, factory = member(log), routing = "smallest_mailbox" }
  p:send("slow") -- member 1 busy for 1 s
  H.settle()
  p:send("a") p:send("b") p:send("c")
  H.settle()
  -- a: 2, idle and empty; b: 1, busy but empty (2 has a queued); c: 2 (1
  -- queued) rather than 1 (1 queued and busy)
  lu.assertEquals(log, { "1:slow", "2:a", "2:c" })
  tend.sleep(1.5)
  lu.assertEquals(log, { "1:slow", "2:a", "2:c", "1:b" })
  H.stop_all(p)
end

function TestPool:test_random_is_seeded_and_reaches_every_member()
  local log = {}
  local p = tend.pool{ size = 3, factory = member(log), routing = "random" }
  for i = 1, 60 do p:send(i) end
  H.settle()
  local seen = {}
  for _, l in ipairs(log) do seen[l:match("^(%d+):")] = true end
  lu.assertEquals(seen, { ["1"] = true, ["2"] = true, ["3"] = true })
  lu.assertEquals(#log, 60)
  H.stop_all(p)
end

function TestPool:test_the_pool_stops_when_every_member_is_gone()
  local p = tend.pool{ size = 2, factory = member({}), strategy = tend.stopping }
  local probe = tend.testkit.probe()
  probe:watch(p)
  p:send("crash") p:send("crash")
  probe:expect_terminated(p, 1)
  H.stop_all(probe.ref)
end

function TestPool:test_bad_options()
  local f = member({})
  lu.assertErrorMsgContains("tend.pool: option 'size': expected an integer >= 1, got 0",
    tend.pool, { size = 0, factory = f })
  lu.assertErrorMsgContains("tend.pool: option 'factory': expected a function",
    tend.pool, { size = 1 })
  lu.assertErrorMsgContains('tend.pool: option \'routing\': expected "round_robin", '
    .. '"random", "smallest_mailbox" or "broadcast", got "rr"',
    tend.pool, { size = 1, factory = f, routing = "rr" })
  lu.assertErrorMsgContains("tend.pool: option 'strategy': expected a strategy",
    tend.pool, { size = 1, factory = f, strategy = "one_for_one" })
  lu.assertErrorMsgContains("tend.pool: unknown option 'sise'",
    tend.pool, { sise = 1, factory = f })
  lu.assertErrorMsgContains("tend.pool: expected a table of options, got number",
    tend.pool, 3)
  local p = tend.pool{ size = 1, factory = f, name = "p" }
  lu.assertErrorMsgContains("tend.pool: name 'p' is already taken: /user/p exists",
    tend.pool, { size = 1, factory = f, name = "p" })
  H.stop_all(p)
end

function TestPool:test_a_pool_under_a_supervisor()
  local log = {}
  local app = tend.spawn(function(ctx)
    tend.pool{ size = 2, factory = member(log), name = "workers", under = ctx.self }
    ctx:spawn(function() return function(m) if m == "crash" then error("x") end end end,
      { name = "db" })
    return function() end
  end, { name = "app", children = tend.all_for_one{} })
  H.settle()
  local pool = tend.whereis("/user/app/workers")
  lu.assertEquals(#tend.children(pool), 2)
  tend.whereis("/user/app/db"):send("crash") -- all_for_one: the pool restarts too
  H.settle()
  lu.assertEquals(tend.children(app)[1].restarts, 1)
  lu.assertTrue(tend.whereis("/user/app/workers") == pool)
  pool:send("after")
  H.settle()
  lu.assertEquals(log, { "1:after" })
  lu.assertErrorMsgContains("tend.pool: option 'under': no live actor is registered as 'nobody'",
    tend.pool, { size = 1, factory = member(log), under = "nobody" })
  H.stop_all(app)
end
