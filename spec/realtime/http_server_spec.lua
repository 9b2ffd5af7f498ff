-- tend.http.serve: the real server (H2O on the host's loop) on 127.0.0.1,
-- with tend.http.request (libcurl) and raw sockets (tend.tcp.connect) as
-- clients, and `curl --http2-prior-knowledge` for HTTP/2. Run with the
-- real clock: `tend --real-time test spec/realtime/http_server_spec.lua`.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local url, raw, fds = H.http_url, H.http_raw, H.fds

if tend.virtual_time() then return end

TestHttpServer = {}

local eventually = H.eventually

function TestHttpServer:setUp() H.drain() end

function TestHttpServer:tearDown() H.stop_user_and_assert_clean() end

function TestHttpServer:test_a_string_is_200_text_and_req_has_the_request()
  local seen
  local s = tend.http.serve({ handler = function(req)
    seen = req
    return "hi " .. req.path
  end })
  local r = tend.http.request({ method = "POST", url = url(s, "/a/b?x=1&y=two%20words&z=a+b"),
    headers = { ["X-Thing"] = "yes" }, body = "payload" })
  lu.assertEquals(r.status, 200)
  lu.assertEquals(r.body, "hi /a/b")
  lu.assertEquals(r.headers["content-type"], "text/plain; charset=utf-8")
  lu.assertEquals(seen.method, "POST")
  lu.assertEquals(seen.path, "/a/b")
  lu.assertEquals(seen.query, { x = "1", y = "two words", z = "a b" })
  lu.assertEquals(seen.headers["x-thing"], "yes")
  lu.assertEquals(seen.body, "payload")
  lu.assertEquals(seen.version, "1.1")
  lu.assertStrMatches(seen.peer, "127%.0%.0%.1:%d+")
end

function TestHttpServer:test_a_table_and_nil_status_answers()
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/t" then
      return { status = 201, headers = { ["X-Made"] = "here" }, body = "made" }
    end
    if req.path == "/none" then return nil, 404 end
    return nil
  end })
  local r = tend.http.get(url(s, "/t"))
  lu.assertEquals({ r.status, r.body, r.headers["x-made"] }, { 201, "made", "here" })
  r = tend.http.get(url(s, "/none"))
  lu.assertEquals({ r.status, r.body }, { 404, "Not Found\n" })
  r = tend.http.get(url(s, "/"))
  lu.assertEquals({ r.status, r.body }, { 204, "" })
end

function TestHttpServer:test_a_handler_may_wait_without_holding_the_others()
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/slow" then tend.sleep(0.5) end
    return req.path
  end })
  local done = {}
  tend.spawn(function()
    done.slow = tend.http.get(url(s, "/slow")).body
    return function() end
  end)
  tend.sleep(0.05)
  lu.assertEquals(tend.http.get(url(s, "/fast")).body, "/fast")
  lu.assertNil(done.slow)
  lu.assertTrue(eventually(function() return done.slow == "/slow" end))
end

function TestHttpServer:test_a_raise_is_500_without_its_text_and_the_server_lives()
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/boom" then error("secret detail") end
    return "fine"
  end })
  local r = tend.http.get(url(s, "/boom"))
  lu.assertEquals(r.status, 500)
  lu.assertEquals(r.body, "Internal Server Error\n")
  lu.assertEquals(tend.http.get(url(s, "/")).body, "fine")
  local d = tend.http.serve({ debug = true, handler = function() error("shown") end })
  r = tend.http.get(url(d, "/"))
  lu.assertEquals(r.status, 500)
  lu.assertStrContains(r.body, "shown")
end

function TestHttpServer:test_past_its_timeout_a_handler_gets_503_and_is_stopped()
  local stopped = false
  local s = tend.http.serve({ timeout = 0.2, handler = function(_, ctx)
    tend.spawn(function(w)
      w:watch(ctx.self)
      return function(msg)
        if msg.tend == "terminated" then stopped = true end
      end
    end)
    tend.sleep(10)
    return "never"
  end })
  local t0 = tend.now()
  local r = tend.http.get(url(s, "/"))
  lu.assertEquals(r.status, 503)
  lu.assertTrue(tend.now() - t0 < 5)
  lu.assertTrue(eventually(function() return stopped end))
  for _, row in ipairs(tend.children("/user")) do
    if row.ref ~= tend.self() and row.ref ~= s then tend.stop(row.ref) end
  end
