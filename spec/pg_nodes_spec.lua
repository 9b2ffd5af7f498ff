-- tend.pg across simulated nodes (tend.sim.nodes) under the virtual
-- clock: the same node layer as over NATS, so the same groups, with exact
-- times, a partition, a crash and a restart. This host is node "ctl"
-- (sorted after a, b, c: its members come last).
-- spec/realtime/node_spec.lua has the same over a real nats-server.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

TestPgNodes = {}

-- Each node's program: node a has two members of "workers" (w1, w2),
-- node b one (w1), any other none.
local APP = [[
local tend = require "tend"
local n = ({ a = 2, b = 1 })[tend.node.name()] or 0
for i = 1, n do
  tend.spawn(function(ctx)
    tend.pg.join("workers", ctx.self)
    return function() end
  end, { name = "w" .. i })
end
]]

local T = 2 -- the node timeout: heartbeats every 0.5 s

local function start(names)
  local list = {}
  for _, n in ipairs(names) do list[n] = { code = APP } end
  return tend.sim.nodes(list, { join = "ctl", timeout = T })
end

local function names(refs)
  local out = {}
  for i, r in ipairs(refs) do out[i] = tostring(r) end
  return out
end

-- The members of "workers" as node `name` sees them (a probe there).
local function seen_by(name)
  local probe = tend.spawn_on(name, "node_actors.pg_probe")
  local v = tend.ask(probe, "workers")
  tend.stop(probe)
  return v
end

function TestPgNodes:setUp() while select("#", tend.receive(0)) > 0 do end end

function TestPgNodes:tearDown()
  tend.sim.stop()
  tend.sleep(1)
  H.settle()
  lu.assertEquals(tend.pg.which_groups(), {})
  H.assert_clean()
end

function TestPgNodes:test_every_node_lists_the_same_members_in_the_same_order()
  start({ "c", "b", "a" })
  local mine = tend.spawn(require("node_actors").member, { args = { "workers" } })
  tend.sleep(0.1)
  local all = tend.pg.members("workers")
  lu.assertEquals(names(all), { "Ref(/user/w1@a)", "Ref(/user/w2@a)", "Ref(/user/w1@b)", tostring(mine) })
  lu.assertEquals(tend.pg.local_members("workers"), { mine })
  lu.assertEquals(tend.pg.which_groups(), { "workers" })
  for _, n in ipairs { "a", "b", "c" } do
    local v = seen_by(n)
    lu.assertEquals(v.members, all)
    lu.assertEquals(v.groups, { "workers" })
  end
  lu.assertEquals(#seen_by("a").local_members, 2)
  lu.assertEquals(seen_by("c").local_members, {})
  tend.stop(mine)
end

function TestPgNodes:test_a_partition_shows_each_side_its_view_and_the_repair_mends_it()
  start({ "a", "b" })
  tend.sleep(0.1)
  lu.assertEquals(names(seen_by("a").members), { "Ref(/user/w1@a)", "Ref(/user/w2@a)", "Ref(/user/w1@b)" })
  tend.chaos.partition("a", "b")
  -- b has one more member while a cannot hear it; ctl hears both sides
  local extra = tend.spawn_on("b", "node_actors.member", { args = { "workers" } })
  tend.sleep(T + 1)
  lu.assertEquals(names(seen_by("a").members), { "Ref(/user/w1@a)", "Ref(/user/w2@a)" })
  lu.assertEquals(names(seen_by("b").members), { "Ref(/user/w1@b)", tostring(extra) })
  lu.assertEquals(names(tend.pg.members("workers")),
    { "Ref(/user/w1@a)", "Ref(/user/w2@a)", "Ref(/user/w1@b)", tostring(extra) })
  -- the repair: a and b are up again for each other and sync
  tend.chaos.repair("a", "b")
  tend.sleep(1)
  lu.assertEquals(seen_by("a").members, tend.pg.members("workers"))
  lu.assertEquals(seen_by("b").members, tend.pg.members("workers"))
end

function TestPgNodes:test_a_crashed_node_takes_its_members_at_its_nodedown_and_its_restart_brings_new_ones()
  start({ "a", "b" })
  tend.sleep(0.1)
  local before = tend.pg.monitor("workers")
  lu.assertEquals(names(before), { "Ref(/user/w1@a)", "Ref(/user/w2@a)", "Ref(/user/w1@b)" })
  tend.node.monitor("b")
  local t0 = tend.now()
  tend.chaos.crash_node("b")
  -- one pg_leave with all of b's members, then the nodedown, at once
  local leave = tend.receive(T + 1)
  local t = tend.now()
  lu.assertEquals(leave, { tend = "pg_leave", group = "workers", refs = { before[3] } })
  lu.assertTrue(t > t0 + T - 0.5 and t <= t0 + T + 0.5, "down at " .. t)
  lu.assertEquals(tend.receive(0), { tend = "nodedown", node = "b" })
  lu.assertEquals(tend.now(), t)
  lu.assertEquals(tend.pg.members("workers"), { before[1], before[2] })
  -- a new incarnation runs its program again: a new w1
  tend.chaos.restart_node("b")
  local got = { tend.receive(1), tend.receive(1) }
  table.sort(got, function(x, y) return x.tend < y.tend end)
  lu.assertEquals(got[1], { tend = "nodeup", node = "b" })
  lu.assertEquals(got[2].tend, "pg_join")
  lu.assertEquals(names(got[2].refs), { "Ref(/user/w1@b)" })
  lu.assertFalse(got[2].refs[1] == before[3])
  lu.assertFalse(tend.alive(before[3]))
  lu.assertEquals(tend.pg.members("workers"), { before[1], before[2], got[2].refs[1] })
  lu.assertNil(tend.pg.monitor("workers", false))
  tend.node.monitor("b", false)
end

function TestPgNodes:test_a_leave_and_a_death_on_another_node_reach_the_monitors()
  start({ "a" })
  tend.sleep(0.1)
  local m = tend.spawn_on("a", "node_actors.member", { args = { "workers" }, restart = "temporary" })
  tend.sleep(0.1)
  local now = tend.pg.monitor("workers")
  lu.assertEquals(#now, 3)
  lu.assertTrue(now[3] == m)
  m:send("leave")
  lu.assertEquals(tend.receive(1), { tend = "pg_leave", group = "workers", refs = { m } })
  lu.assertTrue(tend.alive(m))
  tend.pg.join("workers", tend.spawn(require("node_actors").member, { args = { "other" } }))
  local j = tend.receive(0)
  lu.assertEquals(j.tend, "pg_join")
  lu.assertEquals(seen_by("a").members, { now[1], now[2], j.refs[1] })
  m:send("fail")
  lu.assertEquals(select("#", tend.receive(0.5)), 0) -- it had left: nothing to tell
  local w2 = now[2]
  tend.stop(j.refs[1])
  lu.assertEquals(tend.receive(1), { tend = "pg_leave", group = "workers", refs = { j.refs[1] } })
  lu.assertTrue(tend.alive(w2))
  lu.assertNil(tend.pg.monitor("workers", false))
end
