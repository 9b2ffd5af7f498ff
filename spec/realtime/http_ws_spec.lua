-- WebSocket on tend.http.serve (H2O's websocket support, wslay): a
-- python3 client on a raw socket (its standard library only) speaks the
-- protocol. Run with the real clock:
-- `tend --real-time test spec/realtime/http_ws_spec.lua`.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() then return end

TestHttpWs = {}

local CLIENT = [==[
import base64, os, socket, struct, sys
def frame(op, data):
    mask = os.urandom(4)
    n = len(data)
    head = bytes([0x80 | op])
    if n < 126: head += bytes([0x80 | n])
    elif n < 65536: head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else: head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))
def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: raise EOFError
        b += c
    return b
def read_frame(s):
    h = recv_exact(s, 2)
    op, n = h[0] & 0x0f, h[1] & 0x7f
    if n == 126: n = struct.unpack(">H", recv_exact(s, 2))[0]
    elif n == 127: n = struct.unpack(">Q", recv_exact(s, 8))[0]
    return op, recv_exact(s, n)
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (sys.argv[2], key)).encode())
head = b""
while b"\r\n\r\n" not in head: head += s.recv(1)
print(head.split(b"\r\n")[0].decode())
for word in sys.argv[3:]:
    if word == "close":
        s.sendall(frame(8, struct.pack(">H", 1000) + b"bye"))
        op, data = read_frame(s)
        print("close", op, struct.unpack(">H", data[:2])[0] if len(data) >= 2 else None)
        break
    if word.startswith("sleep:"):
        import time; time.sleep(float(word[6:])); continue
    if word.startswith("flood:"):  # flood:N:SIZE: N text frames "i:xxx..." unanswered
        n, size = map(int, word[6:].split(":"))
        for i in range(1, n + 1):
            s.sendall(frame(1, (("%d:" % i) + "x" * size)[:size].encode()))
        print("flooded", n)
        continue
    if word == "drain":
        n = 0
        try:
            while True:
                op, data = read_frame(s)
                if op == 8:
                    print("close", op, struct.unpack(">H", data[:2])[0] if len(data) >= 2 else None); break
                n += len(data)
        except EOFError:
            print("eof")
        print("drained", n)
        break
    if word == "eof":
        try:
            op, data = read_frame(s)
            print("frame", op)
        except (EOFError, ConnectionResetError):
            print("eof")
        break
    if word == "wait":
        op, data = read_frame(s)
        print("got", op, data.decode() if op == 1 else len(data))
        continue
    if word.startswith("bin:"):
        s.sendall(frame(2, word[4:].encode()))
    else:
        s.sendall(frame(1, word.encode()))
    try:
        op, data = read_frame(s)
    except (EOFError, ConnectionResetError):
        print("eof")
        break
    if op == 8:  # the server closes: answered as a client does
        s.sendall(frame(8, data[:2]))
        print("closed by server", struct.unpack(">H", data[:2])[0])
        break
    print("got", op, data.decode() if op == 1 else data.hex())
]==]

local client_path

function TestHttpWs:setUp()
  if client_path == nil then
    client_path = os.tmpname()
    local f = assert(io.open(client_path, "w"))
    f:write(CLIENT)
    f:close()
  end
  while select("#", tend.receive(0)) > 0 do end
end

function TestHttpWs:tearDown() H.stop_user_and_assert_clean() end

-- Runs the client against server s: path, then its words; its lines.
local function client(s, path, ...)
  local r = tend.process.run({ "python3", client_path, tostring(tend.ask(s, "port")), path, ... },
    { timeout = 30 })
  lu.assertEquals(r.stderr, "")
  local lines = {}
  for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

