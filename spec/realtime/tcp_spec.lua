-- TCP servers and clients on real loopback sockets (127.0.0.1). Run with
-- the real clock: `tend --real-time test spec/realtime/tcp_spec.lua`
-- (scripts/test and scripts/check do; under the virtual clock this file
-- defines no test: the simulated network has its own spec).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() then return end

TestTcp = {}

local eventually = H.eventually

-- Drops what earlier tests left in the test's own mailbox (late closed
-- messages of their connections).
local function flush()
  tend.sleep(0.01)
  while select("#", tend.receive(0)) > 0 do end
end

function TestTcp:setUp() flush() end

-- Nothing left behind (sockets close asynchronously: waits a little);
-- what is left is stopped so one failure does not spoil the next test.
function TestTcp:tearDown()
  local clean = eventually(function() return tend.stats().actors == 1 end)
  local left = tend.stats().actors - 1
  for _, row in ipairs(tend.children("/user")) do
    if row.ref ~= tend.self() then tend.stop(row.ref) end
  end
  eventually(function() return tend.stats().actors == 1 end)
  lu.assertTrue(clean, "actors left behind: " .. left)
  H.assert_clean()
end

-- The next message for the running task (within 5 s), or nil.
local function next_msg(t)
  return (tend.receive(t or 20))
end

