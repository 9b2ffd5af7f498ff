-- tend.http.serve's streamed bodies (body = a pull function) on the real
-- server: chunked under HTTP/1.1, DATA frames under HTTP/2, server-sent
-- events with curl -N, the pulls held back by a slow reader (python3 on a
-- raw socket), a client leaving mid-stream. Run with the real clock:
-- `tend --real-time test spec/realtime/http_stream_spec.lua`.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local url = H.http_url

if tend.virtual_time() then return end

TestHttpStream = {}

local eventually = H.eventually

function TestHttpStream:setUp() H.drain() end

function TestHttpStream:tearDown() H.stop_user_and_assert_clean() end

-- A body of `n` chunks "<prefix>1\n" ..., counting its pulls in `count`.
local function counted(n, count, prefix)
  local i = 0
  return function()
    count.pulls = count.pulls + 1
    i = i + 1
    if i > n then return nil end
    return (prefix or "chunk") .. i .. "\n"
  end
end

function TestHttpStream:test_a_pull_body_is_sent_chunked_under_http_1_1()
  local count = { pulls = 0 }
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/made" then return { status = 201, body = counted(2, count, "made") } end
    return { headers = { ["x-kind"] = "pulled" }, body = counted(3, count) }
  end })
  local r = tend.http.get(url(s, "/"))
  lu.assertEquals(r.status, 200)
  lu.assertEquals(r.body, "chunk1\nchunk2\nchunk3\n")
  lu.assertEquals(r.headers["transfer-encoding"], "chunked")
  lu.assertEquals(r.headers["x-kind"], "pulled")
  lu.assertNil(r.headers["content-length"])
  lu.assertEquals(count.pulls, 4) -- three chunks, then nil
  -- H2O chunks a 200 only: another status's body ends with the connection
  r = tend.http.get(url(s, "/made"))
  lu.assertEquals({ r.status, r.body, r.headers.connection }, { 201, "made1\nmade2\n", "close" })
  lu.assertEquals(count.pulls, 7)
end

function TestHttpStream:test_a_pull_body_goes_as_data_frames_under_http_2()
  local count = { pulls = 0 }
  local s = tend.http.serve({ handler = function(req)
    return { body = counted(3, count, req.version .. ":") }
  end })
  local r = tend.process.run({ "curl", "-s", "-i", "--http2-prior-knowledge", url(s, "/") })
  lu.assertEquals(r.status, 0)
  lu.assertStrMatches(r.stdout, "^HTTP/2 200.*\r\n\r\n2:1\n2:2\n2:3\n$")
  lu.assertEquals(count.pulls, 4)
end

function TestHttpStream:test_a_pull_may_block_and_empty_chunks_are_skipped()
  local store = tend.spawn(function()
    local n = 0
    return function(msg, ctx)
      n = n + 1
      ctx:reply(n <= 3 and ("item" .. n .. ";") or false)
    end
  end)
  local s = tend.http.serve({ handler = function()
    local first = true
    return { body = function()
      if first then first = false return "" end
      tend.sleep(0.01)
      return tend.ask(store, "next") or nil
    end }
  end })
  lu.assertEquals(tend.http.get(url(s, "/")).body, "item1;item2;item3;")
end

