-- tend.tcp: TCP servers and clients as actors of the tree.
--
-- A listener is an actor owning a listening socket; each connection it
-- accepts is its child (restart "temporary") running the user's handler,
-- which gets { tend = "data", data = frame } per line or frame and, last,
-- { tend = "closed", reason = ... }, then stops. A client connection
-- (tend.tcp.connect) is an actor too, a child of the caller, whose data goes
-- to the caller (or `to`).
--
-- The sockets come from a transport: the real one (core.tcp_listen,
-- core.tcp_connect: libuv, src/runtime/tcp*.c) or, under --virtual-time,
-- the simulated network (tend.simnet). Both give sockets with the same
-- methods (start, write, close, reset, peer, closed) and listeners with
-- (port, refused, close); a transport sends a listener actor
-- { tend = "accept", socket = S, peer = "host:port" } per connection, gives
-- `to` the data and the closed message, and then ends the owner: a
-- PoisonPill when the owner reads its own data (a handler), or the socket
-- itself as a message (the "done token") when the data goes elsewhere.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local internal = require "tend.internal"
local listening = require "tend.listening"

local M = {}

local sockets = setmetatable({}, { __mode = "k" }) -- connection ref -> socket

local real = {
  listen = function(o) return core.tcp_listen(o) end,
  connect = function(o) return core.tcp_connect(o) end,
}

local function transport()
  if core.virtual_time() then return require("tend.simnet").tcp end
  return real
end

local FRAMINGS = { line = true, length = true, raw = true }
local LISTEN_KEYS = { host = true, port = true, handler = true, framing = true,
  max_connections = true, backlog = true, max_line = true }
local CONNECT_KEYS = { host = true, port = true, framing = true, timeout = true,
  max_line = true, to = true, from = true }

local function fail(fn, opt, expected, got)
  error(string.format("%s: %s: expected %s, got %s", fn, opt, expected, got), 0)
end

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "number" then return tostring(v) end
  return type(v)
end

local function int_in(fn, opts, k, lo, hi, default, what)
  local v = opts[k]
  if v == nil then return default end
  if math.type(v) ~= "integer" or v < lo or (hi and v > hi) then
    fail(fn, k, what, show(v))
  end
  return v
end

-- Checks the options common to both ends; returns the spec.
local function check(opts, fn, keys)
  if type(opts) ~= "table" then
    error(string.format("%s: options: expected a table, got %s", fn, type(opts)), 0)
  end
  local unknown = internal.check_keys(opts, keys, fn)
  if unknown then error(unknown, 0) end
  local spec = {}
  spec.host = opts.host
  if spec.host ~= nil and (type(spec.host) ~= "string" or spec.host == "") then
    fail(fn, "host", "a host name or address (a non-empty string)", show(spec.host))
  end
  spec.framing = opts.framing or "line"
  if not FRAMINGS[spec.framing] then
    fail(fn, "framing", '"line", "length" or "raw"', show(spec.framing))
  end
  spec.max_line = int_in(fn, opts, "max_line", 1, 1 << 30, 65536,
    "a positive integer (bytes)")
  return spec
end

local function check_listen(opts, fn)
  local spec = check(opts, fn, LISTEN_KEYS)
  spec.host = spec.host or "127.0.0.1"
  spec.port = int_in(fn, opts, "port", 0, 65535, 0, "an integer 0-65535")
  if type(opts.handler) ~= "function" then
    fail(fn, "handler", "a factory function(ctx, peer) returning a behavior",
      show(opts.handler))
  end
  spec.handler = opts.handler
  spec.max_connections = int_in(fn, opts, "max_connections", 1, nil, 1024,
    "a positive integer")
  spec.backlog = int_in(fn, opts, "backlog", 1, 65535, 128, "an integer 1-65535")
  return spec
end

local function check_connect(opts, fn)
  local spec = check(opts, fn, CONNECT_KEYS)
  if spec.host == nil then fail(fn, "host", "a host name or address", "nil") end
  if opts.port == nil then fail(fn, "port", "an integer 1-65535", "nil") end
  spec.port = int_in(fn, opts, "port", 1, 65535, nil, "an integer 1-65535")
  local t = opts.timeout
  if t == nil then
    t = 5
  elseif type(t) ~= "number" or t ~= t or t <= 0 then
    fail(fn, "timeout", "seconds > 0", show(t))
  end
  spec.timeout = t
  if opts.to ~= nil and not core.tcp_is_ref(opts.to) then
    fail(fn, "to", "an actor ref", show(opts.to))
  end
  spec.to = opts.to
  if opts.from ~= nil and (type(opts.from) ~= "string" or opts.from == "") then
    fail(fn, "from", "a simulated host name", show(opts.from))
  end
  spec.from = opts.from
  return spec
end

