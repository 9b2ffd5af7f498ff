-- tend.http.serve against bad input, on raw loopback sockets
-- (tend.tcp.connect, framing "raw": bytes as written, no HTTP client in
-- between): malformed request lines, headers over H2O's limits, bodies
-- over max_body, slowloris, pipelining, clients that leave mid-response,
-- more connections than max_connections, TLS garbage on a TLS port; then
-- 10,000 requests leave the descriptors, the actors and the memory where
-- they were. Run with the
-- real clock: `tend --real-time test spec/realtime/http_bad_input_spec.lua`.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local url, raw, fds = H.http_url, H.http_raw, H.fds

if tend.virtual_time() then return end

TestHttpBadInput = {}

local eventually = H.eventually

function TestHttpBadInput:setUp() H.drain() end

function TestHttpBadInput:tearDown() H.stop_user_and_assert_clean() end

-- A server counting its handler's calls: the server and calls() -> n.
local function counting(opts)
  local n = 0
  opts = opts or {}
  opts.handler = opts.handler or function(req) return "ok " .. req.path end
  local inner = opts.handler
  opts.handler = function(req, ctx)
    n = n + 1
    return inner(req, ctx)
  end
  return tend.http.serve(opts), function() return n end
end

-- Statuses of the responses in a raw byte stream, in order.
local function statuses(got)
  local list = {}
  for s in got:gmatch("HTTP/1%.%d (%d%d%d) ") do list[#list + 1] = tonumber(s) end
  return list
end

local function assert_alive(s)
  local r = tend.http.get(url(s, "/alive"))
  lu.assertEquals({ r.status, r.body }, { 200, "ok /alive" })
end

function TestHttpBadInput:test_malformed_request_lines_get_400_and_a_close()
  local s, calls = counting()
  local bad = {
    "NOT HTTP AT ALL\r\n\r\n",
    "GET\r\n\r\n",
    "GET / HTTP/1.1 trailing\r\nHost: x\r\n\r\n",
    "GET / HTTPS/1.1\r\nHost: x\r\n\r\n",
    "\1\2\3\4\255\254 / HTTP/1.1\r\n\r\n",
    "GET / HTTP/1.1\r\nNo colon here\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
  }
  for i, text in ipairs(bad) do
    local c, read = raw(s)
    tend.tcp.write(c, text)
    local got, closed = read()
    lu.assertTrue(closed, "request " .. i .. " left open: " .. got)
    lu.assertEquals(statuses(got), { 400 }, "request " .. i .. ": " .. got)
  end
  lu.assertEquals(calls(), 0)
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
  assert_alive(s)
end

-- H2O reads a request's head up to 8 KiB + 4 KiB per header, 100
-- headers (417,792 bytes); past either limit it answers 400 and closes.
function TestHttpBadInput:test_headers_over_h2o_limits_get_400_without_the_handler()
  local s, calls = counting()
  local function head(n, size)
    local t = { "GET /h HTTP/1.1\r\nHost: x\r\n" }
    for i = 1, n do t[#t + 1] = "X-H" .. i .. ": " .. string.rep("v", size) .. "\r\n" end
    t[#t + 1] = "\r\n"
    return table.concat(t)
  end
  local function endless()
    local c, read = raw(s)
    tend.tcp.write(c, "GET / HTTP/1.1\r\nX-Endless: ")
    for _ = 1, 8 do pcall(tend.tcp.write, c, string.rep("b", 64 << 10)) end
    return read()
  end
  local cases = {
    { "one 1 MiB header", function()
      local c, read = raw(s)
      tend.tcp.write(c, head(1, 1 << 20))
      return read()
    end },
    { "150 headers", function()
      local c, read = raw(s)
      tend.tcp.write(c, head(150, 1))
      return read()
    end },
    { "a header line that never ends", endless },
  }
  for _, case in ipairs(cases) do
    local got, closed = case[2]()
    lu.assertTrue(closed, case[1] .. ": left open")
    lu.assertEquals(statuses(got), { 400 }, case[1])
  end
  lu.assertEquals(calls(), 0)
  -- just within: 98 headers of 4,000 bytes (about 400 KB) are served
  local c, read = raw(s)
  tend.tcp.write(c, head(98, 4000))
  lu.assertEquals(statuses(read("ok /h")), { 200 })
  lu.assertEquals(calls(), 1)
  assert_alive(s)
end

function TestHttpBadInput:test_a_body_over_max_body_is_413_and_the_handler_is_not_called()
  local s, calls = counting({ max_body = 1000, handler = function(req) return #req.body .. "" end })
  -- declared by content-length
  local c, read = raw(s)
  tend.tcp.write(c, "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n"
    .. string.rep("x", 1001))
  local got = read("413")
  lu.assertEquals(statuses(got), { 413 })
  tend.tcp.close(c)
  -- chunked: found while reading
  c, read = raw(s)
  tend.tcp.write(c, "POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
  for _ = 1, 3 do tend.tcp.write(c, "190\r\n" .. string.rep("y", 400) .. "\r\n") end
  tend.tcp.write(c, "0\r\n\r\n")
  got = read("413")
  lu.assertEquals(statuses(got), { 413 })
  tend.tcp.close(c)
  lu.assertEquals(calls(), 0)
  -- exactly max_body passes, whole
  local r = tend.http.request({ method = "POST", url = url(s, "/"), body = string.rep("z", 1000) })
  lu.assertEquals({ r.status, r.body }, { 200, "1000" })
  lu.assertEquals(calls(), 1)
end

function TestHttpBadInput:test_slowloris_headers_dripping_past_timeout_are_cut_off()
  local s, calls = counting({ timeout = 0.5 })
  local c, read = raw(s)
  local t0 = tend.now()
  tend.tcp.write(c, "GET / HTTP/1.1\r\n")
  local closed_at
  for i = 1, 40 do -- a header byte every 50 ms: 2 s if let through
    local _, closed = read(nil, 0.05)
    if closed then closed_at = tend.now() break end
    pcall(tend.tcp.write, c, i == 1 and "X-Drip: " or "z")
  end
  if closed_at == nil then
    local _, closed = read(nil, 1)
    if closed then closed_at = tend.now() end
  end
  lu.assertNotNil(closed_at, "a dripping client was never cut off")
  lu.assertTrue(closed_at - t0 >= 0.45, "cut off early: " .. (closed_at - t0))
  lu.assertTrue(closed_at - t0 < 1.5, "cut off late: " .. (closed_at - t0))
  lu.assertEquals(calls(), 0)
  -- a keep-alive connection idle past timeout is closed too
  c, read = raw(s)
  tend.tcp.write(c, "GET /once HTTP/1.1\r\nHost: x\r\n\r\n")
  local got, closed = read("ok /once")
  lu.assertEquals(statuses(got), { 200 })
  lu.assertFalse(closed)
  got, closed = read(nil, 2)
  lu.assertTrue(closed)
  -- a handler slower than nothing but quicker than timeout is not cut
  assert_alive(s)
end

function TestHttpBadInput:test_pipelined_requests_are_answered_in_order()
  local s, calls = counting({ handler = function(req)
    local n = tonumber(req.path:match("%d+"))
    tend.sleep((10 - n) * 0.01) -- the first waits longest
    return "answer " .. n
  end })
  local c, read = raw(s)
  local batch = {}
  for i = 1, 10 do
    batch[i] = "GET /" .. i .. " HTTP/1.1\r\nHost: x\r\n" .. (i == 10 and "Connection: close\r\n" or "")
      .. "\r\n"
  end
  tend.tcp.write(c, table.concat(batch))
  local got, closed = read()
  lu.assertTrue(closed)
  local order = {}
  for n in got:gmatch("answer (%d+)") do order[#order + 1] = tonumber(n) end
  lu.assertEquals(order, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
  lu.assertEquals(#statuses(got), 10)
  lu.assertEquals(calls(), 10)
end

function TestHttpBadInput:test_a_client_closing_mid_response_harms_nothing()
  local big = string.rep("0123456789abcdef", 1 << 20) -- 16 MiB
  local s, calls = counting({ handler = function(req)
    if req.path == "/big" then return big end
    return "ok " .. req.path
  end })
  for _ = 1, 5 do
    local c, read = raw(s)
    tend.tcp.write(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
    local got = read("\r\n\r\n")
    lu.assertEquals(statuses(got), { 200 })
    tend.tcp.close(c) -- with most of the 16 MiB still to send
  end
  lu.assertEquals(calls(), 5)
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
  assert_alive(s)
  local r = tend.http.get(url(s, "/big"))
  lu.assertEquals({ r.status, #r.body }, { 200, #big })
end

function TestHttpBadInput:test_over_max_connections_are_refused_counted_and_the_server_lives()
  local s = counting({ max_connections = 2 })
  local held = {}
  for i = 1, 2 do
    local c, read = raw(s)
    tend.tcp.write(c, "GET /held" .. i .. " HTTP/1.1\r\nHost: x\r\n\r\n")
    lu.assertEquals(statuses(read("ok /held" .. i)), { 200 })
    held[i] = c
  end
  lu.assertEquals(tend.ask(s, "connections"), 2)
  for _ = 1, 3 do
    local c, read = raw(s)
    pcall(tend.tcp.write, c, "GET /over HTTP/1.1\r\nHost: x\r\n\r\n")
    local got, closed = read(nil, 5)
    lu.assertTrue(closed)
    lu.assertEquals(got, "")
  end
  lu.assertEquals(tend.ask(s, "refused"), 3)
  lu.assertEquals(tend.ask(s, "connections"), 2)
  for _, c in ipairs(held) do tend.tcp.close(c) end
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
  assert_alive(s)
  lu.assertEquals(tend.ask(s, "refused"), 3)
end

local function rss_kib()
  local f = assert(io.open("/proc/self/status"))
  local kib = tonumber(f:read("a"):match("VmRSS:%s*(%d+)"))
  f:close()
  return kib
end

-- ------------------------------------------------------------ TLS

-- A certificate made by `openssl req` (once), and a TLS server on it.
local certdir
local function tls_server(opts)
  if certdir == nil then
    certdir = os.tmpname()
    os.remove(certdir)
    assert(os.execute("mkdir -p " .. certdir))
    local r = tend.process.run({ "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
      "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", certdir .. "/key.pem", "-out",
      certdir .. "/cert.pem", "-days", "2", "-subj", "/CN=localhost" })
    assert(r.status == 0, r.stderr)
  end
  opts.tls = { cert = certdir .. "/cert.pem", key = certdir .. "/key.pem" }
  return counting(opts)
end

function TestHttpBadInput:test_tls_garbage_is_dropped_and_the_server_lives()
  -- (2 s: a whole handshake and request of the server under valgrind
  -- takes more than half a second)
  local s, calls = tls_server({ timeout = 2 })
  local fds0 = fds()
  local garbage = {
    "GET / HTTP/1.1\r\nHost: x\r\n\r\n",        -- plain HTTP on the TLS port
    string.rep("\0\255\1\254", 256),              -- bytes, not a record
    "\22\3\1\0\5hello",                          -- a handshake record that is no ClientHello
    "\22\3\1\64\0" .. string.rep("\1", 100),    -- one far longer than what comes
  }
  for i, bytes in ipairs(garbage) do
    local c, read = raw(s)
    local t0 = tend.now()
    pcall(tend.tcp.write, c, bytes)
    local got, closed = read(nil, 5)
    lu.assertTrue(closed, "garbage " .. i .. " left open")
    lu.assertFalse(got:find("HTTP/1", 1, true) ~= nil, "garbage " .. i .. ": " .. got)
    lu.assertTrue(tend.now() - t0 < 3, "garbage " .. i .. " held " .. (tend.now() - t0) .. " s")
  end
  -- a handshake begun and never finished: closed after timeout
  local c, read = raw(s)
  local t0 = tend.now()
  tend.tcp.write(c, "\22\3\1")
  local _, closed = read(nil, 8)
  lu.assertTrue(closed)
  lu.assertTrue(tend.now() - t0 >= 1.95 and tend.now() - t0 < 6, "cut after " .. (tend.now() - t0))
  lu.assertEquals(calls(), 0)
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
  lu.assertTrue(eventually(function() return fds() <= fds0 end), "descriptors left")
  local r = tend.process.run({ "curl", "-s", "-k", "https://127.0.0.1:" .. tend.ask(s, "port") .. "/after" })
  lu.assertEquals({ r.status, r.stdout }, { 0, "ok /after" })
  lu.assertEquals(calls(), 1)
end

-- 10,000 requests: 5 callers with kept-alive connections (libcurl), and
-- one raw connection per 100th request (opened, answered, closed).
local function load(s, n)
  local callers, left, failed = 5, n, {}
  local me = tend.self()
  for _ = 1, callers do
    tend.after(0, function()
      while left > 0 do
        left = left - 1
        local i = left
        if i % 100 == 0 then
          local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(s, "port"),
            framing = "raw" })
          tend.tcp.write(c, "GET /raw" .. i .. " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
          local got = ""
          while true do
            local msg, from = tend.receive(10)
            if msg == nil or (from == c and msg.tend == "closed") then break end
            if from == c and msg.tend == "data" then got = got .. msg.data end
          end
          if not got:find("ok /raw" .. i, 1, true) then failed[#failed + 1] = got end
        else
          local r = tend.http.get(url(s, "/" .. i))
          if r.body ~= "ok /" .. i then failed[#failed + 1] = r.status .. " " .. r.body end
        end
      end
      tend.send(me, "caller done")
    end)
  end
  for _ = 1, callers do lu.assertEquals(tend.receive(600), "caller done") end -- valgrind
  return failed
end

function TestHttpBadInput:test_10000_requests_leave_descriptors_actors_and_memory_flat()
  local s, calls = counting()
  lu.assertEquals(load(s, 1000), {}) -- warm: H2O's pools, libcurl's connections
  lu.assertTrue(eventually(function() return tend.stats().actors == 2 end))
  local fds0, rss0 = fds(), rss_kib()
  lu.assertEquals(load(s, 10000), {})
  lu.assertEquals(calls(), 11000)
  lu.assertTrue(eventually(function() return tend.stats().actors == 2 end),
    "actors: " .. tend.stats().actors)
  lu.assertTrue(eventually(function() return tend.stats().timers == 0 end))
  lu.assertTrue(eventually(function() return fds() <= fds0 end),
    "descriptors: " .. fds0 .. " before, " .. fds() .. " after")
  collectgarbage()
  local grown = rss_kib() - rss0
  -- flat: within 4 MiB (the Lua heap's and malloc's slack; a leak of one
  -- 400-byte block per request alone would be 4 MB). Not under ASan or
  -- valgrind: their allocators hold freed blocks back (ASan's quarantine
  -- alone is 256 MiB), and they find leaks themselves.
  local checked = os.getenv("ASAN_OPTIONS") == nil
    and not (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
  if checked then
    lu.assertTrue(grown < 4096, "RSS grew by " .. grown .. " KiB over 10,000 requests")
  end
end
