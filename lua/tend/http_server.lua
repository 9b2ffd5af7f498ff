-- tend.http.serve, tend.http.server, tend.http.router: HTTP servers as
-- actors of the tree, on H2O under the real clock (core.httpd_listen,
-- src/api/lhttp_server.c, src/runtime/io/http/server.c: HTTP/1.1 and
-- HTTP/2 parsed by H2O on the host's loop), and under --virtual-time on
-- the simulated network (tend.simnet's http_bind: the same actors, the
-- same answers; a simulated client's request is an ask of the server).
--
-- The server is an actor owning the listening socket. H2O reads each
-- request whole and the server gets { tend = "http", id, req } for it; it
-- spawns a temporary child that runs handler(req, ctx) (so a handler may
-- sleep, ask or call out without holding the others); past `timeout` (one
-- timer for all requests) the client gets 503 and the child is stopped.
-- The child answers through the server's handle and records the end in
-- the server's table, which emits the request's "http" trace event
-- (logged at info: the access log).
local core = require "tend.core"
local internal = require "tend.internal"
local listening = require "tend.listening"
local ws = require "tend.http_ws"

local M = {}

local KEYS = { host = true, port = true, handler = true, name = true,
  max_connections = true, max_body = true, timeout = true, debug = true, tls = true,
  ws = true, real = true }

local REASONS = { [200] = "OK", [201] = "Created", [204] = "No Content",
  [400] = "Bad Request", [403] = "Forbidden", [404] = "Not Found",
  [405] = "Method Not Allowed", [409] = "Conflict", [413] = "Payload Too Large",
  [500] = "Internal Server Error", [502] = "Bad Gateway", [503] = "Service Unavailable",
  [504] = "Gateway Timeout" }

local TEXT = "text/plain; charset=utf-8"

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "number" then return tostring(v) end
  return type(v)
end

local function fail(fn, opt, expected, got)
  error(string.format("%s: %s: expected %s, got %s", fn, opt, expected, show(got)), 0)
end

local function check(opts, fn)
  if type(opts) ~= "table" then
    error(string.format("%s: options: expected a table, got %s", fn, type(opts)), 0)
  end
  local unknown = internal.check_keys(opts, KEYS, fn)
  if unknown then error(unknown, 0) end
  local spec = { host = opts.host or "127.0.0.1", port = opts.port or 0,
    max_connections = opts.max_connections or 1024, max_body = opts.max_body or 8 << 20,
    timeout = opts.timeout or 30, debug = opts.debug == true, name = opts.name }
  if type(spec.host) ~= "string" or spec.host == "" then
    fail(fn, "host", "a host name or address (a non-empty string)", spec.host)
  end
  if math.type(spec.port) ~= "integer" or spec.port < 0 or spec.port > 65535 then
    fail(fn, "port", "an integer 0-65535", spec.port)
  end
  if type(opts.handler) ~= "function" then
    fail(fn, "handler", "a function(req, ctx) returning an answer", opts.handler)
  end
  spec.handler = opts.handler
  if math.type(spec.max_connections) ~= "integer" or spec.max_connections < 1 then
    fail(fn, "max_connections", "a positive integer", spec.max_connections)
  end
  if math.type(spec.max_body) ~= "integer" or spec.max_body < 0 then
    fail(fn, "max_body", "an integer >= 0 (bytes)", spec.max_body)
  end
  local t = spec.timeout
  if type(t) ~= "number" or t ~= t or t <= 0 then fail(fn, "timeout", "seconds > 0", t) end
  if spec.name ~= nil and type(spec.name) ~= "string" then
    fail(fn, "name", "a string", spec.name)
  end
  if opts.debug ~= nil and type(opts.debug) ~= "boolean" then
    fail(fn, "debug", "a boolean", opts.debug)
  end
  if opts.ws ~= nil and type(opts.ws) ~= "function" then
    fail(fn, "ws", "a factory function(ctx, req) returning a behavior", opts.ws)
  end
  spec.ws = opts.ws
  if opts.real ~= nil and type(opts.real) ~= "boolean" then fail(fn, "real", "a boolean", opts.real) end
  spec.real = opts.real == true
  if core.virtual_time() and opts.ws ~= nil then
    fail(fn, "ws", "nothing under --virtual-time (the simulated network has no WebSocket)", opts.ws)
  end
  if core.virtual_time() and opts.tls ~= nil then
    fail(fn, "tls", "nothing under --virtual-time (the simulated network has no TLS)", opts.tls)
  end
  local tls = opts.tls
  if tls ~= nil then
    if type(tls) ~= "table" then fail(fn, "tls", "a table { cert = path, key = path }", tls) end
    for k in pairs(tls) do
      if k ~= "cert" and k ~= "key" then
        fail(fn, "tls", "only the keys cert and key", k)
      end
    end
    if type(tls.cert) ~= "string" or tls.cert == "" then
      fail(fn, "tls.cert", "the path of a PEM certificate (chain)", tls.cert)
    end
    if type(tls.key) ~= "string" or tls.key == "" then
      fail(fn, "tls.key", "the path of its PEM private key", tls.key)
    end
    spec.tls = { cert = tls.cert, key = tls.key }
  end
  return spec
end

local function checked(opts, fn)
  local ok, spec = pcall(check, opts, fn)
  if not ok then error(spec, 3) end
  return spec
end

-- ------------------------------------------------------------ requests

local function unescape(s)
  s = s:gsub("+", " ")
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

-- "a=1&b=x%20y" -> { a = "1", b = "x y" } (a repeated key: its last value;
-- a key without "=": "").
function M.decode_query(q)
  local t = {}
  if q == nil then return t end
  for pair in q:gmatch("[^&;]+") do
    local k, v = pair:match("^([^=]*)=?(.*)$")
    t[unescape(k)] = unescape(v)
  end
  return t
end

local PLAIN = { ["content-type"] = TEXT } -- read only, never handed out

local function plain(status, text)
  return status, PLAIN, text
end

-- What a handler returned -> status, headers, body; or nil, why.
function M.answer_of(a, b)
  if type(a) == "string" then return plain(200, a) end
  if a == nil then
    if b == nil then return 204, {}, "" end
    if math.type(b) ~= "integer" or b < 100 or b > 999 then
      return nil, "nil, status: status is " .. show(b)
    end
    return plain(b, (REASONS[b] or "") .. "\n")
  end
  if type(a) ~= "table" then
    return nil, "expected a string, { status, headers, body } or nil, status; got " .. type(a)
  end
  local status = a.status or a[1] or 200
  local headers = a.headers or a[2] or {}
  local body = a.body or a[3] or ""
  if math.type(status) ~= "integer" or status < 100 or status > 999 then
    return nil, "status: expected an integer 100-999, got " .. show(status)
  end
  if type(headers) ~= "table" then return nil, "headers: expected a table, got " .. type(headers) end
  if type(body) == "table" and body.as_body then -- a tend.stream source (lua/tend/stream_http.lua)
    body = body:as_body_for(headers)
  end
  if type(body) ~= "string" and type(body) ~= "function" then
    return nil, "body: expected a string or a pull function, got " .. type(body)
  end
  return status, headers, body
end

-- The next chunk of a streamed body: pull() until a non-empty string (an
-- empty one is skipped) or nil (the end) -> true, chunk; or false, why.
function M.pull(pull)
  while true do
    local ok, c = xpcall(pull, debug.traceback)
    if not ok then return false, c end
    if c == nil then return true, nil end
    if type(c) ~= "string" then
      return false, "the body's pull returned " .. type(c) .. " (expected a string, or nil at the end)"
    end
    if c ~= "" then return true, c end
  end
end

-- The headers of a streamed answer: server-sent events are not cached.
function M.stream_headers(headers)
  local out, sse, cache = {}, false, false
  for k, v in pairs(headers) do
    out[k] = v
    local lk = type(k) == "string" and k:lower()
    if lk == "content-type" and tostring(v):lower():find("^%s*text/event%-stream") then sse = true end
    if lk == "cache-control" then cache = true end
  end
  if sse and not cache then out["cache-control"] = "no-cache" end
  return out
end

-- The behavior of a server's request actors, one function for all of
-- them (no closure per request): the server sends each new actor its
-- request's record r ({ tend = "http", id, req, ... }); the actor
-- takes that record from the server's table live (the same table, not a
-- copy) and runs the handler once and answers. A streamed
-- body (a pull function, kept in r) keeps it alive, pulling a chunk each
-- time H2O asks for more ({ tend = "http_more", id }), until the pull
-- returns nil. done(id, status) is the server's: the actor records the
-- end in the server's table itself (a child runs on its parent's
-- scheduler, in the same Lua state: no message, no server turn).
local function requests(srv, spec, server, upgrades, live, done)
  local function answer(r, ctx)
    local req, id = r.req, r.id
    local ok, a, b = xpcall(spec.handler, debug.traceback, req, ctx)
    if ok and type(a) == "string" then -- the common case: 200, text/plain
      srv():respond(id, 200, true, a)
      done(id, 200)
      return core.stopped
    end
    local status, headers, body
    if ok and type(a) == "table" and a.ws ~= nil then -- { ws = factory }
      if type(a.ws) == "function" and req.websocket then
        upgrades[id] = a.ws -- the server spawns the connection
        core.send(server, { tend = "http_ws", id = id })
        return core.stopped
      end
      if type(a.ws) == "function" then
        a = { status = 426, headers = { upgrade = "websocket", ["content-type"] = TEXT },
          body = "Upgrade Required\n" }
      else
        ok, a = false, "{ ws = factory }: ws is " .. type(a.ws) .. ", not a function"
      end
    end
    if ok then
      status, headers, body = M.answer_of(a, b)
      if status == nil then
        ctx:log("warn", "%s %s: the handler's answer: %s", req.method, req.path, headers)
        status, headers, body = plain(500, "Internal Server Error\n")
      end
    else
      ctx:log("warn", "%s %s: the handler raised: %s", req.method, req.path, tostring(a))
      status, headers, body = plain(500, spec.debug and tostring(a) .. "\n"
        or "Internal Server Error\n")
    end
    if type(body) == "function" then
      r.pull = body
      core.send(server, { tend = "http_started", id = id, status = status })
      if srv():stream(id, status, M.stream_headers(headers), ctx.self) then return end
      done(id, status) -- the client left
      return core.stopped
    end
    srv():respond(id, status, headers == PLAIN or headers, body) -- true: text/plain, made in C
    done(id, status)
    return core.stopped
  end
  local function more(r, msg, ctx)
    local S, id = srv(), r.id
    if msg.asked then S:hold(id, ctx.sender) end -- a simulated client
    local ok, chunk = M.pull(r.pull)
    if not ok then
      ctx:log("warn", "%s %s: the body's pull failed: %s", r.method, r.path, tostring(chunk))
      S:send(id, nil, true)
      done(id, r.status)
      return core.stopped
    end
    if S:send(id, chunk) and chunk ~= nil then return end
    done(id, r.status)
    return core.stopped
  end
  local function behavior(msg, ctx)
    if type(msg) == "table" then
      if msg.tend == "http" then
        -- the server's record itself (under --copy-messages msg is a copy)
        local r = live[msg.id]
        if r == nil then return core.stopped end -- it ended first (its timeout)
        return answer(r, ctx)
      end
      if msg.tend == "http_more" then
        local r = live[msg.id]
        if r and r.pull then return more(r, msg, ctx) end
      end
    end
    return core.unhandled
  end
  return function() return behavior end
