-- tend.simnet: the simulated network of --virtual-time. The transport of
-- tend.tcp under the virtual clock (the same listeners and sockets as the
-- real one: lua/tend/tcp.lua calls either), simulated HTTP servers for
-- tend.http, and the network faults of tend.chaos (turmoil's verbs).
--
-- Hosts are names: any string; "localhost", "127.0.0.1" and "::1" are one
-- host. Each has its own port table. An actor lives on a host: the one
-- set for it or an ancestor with place(ref, host) (a listener lives on the
-- host it listens on, and so do its connections), else "localhost". Bytes
-- go from one end of a connection to the other after the latency of the
-- link between the two hosts (0 unless tend.chaos.latency set it, plus a
-- seeded jitter), in order; a partition or a hold stops them until the
-- repair or the release. Everything runs on the virtual clock and draws
-- its randomness from tend's seeded generator, so a seed replays it.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local internal = require "tend.internal"

local M = {}

local EOF = {} -- a connection's end, sent after its data

local hosts = {}          -- name -> { ports = {port -> listener}, next = 49152 }
local links = {}          -- "a\0b" -> { partitioned, held, latency, jitter }
local place_of = {}       -- actor path -> host
local stalled = {}        -- sending ends with bytes waiting on a blocked link, in order
local servers = {}        -- "host:port" -> simulated HTTP handler

local function norm(h)
  if h == "127.0.0.1" or h == "::1" or h == "localhost" then return "localhost" end
  return h
end

local function host(name)
  local h = hosts[name]
  if not h then
    h = { ports = {}, next = 49152 }
    hosts[name] = h
  end
  return h
end

local function free_port(h)
  while h.ports[h.next] do h.next = h.next + 1 end
  local p = h.next
  h.next = h.next + 1
  return p
end

local function link_key(a, b)
  if a > b then a, b = b, a end
  return a .. "\0" .. b
end

local function link(a, b)
  local k = link_key(a, b)
  local l = links[k]
  if not l then
    l = { partitioned = false, held = false, latency = 0, jitter = 0 }
    links[k] = l
  end
  return l
end

local function blocked(l) return l.partitioned or l.held end

-- The host an actor lives on (its own place, or its nearest ancestor's).
local function host_of(ref)
  if ref == nil then return "localhost" end
  local p = ref:path()
  while p and p ~= "" do
    if place_of[p] then return place_of[p] end
    p = p:match("^(.*)/[^/]*$")
  end
  return "localhost"
end
M.host_of = host_of

-- place(ref, host): ref and its subtree live on the simulated host.
function M.place(ref, name)
  if not core.tcp_is_ref(ref) then
    error("tend.simnet.place: ref: expected an actor ref, got " .. type(ref), 2)
  end
  if type(name) ~= "string" or name == "" then
    error("tend.simnet.place: host: expected a host name, got " .. tostring(name), 2)
  end
  place_of[ref:path()] = norm(name)
end

-- The host named by a host name or an actor ref (chaos verbs).
local function which(x, what, fn)
  if type(x) == "string" and x ~= "" then return norm(x) end
  if core.tcp_is_ref(x) then return host_of(x) end
  error(string.format("%s: %s: expected a host name or an actor ref, got %s", fn, what,
    type(x)), 0)
end

local function event(a, b, detail)
  core.chaos_event("/net/" .. a, detail, b and ("/net/" .. b) or nil)
end

-- ------------------------------------------------------------ sockets

local Sock = {}
Sock.__index = Sock
Sock.__name = "tend.SimSocket"
Sock.__tend_handle = true

local function new_sock(h, port, peer_host, peer_port)
  return setmetatable({ host = h, port = port, peer_host = peer_host, peer_port = peer_port,
    buf = "", early = {}, inflight = 0, last_due = 0, done = false }, Sock)
end

local function frames_of(s, data, out)
  if s.framing == "raw" then
    out[#out + 1] = data
    return true
  end
  s.buf = s.buf .. data
  if s.framing == "line" then
    while true do
      local i = s.buf:find("\n", 1, true)
      if not i then break end
      out[#out + 1] = s.buf:sub(1, i - 1):gsub("\r$", "")
      s.buf = s.buf:sub(i + 1)
    end
    return #s.buf <= s.max_line
  end
  while #s.buf >= 4 do -- "length"
    local n = string.unpack(">I4", s.buf)
    if n > s.max_line then return false end
    if #s.buf < 4 + n then break end
    out[#out + 1] = s.buf:sub(5, 4 + n)
    s.buf = s.buf:sub(5 + n)
  end
  return true
end

-- Its reader told { tend = "closed", reason }, its owner ended (a
-- PoisonPill when it reads, else the done token), as the real transport.
local function tell_end(s, reason)
  if s.to and core.alive(s.to) then s.to:tell({ tend = "closed", reason = reason }, s.owner) end
  if s.owner and s.to and core.alive(s.owner) then
    if s.owner == s.to then core.poison(s.owner) else s.owner:tell(s) end
  end
end

-- The end of s (told unless its input ended before: it was told then).
local function finish(s, reason)
  if s.done then return end
  s.done = true
  if s.lst then
    s.lst.live = s.lst.live - 1
    s.lst = nil
  end
  if not s.input_ended then tell_end(s, reason) end
end

-- Bytes (or EOF) reached s.
local function arrive(s, bytes)
  if s.done or s.input_ended then return end
  if not s.to then
    s.early[#s.early + 1] = bytes
    return
  end
  if bytes == EOF then -- input ended: told, but writable until it closes
    if s.framing == "line" and #s.buf > 0 then
      s.to:tell({ tend = "data", data = (s.buf:gsub("\r$", "")) }, s.owner)
      s.buf = ""
    end
    s.input_ended = true
    return tell_end(s, "eof")
  end
  local out = {}
  local ok = frames_of(s, bytes, out)
  for _, f in ipairs(out) do s.to:tell({ tend = "data", data = f }, s.owner) end
  if not ok then
    finish(s, "frame_too_long")
    s:_send(EOF)
  end
end

-- Sends bytes from s to its peer over their link (in order).
function Sock:_send(bytes)
  local p = self.other
  if p == nil then return end
  local l = link(self.host, p.host)
  if blocked(l) or self.stall then
    if not self.stall then
      self.stall = {}
      stalled[#stalled + 1] = self
    end
    self.stall[#self.stall + 1] = bytes
    return
  end
  local now = core.now()
  local delay = l.latency + (l.jitter > 0 and core.random() * l.jitter or 0)
  local due = math.max(now + delay, self.last_due)
  self.last_due = due
  if due <= now and self.inflight == 0 then return arrive(p, bytes) end
  self.inflight = self.inflight + 1
  -- In flight in order: each timer delivers the oldest chunk (two chunks
  -- due alike may fire 1 ns apart the wrong way round: `due - now` rounds
  -- to whole ns differently for each).
  self.queue = self.queue or {}
  self.queue[#self.queue + 1] = bytes
  internal.after(due - now, function() -- a task of tend's own (hidden)
    self.inflight = self.inflight - 1
    arrive(p, table.remove(self.queue, 1))
  end)
end

-- Watches the owner: when it dies, the connection goes (the peer sees eof).
local function watch_owner(s)
  local owner = s.owner
  internal.after(0, function()
    if s.done then return end
    core.watch(owner)
    while true do
      local m = core.receive()
      if type(m) == "table" and m.tend == "terminated" then break end
    end
    if not s.done then
      finish(s, "closed")
      s:_send(EOF)
    end
  end)
end

function Sock:start(o)
  if self.done then return end
  self.owner, self.to = o.owner, o.to
  self.framing, self.max_line = o.framing or "line", o.max_line or 65536
  if self.lst then -- no longer the listener's to close
    self.lst.pending[self] = nil
  end
  watch_owner(self)
  local early = self.early
  self.early = {}
  for _, b in ipairs(early) do arrive(self, b) end
end

function Sock:write(data)
  if self.done then return false, "closed" end
  local framing = self.framing or "raw"
  if framing == "line" then data = data .. "\n"
  elseif framing == "length" then data = string.pack(">I4", #data) .. data end
  self:_send(data)
  return true
end

function Sock:close()
  if self.done then return end
  finish(self, "closed")
  self:_send(EOF)
end

function Sock:reset()
  if self.done then return end
  event(self.host, self.other and self.other.host, "reset")
  finish(self, "reset")
  if self.other then finish(self.other, "reset") end
end

function Sock:peer() return self.peer_host .. ":" .. self.peer_port end
function Sock:closed() return self.done end
function Sock:__tostring() return "SimSocket(" .. self:peer() .. ")" end

-- ------------------------------------------------------------ listeners

local Listener = {}
Listener.__index = Listener
Listener.__name = "tend.SimListener"
Listener.__tend_handle = true

function Listener:port() return self.port_n end
function Listener:refused() return self.refused_n end
function Listener:close()
  if not self.open then return end
  self.open = false
  local h = host(self.host)
  if h.ports[self.port_n] == self then h.ports[self.port_n] = nil end
  local pending = {}
  for s in pairs(self.pending) do pending[#pending + 1] = s end
  table.sort(pending, function(a, b) return a.port < b.port end)
  for _, s in ipairs(pending) do
    s.done = true
    if s.other then s:_send(EOF) end
  end
  self.pending = {}
end

local function listen_error(msg, reason)
  local e = core.error(K.ListenError, "tend.tcp.listen: " .. msg)
  e.reason = reason
  error(e, 0)
end

local tcp = {}
M.tcp = tcp

function tcp.listen(o)
  local name = norm(o.host)
  local h = host(name)
  local port = o.port
  if port == 0 then
    port = free_port(h)
  elseif h.ports[port] then
    listen_error(string.format("%s:%d: address already in use", o.host, port),
      "address already in use")
  end
  local l = setmetatable({ host = name, port_n = port, listener = o.listener,
    max = o.max_connections or 1024, live = 0, refused_n = 0, open = true,
    pending = {} }, Listener)
  h.ports[port] = l
  place_of[o.listener:path()] = name
  return l
end

local function connect_error(o, reason)
  local e = core.error(K.ConnectError, string.format("tend.tcp.connect: %s:%d: %s",
    o.host, o.port, reason))
  e.reason = reason
  error(e, 0)
end

-- Waits (the current actor sleeps) while the link is blocked, at most
-- until the deadline; true when it is open again. The deadline is a float
-- sum, an ulp off the clock's whole nanoseconds: less than half a
-- nanosecond left is the deadline reached (it times out on the nanosecond).
local function wait_open(l, deadline)
  while blocked(l) do
    local left = deadline - core.now()
    if left < 0.5e-9 then return false end
    core.sleep(math.min(left, 0.01))
  end
  return true
end

function tcp.connect(o)
  local src = o.from and norm(o.from) or host_of(core.self())
  local dst = norm(o.host)
  local l = link(src, dst)
  local deadline = core.now() + o.timeout
  if not wait_open(l, deadline) then connect_error(o, "timed out") end
  local rtt = 2 * l.latency + (l.jitter > 0 and core.random() * l.jitter or 0)
  if rtt > 0 then
    if rtt >= deadline - core.now() then
      core.sleep(math.max(0, deadline - core.now()))
      connect_error(o, "timed out")
    end
    core.sleep(rtt)
  end
  local h = host(dst)
  local lst = h.ports[o.port]
  if not (hosts[dst] and lst and lst.open) then connect_error(o, "connection refused") end
  local me = host(src)
  local a = new_sock(src, free_port(me), dst, o.port)
  local b = new_sock(dst, o.port, src, a.port)
  a.other, b.other = b, a
  if lst.live >= lst.max or not core.alive(lst.listener) then
    lst.refused_n = lst.refused_n + 1
    b.done = true
    b:_send(EOF)
    return a
  end
  lst.live = lst.live + 1
  b.lst = lst
  lst.pending[b] = true
  lst.listener:tell({ tend = "accept", socket = b, peer = src .. ":" .. a.port }, lst.listener)
  return a
end

-- ------------------------------------------------------------ faults

local function check_virtual(fn)
  if not core.virtual_time() then
    error(fn .. ": only on the simulated network (under --virtual-time)", 0)
  end
end

-- Sends what waited on links that are open again, in the order written.
local function flush_stalled()
  local waiting = stalled
  stalled = {}
  for _, s in ipairs(waiting) do
    local bytes = s.stall
    s.stall = nil
    for _, b in ipairs(bytes) do s:_send(b) end
  end
end

-- Sets one flag of the link between a and b (host names or refs), says
-- so in the trace, and lets what waited go when the link opens.
local function set_flag(verb, flag, on, a, b)
  local fn = "tend.chaos." .. verb
  check_virtual(fn)
  a, b = which(a, "a", fn), which(b, "b", fn)
  link(a, b)[flag] = on
  event(a, b, verb)
  if not on then flush_stalled() end
end

function M.partition(a, b) set_flag("partition", "partitioned", true, a, b) end
function M.repair(a, b) set_flag("repair", "partitioned", false, a, b) end
function M.hold(a, b) set_flag("hold", "held", true, a, b) end
function M.release(a, b) set_flag("release", "held", false, a, b) end

function M.latency(a, b, seconds, jitter)
  if not core.virtual_time() then
    error("tend.chaos.latency: only on the simulated network (under --virtual-time)", 0)
  end
  a, b = which(a, "a", "tend.chaos.latency"), which(b, "b", "tend.chaos.latency")
  if type(seconds) ~= "number" or seconds ~= seconds or seconds < 0 or seconds == math.huge then
    error("tend.chaos.latency: seconds: expected a number >= 0, got " .. tostring(seconds), 0)
  end
  if jitter ~= nil and (type(jitter) ~= "number" or jitter ~= jitter or jitter < 0
      or jitter == math.huge) then
    error("tend.chaos.latency: jitter: expected a number >= 0, got " .. tostring(jitter), 0)
  end
  local l = link(a, b)
  l.latency, l.jitter = seconds, jitter or 0
  event(a, b, string.format("latency %g s%s", seconds, jitter and jitter > 0
    and string.format(" +0-%g s", jitter) or ""))
end

-- heal(): every link as new (no partition, hold or latency); what waited
-- goes (tend.chaos.heal).
function M.heal()
  links = {}
  flush_stalled()
end

-- ------------------------------------------------------------ HTTP

local function http_error(reason, msg)
  local e = core.error(K.HttpError, "tend.http.request: " .. msg)
  e.reason = reason
  error(e, 0)
end

-- http_bind(spec, owner): what core.httpd_listen is to the real server
-- (lua/tend/http_server.lua runs the same server actor on either): binds
-- spec.host:spec.port (0: 80 when free, else the host's next free port)
-- for the server actor `owner`, and returns its handle. A client's request
-- is an ask of the owner ({ tend = "http", asked = true, ... }); the server
-- holds the asker on the handle (hold) and the request's actor answers it
-- through respond, or stream then send chunk by chunk (each chunk an ask
-- of the request's actor: { tend = "http_more", asked = true }). A bound
-- port whose owner is dead is free again.
local Handle = {}
Handle.__index = Handle

function Handle:port() return self.p end
function Handle:refused() return 0 end
function Handle:connections() return self.open_requests end
function Handle:hold(id, asker) self.held[id] = asker end

local function answer(self, id, value)
  local asker = self.held[id]
  if asker == nil then return false end
  self.held[id] = nil
  core.send(asker, value)
  return true
end

local PLAIN = { ["content-type"] = "text/plain; charset=utf-8" }

-- headers true: content-type text/plain alone (as the real server's).
function Handle:respond(id, status, headers, body)
  if headers == true then headers = PLAIN end
  self.open_requests = math.max(0, self.open_requests - 1)
  return answer(self, id, { status = status, headers = headers, body = body })
end

function Handle:stream(id, status, headers, actor)
  return answer(self, id, { status = status, headers = headers, stream = actor })
end

function Handle:send(id, chunk, failed)
  if chunk == nil or failed then self.open_requests = math.max(0, self.open_requests - 1) end
  return answer(self, id, { chunk = chunk, failed = failed == true })
end

-- The server stops: what waits gets 503 (the real server's answer too).
function Handle:close()
  if servers[self.key] == self then servers[self.key] = nil end
  local ids = {}
  for id in pairs(self.held) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do
    answer(self, id, { status = 503, headers = { ["content-type"] = "text/plain; charset=utf-8" },
      body = "Service Unavailable\n" })
  end
end

function M.http_bind(spec, owner)
  local name = norm(spec.host)
  local h = host(name)
  local port = spec.port
  local function taken(p)
    local s = servers[name .. ":" .. p]
    return s ~= nil and core.alive(s.owner)
  end
  if port == 0 then
    port = 80
    if taken(port) then repeat port = free_port(h) until not taken(port) end
  elseif taken(port) then
    local e = core.error(K.ListenError, string.format("tend.http.serve: %s:%d: address already "
      .. "in use", spec.host, port))
    e.reason = "address already in use"
    error(e, 0)
  end
  local key = name .. ":" .. port
  local handle = setmetatable({ p = port, key = key, owner = owner, held = {},
    open_requests = 0, next_id = 0, max_body = spec.max_body }, Handle)
  servers[key] = handle
  return handle
end

-- The simulated client reading a streamed body: a chunk per ask of the
-- request's actor (it pulls as it does for H2O), each crossing the link
-- (its one-way latency) before the next.
local function read_stream(actor, id, l, url, deadline)
  local parts = {}
  while true do
    local left = deadline - core.now()
    local ok, got = pcall(core.ask, actor, { tend = "http_more", id = id, asked = true },
      math.max(left, 1e-9))
    if not ok or got.failed then
      http_error("partial body", url .. ": the body ended short (" .. (ok and "its pull failed"
        or "its actor ended") .. ")")
    end
    if got.chunk == nil then return table.concat(parts) end
    local delay = l.latency + (l.jitter > 0 and core.random() * l.jitter or 0)
    if delay > 0 then core.sleep(delay) end
    parts[#parts + 1] = got.chunk
  end
end

local function timed_out(o, timeout)
  http_error("timed out", string.format("%s: timed out after %g s", o.url, timeout))
end

-- What tend.http.request does under the virtual clock (opts are checked):
-- the request crosses the link (a round trip) and is an ask of the server
-- actor, which runs it as the real server does.
function M.http_request(o)
  local scheme, hostname, port, path = o.url:match("^(https?)://([^/:]+):?(%d*)(.*)$")
  if not scheme then http_error("bad url", "url: cannot read " .. o.url) end
  port = tonumber(port) or (scheme == "https" and 443 or 80)
  local dst, src = norm(hostname), host_of(core.self())
  local server = servers[dst .. ":" .. port]
  local function none()
    http_error("no simulated server", string.format("no simulated server at %s:%d (under "
      .. "--virtual-time tend.http reaches only tend.http.serve servers)", hostname, port))
  end
  if not server or not core.alive(server.owner) then none() end
  local timeout = o.timeout or 30
  local l = link(src, dst)
  local deadline = core.now() + timeout
  if not wait_open(l, deadline) then timed_out(o, timeout) end
  local rtt = 2 * l.latency + (l.jitter > 0 and core.random() * l.jitter or 0)
  if rtt >= deadline - core.now() then
    core.sleep(math.max(0, deadline - core.now()))
    timed_out(o, timeout)
  end
  if rtt > 0 then core.sleep(rtt) end
  local text = "text/plain; charset=utf-8"
  if #(o.body or "") > server.max_body then
    return { status = 413, headers = { ["content-type"] = text }, body = "Payload Too Large\n" }
  end
  local target = path ~= "" and path or "/"
  local p, q = target:match("^([^?]*)%?(.*)$")
  local headers = {}
  for k, v in pairs(o.headers or {}) do headers[tostring(k):lower()] = tostring(v) end
  server.next_id = server.next_id + 1
  server.open_requests = server.open_requests + 1
  local id = server.next_id
  local ok, got = pcall(core.ask, server.owner, { tend = "http", asked = true, id = id,
    method = o.method or "GET", path = p or target, query = q, headers = headers,
    body = o.body or "", peer = src, version = "1.1", scheme = scheme },
    math.max(deadline - core.now(), 1e-9))
  if not ok then
    server.held[id] = nil
    if type(got) == "table" and got.kind == "Timeout" then timed_out(o, timeout) end
    none()
  end
  local out = {}
  for k, v in pairs(got.headers or {}) do out[tostring(k):lower()] = tostring(v) end
  local body = got.body
  if got.stream then
    local hs = require "tend.http_server"
    out = hs.stream_headers(out)
    if got.status == 200 then out["transfer-encoding"] = "chunked" else out.connection = "close" end
    body = read_stream(got.stream, id, l, o.url, deadline)
  end
  return { status = got.status, headers = out, body = body }
end


return M
