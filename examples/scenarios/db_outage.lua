-- db_outage: a database actor is frozen for 60 s. Twenty workers call it
-- through ask (timeout 2 s) every 1 to 3 s; each sits behind a backoff
-- supervisor (min 1 s, max 60 s, random factor 0.2), so a timeout backs the
-- worker off. After the database recovers, the jittered delays spread the
-- workers' restarts: the scenario checks that no more than 5 of them restart
-- within any 1 s window (no thundering herd).
-- Run: tend scenario examples/scenarios/db_outage.lua --seed 42 --svg db_outage.svg
local tend = require "tend"

local WORKERS, OUTAGE_AT, OUTAGE = 20, 15, 60

local db = tend.spawn(function()
  return function(query, ctx) ctx:reply("rows for " .. query) end
end, { name = "db" })

local served, last_served = 0, {}
local function worker(ctx, id, period)
  ctx:every(period, "tick")
  return function(msg, ctx)
    ctx:ask(db, "query " .. id, 2) -- raises Timeout while the db is frozen
    served = served + 1
    last_served[id] = tend.now()
  end
end

local starts = {} -- restart times of the workers (a new incarnation each)
tend.trace(function(e)
  if e.ev == "start" and e.path:match("/worker$") and e.incarnation > 1 then
    starts[#starts + 1] = e.t
  end
end)

for i = 1, WORKERS do -- the workers come up one every 0.5 s, as a pool does
  tend.sleep(0.5)
  local period = 1 + tend.random() * 2 -- each polls every 1 to 3 s
  tend.spawn(tend.backoff.on_failure(worker, { name = "worker", args = { i, period },
    min_backoff = 1, max_backoff = 60, random_factor = 0.2 }):with_auto_reset(10),
    { name = "w" .. i })
end

tend.sleep(OUTAGE_AT - WORKERS * 0.5)
tend.chaos.freeze(db, OUTAGE)
tend.sleep(OUTAGE + 120)

-- after recovery: restarts in any 1 s window
local after = {}
for _, t in ipairs(starts) do if t >= OUTAGE_AT + OUTAGE then after[#after + 1] = t end end
table.sort(after)
local worst = 0
for i = 1, #after do
  local n = 0
  for j = i, #after do
    if after[j] - after[i] < 1 then n = n + 1 end
  end
  if n > worst then worst = n end
end
print(string.format("%d restarts during the outage, %d after it; at most %d within 1 s after recovery",
  #starts - #after, #after, worst))
for i = 1, WORKERS do
  assert((last_served[i] or 0) > OUTAGE_AT + OUTAGE, "worker " .. i .. " serves again")
end
assert(worst <= 5, "thundering herd: " .. worst .. " restarts within 1 s")
print(string.format("queries served: %d", served))
-- The workers ask for ever: end here, so that `tend --virtual-time` (which
-- runs while a timer is left) ends too, as `tend scenario` does.
tend.shutdown(0)
