-- tend's side of the TCP benchmarks (make bench): line echo round trips
-- over loopback with 1 and with C concurrent connections, and memory per
-- idle connection (both ends in this process: two actors, two sockets),
-- in the peers' output format (bench/peers_tcp.erl is Erlang's twin).
-- Usage: tend bench/tcp.lua echo N C | idle K
local tend = require "tend"
local clock = require("tend.internal").wall_clock

local bench = arg[1]
local n, c = math.tointeger(tonumber(arg[2])), math.tointeger(tonumber(arg[3]))

local function emit(name, count, secs, extra)
  print(string.format("bench=%s impl=tend count=%d secs=%.4f rate=%d%s", name, count, secs,
    math.floor(count / secs + 0.5), extra or ""))
end

local function echo(ctx)
  return function(msg, ctx) if msg.tend == "data" then ctx:write(msg.data) end end
end

local function rss()
  local f = io.open("/proc/self/statm")
  local _, pages = f:read("n", "n")
  f:close()
  return pages * 4096
end

local server = tend.tcp.listen({ port = 0, handler = echo, max_connections = 100000,
  backlog = 4096 })
local port = tend.ask(server, "port")

if bench == "echo" then
  n, c = n or 100000, c or 1
  local per = n // c
  local done = 0
  local main = tend.self()
  local clients = {}
  for i = 1, c do
    clients[i] = tend.spawn(function(ctx)
      local conn = tend.tcp.connect({ host = "127.0.0.1", port = port })
      local left = per
      return function(msg, ctx)
        if msg == "go" or msg.tend == "data" then
          if left == 0 then main:send("done") return tend.stopped end
          left = left - 1
          tend.tcp.write(conn, "ping")
        end
      end
    end)
  end
  tend.sleep(0.2) -- all connected
  local t0 = clock()
  for i = 1, c do clients[i]:send("go") end
  while done < c do
    if tend.receive() == "done" then done = done + 1 end
  end
  emit(c == 1 and "tcp_echo_1" or "tcp_echo_" .. c, per * c, clock() - t0)
elseif bench == "idle" then
  local k = n or 2000
  collectgarbage() collectgarbage()
  local before = rss()
  local conns = {}
  local t0 = clock()
  for i = 1, k do conns[i] = tend.tcp.connect({ host = "127.0.0.1", port = port }) end
  while tend.ask(server, "connections") < k do tend.sleep(0.01) end
  local secs = clock() - t0
  collectgarbage() collectgarbage()
  emit("tcp_idle", k, secs, string.format(" bytes_per_conn=%d", (rss() - before) // k))
else
  io.stderr:write("usage: tend bench/tcp.lua echo N C | idle K\n")
  tend.shutdown(2)
end
tend.shutdown(0)