-- A line echo server; `seen` gets what each handler saw, in order.
local function echo_server(seen, opts)
  opts = opts or {}
  opts.port = 0
  opts.handler = opts.handler or function(ctx, peer)
    seen[#seen + 1] = "open " .. (peer:match("^127%.0%.0%.1:%d+$") and "127.0.0.1" or peer)
    return function(msg, ctx)
      if msg.tend == "data" then
        seen[#seen + 1] = msg.data
        ctx:write(msg.data)
      elseif msg.tend == "closed" then
        seen[#seen + 1] = "closed " .. msg.reason
      end
    end
  end
  local l = tend.tcp.listen(opts)
  return l, tend.ask(l, "port")
end

function TestTcp:test_a_line_echo_round_trip_and_the_ends_of_both_sides()
  local seen = {}
  local l, port = echo_server(seen)
  local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.write(c, "one")
  tend.tcp.write(c, "two\nthree") -- one write, two lines
  local got = {}
  for _ = 1, 3 do
    local m = next_msg()
    got[#got + 1] = m.tend .. ":" .. m.data
  end
  lu.assertEquals(got, { "data:one", "data:two", "data:three" })
  lu.assertEquals(tend.ask(l, "connections"), 1)
  -- ps and tree say what each socket is
  local tree = tend.tree()
  lu.assertStrContains(tree, "] restarts=0 mailbox=0 port=" .. port .. "\n")
  lu.assertStrContains(tree, "] restarts=0 mailbox=0 peer=127.0.0.1:" .. port .. "\n") -- the client
  lu.assertStrMatches(tree, ".*\n    %$%d+ %[running%] restarts=0 mailbox=0 peer=127%.0%.0%.1:%d+\n.*") -- a handler
  for _, row in ipairs(tend.ps()) do
    if row.ref == c then lu.assertEquals(row.socket, "peer=127.0.0.1:" .. port) end
  end
  tend.tcp.close(c)
  local m = next_msg()
  lu.assertEquals({ m.tend, m.reason }, { "closed", "closed" })
  lu.assertTrue(eventually(function() return not tend.alive(c) end))
  lu.assertTrue(eventually(function() return seen[#seen] == "closed eof" end))
  lu.assertEquals(seen, { "open 127.0.0.1", "one", "two", "three", "closed eof" })
  lu.assertTrue(eventually(function() return tend.ask(l, "connections") == 0 end))
  H.stop_all(l)
end

function TestTcp:test_the_server_closing_tells_the_client_eof_and_the_handler_stops()
  local handlers = {}
  local l = tend.tcp.listen({ port = 0, handler = function(ctx)
    handlers[#handlers + 1] = ctx.self
    return function(msg, ctx) if msg.data == "bye" then ctx:write("later") ctx:close() end end
  end })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(l, "port") })
  tend.tcp.write(c, "bye")
  local m1, m2 = next_msg(), next_msg()
  lu.assertEquals({ m1.tend, m1.data }, { "data", "later" }) -- written before the close
  lu.assertEquals({ m2.tend, m2.reason }, { "closed", "eof" })
  lu.assertTrue(eventually(function() return not tend.alive(handlers[1]) end))
  lu.assertTrue(eventually(function() return not tend.alive(c) end))
  H.stop_all(l)
end

-- A peer that sends its last line without a newline and then shuts down
-- its sending side (`printf 'GET x' | nc -N`) gets its answer: the FIN
-- delivers the line, then closed "eof" (input ended), and the handler can
-- still write, while it handles them, until it stops; then the peer sees
-- the end. The client is a real one (perl: connect, send, shutdown(1),
-- read to the end).
local HALF_CLOSE_CLIENT = [[
use IO::Socket::INET;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $ARGV[0]) or die "connect: $!";
print $s "GET x";
shutdown($s, 1) or die "shutdown: $!";
local $/;
my $got = <$s>;
print defined $got ? $got : "";
]]

function TestTcp:test_a_half_closed_peer_gets_its_answer_after_its_last_line()
  local seen = {}
  local l = tend.tcp.listen({ port = 0, handler = function()
    return function(msg, ctx)
      if msg.tend == "data" then
        seen[#seen + 1] = "data " .. msg.data
        seen[#seen + 1] = "write " .. tostring(ctx:write("answer to " .. msg.data))
      elseif msg.tend == "closed" then
        seen[#seen + 1] = "closed " .. msg.reason
        seen[#seen + 1] = "write " .. tostring(ctx:write("bye")) -- input ended: still writable
      end
    end
  end })
  local port = tend.ask(l, "port")
  local r = tend.process.run({ "perl", "-e", HALF_CLOSE_CLIENT, tostring(port) }, { timeout = 20 })
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "answer to GET x\nbye\n")
  lu.assertEquals(seen, { "data GET x", "write true", "closed eof", "write true" })
  lu.assertTrue(eventually(function() return tend.ask(l, "connections") == 0 end))
  H.stop_all(l)
end

function TestTcp:test_length_framing_keeps_binary_frames_whole()
  local l = tend.tcp.listen({ port = 0, framing = "length", max_line = 1 << 20, handler = function()
    return function(msg, ctx) if msg.tend == "data" then ctx:write(#msg.data .. ":" .. msg.data) end end
  end })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(l, "port"), framing = "length",
    max_line = 1 << 20 })
  local big = string.rep("\0\n\r\255", 50000) -- 200 kB with newlines and zeros
  tend.tcp.write(c, "a\nb")
  tend.tcp.write(c, "")
  tend.tcp.write(c, big)
  lu.assertEquals(next_msg().data, "3:a\nb")
  lu.assertEquals(next_msg().data, "0:")
  lu.assertEquals(next_msg().data, "200000:" .. big)
  H.stop_all(c, l)
end

function TestTcp:test_raw_framing_passes_bytes_as_they_come()
  local l = tend.tcp.listen({ port = 0, framing = "raw", handler = function()
    return function(msg, ctx) if msg.tend == "data" then ctx:write(msg.data:upper()) end end
  end })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(l, "port"), framing = "raw" })
  tend.tcp.write(c, "no newline here")
  local got = ""
  while #got < 15 do got = got .. next_msg().data end
  lu.assertEquals(got, "NO NEWLINE HERE")
  H.stop_all(c, l)
end

function TestTcp:test_a_line_over_max_line_closes_the_connection_with_frame_too_long()
  local seen = {}
  local l, port = echo_server(seen, { max_line = 10 })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.write(c, "short")
  lu.assertEquals(next_msg().data, "short")
  tend.tcp.write(c, "this line is too long")
  local m = next_msg()
  lu.assertEquals({ m.tend, m.reason }, { "closed", "eof" })
  lu.assertTrue(eventually(function() return seen[#seen] == "closed frame_too_long" end))
  H.stop_all(l)
end

-- 100 MB without a newline: the server closes at max_line; its memory
-- never holds more than max_line of it.
function TestTcp:test_a_flood_without_newline_is_cut_at_max_line()
  local seen = {}
  local l, port = echo_server(seen, { max_line = 65536 })
  local lua0 = tend.stats().lua_bytes
  local sender = tend.spawn(function()
    local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
    local chunk = string.rep("x", 1 << 20)
    return function()
      for _ = 1, 100 do
        if not tend.tcp.write(c, chunk) then return tend.stopped end
      end
    end
  end)
  sender:send("go")
  lu.assertTrue(eventually(function() return seen[#seen] == "closed frame_too_long" end))
  lu.assertTrue(tend.stats().lua_bytes - lua0 < 8 << 20)
  lu.assertTrue(eventually(function() return not tend.alive(sender) end))
  H.stop_all(l)
end

-- Writing to a connection that has ended is refused, as gen_tcp:send's
-- {error, closed}: false, "closed" (a peer may close while a reply is on
-- its way); a ref that is no connection at all is NotConnected.
function TestTcp:test_writing_to_a_closed_connection_is_refused()
  local l, port = echo_server({})
  local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.close(c)
  lu.assertEquals(next_msg().reason, "closed")
  lu.assertEquals({ tend.tcp.write(c, "late") }, { false, "closed" })
  local ok, err = pcall(tend.tcp.write, tend.self(), "x")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "NotConnected")
  lu.assertStrContains(err.message, "is not a connection")
  tend.tcp.close(c) -- closing twice: nothing
  H.stop_all(l)
end

-- A refusal answers at once (gen_tcp's econnrefused), not at the timeout.
function TestTcp:test_connect_errors_are_ConnectError_with_the_os_reason()
  local l, port = echo_server({})
  H.stop_all(l) -- nobody listens there now
  local t0 = tend.now()
  local ok, err = pcall(tend.tcp.connect, { host = "127.0.0.1", port = port, timeout = 3 })
  lu.assertFalse(ok)
  lu.assertEquals({ err.kind, err.reason }, { "ConnectError", "connection refused" })
  lu.assertEquals(err.message, "tend.tcp.connect: 127.0.0.1:" .. port .. ": connection refused")
  lu.assertTrue(tend.now() - t0 < 1, "refused after " .. (tend.now() - t0) .. " s")
  ok, err = pcall(tend.tcp.connect, { host = "no-such-host.invalid", port = 80, timeout = 3 })
  lu.assertEquals({ err.kind, err.reason }, { "ConnectError", "host not found" })
  -- a timeout shorter than the name lookup: abandoned, "timed out"
  ok, err = pcall(tend.tcp.connect, { host = "localhost", port = 9, timeout = 1e-9 })
  lu.assertEquals({ err.kind, err.reason }, { "ConnectError", "timed out" })
  lu.assertEquals(tend.stats().timers, 0)
end

function TestTcp:test_a_name_is_resolved_for_connect_and_listen()
  local seen = {}
  local l = tend.tcp.listen({ host = "localhost", port = 0, handler = function()
    return function(msg, ctx) if msg.tend == "data" then ctx:write(msg.data) end end
  end })
  local port = tend.ask(l, "port")
  local c = tend.tcp.connect({ host = "localhost", port = port })
  tend.tcp.write(c, "by name")
  lu.assertEquals(next_msg().data, "by name")
  lu.assertStrContains(tend.tcp.peer(c), ":" .. port)
  H.stop_all(c, l)
  lu.assertEquals(#seen, 0)
end

function TestTcp:test_bad_options_name_the_option()
  local h = function() end
  local cases = {
    { { port = 70000, handler = h }, "tend.tcp.listen: port: expected an integer 0-65535, got 70000" },
    { { port = -1, handler = h }, "tend.tcp.listen: port: expected an integer 0-65535, got -1" },
    { { port = 0 }, "tend.tcp.listen: handler: expected a factory function(ctx, peer) returning a behavior, got nil" },
    { { port = 0, handler = h, framing = "lines" }, 'tend.tcp.listen: framing: expected "line", "length" or "raw", got "lines"' },
    { { port = 0, handler = h, max_line = 0 }, "tend.tcp.listen: max_line: expected a positive integer (bytes), got 0" },
    { { port = 0, handler = h, max_connections = 1.5 }, "tend.tcp.listen: max_connections: expected a positive integer, got 1.5" },
    { { port = 0, handler = h, colour = 1 }, "tend.tcp.listen: unknown option 'colour' (expected one of: backlog, framing, handler, host, max_connections, max_line, port)" },
  }
  for _, case in ipairs(cases) do
    local ok, err = pcall(tend.tcp.listen, case[1])
    lu.assertFalse(ok)
    lu.assertEquals(err, case[2])
  end
  local ok, err = pcall(tend.tcp.connect, { port = 80 })
  lu.assertEquals(err, "tend.tcp.connect: host: expected a host name or address, got nil")
  ok, err = pcall(tend.tcp.connect, { host = "127.0.0.1", port = 80, timeout = 0 })
  lu.assertEquals(err, "tend.tcp.connect: timeout: expected seconds > 0, got 0")
  ok, err = pcall(tend.tcp.listen, { host = "no-such-host.invalid", handler = h })
  lu.assertEquals({ err.kind, err.reason }, { "ListenError", "host not found" })
  local l = tend.tcp.listen({ port = 0, handler = h })
  ok, err = pcall(tend.tcp.listen, { port = tend.ask(l, "port"), handler = h })
  lu.assertFalse(ok)
  lu.assertEquals({ err.kind, err.reason }, { "ListenError", "address already in use" })
  lu.assertTrue(eventually(function() return #tend.children("/user") == 2 end)) -- runner, l
  H.stop_all(l)
end

-- A handler that fails closes its connection (the peer sees eof) and
-- nothing else: the listener and the other connections go on.
function TestTcp:test_a_failing_handler_closes_only_its_connection()
  local l = tend.tcp.listen({ port = 0, handler = function()
    return function(msg, ctx)
      if msg.data == "boom" then error("handler failed") end
      if msg.tend == "data" then ctx:write(msg.data) end
    end
  end })
  local port = tend.ask(l, "port")
  local a = tend.tcp.connect({ host = "127.0.0.1", port = port })
  local b = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.write(a, "boom")
  local m, from = tend.receive(5)
  lu.assertEquals({ m.tend, m.reason, from }, { "closed", "eof", a })
  tend.tcp.write(b, "still here")
  lu.assertEquals(next_msg().data, "still here")
  lu.assertTrue(tend.alive(l))
  H.stop_all(b, l)
end

-- Over max_connections a new connection is closed at once and counted.
function TestTcp:test_connections_over_max_connections_are_refused_and_counted()
  local l = tend.tcp.listen({ port = 0, max_connections = 2, handler = function()
    return function(msg, ctx) if msg.tend == "data" then ctx:write(msg.data) end end
  end })
  local port = tend.ask(l, "port")
  local a = tend.tcp.connect({ host = "127.0.0.1", port = port })
  local b = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.write(a, "a") tend.tcp.write(b, "b")
  lu.assertEquals(next_msg().data, "a")
  lu.assertEquals(next_msg().data, "b")
  local burst = {}
  for i = 1, 200 do burst[i] = tend.tcp.connect({ host = "127.0.0.1", port = port }) end
  local closed = 0
  while closed < 200 do
    local m = next_msg()
    if m and m.tend == "closed" then closed = closed + 1 end
    if not m then break end
  end
  lu.assertEquals(closed, 200)
  lu.assertEquals(tend.ask(l, "refused"), 200)
  lu.assertEquals(tend.ask(l, "connections"), 2)
  -- the two end: two places are free again
  tend.tcp.close(a) tend.tcp.close(b)
  lu.assertTrue(eventually(function() return tend.ask(l, "connections") == 0 end))
  flush()
  local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.write(c, "c")
  lu.assertEquals(next_msg().data, "c")
  lu.assertEquals(tend.ask(l, "refused"), 200)
  H.stop_all(c, l)
end

-- A peer that connects and sends nothing costs a connection and nothing
-- else; the listener stopping closes it.
function TestTcp:test_an_idle_peer_is_closed_when_the_listener_stops()
  local l, port = echo_server({})
  local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
  lu.assertTrue(eventually(function() return tend.ask(l, "connections") == 1 end))
  H.stop_all(l)
  local m = next_msg()
  lu.assertEquals({ m.tend, m.reason }, { "closed", "eof" })
  lu.assertTrue(eventually(function() return not tend.alive(c) end))
end

-- Reading pauses while the reader's mailbox is over 1000 messages: a slow
-- reader never holds more than the mark plus one read's lines.
function TestTcp:test_reading_pauses_while_the_mailbox_is_over_its_mark()
  local most, count = 0, 0
  local l = tend.tcp.listen({ port = 0, handler = function(ctx)
    return function(msg, ctx)
      if msg.tend ~= "data" then return end
      count = count + 1
      if count % 50 == 1 then -- sampled: tend.ps() looks at every actor
        for _, row in ipairs(tend.ps()) do
          if row.ref == ctx.self and row.mailbox > most then most = row.mailbox end
        end
      end
      if count % 1000 == 0 then ctx:sleep(0.001) end -- slow
      if count == 50000 then ctx:write("done") end
    end
  end })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(l, "port") })
  local lines = string.rep("line\n", 10000)
  for _ = 1, 5 do tend.tcp.write(c, lines) end -- 50,000 lines at once
  local m = next_msg(120)
  lu.assertEquals(m and (m.data or m.tend .. ":" .. tostring(m.reason)), "done")
  lu.assertTrue(most >= 1000)
  lu.assertTrue(most < 1000 + 65536 / 5, "mailbox peaked at " .. most)
  H.stop_all(c, l)
end

-- A writer waits (its actor yields, others run) while more than 1 MiB is
-- queued for a peer that does not read; it goes on once the peer reads.
function TestTcp:test_a_writer_waits_while_the_peer_does_not_read()
  local go, lines = false, 0
  local l = tend.tcp.listen({ port = 0, handler = function(ctx)
    return function(msg, ctx)
      while not go do ctx:sleep(0.01) end -- its mailbox fills, reading pauses
      if msg.tend == "data" then lines = lines + 1 end
    end
  end })
  local port = tend.ask(l, "port")
  local progress = 0
  local writer = tend.spawn(function()
    local c = tend.tcp.connect({ host = "127.0.0.1", port = port, framing = "raw" })
    return function()
      local chunk = string.rep(string.rep("y", 1023) .. "\n", 1024) -- 1 MiB, 1024 lines
      for i = 1, 32 do tend.tcp.write(c, chunk) progress = i end
    end
  end)
  writer:send("write")
  lu.assertTrue(eventually(function() return progress > 0 end))
  tend.sleep(0.3)
  local stalled = progress
  lu.assertTrue(stalled < 32, "the writer never waited")
  go = true
  lu.assertTrue(eventually(function() return progress == 32 end))
  lu.assertTrue(eventually(function() return lines == 32 * 1024 end))
  H.stop_all(writer, l)
end

-- Where the writer cannot wait (a C call that cannot yield, here a sort
-- comparator), a write over the mark raises Overloaded; the data is queued.
function TestTcp:test_a_write_over_the_mark_that_cannot_wait_is_Overloaded()
  local go = false
  local l = tend.tcp.listen({ port = 0, handler = function()
    return function(msg, ctx) while not go do ctx:sleep(0.01) end end
  end })
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(l, "port"), framing = "raw" })
  local chunk = string.rep(string.rep("z", 1023) .. "\n", 1024) -- 1 MiB of lines
  local err
  for _ = 1, 64 do -- fills the kernel's buffers, then the queue
    local ok, e = pcall(table.sort, { 1, 2 }, function(a, b)
      tend.tcp.write(c, chunk)
      return a < b
    end)
    if not ok then err = e break end
  end
  lu.assertNotNil(err, "never over the mark")
  lu.assertEquals(err.kind, "Overloaded")
  lu.assertStrContains(err.message, "tend.tcp.write: over 1 MiB queued for this connection")
  go = true
  H.stop_all(c, l)
end

-- A client connection is a child of the actor that made it: when that
-- actor stops, the connection closes (the server sees eof).
function TestTcp:test_a_client_connection_closes_with_its_owner()
  local seen = {}
  local l, port = echo_server(seen)
  local owner = tend.spawn(function()
    local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
    tend.tcp.write(c, "hi")
    return function() end
  end)
  lu.assertTrue(eventually(function() return seen[2] == "hi" end))
  lu.assertEquals(#tend.children(owner), 1) -- the connection
  H.stop_all(owner)
  -- eof; or reset when the echo was still unread in the closed socket
  -- (the kernel then sends an RST, as it does for gen_tcp:close)
  lu.assertTrue(eventually(function() return seen[3] == "closed eof" or seen[3] == "closed reset" end),
    tostring(seen[3]))
  H.stop_all(l)
end

-- The connection is an actor: watching it tells when it ends.
function TestTcp:test_a_connection_can_be_watched()
  local l, port = echo_server({})
  local c = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.watch(c)
  tend.tcp.close(c)
  local got = {}
  for _ = 1, 2 do
    local m = next_msg()
    got[#got + 1] = m.tend .. ":" .. tostring(m.reason)
  end
  lu.assertEquals(got, { "closed:closed", "terminated:normal" })
  H.stop_all(l)
end

-- tend.tcp.server is the listener as a factory, for a supervisor's child:
-- a restart listens again on the same port (port 0: the one it got first);
-- the connections of the old incarnation end (its children stop).
function TestTcp:test_a_server_child_restarts_on_the_same_port()
  local sup = tend.spawn(function(ctx)
    local l = ctx:spawn(tend.tcp.server({ port = 0, handler = function()
      return function(msg, c) if msg.tend == "data" then c:write(msg.data) end end
    end }), { name = "srv" })
    return function(msg, c) if msg == "l" then c:reply(l) end end
  end)
  local l = tend.ask(sup, "l")
  local port = tend.ask(l, "port")
  local a = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.write(a, "one")
  lu.assertEquals(next_msg().data, "one")
  tend.chaos.crash(l)
  local m, from = tend.receive(5)
  lu.assertEquals({ m.tend, m.reason, from }, { "closed", "eof", a })
  lu.assertEquals(tend.ask(l, "port"), port)
  lu.assertEquals(tend.inspect(l).restarts, 1)
  local b = tend.tcp.connect({ host = "127.0.0.1", port = port })
  tend.tcp.write(b, "two")
  lu.assertEquals(next_msg().data, "two")
  H.stop_all(b, sup)
end

-- A server whose port is taken fails to start: the reason its watcher
-- gets is the InitError of the ListenError, and nothing else listens.
function TestTcp:test_a_server_on_a_taken_port_is_an_InitError()
  local l = tend.tcp.listen({ port = 0, handler = function() end })
  local port = tend.ask(l, "port")
  local me = tend.self()
  local sup = tend.spawn(function(ctx)
    ctx:watch(ctx:spawn(tend.tcp.server({ port = port, handler = function() end }),
      { restart = "temporary" }))
    return function(msg) if msg.tend == "terminated" then me:send(msg.reason) end end
  end)
  local reason = next_msg()
  lu.assertEquals(reason.kind, "InitError")
  lu.assertStrContains(tostring(reason), "ListenError: tend.tcp.listen: 127.0.0.1:" .. port
    .. ": address already in use")
  lu.assertEquals(#tend.children(sup), 0)
  H.stop_all(sup, l)
end

-- At its descriptor limit a listener closes each new connection at once
-- (the peer sees eof, not a hang), counts it in "refused" and logs once
-- per burst: a burst ends when a connection is accepted again. (libuv's
-- own accept closed them without a word.) The server is another tend run
-- under `ulimit -n 32`; the clients are here.
local FD_SERVER = [[
local tend = require "tend"
local l
l = tend.tcp.listen({ port = 0, handler = function()
  return function(msg, ctx)
    if msg.tend == "data" then ctx:write(tostring(tend.ask(l, "refused"))) end
  end
end })
print(tend.ask(l, "port"))
]]

function TestTcp:test_out_of_descriptors_connections_are_refused_counted_and_logged_once_per_burst()
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(FD_SERVER)
  f:close()
  local me = tend.self()
  local p = tend.spawn(tend.process({ to = me, cmd = { "sh", "-c",
    'ulimit -n 32 && exec "$0" --real-time "$1"', require("tend.internal").executable(), path } }))
  local warns, port = 0, nil
  -- Reads until 1 s passes with nothing new; returns how many client
  -- connections the server closed (their actors stop).
  local function drain(clients)
    while true do
      local m = tend.receive(1)
      if m == nil then break end
      if m.tend == "stdout" then port = tonumber(m.line) end
      if m.tend == "stderr" then
        lu.assertStrContains(m.line, "warn  /user/")
        lu.assertStrContains(m.line, ": port " .. tostring(port) .. ": out of file descriptors "
          .. "(too many open files): new connections are closed at once and counted in 'refused'")
        warns = warns + 1
      end
    end
    local gone, kept = 0, {}
    for _, c in ipairs(clients or {}) do
      if tend.alive(c) then kept[#kept + 1] = c else gone = gone + 1 end
    end
    return gone, kept
  end
  drain()
  lu.assertNotNil(port)
  local function connect(n)
    local cs = {}
    for i = 1, n do cs[i] = tend.tcp.connect({ host = "127.0.0.1", port = port }) end
    return cs
  end
  local refused, kept = drain(connect(40))
  lu.assertTrue(refused >= 5 and #kept >= 5, refused .. " refused, " .. #kept .. " kept")
  lu.assertEquals(warns, 1)
  tend.tcp.write(kept[1], "refused?")
  lu.assertEquals(next_msg(5).data, tostring(refused))
  -- three places free up; the next connections are accepted (the burst
  -- ends), then the limit again: a second burst, a second line
  for _ = 1, 3 do tend.tcp.close(table.remove(kept)) end
  drain() -- the server has closed its ends
  local more, kept2 = drain(connect(10))
  drain()
  lu.assertEquals(#kept2, 3)
  lu.assertEquals(more, 7)
  lu.assertEquals(warns, 2)
  tend.tcp.write(kept[1], "refused?")
  lu.assertEquals(next_msg(5).data, tostring(refused + 7))
  os.remove(path)
  H.stop_all(p, table.unpack(kept))
  H.stop_all(table.unpack(kept2))
  flush()
end

-- A connection closed with writes queued for a peer that does not read
-- gets 5 s to hand them over, then it is reset (RST) and its queue
-- dropped, with a warning: a stop does not wait longer for it (it waited
-- for ever), and the peer, when it reads, never gets what was dropped.
-- The script writes 1 MiB (of 1 KiB lines) at a time until a write waits
-- (the kernel's buffers are full, whatever their size: a loopback's can
-- take 36 MiB), closes with over 1 MiB queued, then `ending` ends it: a TERM, or
-- the main chunk returning a while later and printing the bytes written.
local STUCK_WRITER = [[
local tend = require "tend"
local port, ending = tonumber((...)), select(2, ...)
if port == nil then -- the peer is here: a handler that never takes a message
  port = tend.ask(tend.tcp.listen({ port = 0, handler = function()
    return function(_, ctx) ctx:sleep(60) end
  end }), "port")
end
local conn = tend.tcp.connect({ host = "127.0.0.1", port = port, framing = "raw" })
local chunk, written, waiting = string.rep(string.rep("x", 1023) .. "\n", 1024), 0, false
tend.spawn(function()
  return function()
    repeat -- true when queued, false once closed
      waiting = true
      local queued = tend.tcp.write(conn, chunk)
      waiting, written = false, written + (queued and #chunk or 0)
    until not queued
  end
end):send("go")
local seen = -1 -- the writer waits when a pass of 0.2 s saw no write end
repeat seen = written tend.sleep(0.2) until waiting and written == seen
tend.tcp.close(conn) -- closed: its writes stay queued behind a shutdown
tend.sleep(0.1)
if ending == "return" then tend.sleep(6) print(written) return end
os.execute("kill -TERM $PPID")
tend.sleep(60)
]]

local LINGER_WARNING = "a closed connection's peer took no data for 5 s: "

local function run_stuck_writer(port, ending)
  local path = H.script(STUCK_WRITER)
  local t0 = require("tend.internal").wall_clock()
  local r = tend.process.run({ require("tend.internal").executable(), "--real-time", path,
    port and tostring(port) or "-", ending or "term" }, { timeout = 20 })
  os.remove(path)
  return r, require("tend.internal").wall_clock() - t0
end

-- A peer that reads only when `go`: the bytes it got and how it ended.
-- Its 1000 lines of 1 KiB waiting stop its reading (back-pressure).
local function slow_peer()
  local got, ended, go = 0, nil, false
  local l = tend.tcp.listen({ port = 0, handler = function() -- 1000 lines pause it
    return function(msg, ctx)
      while not go do ctx:sleep(0.01) end
      if msg.tend == "data" then got = got + #msg.data else ended = msg.reason end
    end
  end })
  return l, tend.ask(l, "port"), function() go = true end,
    function() return got, ended end
end

function TestTcp:test_a_stop_waits_at_most_5_s_for_a_peer_that_does_not_read()
  local l, port, go = slow_peer()
  local r, took = run_stuck_writer(port)
  go()
  lu.assertFalse(r.timed_out, "the stop waited for the peer")
  lu.assertEquals({ r.status, r.signal }, { 143, nil })
  -- 5 s of linger after a start, 0.5 s of sleeps and the writes:
  -- well under 8 s on a quiet machine, up to 12 under ASan on a busy one
  -- (a stop that waited for the peer would be killed at 20)
  lu.assertTrue(took > 4.5 and took < 15, "took " .. took .. " s")
  lu.assertStrContains(r.stderr, LINGER_WARNING)
  H.stop_all(l)
end

function TestTcp:test_a_closed_connection_whose_peer_does_not_read_is_reset_after_5_s()
  local l, port, go, seen = slow_peer()
  local r = run_stuck_writer(port, "return")
  lu.assertFalse(r.timed_out, "the end waited for the peer")
  lu.assertEquals({ r.status, r.signal }, { 0, nil })
  local bytes = tonumber(r.stderr:match(LINGER_WARNING .. "(%d+) bytes dropped"))
  lu.assertTrue(bytes and bytes > 0, r.stderr)
  go()
  lu.assertTrue(eventually(function() return select(2, seen()) ~= nil end, 5))
  local got = seen() -- what was queued when it reset never came
  local sent = tonumber(r.stdout) -- what it wrote, the last write's too
  lu.assertTrue(bytes >= 1 << 20, bytes .. " bytes dropped") -- that one
  lu.assertTrue(got + bytes <= sent, got .. " + " .. bytes .. " > " .. sent)
  H.stop_all(l)
end

function TestTcp:test_a_stop_with_a_closed_connections_writes_queued_exits_cleanly()
  local r = run_stuck_writer(nil) -- its peer closes in the same stop
  lu.assertFalse(r.timed_out)
  lu.assertEquals({ r.status, r.signal, r.stderr }, { 143, nil, "" })
end