local function echo(seen)
  return function(ctx, req)
    seen[#seen + 1] = "open " .. req.path
    return function(msg, c)
      if msg.tend == "ws" then
        seen[#seen + 1] = string.format("ws %s %s", msg.data, tostring(msg.binary))
        c:ws_send("echo " .. msg.data, msg.binary)
      elseif msg.tend == "closed" then
        seen[#seen + 1] = string.format("closed %d %s", msg.code, msg.reason)
      end
    end
  end
end

-- Back-pressure, as for TCP connections: while the connection's actor
-- is busy its mailbox stops growing near the high mark (1000 messages; a
-- read already made is still delivered), the rest waits in the socket,
-- and every message still comes, in order, once it reads again.
function TestHttpWs:test_reading_pauses_while_the_actors_mailbox_is_full()
  local N, got, in_order, me = 5000, 0, true, tend.self()
  local function box(ref)
    for _, row in ipairs(tend.ps()) do
      if row.ref == ref then return row.mailbox end
    end
    return 0
  end
  local s = tend.http.serve({ handler = function() return "no" end, ws = function(ctx)
    tend.send(me, ctx.self)
    return function(msg)
      if msg.tend ~= "ws" then return end
      if got == 0 then -- busy until the mailbox is full, and a while more
        H.eventually(function() return box(ctx.self) >= 1000 end, 30)
        tend.sleep(0.5)
      end
      got = got + 1
      if msg.data:match("^(%d+):") ~= tostring(got) then in_order = false end
    end
  end })
  local lines
  tend.spawn(function()
    lines = client(s, "/", "flood:" .. N .. ":1000", "close")
    return function() end
  end)
  local conn = tend.receive(60) -- the client's python starts slowly on a busy machine
  lu.assertNotNil(conn, "no WebSocket connection")
  local most = 0
  lu.assertTrue(H.eventually(function()
    most = math.max(most, box(conn))
    return got == N
  end, 120))
  lu.assertTrue(most >= 1000, "the mailbox reached " .. most)
  lu.assertTrue(most < 1300, "the mailbox grew past the high mark: " .. most)
  lu.assertTrue(in_order)
  lu.assertTrue(H.eventually(function() return lines ~= nil end))
  lu.assertEquals(lines, { "HTTP/1.1 101 Switching Protocols", "flooded " .. N, "close 8 1000" })
end

function TestHttpWs:test_a_route_ws_echoes_text_and_binary_and_closes()
  local seen, events = {}, {}
  tend.trace(function(e) if e.ev == "http" then events[#events + 1] = e end end)
  local s = tend.http.serve({ handler = tend.http.router({
    { "GET", "/plain", function() return "plain" end },
    { "GET", "/echo/:room", ws = echo(seen) },
  }) })
  lu.assertEquals(client(s, "/echo/a", "hello", "bin:xy", "close"), {
    "HTTP/1.1 101 Switching Protocols", "got 1 echo hello", "got 2 6563686f207879",
    "close 8 1000" })
  lu.assertTrue(H.eventually(function() return #seen == 4 end))
  lu.assertEquals(seen, { "open /echo/a", "ws hello false", "ws xy true", "closed 1000 bye" })
  -- the connection's actor stopped after "closed"; its socket is closed
  lu.assertTrue(H.eventually(function() return #tend.children(s) == 0 end))
  lu.assertTrue(H.eventually(function() return tend.ask(s, "connections") == 0 end))
  -- a plain request to a ws-only route: 426
  local r = tend.http.get("http://127.0.0.1:" .. tend.ask(s, "port") .. "/echo/a")
  lu.assertEquals({ r.status, r.headers.upgrade }, { 426, "websocket" })
  lu.assertTrue(H.eventually(function() return #events == 2 end))
  tend.trace(false)
  lu.assertEquals({ events[1].target, events[1].status }, { "/echo/a", 101 })
  lu.assertEquals({ events[2].target, events[2].status }, { "/echo/a", 426 })
end

function TestHttpWs:test_serve_ws_takes_every_upgrade_and_the_handler_the_rest()
  local seen = {}
  local s = tend.http.serve({ ws = echo(seen), handler = function(req) return "plain " .. req.path end })
  lu.assertEquals(client(s, "/anywhere", "one", "close"), {
    "HTTP/1.1 101 Switching Protocols", "got 1 echo one", "close 8 1000" })
  lu.assertEquals(seen[1], "open /anywhere")
  local r = tend.http.get("http://127.0.0.1:" .. tend.ask(s, "port") .. "/x")
  lu.assertEquals(r.body, "plain /x")
end

function TestHttpWs:test_the_server_side_closes_with_a_code()
  local closed
  local s = tend.http.serve({ ws = function()
    return function(msg, ctx)
      if msg.tend == "ws" and msg.data == "quit" then ctx:ws_close(4000) end
      if msg.tend == "closed" then closed = msg.code end
    end
  end, handler = function() return "" end })
  lu.assertEquals(client(s, "/", "quit"), { "HTTP/1.1 101 Switching Protocols",
    "closed by server 4000" })
  lu.assertTrue(H.eventually(function() return closed ~= nil end))
  lu.assertEquals(closed, 4000) -- the client's answer carries the code back
  lu.assertTrue(H.eventually(function() return #tend.children(s) == 0 end))
end

function TestHttpWs:test_a_connection_actor_that_stops_closes_its_socket()
  local s = tend.http.serve({ ws = function()
    return function(msg) if msg.tend == "ws" then error("broken by " .. msg.data) end end
  end, handler = function() return "" end })
  lu.assertEquals(client(s, "/", "bin:boom"), { "HTTP/1.1 101 Switching Protocols", "eof" })
  lu.assertTrue(H.eventually(function() return tend.ask(s, "connections") == 0 end))
end

-- Writes wait while more than 1 MiB is queued: a client that does not read
-- holds the sender back; it gets every byte once it reads.
function TestHttpWs:test_writes_are_back_pressured()
  local sent, total, done = 0, 256, false
  local chunk = string.rep("z", 65536)
  local s = tend.http.serve({ ws = function()
    return function(msg, ctx)
      if msg.tend == "ws" then
        for _ = 1, total do
          if not ctx:ws_send(chunk, true) then break end
          sent = sent + 1
        end
        done = true
        ctx:ws_close()
      end
    end
  end, handler = function() return "" end })
  local me = tend.self()
  tend.spawn(function(ctx)
    tend.send(ctx.self, "go")
    return function()
      tend.send(me, client(s, "/", "go", "sleep:3", "drain"))
      return tend.stopped
    end
  end)
  lu.assertTrue(H.eventually(function() return sent > 0 end, 15))
  tend.sleep(0.5)
  local early = sent
  tend.sleep(0.3)
  lu.assertEquals(sent, early) -- waiting while the client sleeps
  lu.assertTrue(early < total / 2, "sent while not read: " .. early)
  local lines = tend.receive(30)
  lu.assertTrue(done)
  lu.assertEquals(sent, total)
  lu.assertEquals(lines[#lines - 1], "close 8 1000") -- after every message
  lu.assertEquals(lines[#lines], "drained " .. ((total - 1) * #chunk)) -- "go" read one
end
