-- A faithful translation of Akka's FaultHandlingDocSpec (classic
-- supervision): a Child holding an integer, under a Supervisor whose
-- decider maps ArithmeticError -> resume, NullPointerError -> restart,
-- IllegalArgumentError -> stop, anything else -> escalate, at most 10
-- restarts per 60 s.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestFaultHandling = {}

function TestFaultHandling:tearDown() H.assert_clean() end

local function child()
  local state = 0
  return function(msg, ctx)
    if type(msg) == "table" and msg.raise then
      tend.raise(msg.raise, msg.message or "boom")
    elseif math.type(msg) == "integer" then
      state = msg
    elseif msg == "get" then
      ctx:reply(state)
    end
  end
end

local strategy = tend.one_for_one {
  max_retries = 10, within = 60,
  decider = tend.decider {
    ArithmeticError = "resume",
    NullPointerError = "restart",
    IllegalArgumentError = "stop",
    ["*"] = "escalate",
  },
}

-- Answers {props = factory} with a new child's ref.
local function supervisor()
  return function(msg, ctx)
    if type(msg) == "table" and msg.props then ctx:reply(ctx:spawn(msg.props)) end
  end
end

-- Like supervisor, but its pre_restart keeps the children.
local function supervisor2()
  return {
    receive = function(self, msg, ctx)
      if type(msg) == "table" and msg.props then ctx:reply(ctx:spawn(msg.props)) end
    end,
    pre_restart = function(self, err, msg, ctx) end,
  }
end

function TestFaultHandling:test_the_akka_sample()
  local p = tk.probe()
  local sup = tend.spawn(supervisor, { name = "supervisor", supervisor = strategy })
  p:send_to(sup, { props = child })
  local c = p:expect_msg(function(m) return tend.alive(m) end)

  -- resume keeps the state
  p:send_to(c, 42)
  p:send_to(c, "get")
  p:expect_msg(42)
  p:send_to(c, { raise = "ArithmeticError" })
  p:send_to(c, "get")
  p:expect_msg(42)

  -- restart: a fresh state, the same ref
  p:send_to(c, { raise = "NullPointerError" })
  p:send_to(c, "get")
  p:expect_msg(0)
  lu.assertTrue(tend.alive(c))

  -- stop: a watcher gets terminated
  p:watch(c)
  p:send_to(c, { raise = "IllegalArgumentError" })
  local t = p:expect_terminated(c)
  lu.assertEquals(t.reason.kind, "IllegalArgumentError")

  -- escalate: the guardian restarts the supervisor, whose default
  -- pre_restart stops the child; the supervisor works again afterwards
  p:send_to(sup, { props = child })
  local c2 = p:expect_msg(function(m) return tend.alive(m) end)
  p:watch(c2)
  p:send_to(c2, "get")
  p:expect_msg(0)
  p:send_to(c2, { raise = "Exception", message = "CRASH" })
  t = p:expect_terminated(c2)
  lu.assertTrue(t.existence_confirmed)
  lu.assertEquals(t.reason, "shutdown")
  lu.assertTrue(tend.alive(sup))
  p:send_to(sup, { props = child })
  local c2b = p:expect_msg(function(m) return tend.alive(m) end)
  p:send_to(c2b, "get")
  p:expect_msg(0)

  -- Supervisor2 keeps its children: the child is restarted with it
  local sup2 = tend.spawn(supervisor2, { name = "supervisor2", supervisor = strategy })
  p:send_to(sup2, { props = child })
  local c3 = p:expect_msg(function(m) return tend.alive(m) end)
  p:send_to(c3, 23)
  p:send_to(c3, "get")
  p:expect_msg(23)
  p:send_to(c3, { raise = "Exception", message = "CRASH" })
  p:send_to(c3, "get")
  p:expect_msg(0)
  lu.assertTrue(tend.alive(c3))

  H.stop_all(sup, sup2, p.ref)
end
