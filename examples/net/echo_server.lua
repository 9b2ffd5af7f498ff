-- A line echo server on real sockets, and a client that checks it.
-- Run: build/tend examples/net/echo_server.lua [port]   (default: any free)
local tend = require "tend"

-- Each connection is an actor running this handler: one line in, the same
-- line out; it stops by itself when the peer goes.
local function echo(ctx, peer)
  ctx:log("info", "%s connected", peer)
  return function(msg, ctx)
    if msg.tend == "data" then
      ctx:write(msg.data)
    elseif msg.tend == "closed" then
      ctx:log("info", "%s: %s", peer, msg.reason)
    end
  end
end

local server = tend.tcp.listen({ port = tonumber(arg[1]) or 0, handler = echo },
  { name = "echo" })
local port = tend.ask(server, "port")

-- The client: connect, send three lines, read them back, hang up.
local conn = tend.tcp.connect({ host = "127.0.0.1", port = port, timeout = 2 })
local sent = { "hello", "tend", "bye" }
for _, line in ipairs(sent) do tend.tcp.write(conn, line) end
local back = {}
while #back < #sent do
  local msg = tend.receive(2)
  assert(msg and msg.tend == "data", "no echo within 2 s")
  back[#back + 1] = msg.data
end
tend.tcp.close(conn)
local same = table.concat(back, " ") == table.concat(sent, " ")
print(string.format("echo_server: %d lines echoed on port %s: %s (%s)", #back,
  port > 0 and "N" or "?", table.concat(back, " "), same and "right" or "WRONG"))
tend.shutdown(same and 0 or 1)
