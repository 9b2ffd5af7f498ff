-- tend.nats: nodes over a NATS server (the C client: core.nats_*, see
-- src/api/lnats.c). start{...} connects (or starts a local nats-server
-- first, with nats = "local"), then makes this process a node on that
-- connection (lua/tend/node.lua). When the server goes away, every other
-- node is down for this one (watches of their actors fire
-- "noconnection"); local work goes on, and the nodes are up again, their
-- refs working again, on their first heartbeat after the connection is
-- back.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local node = require "tend.node"
local internal = require "tend.internal"

local M = {}

local OPTS = { name = true, nats = true, timeout = true, retry = true, limit = true }

local function check(opts)
  if type(opts) ~= "table" then
    error("tend.node.start: expected a table {name = ..., nats = ...}, got " .. type(opts), 3)
  end
  local unknown = internal.check_keys(opts, OPTS, "tend.node.start")
  if unknown then error(unknown, 3) end
  if type(opts.nats) ~= "string" or not (opts.nats == "local" or opts.nats:match("^nats://")) then
    error("tend.node.start: nats: expected a nats:// URL or \"local\", got "
      .. (type(opts.nats) == "string" and string.format("%q", opts.nats) or type(opts.nats)), 3)
  end
  if opts.timeout ~= nil and (type(opts.timeout) ~= "number" or not (opts.timeout > 0)) then
    error("tend.node.start: timeout: expected seconds > 0, got " .. tostring(opts.timeout), 3)
  end
  if opts.limit ~= nil and (math.type(opts.limit) ~= "integer" or opts.limit < 64) then
    error("tend.node.start: limit: expected bytes (an integer >= 64), got " .. tostring(opts.limit), 3)
  end
end

-- Is there a file `program` in a directory of PATH?
local function in_path(program)
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    local f = io.open(dir .. "/" .. program, "r")
    if f then
      f:close()
      return true
    end
  end
  return false
end

-- A NatsError about the machine, not about a line of the script: printed
-- as one line (no place, no traceback).
local function setup_error(msg)
  local e = core.error(K.NatsError, msg)
  e.where, e.traceback = nil, false
  return e
end

-- The port a nats-server's log says it listens on (or nil), and the log.
local function listening_port(log)
  local f = io.open(log, "r")
  if not f then return nil, "" end
  local text = f:read("a")
  f:close()
  return tonumber(text:match("Listening for client connections on [^\n]-:(%d+)\n")), text
end