-- Runs a checker; its error is raised at the caller of the caller.
local function checked(checker, opts, fn)
  local ok, spec = pcall(checker, opts, fn)
  if not ok then error(spec, 3) end
  return spec
end

-- ------------------------------------------------------------ servers

-- The actor of one accepted connection: the handler's behavior, with the
-- socket reading into its own mailbox.
local function connection(S, peer, spec)
  return function(ctx)
    sockets[ctx.self] = S
    S:start({ owner = ctx.self, to = ctx.self, framing = spec.framing,
              max_line = spec.max_line })
    return spec.handler(ctx, peer)
  end
end

-- A listening socket on spec's host and port, its accepts sent to owner.
local function bind(spec, owner)
  return transport().listen({ host = spec.host, port = spec.port,
    backlog = spec.backlog, max_connections = spec.max_connections, listener = owner })
end

-- The listener's factory (binding in the caller: tend.listening).
local function listener(spec, handoff)
  return function(ctx)
    local lst, close = listening.take(handoff, bind, spec, ctx.self)
    handoff = nil
    return {
      receive = function(_, msg, c)
        if msg == "port" then c:reply(lst():port()) return end
        if msg == "refused" then c:reply(lst():refused()) return end
        if msg == "connections" then c:reply(#c:children()) return end
        if type(msg) == "table" and msg.tend == "accept" then
          c:spawn(connection(msg.socket, msg.peer, spec), { restart = "temporary" })
          return
        end
        return core.unhandled
      end,
      post_stop = close,
    }
  end
end

-- tend.tcp.server{...} -> a factory for tend.spawn, ctx:spawn, children.
function M.server(opts)
  return listener(checked(check_listen, opts, "tend.tcp.server"))
end

-- tend.tcp.listen{...} [, spawn opts] -> the listener's ref, a child of
-- the caller (or of /user for a task such as the main chunk).
function M.listen(opts, spawn_opts)
  local spec = checked(check_listen, opts, "tend.tcp.listen")
  local ref = listening.listen(function(handoff) return listener(spec, handoff) end, bind,
    spec, spawn_opts, "tend.tcp.listen")
  return ref
end

-- ------------------------------------------------------------ clients

-- The actor of a client connection: it holds the socket (closed when it
-- dies) and stops when the socket is done.
local function client(S, caller, watch)
  return function(ctx)
    if watch then ctx:watch(caller) end
    return function(msg)
      if msg == S then return core.stopped end
      if type(msg) == "table" and msg.tend == "terminated" then
        S:close()
        return core.stopped
      end
      return core.unhandled
    end
  end
end

-- tend.tcp.connect{...} -> the connection's ref (yields until connected).
function M.connect(opts)
  local spec = checked(check_connect, opts, "tend.tcp.connect")
  local caller = core.self()
  if caller == nil then error("tend.tcp.connect: only inside an actor (it waits)", 2) end
  local S = transport().connect({ host = spec.host, port = spec.port,
    timeout = spec.timeout, from = spec.from })
  -- a task (the main chunk) has no children: its connection lives under
  -- /user and watches it
  local watch = not core.tcp_can_parent()
  local conn = core.tcp_spawn(client(S, caller, watch), nil, "tend.tcp.connect")
  sockets[conn] = S
  S:start({ owner = conn, to = spec.to or caller, framing = spec.framing,
            max_line = spec.max_line })
  return conn
end

-- ------------------------------------------------------------ writing

local function socket(conn, fn)
  local S = sockets[conn]
  if S == nil then
    if not core.tcp_is_ref(conn) then
      error(string.format("%s: conn: expected a connection ref, got %s", fn, show(conn)), 3)
    end
    local e = core.error(K.NotConnected, string.format("%s: %s is not a connection "
      .. "(or it is closed)", fn, tostring(conn)))
    error(e, 3)
  end
  return S
end

-- tend.tcp.write(conn, data): sends data, framed; waits (yields) while the
-- connection's queue is over its mark.
function M.write(conn, data)
  if type(data) ~= "string" then
    error(string.format("tend.tcp.write: data: expected a string, got %s", show(data)), 2)
  end
  return socket(conn, "tend.tcp.write"):write(data)
end

-- tend.tcp.close(conn): sends what is queued, then closes.
function M.close(conn)
  local S = sockets[conn]
  if S then S:close() end
end

-- tend.tcp.peer(conn) -> "host:port" of the other end.
function M.peer(conn)
  return socket(conn, "tend.tcp.peer"):peer()
end

-- The socket of a connection ref (tend.chaos.reset), or nil.
function M.socket_of(conn) return sockets[conn] end

core.tcp_ctx_methods({
  write = function(ctx, data)
    if type(data) ~= "string" then
      error(string.format("ctx:write: data: expected a string, got %s", show(data)), 2)
    end
    return socket(ctx.self, "ctx:write"):write(data)
  end,
  close = function(ctx) return M.close(ctx.self) end,
})

return M
