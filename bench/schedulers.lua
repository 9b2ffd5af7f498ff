-- Schedulers (tend --schedulers S): P independent pingpong pairs, pair i on
-- scheduler i % S (both actors of a pair on one scheduler), each playing N
-- round trips; and W CPU-bound workers spread over the schedulers, each
-- summing N terms J times. Prints bench=... lines as bench/bench.lua.
-- Usage: tend --schedulers S bench/schedulers.lua pairs P N
--        | tend --schedulers S bench/schedulers.lua workers W N J
--        | tend --schedulers S bench/schedulers.lua pool W N J
--        | tend --schedulers S bench/schedulers.lua cross N
package.path = "bench/?.lua;" .. package.path
local tend = require "tend"
local what = ...
local args = { select(2, ...) }
local S = 1
for k = 1, 64 do
  local ok = pcall(tend.spawn, "sched_actors.ponger", { scheduler = k })
  if not ok then S = k break end
end

local function emit(name, variant, count, seconds)
  print(string.format("bench=%s impl=tend variant=%s count=%d seconds=%.6f rate=%.0f",
    name, variant, count, seconds, count / seconds))
end

local function wait(n)
  for _ = 1, n do assert(tend.receive(60), "no answer within 60 s") end
end

local me = tend.self()
if what == "pairs" then
  local p, n = tonumber(args[1]), tonumber(args[2])
  local pingers = {}
  for i = 1, p do
    pingers[i] = tend.spawn("sched_actors.pinger", { scheduler = i % S, args = { n, me } })
  end
  local t0 = tend.now()
  for i = 1, p do tend.send(pingers[i], "go") end
  wait(p)
  emit("pairs", "S" .. S, 2 * p * n, tend.now() - t0)
elseif what == "workers" then
  local w, n, j = tonumber(args[1]), tonumber(args[2]), tonumber(args[3])
  local workers = {}
  for i = 1, w do workers[i] = tend.spawn("sched_actors.worker", { scheduler = i % S, args = { n, me } }) end
  local t0 = tend.now()
  for _ = 1, j do
    for i = 1, w do tend.send(workers[i], "go") end
    wait(w)
  end
  emit("workers", "S" .. S, w * j, tend.now() - t0)
elseif what == "pool" then -- the same work through tend.pool{ spread = true }
  local w, n, j = tonumber(args[1]), tonumber(args[2]), tonumber(args[3])
  local pool = tend.pool { size = w, factory = "sched_actors.worker", args = { n, me }, spread = true }
  tend.sleep(0) -- the members start
  local t0 = tend.now()
  for _ = 1, j do
    for _ = 1, w do tend.send(pool, "go") end
    wait(w)
  end
  emit("pool", "S" .. S, w * j, tend.now() - t0)
elseif what == "cross" then -- a pingpong between scheduler 0 and the last one
  local n = tonumber(args[1])
  local pong = tend.spawn("sched_actors.ponger", { scheduler = S - 1 })
  local t0 = tend.now()
  for i = 1, n do
    tend.send(pong, i)
    tend.receive()
  end
  emit("cross", "S" .. S, 2 * n, tend.now() - t0)
end
tend.shutdown(0)
