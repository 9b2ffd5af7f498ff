-- Node benchmarks (make bench): two tend nodes on this machine over a
-- local nats-server, beside Erlang distribution (bench/peers_dist.erl).
-- Run as node a: tend --node a --nats local bench/nodes.lua MODE ARGS
--   pingpong N                  remote pingpong: N round trips (2N messages)
--   ask N                       tend.ask round trips to an actor on node b
--   stream N                    N small messages (integers) one way to an
--                               actor on node b, as fast as they go out
--                               (many in flight); the clock stops when b
--                               has counted them all
--   ring SIZE TOKENS ROUNDS K   a ring of SIZE actors spread over K nodes
--                               (K = 1: no node needed), TOKENS tokens
--                               going ROUNDS times around at once
-- Node b (and the others) are `tend --node bI --nats URL -e ''`, children
-- of this process. Prints bench=... lines as bench/bench.lua does.
local tend = require "tend"
local actors = require "bench.nodes_actors"
local mode = ...
local args = { select(2, ...) }

local function emit(name, count, secs)
  print(string.format("bench=%s impl=tend count=%d secs=%.4f rate=%d", name, count, secs,
    math.floor(count / secs + 0.5)))
end

local function peer(name) tend.node.peer(name, { log_level = "error" }) end

local function clock() return tend.now() end

if mode == "pingpong" then
  local n = tonumber(args[1])
  peer("b")
  local pong = tend.spawn_on("b", "bench.nodes_actors.pong")
  local main = tend.self()
  local function run(k)
    tend.spawn(function()
      return function(m, ctx)
        if m == "go" then pong:send(k) elseif m == 1 then main:send("done"); return tend.stopped
        else pong:send(m - 1) end
      end
    end):send("go")
    tend.receive()
  end
  run(1000) -- warm up
  local t0 = clock()
  run(n)
  emit("remote_pingpong", 2 * n, clock() - t0)
elseif mode == "ask" then
  local n = tonumber(args[1])
  peer("b")
  local srv = tend.spawn_on("b", "bench.nodes_actors.pong")
  for i = 1, 1000 do assert(tend.ask(srv, i) == i) end
  local t0 = clock()
  for i = 1, n do tend.ask(srv, i) end
  emit("remote_ask", n, clock() - t0)
elseif mode == "stream" then
  local n = tonumber(args[1])
  peer("b")
  local sink = tend.spawn_on("b", "bench.nodes_actors.sink")
  local main = tend.self()
  local function run(k)
    for i = 1, k do sink:send(i) end
    sink:send({ main = main })
    local got = tend.receive()
    assert(got == k, string.format("the sink counted %s of %d", tostring(got), k))
  end
  run(1000) -- warm up
  local t0 = clock()
  run(n)
  emit("remote_stream", n, clock() - t0)
elseif mode == "ring" then
  local size, tokens, rounds, k = tonumber(args[1]), tonumber(args[2]), tonumber(args[3]), tonumber(args[4])
  local nodes = {}
  for i = 2, k do
    nodes[i] = "b" .. i
    peer(nodes[i])
  end
  local members = {}
  for i = 1, size do -- contiguous shares: member i lives on node ceil(i * k / size)
    local on = math.floor((i - 1) * k / size) + 1
    members[i] = on == 1 and tend.spawn(actors.relay) or tend.spawn_on(nodes[on], "bench.nodes_actors.relay")
  end
  local main = tend.self()
  for i = 1, size do members[i]:send({ next = members[i % size + 1], main = main }) end
  -- every member has its next before the clock starts (each node's last
  -- member answers once its setup, sent before, is taken)
  for i = 2, k do tend.ask(members[i * size // k], "sync") end
  local hops = size * rounds
  local t0 = clock()
  for t = 1, tokens do members[(t - 1) * size // tokens + 1]:send(hops) end
  for _ = 1, tokens do tend.receive() end
  emit("ring_nodes_" .. k, tokens * hops, clock() - t0)
else
  error("usage: bench/nodes.lua pingpong N | ask N | stream N | ring SIZE TOKENS ROUNDS K")
end
tend.shutdown()