end

function TestHttpServer:test_a_body_over_max_body_is_413_and_no_handler_runs()
  local calls = 0
  local s = tend.http.serve({ max_body = 16, handler = function(req)
    calls = calls + 1
    return tostring(#req.body)
  end })
  local r = tend.http.request({ method = "POST", url = url(s, "/"), body = string.rep("x", 16) })
  lu.assertEquals({ r.status, r.body }, { 200, "16" })
  r = tend.http.request({ method = "POST", url = url(s, "/"), body = string.rep("x", 17) })
  lu.assertEquals(r.status, 413)
  lu.assertEquals(calls, 1)
end

function TestHttpServer:test_the_router_matches_params_404_and_405_with_allow()
  local s = tend.http.serve({ handler = tend.http.router({
    { "GET", "/items/:id", function(req) return "item " .. req.params.id end },
    { "POST", "/items", function(req) return { status = 201, body = req.body } end },
    { "DELETE", "/items/:id", function(req) return nil, 204 end },
  }) })
  lu.assertEquals(tend.http.get(url(s, "/items/a%20b")).body, "item a b")
  local r = tend.http.request({ method = "POST", url = url(s, "/items"), body = "new" })
  lu.assertEquals({ r.status, r.body }, { 201, "new" })
  r = tend.http.get(url(s, "/nothing/here"))
  lu.assertEquals(r.status, 404)
  r = tend.http.request({ method = "PUT", url = url(s, "/items/3") })
  lu.assertEquals(r.status, 405)
  lu.assertEquals(r.headers["allow"], "GET, HEAD, DELETE") -- HEAD: the GET route serves it
  lu.assertErrorMsgContains("route 1", tend.http.router, { { "GET", "no-slash", print } })
end

function TestHttpServer:test_a_taken_port_raises_ListenError_in_the_caller()
  local s = tend.http.serve({ handler = function() return "" end })
  local port = tend.ask(s, "port")
  local before = tend.stats().actors
  local ok, e = pcall(tend.http.serve, { port = port, handler = function() return "" end })
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "ListenError")
  lu.assertEquals(e.reason, "address already in use")
  lu.assertTrue(eventually(function() return tend.stats().actors == before end))
end

function TestHttpServer:test_over_max_connections_a_connection_is_refused_and_counted()
  local s = tend.http.serve({ max_connections = 1, handler = function() return "ok" end })
  local c1, read1 = raw(s)
  tend.tcp.write(c1, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
  lu.assertStrContains(read1("ok$"), "200 OK")
  local _, read2 = raw(s)
  local _, closed = read2()
  lu.assertTrue(closed)
  lu.assertEquals(tend.ask(s, "refused"), 1)
  tend.tcp.close(c1)
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
  lu.assertEquals(tend.http.get(url(s, "/")).body, "ok")
end

function TestHttpServer:test_pipelined_requests_are_answered_in_order()
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/1" then tend.sleep(0.1) end
    return "answer" .. req.path
  end })
  local c, read = raw(s)
  tend.tcp.write(c, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n"
    .. "Connection: close\r\n\r\n")
  local got = read()
  local a, b = got:find("answer/1", 1, true), got:find("answer/2", 1, true)
  lu.assertNotNil(a, got)
  lu.assertNotNil(b, got)
  lu.assertTrue(a < b)
end

