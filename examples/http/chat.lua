-- A chat over WebSocket: `GET /chat/<room>` upgrades to a WebSocket; each
-- connection is an actor (tend.http.serve's `ws = factory`) that joins the
-- process group of its room (tend.pg) and, for every text it gets from its
-- client, sends {chat = text} to every member of the room, itself too; a
-- member writes what it is sent to its own client. A member that closes
-- leaves its group as it dies.
--
-- As a module (examples/http on package.path):
--   local chat = require("chat")
--   local server = chat.start{ port = 0 }      -- the server's ref
-- As a script: build/tend examples/http/chat.lua [serve]
-- checks itself: two clients (python3, its standard library) join room
-- "lobby", one says hello, both print what they got; `serve` keeps it
-- serving on port 8082 (ws://127.0.0.1:8082/chat/<room>).
local tend = require "tend"

local M = {}

-- One connection's actor: a member of its room.
local function member(ctx, room)
  tend.pg.join(room, ctx.self)
  return function(msg, ctx)
    if msg.tend == "ws" and not msg.binary then
      tend.pg.send(room, { chat = msg.data })
    elseif msg.chat then
      ctx:ws_send(msg.chat)
    end -- {tend = "closed"}: the actor stops after it, leaving the room
  end
end

-- start{ port = 0, host = "127.0.0.1", name } -> the server's ref.
function M.start(opts)
  opts = opts or {}
  return tend.http.serve({
    host = opts.host, port = opts.port or 0, name = opts.name,
    handler = tend.http.router({
      { "GET", "/chat/:room", function(req)
        return { ws = function(ctx) return member(ctx, "chat:" .. req.params.room) end }
      end },
    }),
  })
end

local modname = ...
if type(modname) == "string" and modname:match("chat$") then return M end

-- ------------------------------------------------------------ the script
if arg[1] == "serve" then
  local server = M.start({ port = 8082 })
  print("serving on ws://127.0.0.1:" .. tend.ask(server, "port") .. "/chat/<room> (Ctrl-C ends)")
  return
end

-- A WebSocket client in python3's standard library: joins the room,
-- says its words (if any) once `ready` exists, prints the first `want`
-- texts it gets.
local CLIENT = [==[
import base64, os, socket, struct, sys, time
port, room, want, ready, words = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
s = socket.create_connection(("127.0.0.1", port))
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET /chat/%s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (room, key)).encode())
head = b""
while b"\r\n\r\n" not in head: head += s.recv(1)
open(ready + "." + str(os.getpid()), "w").close()
def recv_exact(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: raise EOFError
        b += c
    return b
if words:
    while len([f for f in os.listdir(os.path.dirname(ready)) if f.startswith(os.path.basename(ready) + ".")]) < 2:
        time.sleep(0.01)
    for w in words:
        data, mask = w.encode(), os.urandom(4)
        s.sendall(bytes([0x81, 0x80 | len(data)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
for _ in range(want):
    h = recv_exact(2)
    n = h[1] & 0x7f
    if n == 126: n = struct.unpack(">H", recv_exact(2))[0]
    print(recv_exact(n).decode())
]==]

local server = M.start({ port = 0 })
local port = tostring(tend.ask(server, "port"))
local dir = os.tmpname()
os.remove(dir)
local ready = dir .. "-ready"
local got = {}
local done = 0
for i, words in ipairs({ {}, { "hello", "who is here?" } }) do
  tend.after(0, function()
    local r = tend.process.run({ "python3", "-c", CLIENT, port, "lobby", "2", ready,
      table.unpack(words) }, { timeout = 20 })
    got[i] = r.stdout
    done = done + 1
  end)
end
while done < 2 do tend.sleep(0.05) end
for i = 1, 2 do io.write("client ", i, " got: ", (got[i]:gsub("\n$", ""):gsub("\n", " | ")), "\n") end
os.execute("rm -f '" .. ready .. "'.*")
tend.stop(server)
tend.shutdown()
