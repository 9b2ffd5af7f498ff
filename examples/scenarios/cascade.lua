-- cascade: a failure escalating two levels. /user/app supervises /user/app/db
-- (one_for_one) and /user/app/pool (all_for_one over three workers). A worker
-- fails with a kind nobody handles: the pool's decider escalates, the app's
-- decider escalates too, and the guardian restarts the app, whose default
-- pre_restart stops its whole subtree; everything comes back fresh. A
-- second failure, which the pool handles itself (all_for_one restart),
-- restarts only the pool's three workers: db is untouched.
-- Run: tend scenario examples/scenarios/cascade.lua --seed 7
local tend = require "tend"

local starts = {}
local function counted(name)
  return function(ctx)
    starts[name] = (starts[name] or 0) + 1
    return function(msg, ctx)
      if type(msg) == "table" then tend.raise(msg.raise, "failure in " .. name) end
      ctx:reply(name)
    end
  end
end

local function pool(ctx)
  starts.pool = (starts.pool or 0) + 1
  for i = 1, 3 do ctx:spawn(counted("worker" .. i), { name = "worker" .. i }) end
  return function(msg, ctx) ctx:reply(ctx:children()) end
end

local function app(ctx)
  starts.app = (starts.app or 0) + 1
  ctx:spawn(counted("db"), { name = "db" })
  ctx:spawn(pool, { name = "pool", children = tend.all_for_one {
    decider = tend.decider { WorkerGlitch = "restart", ["*"] = "escalate" } } })
  return function(msg, ctx) ctx:reply(ctx:children()) end
end

local a = tend.spawn(app, { name = "app", children = tend.one_for_one {
  decider = tend.decider { ["*"] = "escalate" } } })
local function workers()
  local kids = tend.ask(a, "children", 1)
  return tend.ask(kids[2], "children", 1)
end

tend.sleep(1)
workers()[2]:send({ raise = "CorruptState" }) -- nobody handles it: two levels up
tend.sleep(1)
assert(starts.app == 2 and starts.db == 2 and starts.pool == 2, "the app subtree restarted")
assert(starts.worker1 == 2 and starts.worker3 == 2, "all workers restarted")
workers()[1]:send({ raise = "WorkerGlitch" }) -- the pool handles it: all_for_one
tend.sleep(1)
assert(starts.db == 2 and starts.pool == 2, "db and pool untouched")
assert(starts.worker1 == 3 and starts.worker2 == 3 and starts.worker3 == 3, "the three workers restarted")
print(string.format("app %d, db %d, pool %d, workers %d/%d/%d starts", starts.app, starts.db,
  starts.pool, starts.worker1, starts.worker2, starts.worker3))
