-- Several schedulers in one process (--schedulers 3): actors placed on
-- another scheduler by "module.factory", and send, ask, DeathWatch, stop,
-- kill and poison across schedulers, as within one. Run by scripts/test
-- under the virtual clock (one thread, times exact) and under the real
-- clock (a thread per scheduler; times within a bound):
-- `tend [--real-time] --schedulers 3 test spec/multi/schedulers_spec.lua`.
local lu = require "luaunit"
local tend = require "tend"

TestSchedulers = {}

-- t seconds: exactly under the virtual clock, within 0.25 s of it under
-- the real one.
local function assert_time(got, t)
  if tend.virtual_time() then
    lu.assertEquals(got, t)
  else
    lu.assertTrue(got >= t - 0.001 and got < t + 0.25, ("%g s, not %g s"):format(got, t))
  end
end

function TestSchedulers:test_three_schedulers()
  local c = tend.spawn("sched_actors.counter", { scheduler = 2, args = { 10 } })
  lu.assertEquals(tend.ask(c, "get"), 10)
end

function TestSchedulers:test_send_and_ask_across_keep_order()
  local c = tend.spawn("sched_actors.counter",
    { scheduler = 1, name = "counter", args = { 100 } })
  lu.assertEquals(tostring(c), "Ref(/user/counter)")
  lu.assertTrue(tend.alive(c))
  for i = 1, 10 do tend.send(c, i) end
  local t0 = tend.now()
  lu.assertEquals(tend.ask(c, "get"), 155)
  assert_time(tend.now() - t0, 0)
  tend.stop(c)
end

function TestSchedulers:test_refs_travel_and_compare_equal()
  local m = tend.spawn("sched_actors.mirror", { scheduler = 2 })
  local other = tend.spawn("sched_actors.counter", { scheduler = 1 })
  tend.send(m, { to = tend.self(), ref = other })
  local r = tend.receive(1)
  lu.assertEquals(r.ref, other) -- a proxy of scheduler 1's actor, the same one
  lu.assertEquals(r.me, m)
  -- the sender as the other scheduler sees it is this task
  tend.send(other, "sender")
  lu.assertEquals(tend.receive(1).sender, tend.self())
  tend.stop(m)
  tend.stop(other)
end

function TestSchedulers:test_an_actor_there_asks_one_here()
  local store = tend.spawn(function() return function(_, ctx) ctx:reply(42) end end)
  local a = tend.spawn("sched_actors.asker", { scheduler = 1, args = { store } })
  lu.assertEquals(tend.ask(a, "go"), 42)
  tend.stop(a)
  tend.stop(store)
end

function TestSchedulers:test_timers_there_run_on_the_one_clock()
  local t0 = tend.now()
  local t = tend.spawn("sched_actors.ticker", { scheduler = 2, args = { tend.self(), 0.5 } })
  for i = 1, 3 do
    lu.assertEquals(tend.receive(2), i)
    assert_time(tend.now() - t0, 0.5 * i)
  end
  tend.stop(t)
end

function TestSchedulers:test_watch_across_sees_the_reason()
  local c = tend.spawn("sched_actors.counter", { scheduler = 1 })
  tend.watch(c)
  tend.send(c, "quit")
  local t = tend.receive(1)
  lu.assertEquals(t.tend, "terminated")
  lu.assertEquals(t.reason, "normal")
  lu.assertEquals(t.ref, c)
  lu.assertFalse(tend.alive(c))
  local ok, err = pcall(tend.ask, c, "get", 0.5)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "NoActor")
  -- killed: the Killed error is the reason
  local k = tend.spawn("sched_actors.counter", { scheduler = 2 })
  tend.watch(k)
  tend.kill(k)
  t = tend.receive(1)
  lu.assertEquals(t.reason.kind, "Killed")
end

function TestSchedulers:test_stop_and_poison_across()
  local c = tend.spawn("sched_actors.counter", { scheduler = 1 })
  tend.watch(c)
  tend.stop(c)
  lu.assertEquals(tend.receive(1).reason, "normal")
  local p = tend.spawn("sched_actors.counter", { scheduler = 2 })
  tend.watch(p)
  tend.send(p, 5)
  tend.poison(p)
  tend.send(p, 6) -- after the pill: a dead letter
  local t = tend.receive(1)
  lu.assertEquals(t.tend, "terminated")
  lu.assertEquals(t.reason, "normal")
end

