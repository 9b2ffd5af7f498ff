-- partition: three simulated hosts. "db" serves a tiny key-value protocol
-- over TCP; "app1" and "app2" each run a client that asks for a key every
-- second and gives up on a reply after 2 s. Each client sits behind a
-- backoff supervisor (0.5 s to 8 s), so a lost connection or a silent
-- server backs it off. At t = 10 s the network between app1 and db is
-- partitioned for 20 s: app1's client times out, its reconnects time out,
-- and it backs off; app2 never notices. After the repair app1 is served
-- again. The run replays byte for byte from its seed.
-- Run: tend scenario examples/scenarios/partition.lua --seed 7 --svg partition.svg
local tend = require "tend"

local PARTITION_AT, PARTITION_FOR = 10, 20

-- db: "get k" -> "value of k"
tend.tcp.listen({ host = "db", port = 5432, handler = function()
  return function(msg, ctx)
    if msg.tend == "data" then ctx:write("value of " .. msg.data:match("^get (.*)$")) end
  end
end }, { name = "db" })

local served, failures = { app1 = {}, app2 = {} }, { app1 = {}, app2 = {} }

local function client(ctx, app)
  local conn = tend.tcp.connect({ host = "db", port = 5432, timeout = 1 }) -- from its host
  local asked -- when the request in flight was sent
  ctx:every(1, "tick")
  return function(msg, ctx)
    if msg == "tick" then
      if asked and tend.now() - asked > 2 then error("no reply within 2 s") end
      if not asked then
        asked = tend.now()
        tend.tcp.write(conn, "get " .. app)
      end
    elseif msg.tend == "data" then
      asked = nil
      served[app][#served[app] + 1] = tend.now()
    elseif msg.tend == "closed" then
      error("connection closed: " .. msg.reason)
    end
  end
end

tend.trace(function(e)
  if e.ev == "fail" then
    local app = e.path:match("^/user/(app%d)/")
    if app then failures[app][#failures[app] + 1] = e.t end
  end
end)

for _, app in ipairs({ "app1", "app2" }) do
  local sup = tend.spawn(tend.backoff.on_failure(client, { name = "client", args = { app },
    min_backoff = 0.5, max_backoff = 8, random_factor = 0.2 }), { name = app })
  tend.simnet.place(sup, app) -- the supervisor and its client live on host app
end

tend.sleep(PARTITION_AT)
tend.chaos.partition("app1", "db")
tend.sleep(PARTITION_FOR)
tend.chaos.repair("app1", "db")
tend.sleep(20)

local function count(list, from, to)
  local n = 0
  for _, t in ipairs(list) do if t >= from and t < to then n = n + 1 end end
  return n
end
local healed = PARTITION_AT + PARTITION_FOR
print(string.format("app1: %d failures during the partition, served %d times before, %d during, %d after",
  count(failures.app1, PARTITION_AT, healed + 8), count(served.app1, 0, PARTITION_AT),
  count(served.app1, PARTITION_AT, healed), count(served.app1, healed, math.huge)))
print(string.format("app2: %d failures, served %d times", #failures.app2, #served.app2))
assert(#failures.app1 > 0 and count(failures.app1, 0, PARTITION_AT) == 0, "app1 fails only in the partition")
assert(count(served.app1, healed + 10, math.huge) > 0, "app1 is served again after the repair")
assert(#failures.app2 == 0, "app2 never notices")
-- The clients tick for ever: end here, so that `tend --virtual-time` (which
-- runs while a timer is left) ends too, as `tend scenario` does.
tend.shutdown(0)