end

-- ------------------------------------------------------------ servers

local function real_bind(spec, owner)
  return core.httpd_listen({ host = spec.host, port = spec.port,
    max_connections = spec.max_connections, max_body = spec.max_body, timeout = spec.timeout,
    tls = spec.tls,
    owner = owner })
end

-- The transport: H2O under the real clock, the simulated network under
-- the virtual one (unless spec.real: the observer's, a real listener).
local function bind(spec, owner)
  if core.virtual_time() and not spec.real then return require("tend.simnet").http_bind(spec, owner) end
  return real_bind(spec, owner)
end

local function target(r) return r.query and r.path .. "?" .. r.query or r.path end

-- The server's factory (binding in the caller: tend.listening).
-- Timeouts: one timer, not one per request. All requests get the same
-- `timeout`, so the oldest live one is due first; the timer is armed (by
-- the request that finds none armed, or when it fires) for the earliest
-- deadline of the live requests, and when it fires every request past its
-- deadline gets its 503, at its own instant. A request that ended leaves
-- the timer be (it fires for nothing at most once a `timeout`), unless it
-- was the last one live: then the timer is cancelled.
local function server(spec, handoff)
  return function(ctx)
    local srv, close = listening.take(handoff, bind, spec, ctx.self)
    handoff = nil
    local path = ctx.self:path()
    -- id -> { tend = "http", id, req, child (its actor's number: core.httpd_ref),
    -- t0, seq, deadline, method, path, query, status, streamed, pull }: the real
    -- transport's message itself
    local live, n_live = {}, 0 -- and how many: no next() per request
    local upgrades = {} -- id -> the ws factory a handler answered with
    local timer, armed = nil, 0 -- the timeout timer; its number (0: none set)
    local seq = 0 -- requests taken, for their order
    -- The end of request id (answered, stopped, cut, or its client left):
    -- called by the server, and by the request's actor itself.
    local function done(id, status)
      local r = live[id]
      if r == nil then return end
      live[id] = nil
      n_live = n_live - 1
      if n_live == 0 and timer then -- none left: no timer left either
        timer:cancel()
        timer, armed = nil, 0
      end
      core.httpd_event(path, r.method, r.path, r.query, status, r.t0) -- (it reads the clock)
    end
    local timers = 0 -- timers set, to know a stale one's message
    local function arm(delay)
      timers = timers + 1
      armed = timers
      timer = ctx:after(delay, { tend = "http_timeout", n = timers })
    end
    local function timed_out(id, r)
      srv():respond(id, plain(503, "Service Unavailable\n"))
      core.stop(core.httpd_ref(r.child))
      ctx:log("warn", "%s %s: no answer within %g s: 503, its actor stopped",
        r.method, target(r), spec.timeout)
      done(id, 503)
    end
    -- The timer fired: the requests past their deadline (half a
    -- nanosecond: the clock's grain) time out; armed again for the next.
    local function expire()
      timer, armed = nil, 0
      local now, soonest = core.now(), nil
      local due = {}
      for id, r in pairs(live) do
        if not r.streamed and r.child then
          if r.deadline <= now + 5e-10 then
            due[#due + 1] = id
          elseif soonest == nil or r.deadline < soonest then
            soonest = r.deadline
          end
        end
      end
      table.sort(due, function(x, y) return live[x].seq < live[y].seq end) -- in arrival order
      for _, id in ipairs(due) do
        local r = live[id]
        if r then timed_out(id, r) end
      end
      if soonest and armed == 0 then arm(soonest - now) end
    end
    local request = requests(srv, spec, ctx.self, upgrades, live, done) -- its actors' factory
    -- The connection of an upgraded request: an actor of its own, a
    -- temporary child of the server; 101 once H2O took the handshake.
    local function upgrade(c, id, factory, req)
      local conn = { S = srv() }
      local child = core.httpd_child(c, ws.connection(factory, req, conn))
      local wid = srv():ws_upgrade(id, child)
      if not wid then
        core.stop(child)
        done(id, 400)
        return
      end
      conn.wid = wid
      done(id, 101)
    end
    -- A request H2O (or the simulated network) read: its record, its actor.
    local function take(msg, c)
      local id = msg.id
      if msg.asked then srv():hold(id, c.sender) end -- a simulated client
      local req, r = msg.req, msg -- the real transport's message is the record
      if req == nil then -- the simulated network's: req and the record made here
        req = { method = msg.method, path = msg.path, query = M.decode_query(msg.query),
          headers = msg.headers, body = msg.body, peer = msg.peer, version = msg.version,
          scheme = msg.scheme }
        req.websocket = msg.websocket
        r = { tend = "http", id = id, req = req, method = req.method, path = req.path,
          query = msg.query }
      end
      local t0 = core.now()
      seq = seq + 1
      -- (C made the message with room for these: no rehash as they come)
      r.child, r.t0, r.seq, r.deadline = false, t0, seq, t0 + spec.timeout
      live[id] = r
      n_live = n_live + 1
      if req.websocket and spec.ws then -- every upgrade to serve's ws
        r.child = nil
        upgrade(c, id, spec.ws, req)
        return
      end
      r.child = core.httpd_child(c, request, r) -- its number; r sent to it
      if armed == 0 then arm(spec.timeout) end
    end
    return {
      receive = function(_, msg, c)
        if type(msg) == "table" and msg.tend == "http" then return take(msg, c) end -- first: the common case
        if msg == "port" then c:reply(srv():port()) return end
        if msg == "refused" then c:reply(srv():refused()) return end
        if msg == "connections" then c:reply(srv():connections()) return end
        if type(msg) ~= "table" then return core.unhandled end
        if msg.tend == "http_timeout" then
          if msg.n == armed then expire() end -- else: cancelled after it fired
          return
        end
        if msg.tend == "http_ws" then -- a handler answered { ws = factory }
          local factory, r = upgrades[msg.id], live[msg.id]
          upgrades[msg.id] = nil
          if factory and r then upgrade(c, msg.id, factory, r.req) end
          return
        end
        if msg.tend == "http_started" then -- streamed: timeout no longer applies
          local r = live[msg.id]
          if r then
            r.streamed = true
            r.status = msg.status
            c:watch(core.httpd_ref(r.child), { tend = "http_child_down", id = msg.id })
          end
          return
        end
        if msg.tend == "http_child_down" then -- its actor ended mid-stream
          local r = live[msg.id]
          if r == nil then return end -- it had ended its body
          srv():send(msg.id, nil, true) -- cut short: the client sees an error
          c:log("warn", "%s %s: the body's actor ended mid-stream; the body is cut",
            r.method, target(r))
          done(msg.id, r.status)
          return
        end
        if msg.tend == "http_gone" then -- the client left mid-stream
          local r = live[msg.id]
          if r == nil then return end
          core.stop(core.httpd_ref(r.child))
          c:log("info", "%s %s: the client left mid-stream; its actor stopped", r.method, target(r))
          done(msg.id, r.status)
          return
        end
        return core.unhandled
      end,
      post_stop = close,
    }
  end
end

-- tend.http.server{...} -> a factory for tend.spawn, ctx:spawn, children.
function M.server(opts)
  return server(checked(opts, "tend.http.server"))
end

-- tend.http.serve{...} [, spawn opts] -> the server's ref, a child of the
-- caller (of /user for a task such as the main chunk).
function M.serve(opts, spawn_opts)
  local spec = checked(opts, "tend.http.serve")
  if spec.name ~= nil then
    local o = {}
    for k, v in pairs(spawn_opts or {}) do o[k] = v end
    o.name = o.name or spec.name
    spawn_opts = o
  end
  local ref = listening.listen(function(handoff) return server(spec, handoff) end, bind, spec,
    spawn_opts, "tend.http.serve")
  return ref
end

-- ------------------------------------------------------------ routing

-- "/items/:id" -> a matcher of paths: params table or nil.
local function compile(pattern)
  local parts = {}
  for seg in pattern:gmatch("[^/]+") do parts[#parts + 1] = seg end
  return function(path)
    local segs = {}
    for seg in path:gmatch("[^/]+") do segs[#segs + 1] = seg end
    if #segs ~= #parts then return nil end
    local params = {}
    for i, p in ipairs(parts) do
      if p:sub(1, 1) == ":" then
        params[p:sub(2)] = unescape(segs[i])
      elseif p ~= segs[i] then
        return nil
      end
    end
    return params
  end
end

-- tend.http.router{ { "GET", "/items/:id", fn }, ... } -> a handler:
-- the first route whose method and path match runs (req.params holds the
-- path's :names); a path that matches with other methods only: 405 with
-- Allow (HEAD beside a GET); none: 404. A route of method "*" takes any
-- method; HEAD is served by a GET route.
function M.router(routes)
  if type(routes) ~= "table" then
    error("tend.http.router: routes: expected a list of { method, path, handler }, got "
      .. type(routes), 2)
  end
  local list = {}
  for i, r in ipairs(routes) do
    if type(r) ~= "table" or type(r[1]) ~= "string" or type(r[2]) ~= "string"
        or r[2]:sub(1, 1) ~= "/" or (type(r[3]) ~= "function" and type(r.ws) ~= "function")
        or (r[3] ~= nil and type(r[3]) ~= "function") or (r.ws ~= nil and type(r.ws) ~= "function") then
      error(string.format("tend.http.router: route %d: expected { method, \"/path\", "
        .. "function(req, ctx) [, ws = factory] } or { method, \"/path\", ws = factory }, got %s",
        i, show(r)), 2)
    end
    list[i] = { method = r[1]:upper(), match = compile(r[2]), fn = r[3], ws = r.ws }
  end
  return function(req, ctx)
    local allow, seen = {}, {}
    for _, r in ipairs(list) do
      local params = r.match(req.path)
      if params then
        if r.method == req.method or r.method == "*"
            or (req.method == "HEAD" and r.method == "GET") then
          req.params = params
          if r.ws and (req.websocket or r.fn == nil) then return { ws = r.ws } end
          return r.fn(req, ctx)
        end
        if not seen[r.method] then
          seen[r.method] = true
          allow[#allow + 1] = r.method
          if r.method == "GET" and not seen.HEAD then -- served by it too
            seen.HEAD = true
            allow[#allow + 1] = "HEAD"
          end
        end
      end
    end
    if #allow == 0 then return nil, 404 end
    return { status = 405, headers = { allow = table.concat(allow, ", "),
      ["content-type"] = TEXT }, body = "Method Not Allowed\n" }
  end
end

return M