function TestSchedulers:test_what_cannot_cross_is_refused_at_the_sender()
  local c = tend.spawn("sched_actors.counter", { scheduler = 1 })
  lu.assertErrorMsgContains("msg.f: a function cannot move to another scheduler",
    tend.send, c, { f = print })
  lu.assertErrorMsgContains(
    "an actor for another scheduler is named as \"module.factory\"",
    tend.spawn, function() end, { scheduler = 1 })
  lu.assertErrorMsgContains(
    "tend.spawn: on scheduler 1: factory: 'sched_actors.nope' is not a function",
    tend.spawn, "sched_actors.nope", { scheduler = 1 })
  lu.assertErrorMsgContains(
    "option 'scheduler': expected a scheduler 0..2 (--schedulers 3) or \"spread\", got 3",
    tend.spawn, "sched_actors.counter", { scheduler = 3 })
  lu.assertErrorMsgContains("mailbox: not supported yet for an actor on another scheduler",
    tend.spawn, "sched_actors.counter", { scheduler = 1, mailbox = { capacity = 1 } })
  lu.assertErrorMsgContains("on scheduler 2: module 'no_such_module' not found",
    tend.spawn, "no_such_module.f", { scheduler = 2 })
  local parent = tend.spawn(function(ctx)
    return function(_, ctx2)
      local ok, err = pcall(ctx2.spawn, ctx2, "sched_actors.counter", { scheduler = 1, stash = 10 })
      ctx2:reply(ok and "spawned" or tostring(err))
    end
  end)
  lu.assertStrContains(tend.ask(parent, "go"),
    "stash: not supported yet for an actor on another scheduler")
  tend.stop(c)
  tend.stop(parent)
end

function TestSchedulers:test_a_string_factory_here_and_spread()
  local here = tend.spawn("sched_actors.counter", { args = { 7 } })
  lu.assertEquals(tend.ask(here, "get"), 7)
  local spread = {}
  for i = 1, 4 do
    spread[i] = tend.spawn("sched_actors.counter", { scheduler = "spread", args = { i } })
  end
  for i = 1, 4 do lu.assertEquals(tend.ask(spread[i], "get"), i) end
  for i = 1, 4 do tend.stop(spread[i]) end
  tend.stop(here)
end

function TestSchedulers:test_paths_are_unique_across_schedulers()
  local a = tend.spawn("sched_actors.counter", { scheduler = 1 })
  local b = tend.spawn("sched_actors.counter", { scheduler = 2 })
  local c = tend.spawn("sched_actors.counter")
  lu.assertNotEquals(tostring(a), tostring(b))
  lu.assertNotEquals(tostring(b), tostring(c))
  local named = tend.spawn("sched_actors.counter", { scheduler = 1, name = "only" })
  lu.assertErrorMsgContains("name 'only' is already taken: /user/only exists on scheduler 1",
    tend.spawn, "sched_actors.counter", { name = "only" })
  lu.assertErrorMsgContains("name 'only' is already taken",
    tend.spawn, "sched_actors.counter", { scheduler = 2, name = "only" })
  for _, r in ipairs({ a, b, c, named }) do tend.stop(r) end
end

-- A task waiting with no timeout for a reply that is on its way from (or
-- being made on) another scheduler keeps the process alive: the process
-- ends only when nothing works and nothing is on its way.
function TestSchedulers:test_a_wait_with_no_timeout_outlives_every_round_trip()
  local c = tend.spawn("sched_actors.counter", { scheduler = 2 })
  for _ = 1, 2000 do
    tend.send(c, "sender")
    lu.assertEquals(tend.receive().sender, tend.self())
  end
  tend.stop(c)
end

-- A registered name names one actor of the whole process: whereis, send,
-- ask by name and registered() reach it from every scheduler; it goes
-- when the actor dies.
function TestSchedulers:test_a_registered_name_reaches_across()
  local a = tend.spawn("sched_actors.registrar", { scheduler = 1, args = { "counter_one" } })
  lu.assertEquals(tend.ask(a, "ready"), true)
  local r = tend.whereis("counter_one")
  lu.assertEquals(r, a)
  tend.send("counter_one", 5)
  lu.assertEquals(tend.ask("counter_one", "get"), 5)
  lu.assertTrue(tend.registered()[1] == "counter_one")
  lu.assertErrorMsgContains("tend.register: name 'counter_one' is already taken on scheduler 1",
    tend.register, "counter_one", tend.self())
  tend.watch(a)
  tend.send(a, "quit")
  tend.receive(1)
  lu.assertNil(tend.whereis("counter_one"))
  tend.register("counter_one", tend.self()) -- free again
  lu.assertEquals(tend.whereis("counter_one"), tend.self())
  tend.unregister("counter_one")
end

