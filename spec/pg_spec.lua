-- tend.pg: process groups in OTP's shape: join, leave, members, send to
-- all, which_groups; a member that dies leaves.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestPg = {}

function TestPg:tearDown()
  lu.assertEquals(tend.pg.which_groups(), {})
  H.assert_clean()
end

function TestPg:test_join_send_members_leave()
  local log1, log2 = {}, {}
  local a, b = H.recorder(log1), H.recorder(log2)
  tend.pg.join("room", a)
  tend.pg.join("room", { b, a }) -- a member joins once
  local m = tend.pg.members("room")
  lu.assertEquals(#m, 2)
  lu.assertTrue(m[1] == a and m[2] == b) -- join order
  lu.assertEquals(tend.pg.send("room", "hi"), 2)
  H.settle()
  lu.assertEquals(log1, { "hi" })
  lu.assertEquals(log2, { "hi" })
  lu.assertEquals(tend.pg.which_groups(), { "room" })
  lu.assertTrue(tend.pg.leave("room", a))
  lu.assertFalse(tend.pg.leave("room", a))
  lu.assertEquals(tend.pg.send("room", "again"), 1)
  H.settle()
  lu.assertEquals(log1, { "hi" })
  lu.assertEquals(log2, { "hi", "again" })
  tend.pg.leave("room", b)
  lu.assertEquals(tend.pg.members("room"), {})
  lu.assertEquals(tend.pg.send("room", "nobody"), 0)
  H.stop_all(a, b)
end

function TestPg:test_members_leave_when_they_die()
  local a = H.recorder({})
  local b = H.recorder({})
  tend.pg.join("g", { a, b })
  tend.pg.join(7, a)
  lu.assertEquals(tend.pg.which_groups(), { 7, "g" })
  H.stop_all(a)
  local m = tend.pg.members("g")
  lu.assertEquals(#m, 1)
  lu.assertTrue(m[1] == b)
  lu.assertEquals(tend.pg.which_groups(), { "g" })
  tend.pg.join("g", a) -- a dead ref does not join
  lu.assertEquals(#tend.pg.members("g"), 1)
  H.stop_all(b)
  lu.assertEquals(tend.pg.members("g"), {})
end

function TestPg:test_a_dead_member_is_not_kept()
  local probe = setmetatable({}, { __mode = "v" })
  do
    local a = H.recorder({})
    tend.pg.join("untouched", a)
    probe[1] = a
    H.stop_all(a)
  end
  H.settle()
  collectgarbage()
  collectgarbage()
  lu.assertNil(probe[1]) -- the group held no strong ref to the dead member
  lu.assertEquals(tend.pg.which_groups(), {})
end

function TestPg:test_a_restart_keeps_the_membership()
  local a = tend.spawn(function()
    return function(m) if m == "crash" then error("x") end end
  end)
  tend.pg.join("g", a)
  a:send("crash")
  H.settle()
  lu.assertEquals(#tend.pg.members("g"), 1)
  H.stop_all(a)
end

function TestPg:test_the_sender_is_the_running_actor()
  local got = {}
  local a = tend.spawn(function()
    return function(m, ctx) got[#got + 1] = ctx.sender end
  end)
  tend.pg.join("g", a)
  tend.pg.send("g", "x")
  H.settle()
  lu.assertTrue(got[1] == tend.self())
  H.stop_all(a)
end

function TestPg:test_local_members_and_a_group_of_any_value()
  local a, b = H.recorder({}), H.recorder({})
  local t = {}
  tend.pg.join(t, a)
  tend.pg.join("g", { b, a })
  lu.assertEquals(tend.pg.local_members("g"), { b, a })
  lu.assertEquals(tend.pg.members("g"), { b, a }) -- no node: the same
  lu.assertEquals(tend.pg.local_members(t), { a })
  lu.assertEquals(tend.pg.which_groups(), { "g", t })
  H.stop_all(a, b)
  lu.assertEquals(tend.pg.local_members("g"), {})
  lu.assertEquals(tend.pg.members(t), {})
end

function TestPg:test_bad_input()
  lu.assertErrorMsgContains("tend.pg.join: group: expected a value other than nil or NaN, got nil",
    tend.pg.join, nil, tend.self())
  lu.assertErrorMsgContains("tend.pg.join: ref: expected an actor ref or a list of refs, got a string",
    tend.pg.join, "g", "x")
  lu.assertErrorMsgContains("got an empty table", tend.pg.join, "g", {})
  lu.assertErrorMsgContains("tend.pg.send: group: expected a value other than nil or NaN",
    tend.pg.send, 0 / 0, 1)
  lu.assertErrorMsgContains("tend.pg.local_members: group: expected a value other than nil or NaN, got nil",
    tend.pg.local_members, nil)
end

function TestPg:test_a_monitor_is_told_of_joins_leaves_and_deaths_at_once()
  local a, b = H.recorder({}), H.recorder({})
  tend.pg.join("g", a)
  local log, now = {}, nil
  local watcher = tend.spawn(function()
    now = tend.pg.monitor("g")
    return function(m) log[#log + 1] = m end
  end)
  H.settle()
  lu.assertEquals(now, { a })
  tend.pg.join("g", { b, a }) -- a is a member already: b alone joins
  tend.pg.join("other", b)    -- another group: not told
  lu.assertTrue(tend.pg.leave("g", a))
  H.stop_all(b) -- its death is told at once, with no operation on the group
  lu.assertEquals(log, {
    { tend = "pg_join", group = "g", refs = { b } },
    { tend = "pg_leave", group = "g", refs = { a } },
    { tend = "pg_leave", group = "g", refs = { b } },
  })
  -- the main task's own monitor, then monitor(group, false)
  lu.assertEquals(tend.pg.monitor("g"), {})
  tend.pg.join("g", a)
  lu.assertEquals(tend.receive(0), { tend = "pg_join", group = "g", refs = { a } })
  lu.assertNil(tend.pg.monitor("g", false))
  lu.assertTrue(tend.pg.leave("g", a))
  H.settle()
  lu.assertEquals(select("#", tend.receive(0)), 0)
  -- a monitor goes with its actor; then /system/pg stops (tearDown: clean)
  lu.assertEquals(log[4], { tend = "pg_join", group = "g", refs = { a } })
  lu.assertEquals(log[5], { tend = "pg_leave", group = "g", refs = { a } })
  H.stop_all(watcher)
  tend.pg.join("g", a)
  H.settle()
  lu.assertEquals(#log, 5)
  H.stop_all(a)
end
