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

-- Starts node b; returns an actor of bench.nodes_actors (its factory
-- `factory`) spawned there.
local function on_b(factory)
  peer("b")
  return tend.spawn_on("b", "bench.nodes_actors." .. factory)
end

-- run(1000) to warm up, then run(n) timed: the line `name` of n * per
-- messages.
local function timed(name, n, per, run)
  run(1000)
  local t0 = clock()
  run(n)
  emit(name, per * n, clock() - t0)
end

if mode == "pingpong" then
  local pong = on_b("pong")
  local main = tend.self()
  timed("remote_pingpong", tonumber(args[1]), 2, function(k)
    tend.spawn(function()
      return function(m, ctx)
        if m == "go" then pong:send(k) elseif m == 1 then main:send("done"); return tend.stopped
        else pong:send(m - 1) end
      end
    end):send("go")
    tend.receive()
  end)
elseif mode == "ask" then
  local srv = on_b("pong")
  timed("remote_ask", tonumber(args[1]), 1, function(k)
    for i = 1, k do assert(tend.ask(srv, i) == i) end
  end)
elseif mode == "stream" then
  local sink = on_b("sink")
  local main = tend.self()
  timed("remote_stream", tonumber(args[1]), 1, function(k)
    for i = 1, k do sink:send(i) end
    sink:send({ main = main })
    local got = tend.receive()
    assert(got == k, string.format("the sink counted %s of %d", tostring(got), k))
  end)
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
