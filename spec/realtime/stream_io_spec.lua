-- tend.stream over real processes: S.lines reads a program's stdout on
-- demand (the program blocks on its pipe while the stream is slow); a
-- take after an endless program stops it; nothing is left behind.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local S = tend.stream

TestStreamIO = {}

function TestStreamIO:tearDown()
  H.eventually(function() return tend.stats().actors == 1 end, 5) -- processes take their signal
  H.assert_clean()
end

function TestStreamIO:test_lines_of_a_process()
  lu.assertEquals(S.lines({ cmd = { "seq", "1", "5" } }):map(tonumber):run_seq(), { 1, 2, 3, 4, 5 })
end

function TestStreamIO:test_take_stops_an_endless_process()
  local before = tend.stats().actors
  local r = S.lines({ cmd = { "yes", "y" } }):take(3):run_seq()
  lu.assertEquals(r, { "y", "y", "y" })
  lu.assertTrue(H.eventually(function() return tend.stats().actors == before end, 5))
end

function TestStreamIO:test_a_slow_sink_keeps_the_process_blocked()
  -- seq 1 1e9 writes as fast as it can; the sink takes 20 lines a second
  local h = S.lines({ cmd = { "seq", "1", "1000000000" } }):map(tonumber)
    :run_async(S.sink.foreach(function() tend.sleep(0.05) end), { name = "slow" })
  local function mailbox()
    for _, p in ipairs(tend.ps()) do if p.path:match("^/user/slow/async") then return p.mailbox end end
    return 0
  end
  lu.assertTrue(H.eventually(function() return mailbox() > 1000 end, 5))
  -- reads stop at 1000 messages: the mailbox holds at most that and one
  -- read's lines (64 KiB, lines of at least 2 bytes here), however long
  -- the stream runs; the sink has taken only a few
  local most = 0
  for _ = 1, 10 do
    tend.sleep(0.1)
    most = math.max(most, mailbox())
  end
  lu.assertTrue(most <= 1000 + 65536 // 2, "mailbox " .. most)
  h:cancel()
  lu.assertErrorMsgContains("cancelled", function() h:await() end)
end

-- S.sink.tcp writes each element on the connection (as tend.tcp.write,
-- framed); a connection that is gone fails the stream.
function TestStreamIO:test_tcp_sink_writes_each_element()
  local got = {}
  local server = tend.tcp.listen({ port = 0, handler = function()
    return function(m) if m.tend == "data" then got[#got + 1] = m.data end end
  end })
  local port = tend.ask(server, "port")
  local conn = tend.tcp.connect({ host = "127.0.0.1", port = port })
  lu.assertNil(S.from({ "a", "b", "c" }):run_with(S.sink.tcp(conn)))
  lu.assertTrue(H.eventually(function() return #got == 3 end, 5))
  lu.assertEquals(got, { "a", "b", "c" })
  tend.tcp.close(conn)
  lu.assertTrue(H.eventually(function() return not tend.alive(conn) end, 5))
  local ok, e = pcall(function() return S.from({ "d" }):run_with(S.sink.tcp(conn)) end)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "NotConnected")
  lu.assertEquals(e.stage, "tcp#2")
  lu.assertEquals(e.element, "d")
  tend.stop(server)
  H.settle()
  while tend.receive(0) do end -- the connection's closed message
end

-- S.lines checks its process's options when the blueprint is made (as
-- tend.process does), at the caller's line.
function TestStreamIO:test_lines_checks_its_program_at_once()
  local ok, e = pcall(function() local s = S.lines({ cmd = { "/no/such/program" } }) return s end)
  lu.assertFalse(ok)
  lu.assertStrMatches(e, ".-stream_io_spec%.lua:%d+: tend%.stream%.lines: spec: tend%.process: option 'cmd': "
    .. "cannot run '/no/such/program'.*")
  ok, e = pcall(S.lines, {})
  lu.assertFalse(ok)
  lu.assertStrContains(e, "tend.stream.lines: spec: tend.process: option 'cmd': expected a list of strings")
end
