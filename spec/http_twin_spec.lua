-- tend.http.serve's simulated twin (--virtual-time): the real server's
-- actor on the simulated network (lua/tend/simnet.lua's http_bind), so the
-- same API and the same answers, at exact virtual times. The real server:
-- spec/realtime/http_server_spec.lua.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

TestHttpTwin = {}

function TestHttpTwin:tearDown()
  H.stop_user()
  H.settle()
  H.assert_clean()
end

local function err_of(fn, ...)
  local ok, e = pcall(fn, ...)
  lu.assertFalse(ok, "expected an error")
  return e
end

function TestHttpTwin:test_serve_returns_the_servers_ref_a_child_of_the_caller()
  local s = tend.http.serve({ host = "api", name = "web", handler = function() return "hi" end })
  lu.assertEquals(s:path(), "/user/web")
  lu.assertEquals(tend.ask(s, "port"), 80)
  lu.assertEquals(tend.ask(s, "refused"), 0)
  lu.assertEquals(tend.http.get("http://api/").body, "hi")
  -- port 0 again on the same host: the next free one; a taken port: ListenError
  local s2 = tend.http.serve({ host = "api", handler = function() return "two" end })
  lu.assertEquals(tend.ask(s2, "port"), 49152)
  lu.assertEquals(tend.http.get("http://api:49152/").body, "two")
  local e = err_of(tend.http.serve, { host = "api", port = 80, handler = function() end })
  lu.assertEquals({ e.kind, e.reason }, { "ListenError", "address already in use" })
  H.settle()
  lu.assertEquals(#tend.children("/user"), 3) -- the runner and the two servers
end

function TestHttpTwin:test_each_request_runs_in_an_actor_of_its_own()
  local db = tend.spawn(function() return function(q, ctx) ctx:reply("row " .. q) end end)
  local paths = {}
  tend.http.serve({ host = "api", handler = function(req, ctx)
    paths[#paths + 1] = ctx.self:path():match("^/user/[^/]+/") ~= nil
    tend.sleep(1)
    return ctx:ask(db, req.path)
  end })
  local t0, got, me = tend.now(), {}, tend.self()
  for i = 1, 3 do
    tend.spawn(function()
      got[i] = tend.http.get("http://api/" .. i).body
      tend.send(me, i)
      return function() end
    end)
  end
  for _ = 1, 3 do tend.receive(5) end
  lu.assertEquals(got, { "row /1", "row /2", "row /3" })
  lu.assertEquals(tend.now() - t0, 1) -- side by side, not one after the other
  lu.assertEquals(paths, { true, true, true }) -- children of the server
end

function TestHttpTwin:test_past_its_timeout_503_and_the_handler_is_stopped()
  local stopped = 0
  tend.http.serve({ host = "api", timeout = 2, handler = function(_, ctx)
    ctx:watch(ctx.self) -- nothing: a probe that it is an actor
    tend.sleep(10)
    return "late"
  end })
  tend.trace(function(e) if e.ev == "stop" and e.path:find("^/user/%$") then stopped = stopped + 1 end end)
  local t0 = tend.now()
  local r = tend.http.get("http://api/slow")
  H.settle()
  tend.trace(false)
  lu.assertEquals({ r.status, r.body }, { 503, "Service Unavailable\n" })
  lu.assertEquals(tend.now() - t0, 2)
  lu.assertEquals(stopped, 1)
end

-- One timer serves every request's timeout: each late request gets its
-- 503 at its own instant (arrival + timeout), one that answers in time is
-- not cut by it, and the timer is gone when no request is left.
function TestHttpTwin:test_each_request_times_out_at_its_own_instant()
  local s = tend.http.serve({ host = "api", timeout = 2, handler = function(req)
    tend.sleep(tonumber(req.query.s))
    return "done " .. req.query.s
  end })
  local t0 = tend.now()
  local got, me = {}, tend.self()
  local function get(at, secs)
    tend.after(at, function()
      local r = tend.http.get("http://api/?s=" .. secs)
      local t = math.floor((tend.now() - t0) * 1e6 + 0.5) / 1e6 -- to the microsecond
      tend.send(me, { at, r.status, r.body, t })
    end)
  end
  get(0, 5)     -- 503 at 2
  get(0.5, 1.9) -- answered at 2.4, while the first's timer is the one set
  get(0.75, 9)  -- 503 at 2.75
  get(1, 9)     -- 503 at 3
  get(3.5, 0.5) -- answered at 4: none was live, a timer is set again
  get(4.25, 7)  -- 503 at 6.25
  for _ = 1, 6 do
    local m = tend.receive(10)
    got[#got + 1] = m
  end
  lu.assertEquals(got, {
    { 0, 503, "Service Unavailable\n", 2 },
    { 0.5, 200, "done 1.9", 2.4 },
    { 0.75, 503, "Service Unavailable\n", 2.75 },
    { 1, 503, "Service Unavailable\n", 3 },
    { 3.5, 200, "done 0.5", 4 },
    { 4.25, 503, "Service Unavailable\n", 6.25 },
  })
  H.settle()
  lu.assertEquals(tend.stats().timers, 0)
  lu.assertEquals(tend.ask(s, "connections"), 0)
end

function TestHttpTwin:test_a_raise_is_500_without_its_text_unless_debug()
  tend.http.serve({ host = "a", handler = function() error("secret") end })
  tend.http.serve({ host = "b", debug = true, handler = function() error("secret") end })
  local r = tend.http.get("http://a/")
  lu.assertEquals({ r.status, r.body }, { 500, "Internal Server Error\n" })
  r = tend.http.get("http://b/")
  lu.assertEquals(r.status, 500)
  lu.assertStrContains(r.body, "secret")
  lu.assertEquals(tend.http.get("http://a/").status, 500) -- the server lives on
end

function TestHttpTwin:test_each_request_is_an_http_trace_event()
  local seen = {}
  tend.http.serve({ host = "api", name = "web", handler = function(req)
    tend.sleep(0.25)
    return nil, req.path == "/gone" and 404 or nil
  end })
  tend.trace(function(e)
    if e.ev == "http" then seen[#seen + 1] = { e.path, e.method, e.target, e.status, e.duration } end
  end)
  tend.http.get("http://api/x?y=1")
  tend.http.request({ method = "POST", url = "http://api/gone", body = "b" })
  H.settle()
  tend.trace(false)
  lu.assertEquals(#seen, 2)
  lu.assertEquals({ seen[1][1], seen[1][2], seen[1][3], seen[1][4] }, { "/user/web", "GET", "/x?y=1", 204 })
  lu.assertEquals({ seen[2][2], seen[2][3], seen[2][4] }, { "POST", "/gone", 404 })
  lu.assertEquals({ seen[1][5], seen[2][5] }, { 0.25, 0.25 }) -- the handler's sleep
end

-- A request's actor dies with no ref made (none is needed); a ctx its
-- handler kept still names it, also once its server is gone and its id
-- is another actor's.
function TestHttpTwin:test_a_request_actors_kept_ctx_still_names_it_after_its_end()
  local saved
  local s = tend.http.serve({ host = "api", name = "web", handler = function(_, ctx)
    saved = ctx
    return "ok"
  end })
  lu.assertEquals(tend.http.get("http://api/").body, "ok")
  H.settle()
  local ok, err = pcall(saved.after, saved, 1, "x")
  lu.assertFalse(ok)
  local path = err:match("ctx:after called outside its actor %((/user/web/%$%d+)%)")
  lu.assertNotNil(path, err)
  tend.stop(s)
  H.settle()
  local others = {}
  for i = 1, 20 do others[i] = tend.spawn(function() return function() end end) end
  collectgarbage()
  collectgarbage()
  ok, err = pcall(saved.after, saved, 1, "x")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "ctx:after called outside its actor (" .. path .. ")")
  H.stop_all(table.unpack(others))
end

function TestHttpTwin:test_a_supervised_server_listens_again_on_its_port_after_a_restart()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.http.server({ host = "api", port = 8080, handler = function() return "up" end }),
      { name = "web" })
    return function() end
  end)
  H.settle()
  local s = tend.children(sup)[1].ref
  lu.assertEquals(tend.http.get("http://api:8080/").body, "up")
  local restarts = 0
  tend.trace(function(e) if e.ev == "restart" then restarts = restarts + 1 end end)
  tend.chaos.crash(s)
  H.settle()
  tend.trace(false)
  lu.assertEquals(restarts, 1)
  lu.assertEquals(tend.ask(s, "port"), 8080)
  lu.assertEquals(tend.http.get("http://api:8080/").body, "up")
  tend.stop(sup)
end

function TestHttpTwin:test_a_stopped_server_answers_what_waits_with_503_then_is_gone()
  local s = tend.http.serve({ host = "api", handler = function() tend.sleep(10) return "x" end })
  local got
  tend.spawn(function()
    got = tend.http.get("http://api/")
    return function() end
  end)
  tend.sleep(1)
  tend.stop(s)
  H.settle()
  lu.assertEquals(got.status, 503)
  local e = err_of(tend.http.get, "http://api/")
  lu.assertEquals({ e.kind, e.reason }, { "HttpError", "no simulated server" })
end

function TestHttpTwin:test_tls_and_ws_are_refused_by_name()
  local e = err_of(tend.http.serve, { host = "api", handler = function() end,
    tls = { cert = "c.pem", key = "k.pem" } })
  lu.assertStrContains(tostring(e), "tend.http.serve: tls: expected nothing under --virtual-time")
  e = err_of(tend.http.serve, { host = "api", handler = function() end,
    ws = function() return function() end end })
  lu.assertStrContains(tostring(e), "tend.http.serve: ws: expected nothing under --virtual-time")
  lu.assertEquals(#tend.children("/user"), 1) -- nothing left behind
end

-- A streamed body's actor killed mid-stream: the body is cut (the client
-- gets an error, as from the real server), and nothing is left waiting.
function TestHttpTwin:test_a_body_whose_actor_is_killed_mid_stream_is_cut()
  local child, pulls = nil, 0
  tend.http.serve({ host = "api", name = "web", handler = function(_, ctx)
    child = ctx.self
    return { body = function()
      pulls = pulls + 1
      tend.sleep(1)
      return "tick\n"
    end }
  end })
  tend.spawn(function()
    tend.sleep(2.5)
    tend.chaos.kill(child)
    return function() end
  end)
  local t0 = tend.now()
  local ok, e = pcall(tend.http.get, "http://api/")
  lu.assertFalse(ok)
  lu.assertEquals({ e.kind, e.reason }, { "HttpError", "partial body" })
  lu.assertEquals(tend.now() - t0, 2.5)
  lu.assertEquals(pulls, 3)
  H.settle()
  lu.assertEquals(tend.ask(tend.whereis("/user/web"), "connections"), 0)
end