-- The last n lines of text, each indented.
local function last_lines(text, n)
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = "  " .. line end
  return table.concat(lines, "\n", math.max(1, #lines - n + 1))
end

-- nats = "local" (and tend cluster): a nats-server child of /system on
-- 127.0.0.1 with JetStream; returns its URL and its ref. Its store and its
-- output (server.log) are in a private directory (core.nats_dir) that tend
-- removes when it exits. The server picks its port itself (-p -1: no port
-- chosen here can be taken meanwhile); tend reads it from the server's
-- "Listening for client connections on" line, and a restart of the server
-- binds that port again. The server runs Go with one processor
-- (GOMAXPROCS=1): it shares the machine's cores with the nodes, and its
-- goroutines then hand a message on within one thread instead of waking
-- others (a remote pingpong through it: 6.4 k -> 8.9 k messages per
-- second on 2 cores). A missing nats-server, or one that does not listen
-- within 10 s, is a NatsError (with what the server wrote).
function M.local_server()
  if not in_path("nats-server") then
    error(setup_error("nats-server not found in PATH (scripts/deps installs it)"), 0)
  end
  local process = require "tend.process"
  local dir = core.nats_dir()
  local log = dir .. "/server.log"
  local port, starts = -1, 0
  local function server(ctx)
    starts = starts + 1
    return process {
      cmd = { "nats-server", "-a", "127.0.0.1", "-p", tostring(port), "-js", "-sd", dir },
      env = { GOMAXPROCS = "1" }, stdout = log, stderr = log,
      ready = port > 0 and { tcp = port } or nil, ready_timeout = 10,
    }(ctx)
  end
  local ref = core.node_spawn(server, { name = "nats-server" })
  local deadline = core.now() + 10
  while true do
    local p, text = listening_port(log)
    if p then
      port = p
      return "nats://127.0.0.1:" .. port, ref
    end
    if starts > 1 or not core.alive(ref) or core.now() >= deadline then
      core.stop(ref)
      error(setup_error(string.format("nats-server did not start%s; it wrote:\n%s",
        core.now() >= deadline and " within 10 s" or "",
        text == "" and "  (nothing)" or last_lines(text, 20))), 0)
    end
    core.sleep(0.02)
  end
end

local function connect(url, name, retry, deadline)
  local delay = deadline and 0.05 or 0.25
  while true do
    local ok, conn = pcall(core.nats_connect, {
      url = url, name = "tend-" .. name, timeout = 2, reconnect = true,
      on_status = function(status)
        if status == "disconnected" then
          node.transport_lost()
        elseif status == "reconnected" then
          node.transport_back()
        end
      end,
    })
    if ok then return conn end
    if deadline and core.now() >= deadline then error(conn, 0) end
    if not (retry or deadline) then error(conn, 0) end
    if not deadline then
      core.log("warn", "cannot reach %s (%s); trying again in %g s", url,
        tostring(type(conn) == "table" and conn.reason or conn), delay)
    end
    core.sleep(delay)
    if not deadline then delay = math.min(delay * 2, 5) end
  end
end

-- Is node `name` taken by a live node? Asks on its subject and waits a
-- little for an answer.
local function taken(conn, name)
  local inbox = "tend.probe." .. name .. "." .. core.random(1, 1 << 30)
  local answered = false
  -- (the server says "no responders" with an empty message: no answer)
  local sid = conn:subscribe(inbox, function(data) if #data > 0 then answered = true end end)
  local probe = core.wire_batch(core.wire_envelope({ core.wire_kind.PROBE }))
  conn:publish(core.wire_subject.to_node .. name, probe, inbox)
  local t = 0
  while not answered and t < 0.5 do
    core.sleep(0.05)
    t = t + 0.05
  end
  conn:unsubscribe(sid)
  return answered
end

-- The key-value store of the server (JetStream), for tend.global:
-- kv(op, args) waits (as an ask) and answers get -> value, revision | nil;
-- create -> revision | nil, "exists"; update -> revision | nil,
-- "wrong revision"; put -> revision; delete, bucket -> true; keys -> list.
-- Raises NatsError when the server cannot answer.
function M.kv(op, args)
  local r = M.conn:kv_raw(op, args)
  if op == "get" then return r.value, r.revision end
  if r.reason then return nil, r.reason end
  if op == "keys" then return r.keys end
  return r.revision or true
end

function M.start(opts)
  check(opts)
  if core.virtual_time() then
    error(core.error(K.NodeError, "tend.node.start: a node on NATS cannot run under the virtual clock "
      .. "(--virtual-time): simulate the nodes with tend.sim.nodes"), 2)
  end
  if node.running() then
    local e = core.error(K.NodeError, "tend.node.start: this process is node " .. node.name() .. " already")
    error(e, 2)
  end
  local url = opts.nats == "local" and M.local_server() or opts.nats
  -- a local server takes a moment to listen: tried for up to 10 s
  local conn = connect(url, opts.name, opts.retry, opts.nats == "local" and core.now() + 10 or nil)
  if taken(conn, opts.name) then
    conn:close()
    local e = core.error(K.NodeError, string.format(
      "tend.node.start: the name '%s' is taken by a live node on %s", opts.name, url))
    error(e, 2)
  end
  M.url = url
  M.conn = conn
  return node.start_on({
    publish = function(subject, data, reply) return conn:publish(subject, data, reply) end,
    send = function(subject, data) return conn:send(subject, data) end,
    subscribe = function(subject, fn) return conn:subscribe(subject, fn) end,
    close = function() conn:close() end,
    kv = M.kv,
  }, { name = opts.name, timeout = opts.timeout, limit = opts.limit })
end

-- tend.node.peer(name [, opts]) -> process ref: another node of this
-- program on this node's NATS server (OTP's peer:start): `tend --node
-- name --nats URL` running opts.script with opts.args, or opts.code (a
-- chunk, default empty), as an OS process child of the caller (or of
-- /user), stdout and stderr inherited. Waits until the node is up
-- (opts.wait seconds, default 10; NodeError when it is not). opts.timeout
-- is its --node-timeout (default this node's); opts.process_name names
-- the process actor (/user/<process_name>).
function M.peer(name, opts)
  opts = opts or {}
  if type(name) ~= "string" or not name:match("^[%w_-]+$") then
    error("tend.node.peer: name: expected letters, digits, '_' or '-', got " .. tostring(name), 2)
  end
  if not M.url then
    error(core.error(K.NodeError, "tend.node.peer: this process is no node (start one with --node NAME)"), 2)
  end
  local argv = { core.node_exe(), "--log-level", opts.log_level or "warn", "--node", name, "--nats", M.url,
    "--node-timeout", tostring(opts.timeout or require("tend.node").timeout()) }
  if opts.script then
    argv[#argv + 1] = opts.script
    for _, a in ipairs(opts.args or {}) do argv[#argv + 1] = tostring(a) end
  else
    argv[#argv + 1] = "-e"
    argv[#argv + 1] = opts.code or ""
  end
  -- a node of that name that is still listed (one just stopped, not yet
  -- timed out) is not the new one: wait for another incarnation
  local old = node.service(name)
  local spec = require("tend.process") { cmd = argv, stdout = "inherit", stderr = "inherit" }
  local ref = core.spawn(spec, { name = opts.process_name, restart = "temporary" })
  local waited = 0
  while true do
    local svc = node.service(name)
    if svc and svc ~= old then return ref end
    if waited >= (opts.wait or 10) then
      error(core.error(K.NodeError, string.format("tend.node.peer: node %s was not up within %g s", name, waited)), 2)
    end
    core.sleep(0.02)
    waited = waited + 0.02
  end
end

return M
