-- Children from outside (OTP's which_children, count_children,
-- start_child, terminate_child): records in start order, counts, dynamic
-- children started and stopped by another actor.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestChildren = {}

function TestChildren:tearDown() H.assert_clean() end

local function idle() return function() end end

local function crashy()
  return function(msg) if msg == "crash" then error("boom") end end
end

local function fields(list, k)
  local out = {}
  for i, c in ipairs(list) do out[i] = c[k] end
  return out
end

function TestChildren:test_records_in_start_order()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(crashy, { name = "config", restart = "permanent" })
    ctx:spawn(idle, { name = "cache" })
    ctx:spawn(idle, { name = "api", restart = "temporary",
      supervisor = tend.one_for_one{} })
    return idle()
  end, { name = "app" })
  H.settle()
  local cs = tend.children(sup)
  lu.assertEquals(fields(cs, "path"), { "/user/app/config", "/user/app/cache", "/user/app/api" })
  lu.assertEquals(fields(cs, "restart"), { "permanent", "transient", "temporary" })
  lu.assertEquals(fields(cs, "state"), { "running", "running", "running" })
  lu.assertEquals(fields(cs, "restarts"), { 0, 0, 0 })
  lu.assertEquals(fields(cs, "supervisor"), { false, false, true })
  lu.assertTrue(cs[1].ref == tend.whereis("/user/app/config"))
  cs[1].ref:send("crash")
  H.settle()
  lu.assertEquals(fields(tend.children("/user/app"), "restarts"), { 1, 0, 0 })
  lu.assertEquals(tend.count_children(sup),
    { specs = 3, active = 3, supervisors = 1, workers = 2 })
  tend.register("app", sup)
  lu.assertEquals(#tend.children("app"), 3) -- a name works too
  lu.assertEquals(tend.children(cs[2].ref), {})
  H.stop_all(sup)
  local none, why = tend.children(sup)
  lu.assertNil(none)
  lu.assertEquals(why, "tend.children: Ref(/user/app) is not alive")
end

function TestChildren:test_mailbox_and_name_in_the_record()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() return function(_, c) c:sleep(1) end end, { name = "slow" })
    return idle()
  end)
  H.settle()
  local slow = tend.children(sup)[1].ref
  tend.register("slowpoke", slow)
  for i = 1, 3 do slow:send(i) end
  H.settle()
  local c = tend.children(sup)[1]
  lu.assertEquals(c.state, "waiting") -- in its first message
  lu.assertEquals(c.mailbox, 2)
  lu.assertEquals(c.name, "slowpoke")
  H.stop_all(sup)
end

function TestChildren:test_start_child_and_stop_child()
  local sup = tend.spawn(idle, { name = "sup" })
  local w = tend.start_child(sup, function(ctx, greeting)
    return function(msg, c) c:reply(greeting .. " " .. msg) end
  end, { name = "w", args = { "hello" }, restart = "permanent" })
  lu.assertEquals(w:path(), "/user/sup/w")
  lu.assertEquals(tend.ask(w, "you", 1), "hello you")
  lu.assertEquals(tend.count_children(sup).specs, 1)
  -- stopped by its supervisor: final, even for a permanent child (OTP)
  local p = tend.testkit.probe()
  p:watch(w)
  lu.assertTrue(tend.stop_child(sup, w))
  local t = p:expect_terminated(w, 1)
  lu.assertEquals(t.reason, "shutdown")
  H.settle()
  lu.assertEquals(tend.count_children(sup).specs, 0)
  local ok, why = tend.stop_child(sup, w)
  lu.assertNil(ok)
  lu.assertEquals(why, "tend.stop_child: Ref(/user/sup/w) is not a live child of Ref(/user/sup)")
  local other = tend.spawn(idle)
  lu.assertNil((tend.stop_child(sup, other)))
  H.stop_all(sup, other, p.ref)
end

function TestChildren:test_start_child_checks_like_spawn()
  local sup = tend.spawn(idle)
  tend.start_child(sup, idle, { name = "x" })
  lu.assertErrorMsgContains("tend.start_child", tend.start_child, sup, idle, { name = "x" })
  lu.assertErrorMsgContains("tend.start_child: factory: expected a function",
    tend.start_child, sup, 42)
  lu.assertErrorMsgContains("tend.start_child: unknown option 'nmae'",
    tend.start_child, sup, idle, { nmae = "y" })
  local b = tend.spawn(tend.backoff.on_failure(idle, { min_backoff = 1, max_backoff = 2 }))
  lu.assertErrorMsgContains("a backoff supervisor has one child", tend.start_child, b, idle)
  H.stop_all(sup, b)
  lu.assertErrorMsgContains("tend.start_child: sup: Ref(", tend.start_child, sup, idle)
  lu.assertErrorMsgContains("tend.children: ref: expected an actor ref",
    tend.children, {})
end
