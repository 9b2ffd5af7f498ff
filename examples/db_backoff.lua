-- db_backoff: a database connection behind a backoff supervisor, with
-- clients that ask it by name. The database is down for the first 5 s:
-- each connection attempt fails, and the supervisor waits 1, 2, 4 s
-- before the next. While no connection is up, queries go to a fallback
-- actor that answers "unavailable" (with_handler_while_stopped); once
-- connected, the clients get rows. tend.backoff.child and
-- tend.backoff.restart_count look inside.
-- Run: tend --virtual-time examples/db_backoff.lua
local tend = require "tend"

local DOWN_UNTIL = 5
local function connection(ctx)
  if tend.now() < DOWN_UNTIL then
    tend.raise("ConnectionRefused", "db is not reachable")
  end
  return function(query, ctx)
    ctx:reply("rows for " .. query)
  end
end

local fallback = tend.spawn(function()
  return function(_, ctx) ctx:reply("unavailable") end
end, { name = "fallback" })

local db = tend.spawn(tend.backoff.on_failure(connection, {
  name = "conn", min_backoff = 1, max_backoff = 8, random_factor = 0,
}):with_handler_while_stopped(fallback), { name = "db" })
tend.register("db", db)

local answers = { ok = 0, unavailable = 0, timeout = 0 }
local function client(ctx, id)
  ctx:every(1, "tick")
  local n = 0
  return function(msg, ctx)
    n = n + 1
    local ok, reply = pcall(ctx.ask, ctx, "db", ("SELECT %d FROM t%d"):format(n, id), 1)
    if not ok then -- the query reached a connection whose start then failed
      answers.timeout = answers.timeout + 1
    elseif reply == "unavailable" then
      answers.unavailable = answers.unavailable + 1
    else
      answers.ok = answers.ok + 1
    end
  end
end
local clients = {}
for id = 1, 3 do clients[id] = tend.spawn(client, { args = { id } }) end

local function report()
  print(("at %.1f s: connection %s, %d restarts"):format(tend.now(),
    tostring(tend.backoff.child("db")), tend.backoff.restart_count("db")))
end
tend.sleep(3.5)
report() -- attempts at 0, 1 and 3 s failed; the next is at 7 s
tend.sleep(4)
report() -- connected at 7 s
tend.sleep(2)
report() -- 1 s of running reset the count (reset_after defaults to min_backoff)
for _, c in ipairs(clients) do tend.stop(c) end
print(("db_backoff: %d answers from the db; while it was down %d unavailable, %d timed out")
  :format(answers.ok, answers.unavailable, answers.timeout))
tend.stop(db)
tend.stop(fallback)