function TestSchedulers:test_ps_tree_and_stats_see_every_scheduler()
  lu.assertEquals(#tend.stats().schedulers, 3)
  local far = tend.spawn("sched_actors.counter", { scheduler = 2, name = "far" })
  local near = tend.spawn(function() return function() end end, { name = "near" })
  tend.ask(far, "get") -- started there
  local rows = {}
  for _, r in ipairs(tend.ps()) do rows[r.path] = r end
  lu.assertEquals(rows["/user/far"].scheduler, 2)
  lu.assertEquals(rows["/user/far"].depth, 1)
  lu.assertEquals(rows["/user/far"].ref, far) -- a proxy of the actor there
  lu.assertEquals(rows["/user/near"].scheduler, 0)
  lu.assertEquals(rows["/user"].scheduler, 0) -- one /user for the process
  local tree = tend.tree()
  lu.assertStrContains(tree, "\n  far [running] restarts=0 mailbox=0 sched=2\n")
  lu.assertStrContains(tree, "\n  near [")
  lu.assertEquals(select(2, tree:gsub("/user %[", "")), 1)
  local s = tend.stats()
  local before = s.schedulers[3].actors
  tend.stop(far)
  tend.sleep(0.01) -- its death reaches every scheduler
  lu.assertEquals(tend.stats().schedulers[3].actors, before - 1)
  lu.assertEquals(s.actors, s.schedulers[1].actors + s.schedulers[2].actors + s.schedulers[3].actors)
  lu.assertEquals(s.spawned, s.schedulers[1].spawned + s.schedulers[2].spawned + s.schedulers[3].spawned)
  tend.stop(near)
end

function TestSchedulers:test_a_path_under_user_reaches_across()
  local far = tend.spawn("sched_actors.counter", { scheduler = 2, name = "by_path", args = { 3 } })
  lu.assertEquals(tend.whereis("/user/by_path"), far)
  tend.send("/user/by_path", 4)
  lu.assertEquals(tend.ask("/user/by_path", "get"), 7)
  lu.assertNil(tend.whereis("/user/by_path/deeper"))
  tend.stop(far)
  tend.sleep(0.01)
  lu.assertNil(tend.whereis("/user/by_path"))
end

function TestSchedulers:test_a_process_group_spans_the_schedulers()
  local me = tend.self()
  local two = tend.spawn("sched_actors.joiner", { scheduler = 2, args = { "room", me } })
  local one = tend.spawn("sched_actors.joiner", { scheduler = 1, args = { "room", me } })
  local zero = tend.spawn("sched_actors.joiner", { args = { "room", me } })
  tend.spawn("sched_actors.joiner", { scheduler = 1, args = { { "not", "spanning" }, me } })
  local members
  for _ = 1, 100 do -- the joins there are made at those actors' starts
    members = tend.pg.members("room")
    if #members == 3 then break end
    tend.sleep(0.01)
  end
  lu.assertEquals(members, { zero, one, two }) -- in scheduler order
  lu.assertEquals(tend.pg.local_members("room"), { zero })
  lu.assertEquals(tend.pg.send("room", "hi"), 3)
  local got = {}
  for _ = 1, 3 do
    local m = tend.receive(5)
    got[#got + 1] = m[1] .. " " .. m[2]
  end
  table.sort(got)
  lu.assertEquals(got, { "0 hi", "1 hi", "2 hi" })
  tend.send(two, "quit") -- a member that dies leaves
  tend.send(one, "leave")
  for _ = 1, 100 do
    if #tend.pg.members("room") == 1 then break end
    tend.sleep(0.01)
  end
  lu.assertEquals(tend.pg.members("room"), { zero })
  local ok, err = pcall(tend.pg.join, "room", one)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "is an actor of scheduler 1: join it there")
  tend.stop(zero)
  tend.stop(one)
end

-- Many members of several groups on two other schedulers (the shared
-- index grows past its first 64 chains): each group read in scheduler
-- order then join order, leaves and deaths taken out one by one
function TestSchedulers:test_many_members_of_several_groups_across()
  local me = tend.self()
  local on1, on2, other = {}, {}, {}
  for i = 1, 40 do
    on1[i] = tend.spawn("sched_actors.joiner", { scheduler = 1, args = { "many", me } })
    on2[i] = tend.spawn("sched_actors.joiner", { scheduler = 2, args = { "many", me } })
    other[i] = tend.spawn("sched_actors.joiner", { scheduler = 2, args = { 7, me } })
  end
  local function wait_for(group, n)
    local got
    for _ = 1, 200 do
      got = tend.pg.members(group)
      if #got == n then break end
      tend.sleep(0.01)
    end
    return got
  end
  local want = {}
  for i = 1, 40 do want[i], want[40 + i] = on1[i], on2[i] end
  lu.assertEquals(wait_for("many", 80), want)
  lu.assertEquals(wait_for(7, 40), other)
  for i = 1, 40, 2 do
    tend.send(on1[i], "leave")
    tend.send(on2[i], "quit")
  end
  want = {}
  for i = 2, 40, 2 do want[#want + 1] = on1[i] end
  for i = 2, 40, 2 do want[#want + 1] = on2[i] end
  lu.assertEquals(wait_for("many", 40), want)
  lu.assertEquals(tend.pg.send("many", "hi"), 40)
  local seen = { [1] = 0, [2] = 0 }
  for _ = 1, 40 do
    local m = tend.receive(5)
    seen[m[1]] = seen[m[1]] + 1
  end
  lu.assertEquals(seen, { [1] = 20, [2] = 20 })
  lu.assertEquals(#tend.pg.members(7), 40)
  for i = 1, 40 do tend.stop(on1[i]) tend.stop(on2[i]) tend.stop(other[i]) end
  lu.assertEquals(wait_for("many", 0), {})
  lu.assertEquals(wait_for(7, 0), {})
end