function TestHttpServer:test_a_client_that_leaves_mid_request_harms_nothing()
  local answered = {}
  -- timeout 2: libcurl's kept-alive connection is closed 2 s after /after
  local s = tend.http.serve({ timeout = 2, handler = function(req)
    tend.sleep(0.3)
    answered[#answered + 1] = req.path
    return string.rep("x", 1 << 20)
  end })
  local c = raw(s)
  tend.tcp.write(c, "GET /left HTTP/1.1\r\nHost: x\r\n\r\n")
  tend.sleep(0.05)
  tend.tcp.close(c)
  -- HTTP/2: the stream is reset while the handler waits (H2O disposes it)
  tend.process.run({ "curl", "-s", "--max-time", "0.1", "--http2-prior-knowledge",
    url(s, "/h2left") })
  lu.assertTrue(eventually(function() return #answered == 2 end))
  local r = tend.http.get(url(s, "/after"))
  lu.assertEquals({ r.status, #r.body }, { 200, 1 << 20 })
  lu.assertTrue(eventually(function() return tend.ask(s, "connections") == 0 end))
end

function TestHttpServer:test_http2_with_prior_knowledge()
  local s = tend.http.serve({ handler = function(req) return "v" .. req.version end })
  local r = tend.process.run({ "curl", "-s", "-i", "--http2-prior-knowledge", url(s, "/") })
  lu.assertEquals(r.status, 0)
  lu.assertStrMatches(r.stdout, "^HTTP/2 200.*v2$")
end

function TestHttpServer:test_each_request_is_an_http_trace_event()
  local events = {}
  tend.trace(function(e)
    if e.ev == "http" then events[#events + 1] = e end
  end)
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/no" then return nil, 404 end
    return "yes"
  end })
  tend.http.get(url(s, "/yes?q=1"))
  tend.http.get(url(s, "/no"))
  lu.assertTrue(eventually(function() return #events == 2 end))
  tend.trace(false)
  lu.assertEquals({ events[1].method, events[1].target, events[1].status }, { "GET", "/yes?q=1", 200 })
  lu.assertEquals({ events[2].target, events[2].status }, { "/no", 404 })
  lu.assertTrue(events[1].duration >= 0)
  lu.assertEquals(events[1].path, s:path())
end

function TestHttpServer:test_stopping_the_server_answers_503_and_ends_its_connections()
  local s = tend.http.serve({ handler = function(req)
    if req.path == "/wait" then tend.sleep(10) end
    return "ok"
  end })
  local port = tend.ask(s, "port")
  local idle, read_idle = raw(s)
  tend.tcp.write(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
  lu.assertStrContains(read_idle("ok$"), "200 OK")
  local got
  tend.spawn(function()
    got = tend.http.get("http://127.0.0.1:" .. port .. "/wait")
    return function() end
  end)
  tend.sleep(0.1)
  tend.stop(s)
  lu.assertTrue(eventually(function() return got ~= nil end))
  lu.assertEquals(got.status, 503)
  local _, closed = read_idle()
  lu.assertTrue(closed)
  local ok = pcall(tend.http.get, "http://127.0.0.1:" .. port .. "/", { timeout = 2 })
  lu.assertFalse(ok)
end

function TestHttpServer:test_a_supervised_server_listens_again_on_its_port_after_a_restart()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.http.server({ handler = function() return "up" end }), { name = "web" })
    return function() end
  end)
  local web = sup:path() .. "/web"
  lu.assertTrue(eventually(function() return tend.whereis(web) ~= nil end))
  local s = tend.children(sup)[1].ref
  local port = tend.ask(s, "port")
  lu.assertEquals(tend.http.get("http://127.0.0.1:" .. port .. "/").body, "up")
  local restarts = 0
  tend.trace(function(e)
    if e.ev == "restart" and e.path == web then restarts = restarts + 1 end
  end)
  tend.chaos.crash(s) -- a failure: its supervisor restarts it (the same ref)
  lu.assertTrue(eventually(function() return restarts == 1 end))
  tend.trace(false)
  lu.assertEquals(tend.ask(s, "port"), port)
  lu.assertEquals(tend.http.get("http://127.0.0.1:" .. port .. "/").body, "up")
end

function TestHttpServer:test_malformed_requests_get_400_from_h2o_and_the_server_lives()
  local calls = 0
  local s = tend.http.serve({ handler = function()
    calls = calls + 1
    return "ok"
  end })
  local c, read = raw(s)
  tend.tcp.write(c, "NOT HTTP AT ALL\r\n\r\n")
  local got, closed = read()
  lu.assertStrMatches(got, "^HTTP/1%.1 400 .*")
  lu.assertTrue(closed)
  c, read = raw(s)
  tend.tcp.write(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " .. string.rep("a", 1 << 20) .. "\r\n\r\n")
  got, closed = read()
  lu.assertTrue(closed)
  lu.assertFalse(got:find("200 OK", 1, true) ~= nil)
  lu.assertEquals(calls, 0)
  lu.assertEquals(tend.http.get(url(s, "/")).body, "ok")
  local r = tend.http.request({ method = "HEAD", url = url(s, "/") })
  lu.assertEquals({ r.status, r.body, r.headers["content-length"] }, { 200, "", "2" })
end

-- The real transport decodes the query in C; the simulated twin in Lua
-- (decode_query): both the same, edge cases included.
function TestHttpServer:test_the_query_is_decoded_as_the_twin_decodes_it()
  local decode = require("tend.http_server").decode_query
  local seen
  local s = tend.http.serve({ handler = function(req)
    seen = req
    return "ok"
  end })
  local cases = { "a=1&b=x%20y", "a=1;b=2&&c", "k=%zz&q=%4", "p=%2B+x&p=last", "=v&e=",
    "x=a%3Db%26c", "%41%42=%43", "" }
  for _, q in ipairs(cases) do
    lu.assertEquals(tend.http.get(url(s, "/q?" .. q)).status, 200)
    lu.assertEquals(seen.query, decode(q), q)
    lu.assertEquals(seen.path, "/q")
  end
  lu.assertEquals(seen.query, {})
  tend.http.get(url(s, "/none"))
  lu.assertEquals(seen.query, {})
  lu.assertEquals(decode("p=%2B+x&p=last&k=%zz&%41%42=%43"),
    { p = "last", k = "%zz", AB = "C" })
  lu.assertEquals(decode("a=1;b=2&&c"), { a = "1", b = "2", c = "" })
end

-- A connection's peer is made once and kept for its next requests (by
-- H2O's connection id): each connection still sees its own.
function TestHttpServer:test_each_connection_has_its_own_peer_on_every_request()
  local s = tend.http.serve({ handler = function(req) return req.peer .. "\n" end })
  local one = "\r\n\r\n(127%.0%.0%.1:%d+)\n"
  local function ask(c, read, n) -- one more request; the peers of the n answers so far
    tend.tcp.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    local peers = {}
    for p in read(string.rep(one, n, ".-")):gmatch(one) do peers[#peers + 1] = p end
    return peers
  end
  local a, read_a = raw(s)
  local b, read_b = raw(s)
  local pa, pb = ask(a, read_a, 1), ask(b, read_b, 1)
  lu.assertEquals(#pa, 1)
  lu.assertEquals(#pb, 1)
  lu.assertNotEquals(pa[1], pb[1])
  lu.assertEquals(ask(a, read_a, 2), { pa[1], pa[1] })
  lu.assertEquals(ask(b, read_b, 2), { pb[1], pb[1] })
  tend.tcp.close(a)
  tend.tcp.close(b)
end

function TestHttpServer:test_many_requests_leave_nothing_behind()
  local s = tend.http.serve({ handler = function(req) return req.path end })
  tend.http.get(url(s, "/warm")) -- curl's connection, kept alive
  local before, fds_before = tend.stats().actors, fds()
  for i = 1, 2000 do
    local r = tend.http.get(url(s, "/" .. i))
    if r.body ~= "/" .. i then lu.fail("request " .. i .. ": " .. r.body) end
  end
  lu.assertTrue(eventually(function() return tend.stats().actors == before end))
  lu.assertTrue(eventually(function() return tend.stats().timers == 0 end))
  lu.assertTrue(eventually(function() return fds() <= fds_before end), "descriptors left")
end

-- A closed server's memory outlives H2O's timers, whose close ends a loop
-- pass after the context's dispose. Here each server is stopped with a
-- connection open and its handle collected at once (by a watcher told of
-- its end), so the connection's close is what frees it; the next server
-- is allocated soon after. Freed before its timers' close, it was a use
-- after free (under valgrind or ASan) and, with the next server in its
-- memory, a crash.
function TestHttpServer:test_servers_stopped_with_a_connection_and_collected_leave_the_next_intact()
  for i = 1, 20 do
    local s = tend.http.serve({ handler = function() return "n" .. i end })
    tend.spawn(function(ctx)
      ctx:watch(s)
      return function(m)
        if m.tend == "terminated" then
          collectgarbage()
          collectgarbage()
          ctx:stop()
        end
      end
    end)
    local c, read = raw(s)
    tend.tcp.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    lu.assertStrContains(read("n" .. i .. "$"), "200 OK")
    tend.stop(s)
    s = nil
    local _, closed = read()
    lu.assertTrue(closed)
  end
end

function TestHttpServer:test_its_name_and_port_show_in_ps()
  local s = tend.http.serve({ name = "web", handler = function() return "" end })
  lu.assertEquals(s:path(), "/user/web")
  local shown
  for _, row in ipairs(tend.ps()) do
    if row.path == "/user/web" then shown = row.socket end
  end
  lu.assertEquals(shown, "http port=" .. tend.ask(s, "port"))
end

function TestHttpServer:test_bad_options_are_named()
  lu.assertErrorMsgContains("tend.http.serve: handler: expected a function",
    tend.http.serve, { port = 0 })
  lu.assertErrorMsgContains("tend.http.serve: max_body: expected an integer",
    tend.http.serve, { handler = print, max_body = "big" })
  lu.assertErrorMsgContains("unknown", tend.http.serve, { handler = print, prot = 1 })
end

-- The access log line (info) of each request and the warn line with the
-- traceback of a raise, as a user sees them on stderr.
function TestHttpServer:test_the_access_log_and_the_warn_line_of_a_raise()
  local script = H.script([[
local tend = require "tend"
local s = tend.http.serve({ name = "web", handler = function(req)
  if req.path == "/boom" then error("secret detail") end
  return "ok"
end })
local base = "http://127.0.0.1:" .. tend.ask(s, "port")
print(tend.http.get(base .. "/ok?x=1").status, tend.http.get(base .. "/boom").status)
tend.stop(s)
]])
  local out, err, code = H.run({ "--log-level", "info", script })
  os.remove(script)
  lu.assertEquals({ out, code }, { "200\t500\n", 0 })
  lu.assertStrMatches(err, ".*info  /user/web: http GET /ok%?x=1 status 200 in [%d.]+ ms\n.*")
  lu.assertStrMatches(err, ".*info  /user/web: http GET /boom status 500 in [%d.]+ ms\n.*")
  lu.assertStrMatches(err, ".*warn  /user/web/[^:]+: GET /boom: the handler raised: [^\n]*secret detail"
    .. "\\nstack traceback:.*")
end

-- A restart closes the old incarnation's open connections (a keep-alive
-- one here) and listens again on the same port.
function TestHttpServer:test_a_restart_closes_the_old_connections()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.http.server({ handler = function() return "up" end }), { name = "web" })
    return function() end
  end)
  lu.assertTrue(eventually(function() return #tend.children(sup) == 1 end))
  local s = tend.children(sup)[1].ref
  local c, read = raw(s)
  tend.tcp.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
  local got, closed = read("\r\n\r\nup")
  lu.assertStrContains(got, "HTTP/1.1 200 OK")
  lu.assertFalse(closed) -- kept alive
  local port = tend.ask(s, "port")
  tend.chaos.crash(s)
  local _, ended = read(nil, 10)
  lu.assertTrue(ended) -- the old incarnation's connection is closed
  lu.assertTrue(eventually(function()
    local ok, r = pcall(tend.http.get, "http://127.0.0.1:" .. port .. "/")
    return ok and r.body == "up"
  end))
end
