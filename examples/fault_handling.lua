-- fault_handling: Akka's fault-handling sample, narrated by its own output.
-- A Child keeps an integer; its Supervisor's decider maps
-- ArithmeticError -> resume, NullPointerError -> restart,
-- IllegalArgumentError -> stop, anything else -> escalate (10 per 60 s).
-- Run: tend examples/fault_handling.lua   (failures are logged on stderr)
local tend = require "tend"
local probe = tend.testkit.probe()

local function child()
  local state = 0
  return function(msg, ctx)
    if type(msg) == "table" then tend.raise(msg.raise, msg.message or "boom")
    elseif msg == "get" then ctx:reply(state)
    else state = msg end
  end
end

local strategy = tend.one_for_one {
  max_retries = 10, within = 60,
  decider = tend.decider {
    ArithmeticError = "resume", NullPointerError = "restart",
    IllegalArgumentError = "stop", ["*"] = "escalate",
  },
}

local function new_child(sup)
  probe:send_to(sup, "new child")
  return probe:expect_msg(function(m) return tend.alive(m) end)
end

local function get(c)
  probe:send_to(c, "get")
  return probe:expect_msg(function() return true end)
end

local function supervisor(keep_children)
  return function(ctx)
    return {
      receive = function(self, msg, ctx) ctx:reply(ctx:spawn(child)) end,
      pre_restart = keep_children and function() end or nil,
    }
  end
end

print("strategy: " .. tend.describe(strategy))
local sup = tend.spawn(supervisor(false), { name = "supervisor", children = strategy })
local c = new_child(sup)
c:send(42)
print("set 42, get -> " .. get(c))
c:send({ raise = "ArithmeticError" })
print("ArithmeticError: resume, get -> " .. get(c))
c:send({ raise = "NullPointerError" })
print("NullPointerError: restart, get -> " .. get(c) .. ", same ref alive: " .. tostring(tend.alive(c)))
probe:watch(c)
c:send({ raise = "IllegalArgumentError" })
print("IllegalArgumentError: stop, terminated: " .. probe:expect_terminated(c).reason.kind)

local c2 = new_child(sup)
probe:watch(c2)
c2:send({ raise = "Exception", message = "CRASH" })
local t = probe:expect_terminated(c2)
print("Exception: escalate; the guardian restarts the supervisor, whose pre_restart stopped the child: "
  .. t.reason)
print("the supervisor works again: new child, get -> " .. get(new_child(sup)))

local sup2 = tend.spawn(supervisor(true), { name = "supervisor2", children = strategy })
local c3 = new_child(sup2)
c3:send(23)
print("supervisor2 keeps its children: set 23, get -> " .. get(c3))
c3:send({ raise = "Exception", message = "CRASH" })
print("Exception: escalate; supervisor2 restarts, its child restarts with it: get -> " .. get(c3))
print(tend.tree())