-- The head goes at once and each event as soon as it is pulled: the test
-- reads event 1 while the pull of event 2 waits on a gate it opens.
function TestHttpStream:test_server_sent_events_go_as_pulled()
  local opened = 1 -- events the test lets out
  local pulled = 0
  local s = tend.http.serve({ handler = function()
    local i = 0
    return { headers = { ["content-type"] = "text/event-stream" }, body = function()
      i = i + 1
      while opened < i and i <= 3 do tend.sleep(0.005) end
      if i > 3 then return nil end
      pulled = i
      return "data: event " .. i .. "\n\n"
    end }
  end })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(s, "port"), framing = "raw" })
  tend.tcp.write(c, "GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
  local got = ""
  local function read_until(pattern)
    local deadline = tend.now() + 10
    while not got:find(pattern) and tend.now() < deadline do
      local msg = tend.receive(deadline - tend.now())
      if msg and msg.tend == "data" then got = got .. msg.data end
    end
    return got:find(pattern) ~= nil
  end
  lu.assertTrue(read_until("data: event 1\n\n"), got)
  lu.assertStrContains(got:lower(), "content-type: text/event-stream")
  lu.assertStrContains(got:lower(), "cache-control: no-cache")
  lu.assertEquals(pulled, 1) -- event 2 waits on the gate
  opened = 2
  lu.assertTrue(read_until("data: event 2\n\n"), got)
  lu.assertEquals(pulled, 2)
  opened = 3
  lu.assertTrue(read_until("0\r\n\r\n"), got) -- the end of the chunked body
  lu.assertEquals(pulled, 3)
  tend.tcp.close(c)
  -- curl -N: the same events, one by one
  local r = tend.process.run({ "curl", "-s", "-N", url(s, "/events") }, { timeout = 10 })
  lu.assertEquals(r.stdout, "data: event 1\n\ndata: event 2\n\ndata: event 3\n\n")
end

-- A reader that does not read: the pulls stop while it does not (at most
-- one chunk in flight beyond what the sockets' buffers hold), and go on
-- when it reads again, to the last byte.
function TestHttpStream:test_a_slow_reader_holds_the_pulls_back()
  local chunk, total = string.rep("x", 65536), 400 -- 25 MiB in all
  local count = { pulls = 0 }
  local s = tend.http.serve({ handler = function()
    local i = 0
    return { body = function()
      count.pulls = count.pulls + 1
      i = i + 1
      if i > total then return nil end
      return chunk
    end }
  end })
  local py = [[
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
time.sleep(float(sys.argv[2]))
n = 0
while True:
    b = s.recv(1 << 20)
    if not b: break
    n += len(b)
print(n)
]]
  local me = tend.self()
  tend.spawn(function(ctx)
    tend.send(ctx.self, "go")
    return function()
      local r = tend.process.run({ "python3", "-c", py, tostring(tend.ask(s, "port")), "8" },
        { timeout = 30 })
      tend.send(me, { got = tonumber(r.stdout), why = r.stderr .. tostring(r.timed_out) })
    end
  end)
  lu.assertTrue(eventually(function() return count.pulls > 0 end, 15))
  local early -- the buffers fill (slowly under valgrind on a busy machine)
  for _ = 1, 15 do
    early = count.pulls
    tend.sleep(0.4)
    if count.pulls == early then break end
  end
  tend.sleep(0.4)
  lu.assertEquals(count.pulls, early) -- held: no pull while the reader sleeps
  lu.assertTrue(early > 0 and early < total / 2, "pulls while not read: " .. early)
  local msg = tend.receive(30)
  lu.assertNotNil(msg)
  lu.assertNotNil(msg.got, msg.why)
  lu.assertTrue(msg.got > total * #chunk, "bytes read: " .. tostring(msg.got)) -- with the head
  lu.assertEquals(count.pulls, total + 1)
end

-- A server whose every answer is an endless body: "tick\n" every 20 ms,
-- each pull counted in count.pulls.
local function ticking(count)
  return tend.http.serve({ handler = function()
    return { body = function()
      count.pulls = count.pulls + 1
      tend.sleep(0.02)
      return "tick\n"
    end }
  end })
end

function TestHttpStream:test_a_client_leaving_mid_stream_stops_the_pulling()
  local count = { pulls = 0 }
  local events = {}
  tend.trace(function(e) if e.ev == "http" then events[#events + 1] = e end end)
  local s = ticking(count)
  -- HTTP/1.1: a raw client reads a little, then closes
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(s, "port"), framing = "raw" })
  tend.tcp.write(c, "GET /forever HTTP/1.1\r\nHost: x\r\n\r\n")
  lu.assertTrue(eventually(function() return count.pulls >= 3 end))
  tend.tcp.close(c)
  lu.assertTrue(eventually(function() return #tend.children(s) == 0 end))
  local after = count.pulls
  tend.sleep(0.2)
  lu.assertEquals(count.pulls, after) -- no pull once its actor ended
  -- HTTP/2: curl gives up after 1 s (its stream reset, the connection closed)
  count.pulls = 0
  tend.process.run({ "curl", "-s", "--max-time", "1", "--http2-prior-knowledge",
    url(s, "/forever2") })
  lu.assertTrue(count.pulls >= 1)
  lu.assertTrue(eventually(function() return #tend.children(s) == 0 end))
  after = count.pulls
  tend.sleep(0.2)
  lu.assertEquals(count.pulls, after)
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
  lu.assertTrue(eventually(function() return #events == 2 end))
  tend.trace(false)
  lu.assertEquals({ events[1].target, events[1].status }, { "/forever", 200 })
  lu.assertEquals({ events[2].target, events[2].status }, { "/forever2", 200 })
end

function TestHttpStream:test_a_pull_that_raises_cuts_the_body_and_the_server_lives()
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/ok" then return "fine" end
    local i = 0
    return { body = function()
      i = i + 1
      if i == 3 then error("source broke") end
      return "part" .. i .. "\n"
    end }
  end })
  local r = tend.process.run({ "curl", "-s", "-S", url(s, "/cut") })
  lu.assertNotEquals(r.status, 0) -- curl sees the chunked body end short
  lu.assertEquals(r.stdout, "part1\npart2\n")
  r = tend.process.run({ "curl", "-s", "--http2-prior-knowledge", url(s, "/cut") })
  lu.assertNotEquals(r.status, 0) -- the stream reset
  lu.assertEquals(tend.http.get(url(s, "/ok")).body, "fine")
end

function TestHttpStream:test_the_timeout_covers_the_handler_not_the_stream()
  local s = tend.http.serve({ timeout = 0.1, handler = function()
    local i = 0
    return { body = function()
      i = i + 1
      if i > 3 then return nil end
      tend.sleep(0.08) -- 0.24 s in all, past the timeout
      return "slow" .. i
    end }
  end })
  local r = tend.http.get(url(s, "/"))
  lu.assertEquals({ r.status, r.body }, { 200, "slow1slow2slow3" })
end


-- The server stopping mid-stream cuts the body: the client sees it end
-- short; the request's actor goes with the server.
function TestHttpStream:test_a_server_stopping_mid_stream_cuts_the_body()
  local pulls = 0
  local s = tend.http.serve({ handler = function()
    return { body = function()
      pulls = pulls + 1
      tend.sleep(0.02)
      return "tick\n"
    end }
  end })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(s, "port"), framing = "raw" })
  tend.tcp.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
  lu.assertTrue(eventually(function() return pulls >= 3 end))
  tend.stop(s)
  local got, closed = "", false
  local deadline = tend.now() + 10
  while not closed and tend.now() < deadline do
    local msg = tend.receive(deadline - tend.now())
    if msg and msg.tend == "data" then got = got .. msg.data end
    if msg and msg.tend == "closed" then closed = true end
  end
  lu.assertTrue(closed)
  lu.assertStrContains(got, "tick\n")
  lu.assertNil(got:find("0\r\n\r\n", 1, true)) -- no last chunk: cut short
end

-- A body's actor killed mid-stream: the server ends the answer as an
-- error (H2O closes the connection: the chunked body never ends), logs
-- it, and holds nothing for it.
function TestHttpStream:test_a_body_whose_actor_is_killed_mid_stream_is_cut()
  local count = { pulls = 0 }
  local s = ticking(count)
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(s, "port"), framing = "raw" })
  tend.tcp.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
  lu.assertTrue(eventually(function() return count.pulls >= 3 end))
  tend.chaos.kill(tend.children(s)[1].ref)
  local got, closed = "", false
  local deadline = tend.now() + 20
  while not closed and tend.now() < deadline do
    local msg = tend.receive(deadline - tend.now())
    if msg == nil then break end
    if msg.tend == "data" then got = got .. msg.data end
    if msg.tend == "closed" then closed = true end
  end
  lu.assertTrue(closed, "the connection stays open")
  lu.assertStrContains(got, "tick\n")
  lu.assertNotStrContains(got, "\r\n0\r\n\r\n") -- no last chunk: the body did not end well
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
end

-- A stream's server-sent events whose client leaves: a cancel, ended
-- quietly (no warn line of a failed pull), as the streams chapter says.
function TestHttpStream:test_a_stream_body_whose_client_leaves_ends_without_a_warning()
  local script = H.script([[
local tend = require "tend"
local s = tend.http.serve({ handler = function()
  return { headers = { ["content-type"] = "text/event-stream" }, body = tend.stream.tick(1, "hi") }
end })
local r = tend.process.run({ "curl", "-sN", "--max-time", "1.5",
  "http://127.0.0.1:" .. tend.ask(s, "port") .. "/" })
print(r.stdout:find("data: hi", 1, true) ~= nil)
tend.sleep(0.3)
tend.stop(s)
]])
  local out, err, code = H.run({ script })
  os.remove(script)
  lu.assertEquals({ out, code }, { "true\n", 0 })
  lu.assertNotStrContains(err, "warn")
end
