-- tend.http: the real client (libcurl on the host's loop) against HTTP
-- servers that the spec runs itself on 127.0.0.1 (tend.tcp.listen, raw
-- framing). Run with the real clock: `tend --real-time test
-- spec/realtime/http_spec.lua` (scripts/test and scripts/check do). The
-- checks of bad input, the same under both clocks, are spec/http_spec.lua's,
-- run here too.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

dofile("spec/http_spec.lua")
if tend.virtual_time() then return end

TestHttp = {}

local eventually = H.eventually

function TestHttp:setUp()
  tend.sleep(0.01)
  while select("#", tend.receive(0)) > 0 do end
end

-- Nothing left: no actor but the runner, no request in flight.
function TestHttp:tearDown()
  local clean = eventually(function() return tend.stats().actors == 1 end)
  local left = tend.stats().actors - 1
  for _, row in ipairs(tend.children("/user")) do
    if row.ref ~= tend.self() then tend.stop(row.ref) end
  end
  eventually(function() return tend.stats().actors == 1 end)
  lu.assertTrue(clean, "actors left behind: " .. left)
  lu.assertEquals(tend.http.in_flight(), 0)
  H.assert_clean()
end

-- A small HTTP/1.1 server on tend.tcp.listen (raw framing). route(req)
-- gets { method, path, headers (lowercased names), body } and returns
-- { status, headers, body }, or nil to never answer. Each response closes
-- its connection. Returns the listener and its port.
local function server(route)
  local function handler(ctx)
    local buf, req = "", nil
    return function(msg, ctx)
      if msg.tend ~= "data" then return end
      buf = buf .. msg.data
      if req == nil and not buf:match("^%u") then -- not HTTP (a TLS hello)
        ctx:write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
        ctx:close()
        return
      end
      if req == nil then
        local head_end = buf:find("\r\n\r\n", 1, true)
        if head_end == nil then return end
        local head = buf:sub(1, head_end - 1)
        buf = buf:sub(head_end + 4)
        local method, path = head:match("^(%u+) (%S+) HTTP/1%.1")
        req = { method = method, path = path, headers = {} }
        for name, value in head:gmatch("\r\n([^:\r\n]+):[ \t]*([^\r\n]*)") do
          req.headers[name:lower()] = value
        end
      end
      if #buf < (tonumber(req.headers["content-length"]) or 0) then return end
      req.body = buf
      local res = route(req, ctx)
      if res == nil then return end
      local lines = { string.format("HTTP/1.1 %d X", res.status) }
      for name, value in pairs(res.headers or {}) do
        lines[#lines + 1] = name .. ": " .. value
      end
      lines[#lines + 1] = "Content-Length: " .. #(res.body or "")
      lines[#lines + 1] = "Connection: close"
      ctx:write(table.concat(lines, "\r\n") .. "\r\n\r\n" .. (res.body or ""))
      ctx:close()
    end
  end
  local l = tend.tcp.listen({ host = "127.0.0.1", port = 0, framing = "raw",
    handler = handler })
  return l, tend.ask(l, "port")
end

local function url(port, path) return "http://127.0.0.1:" .. port .. path end

function TestHttp:test_get_returns_status_lowercased_headers_and_body()
  local seen
  local l, port = server(function(req)
    seen = req
    return { status = 200, body = "hello", headers = { ["Content-Type"] = "text/plain",
      ["X-Server"] = "tend" } }
  end)
  local r = tend.http.get(url(port, "/hi?x=1"), { headers = { Accept = "text/plain" } })
  lu.assertEquals(r.status, 200)
  lu.assertEquals(r.body, "hello")
  lu.assertEquals(r.headers["content-type"], "text/plain")
  lu.assertEquals(r.headers["x-server"], "tend")
  lu.assertEquals(r.headers["content-length"], "5")
  lu.assertNil(r.headers["Content-Type"])
  lu.assertEquals({ seen.method, seen.path, seen.headers.accept, seen.body },
    { "GET", "/hi?x=1", "text/plain", "" })
  lu.assertEquals(seen.headers["user-agent"], "tend/0.1.0")
  lu.assertNil(seen.headers.expect)
  tend.stop(l)
end

function TestHttp:test_post_put_delete_send_their_body_and_headers()
  local l, port = server(function(req)
    return { status = 201, body = req.method .. " " .. req.path .. " " .. req.body
      .. " " .. tostring(req.headers["x-token"]) .. " " .. tostring(req.headers["content-type"]) }
  end)
  local big = string.rep("z", 100000) -- over curl's 1 KiB Expect threshold
  local r = tend.http.request({ method = "POST", url = url(port, "/items"), body = "a=1",
    headers = { ["X-Token"] = "t0k", ["Content-Type"] = "application/x-www-form-urlencoded" } })
  lu.assertEquals({ r.status, r.body },
    { 201, "POST /items a=1 t0k application/x-www-form-urlencoded" })
  r = tend.http.request({ method = "put", url = url(port, "/items/1"), body = big })
  lu.assertEquals(r.body, "PUT /items/1 " .. big .. " nil application/x-www-form-urlencoded")
  r = tend.http.request({ method = "DELETE", url = url(port, "/items/1") })
  lu.assertEquals(r.body, "DELETE /items/1  nil nil")
  r = tend.http.request({ method = "POST", url = url(port, "/empty") })
  lu.assertEquals(r.body, "POST /empty  nil application/x-www-form-urlencoded")
  tend.stop(l)
end

function TestHttp:test_a_404_or_500_is_a_response_not_an_error()
  local l, port = server(function(req)
    if req.path == "/boom" then return { status = 500, body = "broken" } end
    return { status = 404, body = "no " .. req.path }
  end)
  local r = tend.http.get(url(port, "/nothing"))
  lu.assertEquals({ r.status, r.body }, { 404, "no /nothing" })
  r = tend.http.get(url(port, "/boom"))
  lu.assertEquals({ r.status, r.body }, { 500, "broken" })
  r = tend.http.request({ method = "HEAD", url = url(port, "/nothing") })
  lu.assertEquals({ r.status, r.body, r.headers["content-length"] }, { 404, "", "11" })
  tend.stop(l)
end

-- A port nobody listens on (a listener's, closed).
local function free_port()
  local l, port = server(function() end)
  tend.stop(l)
  eventually(function() return not tend.alive(l) end)
  return port
end

function TestHttp:test_a_refused_connection_raises_HttpError_with_curls_text()
  local port = free_port()
  local ok, e = pcall(tend.http.get, url(port, "/"))
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "HttpError")
  lu.assertStrContains(e.reason, "Couldn't connect to server")
  lu.assertEquals(e.url, url(port, "/"))
  lu.assertStrContains(e.message, "tend.http.request: GET " .. url(port, "/") .. ": Failed to connect")
end

function TestHttp:test_a_server_that_never_answers_times_out()
  local got = 0
  local l, port = server(function() got = got + 1 end) -- reads, never answers
  local t0 = tend.now()
  local ok, e = pcall(tend.http.get, url(port, "/slow"), { timeout = 0.2 })
  local took = tend.now() - t0
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "HttpError")
  lu.assertStrContains(e.reason, "timed out after")
  lu.assertEquals(got, 1)
  lu.assertTrue(took >= 0.2, "returned before its timeout: " .. took)
  lu.assertEquals(tend.http.in_flight(), 0)
  tend.stop(l)
end

function TestHttp:test_fifty_requests_in_flight_at_once_across_ten_actors()
  -- The server holds every request until all 50 have arrived: they were
  -- all in flight at the same time.
  local held, peak = {}, nil
  local l, port = server(function(req, ctx)
    held[#held + 1] = { ctx = ctx, n = req.path:match("%d+") }
    if #held == 50 then
      peak = tend.http.in_flight()
      for _, h in ipairs(held) do
        h.ctx:write("HTTP/1.1 200 OK\r\nContent-Length: " .. #h.n .. "\r\nConnection: close\r\n\r\n" .. h.n)
        h.ctx:close()
      end
    end
    return nil
  end)
  local me = tend.self()
  local callers = {}
  for a = 1, 10 do
    callers[a] = tend.spawn(function(ctx)
      for i = 1, 5 do
        local n = (a - 1) * 5 + i
        ctx:spawn(function()
          return function(msg, c)
            local r = tend.http.get(url(port, "/" .. n))
            tend.send(me, { n = n, status = r.status, body = r.body })
            return tend.stopped
          end
        end):send("go")
      end
      return function() end
    end)
  end
  local got = {}
  for _ = 1, 50 do
    local m = tend.receive(10)
    lu.assertNotNil(m, "no answer within 10 s")
    lu.assertEquals({ m.status, m.body }, { 200, tostring(m.n) })
    got[m.n] = true
  end
  for n = 1, 50 do lu.assertTrue(got[n], "no answer for " .. n) end
  lu.assertEquals(peak, 50)
  for _, c in ipairs(callers) do tend.stop(c) end
  tend.stop(l)
end

function TestHttp:test_an_actor_killed_mid_request_leaves_nothing_in_flight()
  local me = tend.self()
  local l, port = server(function(req, ctx)
    tend.send(me, "arrived")
    return nil -- never answers
  end)
  local caller = tend.spawn(function()
    return function()
      tend.http.get(url(port, "/forever"), { timeout = 30 })
      tend.send(me, "woke") -- never
    end
  end)
  caller:send("go")
  lu.assertEquals(tend.receive(5), "arrived")
  lu.assertEquals(tend.http.in_flight(), 1)
  tend.stop(caller)
  lu.assertTrue(eventually(function() return not tend.alive(caller) end))
  lu.assertEquals(tend.http.in_flight(), 0) -- out of curl at its death
  -- curl closed the connection: the server's handler sees it and goes
  lu.assertTrue(eventually(function() return tend.ask(l, "connections") == 0 end))
  tend.sleep(0.05)
  lu.assertEquals(select("#", tend.receive(0)), 0) -- no late wake-up
  tend.stop(l)
end

function TestHttp:test_a_restart_mid_request_drops_the_request()
  local me = tend.self()
  local l, port = server(function() tend.send(me, "arrived") end)
  local starts = 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      starts = starts + 1
      return function(msg)
        if msg == "call" then tend.http.get(url(port, "/forever")) end
      end
    end, { name = "caller" })
    return function() end
  end)
  lu.assertTrue(eventually(function() return #tend.children(sup) == 1 end))
  local caller = tend.children(sup)[1].ref
  caller:send("call")
  lu.assertEquals(tend.receive(5), "arrived")
  lu.assertEquals(tend.http.in_flight(), 1)
  tend.chaos.crash(caller) -- fails now, mid-request: it restarts
  lu.assertTrue(eventually(function() return starts == 2 end))
  lu.assertEquals(tend.http.in_flight(), 0)
  tend.stop(sup)
  tend.stop(l)
end

function TestHttp:test_max_body_and_the_header_bound()
  local l, port = server(function(req)
    if req.path == "/many" then
      local hs = {}
      for i = 1, 300 do hs["X-H" .. i] = "v" end
      return { status = 200, headers = hs, body = "" }
    end
    return { status = 200, body = string.rep("b", 100000) }
  end)
  local r = tend.http.get(url(port, "/big"), { max_body = 100000 })
  lu.assertEquals(#r.body, 100000)
  local ok, e = pcall(tend.http.get, url(port, "/big"), { max_body = 99999 })
  lu.assertFalse(ok)
  lu.assertEquals({ e.kind, e.reason }, { "HttpError", "response body over max_body" })
  ok, e = pcall(tend.http.get, url(port, "/many"))
  lu.assertFalse(ok)
  lu.assertEquals(e.reason, "response headers over their bound (256 lines, 64 KiB)")
  tend.stop(l)
end

-- A server that answers each request and resets the connection at once,
-- without "Connection: close" (curl keeps it for the next call): each next
-- call reads its answer or goes on a fresh connection, as curl's tool
-- does, never "select/poll returned error".
function TestHttp:test_a_connection_the_server_reset_after_its_answer_is_not_an_error()
  local served = 0
  local l = tend.tcp.listen({ port = 0, framing = "raw", handler = function()
    local buf = ""
    return function(msg, ctx)
      if msg.tend ~= "data" then return end
      buf = buf .. msg.data
      if not buf:find("\r\n\r\n", 1, true) then return end
      served = served + 1
      ctx:write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
      tend.chaos.reset(ctx.self)
    end
  end })
  local port = tend.ask(l, "port")
  local bodies = {}
  for i = 1, 20 do
    local ok, r = pcall(tend.http.get, url(port, "/" .. i))
    bodies[i] = ok and r.body or tostring(r)
  end
  local want = {}
  for i = 1, 20 do want[i] = "ok" end
  lu.assertEquals(bodies, want)
  lu.assertEquals(served, 20)
  tend.stop(l)
end

-- A reset in the middle of the body and a header line of 4 MiB: each
-- failure says what happened.
function TestHttp:test_a_reset_mid_body_and_a_giant_header_line_say_what_happened()
  local l = tend.tcp.listen({ port = 0, framing = "raw", handler = function()
    local buf = ""
    return function(msg, ctx)
      if msg.tend ~= "data" then return end
      buf = buf .. msg.data
      if not buf:find("\r\n\r\n", 1, true) then return end
      if buf:match("^GET /reset ") then
        ctx:write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" .. string.rep("x", 5000))
        tend.sleep(0.05)
        tend.chaos.reset(ctx.self)
      else
        ctx:write("HTTP/1.1 200 OK\r\nX-Big: " .. string.rep("h", 4 << 20)
          .. "\r\nContent-Length: 0\r\n\r\n")
        ctx:close()
      end
    end
  end })
  local port = tend.ask(l, "port")
  local ok, e = pcall(tend.http.get, url(port, "/reset"))
  lu.assertFalse(ok)
  lu.assertEquals({ e.kind, e.reason }, { "HttpError", "Recv failure: Connection reset by peer" })
  ok, e = pcall(tend.http.get, url(port, "/big"))
  lu.assertFalse(ok)
  lu.assertEquals({ e.kind, e.reason }, { "HttpError", "response headers over their bound (256 lines, 64 KiB)" })
  tend.stop(l)
end

-- (The timeout is long: OpenSSL's first handshake, under valgrind on a
-- loaded machine, took more than 5 s.)
function TestHttp:test_https_to_a_plain_server_is_a_tls_error()
  local l, port = server(function() return { status = 200 } end)
  local ok, e = pcall(tend.http.get, "https://127.0.0.1:" .. port .. "/", { timeout = 60 })
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "HttpError")
  lu.assertTrue(e.reason:find("SSL") ~= nil or e.reason:find("TLS") ~= nil, e.reason)
  tend.stop(l)
end

function TestHttp:test_where_it_cannot_wait_it_says_so()
  local ok, e = pcall(string.gsub, "a", "a", function()
    return tend.http.get("http://127.0.0.1:1/")
  end)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(e), "tend.http.request: cannot wait here")
  -- under the real clock tend.http.serve is a real server (its spec is
  -- http_server_spec.lua): a simulated host name does not resolve
  ok, e = pcall(tend.http.serve, { host = "api.invalid", handler = function() end })
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "ListenError")
  lu.assertEquals(e.reason, "host not found")
  lu.assertEquals(tend.http.in_flight(), 0)
end
