-- tend.node: this process as one node among others. Nodes talk over a
-- transport that carries bytes on subjects (NATS: lua/tend/nats.lua; the
-- simulated nodes of --virtual-time: lua/tend/simnodes.lua); messages are
-- msgpack (runtime/nodes/codec.h), in envelopes and batches whose bytes
-- core.wire_* make and read (runtime/nodes/wire.h). No membership protocol of our own: each node
-- publishes a heartbeat every timeout/4 seconds on one subject, and a node
-- is up from its first heartbeat until it misses them for `timeout`
-- seconds (Erlang's net_ticktime idea), or until its transport is lost.
--
-- A ref to another node's actor is a proxy (runtime/remote.h): sending to
-- it calls route() below, which encodes and publishes. All of one node's
-- messages to another leave on one subject over one connection, so they
-- arrive in the order they were sent (Erlang's guarantee between two
-- processes). While the target's node is down they are dropped and
-- counted, each with a "node" trace event (Erlang: no buffering across a
-- lost connection). When a proxy is made, its node is asked to watch the
-- actor (one WATCH); its death comes back as DOWN with the reason, which
-- ends the proxy: local DeathWatch and asks held by it then behave as for
-- a local actor. A node that goes down disconnects its proxies (their
-- watches and held asks fail with "noconnection"); when the same
-- incarnation is up again they work again, the same refs, and are watched
-- again; a new incarnation ends the old one's proxies for good.
local core = require "tend.core"
local E = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)

local M = {}

local K = core.wire_kind -- the kinds of envelope (runtime/nodes/wire.h)
local MSG, WATCH, DOWN, HB, PROBE, HELLO, PG = K.MSG, K.WATCH, K.DOWN, K.HB, K.PROBE, K.HELLO, K.PG
local TO_NODE, HEARTBEATS = core.wire_subject.to_node, core.wire_subject.heartbeats

local S -- the running node, or nil

-- tend.pg's groups span nodes (lua/tend/pg.lua): it is told when a node
-- goes up or down and given its PG frames; M.pg_send sends one.
local pg = {} -- up(node, inc), down(node, inc), frame(node, inc, msg), reset()

local function now() return core.now() end

local function fail(kind, msg, level)
  local e = core.error(kind, msg)
  error(e, (level or 1) + 1)
end

-- Envelopes: a header (a small list, encoded) and, for MSG and PG, the
-- message encoded apart so that a refusal names the message's own places.
local function envelope(header, body)
  return core.wire_envelope(header, body, S.limit)
end

-- To a node's subject, as an envelope of the batch of this pass of the
-- loop (transport.send), so that many messages share one NATS message.
local function publish(node, header, body)
  S.transport.send(TO_NODE .. node, envelope(header, body))
end

local function node_path(name) return "/node/" .. name end

local function event(name, detail, to)
  core.node_event(node_path(name), detail, to and node_path(to) or nil)
end

-- ------------------------------------------------------------ proxies

local function forget(p)
  local key = S.key_of[p]
  if not key then return end
  S.key_of[p] = nil
  S.coords_of[p] = nil
  S.proxies[key] = nil
  local c = key:match("^[^\0]*")
  if S.by_node[c] then S.by_node[c][p] = nil end
  S.asks[p] = nil
end

local function end_proxy(p, reason)
  forget(p)
  core.remote_end(p, reason)
end

-- The proxy for an actor of another node (made once per actor while it
-- lives: refs to it are equal and work as table keys).
local function proxy_for(node, inc, id, gen, path, kind)
  local key = node .. "\0" .. inc .. "\0" .. id .. "\0" .. gen
  local p = S.proxies[key]
  if p then return p end
  local n = S.nodes[node]
  p = core.remote_new(node, inc, id, gen, path, kind)
  -- an earlier incarnation (that node restarted): dead for good
  if n and n.inc > inc then
    core.remote_end(p, "noconnection")
    return p
  end
  S.proxies[key] = p
  S.key_of[p] = key
  S.coords_of[p] = { node, inc, id, gen, path, kind } -- (route's, kept)
  S.by_node[node] = S.by_node[node] or {}
  S.by_node[node][p] = key
  if S.fresh then S.fresh[#S.fresh + 1] = p end -- (an envelope's header: see open)
  if kind == 1 then
    S.asks[p] = now() -- a pending ask there: one reply, then it goes
  elseif not (n and n.up and n.inc == inc) then
    -- its node is not connected now: noconnection at once for a watch or
    -- an ask (Erlang), and the same ref works once that node is up
    core.remote_disconnect(p, "noconnection")
  elseif not S.fresh then
    publish(node, { WATCH, p, S.name })
  end
  return p
end

-- The header of a MSG envelope, filled for each (encoded at once, then
-- emptied: no table a message).
local msg_header = { MSG }

-- A message to a proxy (core.remote_hooks): encoded and published, or
-- dropped while its node is down. Raises when it cannot travel.
local function route(p, msg, sender)
  if not S then return end -- the node stopped: nowhere to go
  local c = S.coords_of[p] or core.remote_coords(p)
  if not c then return end
  local node = c[1]
  local n = S.nodes[node]
  local body = core.codec_encode(msg, S.limit)
  -- (a reply goes out even to a node not seen up yet: its ask came from
  -- it, so it saw this node up, and its heartbeat may simply be later)
  if not (n and n.up and n.inc == c[2]) and c[6] ~= 1 then
    S.dropped = S.dropped + 1
    event(node, "drop: node down", S.name)
    return
  end
  msg_header[2], msg_header[3] = p, sender
  publish(node, msg_header, body)
  msg_header[2], msg_header[3] = nil, nil
  S.sent = S.sent + 1
  if c[6] == 1 then end_proxy(p, "normal") end
end

-- ------------------------------------------------------------ up and down

local function tell_monitors(name, what)
  local m = S.monitors[name]
  if not m then return end
  local refs = {}
  for r in pairs(m) do refs[#refs + 1] = r end
  table.sort(refs, function(a, b) return tostring(a) < tostring(b) end)
  for _, r in ipairs(refs) do
    if core.alive(r) then
      r:send({ tend = what, node = name })
    else
      m[r] = nil
    end
  end
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

-- The proxies of node `name` whose incarnation passes keep(inc), sorted
-- by key (a replayed run handles them in the same order).
local function proxies_of(name, keep)
  local list = {}
  for p, key in pairs(S.by_node[name] or {}) do
    if keep(tonumber(key:match("^[^\0]*\0([^\0]*)"))) then list[#list + 1] = { key, p } end
  end
  table.sort(list, function(a, b) return a[1] < b[1] end)
  return list
end

local function node_down(name, why)
  local n = S.nodes[name]
  if not n or not n.up then return end
  n.up = false
  n.service = nil
  event(name, "down: " .. why)
  -- its proxies of this incarnation are disconnected: their watches fire
  -- noconnection (once: they are gone) and the asks they hold fail; the
  -- refs live on for this incarnation's return. Pending asks' reply
  -- addresses end. Those of a newer incarnation (made from the very
  -- heartbeat that takes this one down as "restarted") stay as they are.
  for _, e in ipairs(proxies_of(name, function(inc) return inc <= n.inc end)) do
    if S.asks[e[2]] then
      end_proxy(e[2], "noconnection")
    else
      core.remote_disconnect(e[2], "noconnection")
    end
  end
  for _, w in pairs(S.watched) do w[name] = nil end
  if pg.down then pg.down(name, n.inc) end
  tell_monitors(name, "nodedown")
end

local function node_up(name, inc, service)
  local n = S.nodes[name]
  if n and n.up and n.inc == inc then
    n.last = now()
    return
  end
  if n and n.up then node_down(name, "restarted") end -- a new incarnation
  if n and n.inc < inc then -- the refs of the old one are dead for good
    for _, e in ipairs(proxies_of(name, function(i) return i < inc end)) do
      end_proxy(e[2], "noconnection")
    end
  end
  n = { inc = inc, up = true, last = now(), service = service }
  S.nodes[name] = n
  event(name, "up")
  -- the refs of this incarnation work again (the same refs: a partition
  -- healed, NATS came back), and their actors are watched again (a death
  -- meanwhile comes back as DOWN)
  for _, e in ipairs(proxies_of(name, function(i) return i == inc end)) do
    core.remote_reconnect(e[2])
    if not S.asks[e[2]] then publish(name, { WATCH, e[2], S.name }) end
  end
  if pg.up then pg.up(name, inc) end
  tell_monitors(name, "nodeup")
end

local function heartbeat(kind)
  S.transport.publish(HEARTBEATS, envelope({ kind or HB, S.name, S.inc, S.service }))
end

-- A reason as it travels: a tend error as {error = {kind, message}} (it
-- is rebuilt on arrival), another table as it is when it can travel, else
-- its text.
local function reason_value(r)
  if type(r) == "table" and type(r.kind) == "string" then
    return { error = { r.kind, tostring(r.message) } }
  elseif type(r) == "table" then
    local ok = pcall(core.codec_encode, r, S.limit)
    return ok and r or tostring(r)
  end
  return r
end

local function reason_of(v)
  if type(v) == "table" and type(v.error) == "table" then
    return core.error(tostring(v.error[1]), tostring(v.error[2]))
  end
  return v
end

-- ------------------------------------------------------------ arrivals

local function is_ref(v) return (pcall(core.alive, v)) end

local function is_name(v) return type(v) == "string" and v:match("^[%w_-]+$") ~= nil end

-- A value a peer sent, as an error names it.
local function got(v)
  if type(v) == "string" then return string.format("%q", #v > 40 and v:sub(1, 40) .. "..." or v) end
  if type(v) == "number" or type(v) == "boolean" or is_ref(v) then return tostring(v) end
  return type(v) == "nil" and "nothing" or "a " .. type(v)
end

local function refuse(what) core.log("warn", "a message from another node was refused: %s", what) end

local function on_hb(data)
  local ok, h = pcall(function()
    return (core.wire_open(data))
  end)
  if not ok or type(h) ~= "table" or not (h[1] == HB or h[1] == HELLO) or not is_name(h[2])
      or math.type(h[3]) ~= "integer" or (h[4] ~= nil and not is_ref(h[4])) then
    refuse("a malformed heartbeat")
    return
  end
  local name, inc = h[2], h[3]
  if name == S.name then return end
  -- a late heartbeat of an older incarnation (still on its way when the
  -- node restarted) says nothing: that node is gone for good
  if S.nodes[name] and inc < S.nodes[name].inc then return end
  local was_up = S.nodes[name] and S.nodes[name].up and S.nodes[name].inc == inc
  node_up(name, inc, h[4])
  -- so it sees us at once (before what we send it next: when both came
  -- back together, their HELLOs may have found no one listening)
  if not was_up then heartbeat() end
end

-- What is wrong with an envelope's header h (a peer's bytes are untrusted:
-- every field of every kind is checked before use), or nil.
local function malformed(h)
  if type(h) ~= "table" then return "a header: expected a list, got " .. got(h) end
  local kind = h[1]
  if kind == MSG then
    if not is_ref(h[2]) or core.remote_coords(h[2]) then
      return "MSG: target: expected a ref of this node, got " .. got(h[2])
    end
    if h[3] ~= nil and not is_ref(h[3]) then return "MSG: sender: expected a ref or nil, got " .. got(h[3]) end
  elseif kind == WATCH then
    if not is_ref(h[2]) or core.remote_coords(h[2]) then
      return "WATCH: target: expected a ref of this node, got " .. got(h[2])
    end
    if not is_name(h[3]) then return "WATCH: node: expected a node name, got " .. got(h[3]) end
  elseif kind == DOWN then
    if not is_ref(h[2]) then return "DOWN: ref: expected a ref, got " .. got(h[2]) end
  elseif kind == PG then
    if not is_name(h[2]) then return "PG: node: expected a node name, got " .. got(h[2]) end
    if math.type(h[3]) ~= "integer" then return "PG: incarnation: expected an integer, got " .. got(h[3]) end
  elseif kind ~= PROBE then
    return string.format("kind: expected %d (MSG), %d (WATCH), %d (DOWN), %d (PROBE) or %d (PG), got %s",
      MSG, WATCH, DOWN, PROBE, PG, got(kind))
  end
end

-- An envelope's header is decoded with the WATCH of each new proxy held
-- back (S.fresh): a malformed envelope leaves no proxy behind, and a
-- DOWN's ref never asks for a watch (a DOWN for a ref that is no proxy
-- here would otherwise bring a WATCH, whose DOWN brings a WATCH...).
-- Returns the header, the body and what is wrong (or nil).
local function open(data)
  local fresh = S.spare or {} -- (one list, reused: no table a message)
  S.spare = nil
  S.fresh = fresh
  local ok, h, body = pcall(core.wire_open, data)
  S.fresh = nil
  local why = not ok and (type(h) == "table" and tostring(h.message) or tostring(h)) or malformed(h)
  for _, p in ipairs(fresh) do
    local c = S.key_of[p] and core.remote_coords(p)
    if why or h[1] == DOWN then
      end_proxy(p, "unknown")
    elseif c and c[6] == 0 and S.nodes[c[1]] and S.nodes[c[1]].up and S.nodes[c[1]].inc == c[2] then
      publish(c[1], { WATCH, p, S.name })
    end
  end
  for i = #fresh, 1, -1 do fresh[i] = nil end
  S.spare = fresh
  return h, body, why
end

-- One envelope from another node (on_envelope logs what it refuses).
local function take(data, reply)
  local h, body, why = open(data)
  if why then error(why, 0) end
  local kind = h[1]
  if kind == MSG then
    local msg = core.codec_decode(body)
    h[2]:tell(msg, h[3]) -- a dead target: a dead letter here
    S.received = S.received + 1
  elseif kind == WATCH then
    S.service:send({ tend = "node_watch", target = h[2], node = h[3] })
  elseif kind == DOWN then
    if S.key_of[h[2]] then end_proxy(h[2], reason_of(h[3])) end
  elseif kind == PG then
    if pg.frame then pg.frame(h[2], h[3], core.codec_decode(body)) end
  elseif kind == PROBE then
    if reply then S.transport.publish(reply, envelope({ PROBE, S.name, S.inc })) end
  end
end

local function on_envelope(data, reply)
  local ok, err = pcall(take, data, reply) -- (no closure a message)
  if not ok then refuse(type(err) == "table" and tostring(err.message) or tostring(err)) end
end

-- A batch of envelopes from another node: those before bytes that are
-- none are taken.
local function on_batch(data, _, reply)
  local envelopes, complete = core.wire_unbatch(data)
  for _, e in ipairs(envelopes) do on_envelope(e, reply) end
  if not complete then refuse("a malformed batch") end
end

-- ------------------------------------------------------------ the node actor

local service_ops = {}

-- /system/node: heartbeats, watches for other nodes, requests from them.
local function node_actor(ctx)
  ctx:every(S.tick, "tick")
  local receive = function(m, c)
    if m == "tick" then
      heartbeat()
      local t = now()
      for _, name in ipairs(sorted_keys(S.nodes)) do
        local n = S.nodes[name]
        if n.up and t - n.last > S.timeout then node_down(name, "no heartbeat") end
      end
      local stale = {}
      for p, born in pairs(S.asks) do
        if t - born > S.ask_ttl then stale[#stale + 1] = S.key_of[p] end
      end
      table.sort(stale) -- (a replayed run ends them in the same order)
      for _, key in ipairs(stale) do end_proxy(S.proxies[key], "normal") end
    elseif type(m) == "table" and m.tend == "node_watch" and is_ref(m.target) and is_name(m.node) then
      local w = S.watched[m.target]
      if not w then
        w = {}
        S.watched[m.target] = w
        c:watch(m.target)
      end
      w[m.node] = true
    elseif type(m) == "table" and m.tend == "terminated" then
      local w = S.watched[m.ref]
      S.watched[m.ref] = nil
      if w then
        local reason = reason_value(m.reason)
        for _, node in ipairs(sorted_keys(w)) do
          -- (a node that asked for the watch since it was last seen down
          -- is told, even when it is not up here yet)
          if S.nodes[node] then publish(node, { DOWN, m.ref, reason }) end
        end
      end
    elseif type(m) == "table" and service_ops[m.op] then
      service_ops[m.op](c, m)
    end
  end
  -- when the host stops, the transport goes with this actor (its handles
  -- would keep the loop alive); a restart keeps it
  local transport = S.transport
  return { receive = function(_, m, c) return receive(m, c) end,
           pre_restart = function() end,
           post_stop = function() if transport.close then transport.close() end end }
end

-- ------------------------------------------------------------ requests

-- Another node's tend.node.tree(name): this node's tree as text.
service_ops.tree = function(c) c:reply(core.tree()) end

-- Another node's observer: this node's tend.ps() rows, without their refs
-- (the browser observer shows each node as a tree of its own).
service_ops.ps = function(c)
  local rows = {}
  for i, r in ipairs(require("tend").ps()) do
    rows[i] = { path = r.path, state = r.state, restarts = r.restarts, mailbox = r.mailbox, depth = r.depth,
      pid = r.pid, socket = r.socket, strategy = r.strategy, backing_off = r.backing_off,
      backoff_restarts = r.backoff_restarts }
  end
  c:reply(rows)
end

-- A per-origin parent of the actors other nodes spawn here: it spawns
-- "module.factory" as its child (ctx:spawn loads the module and resolves
-- the factory: src/runtime/core/factory.c), then answers the asker.
local function origin_parent()
  return function(m, c)
    if type(m) ~= "table" or m.op ~= "spawn" then return end
    local ok, ref = pcall(c.spawn, c, m.spec, m.opts)
    if ok then c:reply({ ref = ref }) else c:reply({ error = tostring(type(ref) == "table" and ref.message or ref) }) end
  end
end

-- /system/remote: the parents of remotely spawned actors, one per origin
-- node (/system/remote/<origin>).
local function remote_guardian()
  local parents = {}
  return function(m, c)
    if type(m) ~= "table" or m.op ~= "spawn" then return end
    local p = parents[m.origin]
    if not (p and core.alive(p)) then
      p = c:spawn(origin_parent, { name = m.origin })
      parents[m.origin] = p
    end
    p:tell(m, c.sender)
  end
end

service_ops.spawn = function(c, m)
  if type(m.spec) ~= "string" or type(m.origin) ~= "string" then
    c:reply({ error = "a malformed spawn request" })
    return
  end
  S.remote = (S.remote and core.alive(S.remote)) and S.remote
    or core.node_spawn(remote_guardian, { name = "remote" })
  S.remote:tell(m, c.sender)
end

-- ------------------------------------------------------------ the API

local function check_name(name, fn)
  if type(name) ~= "string" or not name:match("^[%w_-]+$") then
    error(string.format("%s: name: expected letters, digits, '_' or '-', got %s", fn,
      type(name) == "string" and string.format("%q", name) or type(name)), 3)
  end
end

-- Starts this process as node `name` on `transport`. opts: timeout
-- (seconds without heartbeat before a node is down; default 15), limit
-- (bytes per message; default 1 MiB), inc (incarnation: larger for a
-- later start; default the wall clock in microseconds).
function M.start_on(transport, opts)
  if S then fail(E.NodeError, "tend.node.start: this process is node " .. S.name .. " already", 2) end
  check_name(opts.name, "tend.node.start")
  local timeout = opts.timeout or 15
  S = {
    name = opts.name,
    inc = opts.inc or core.node_clock(), -- wall-clock microseconds
    transport = transport,
    limit = opts.limit or (1 << 20),
    timeout = timeout,
    tick = timeout / 4,
    ask_ttl = 300,
    nodes = {}, proxies = {}, key_of = {}, coords_of = {}, by_node = {}, asks = {},
    watched = {}, monitors = {},
    dropped = 0, sent = 0, received = 0,
  }
  core.node_identity(S.name, S.inc)
  core.remote_hooks(route, proxy_for)
  transport.subscribe(TO_NODE .. S.name, on_batch)
  transport.subscribe(HEARTBEATS, on_hb)
  -- a failure of its own (a bug, what a peer's message found) restarts
  -- it in place: same ref, its watches and mailbox kept, the node stays up
  S.service = core.node_spawn(core.supervise(node_actor):on_failure("*", core.restart), { name = "node" })
  heartbeat(HELLO)
  return S.name
end

-- The transport was lost (NATS went away): every node is down for us.
function M.transport_lost()
  if not S then return end
  for _, name in ipairs(sorted_keys(S.nodes)) do node_down(name, "transport lost") end
end

-- The transport is back: say hello so the others see us at once.
function M.transport_back()
  if S then heartbeat(HELLO) end
end

function M.name() return S and S.name or nil end

function M.incarnation() return S and S.inc or nil end

function M.timeout() return S and S.timeout or 15 end

-- Nodes seen alive (not this one), sorted.
function M.list()
  local out = {}
  if not S then return out end
  for name, n in pairs(S.nodes) do
    if n.up then out[#out + 1] = name end
  end
  table.sort(out)
  return out
end

-- The calling actor gets {tend = "nodeup" | "nodedown", node = name} at
-- each change of name's state; at once a nodedown when it is not up now
-- (Erlang's monitor_node). monitor(name, false) stops that.
function M.monitor(name, on)
  if type(name) ~= "string" then
    error("tend.node.monitor: name: expected a string, got " .. type(name), 2)
  end
  local me = core.self()
  if not me then error("tend.node.monitor: call it from an actor", 2) end
  if not S then fail(E.NodeError, "tend.node.monitor: this process is no node (start one with --node NAME)", 2) end
  local m = S.monitors[name] or {}
  S.monitors[name] = m
  if on == false then
    m[me] = nil
    return
  end
  m[me] = true
  local n = S.nodes[name]
  if not (n and n.up) then me:send({ tend = "nodedown", node = name }) end
end

-- Counters: messages sent to other nodes, received, dropped (node down).
function M.stats()
  if not S then return { sent = 0, received = 0, dropped = 0, proxies = 0 } end
  local proxies = 0
  for _ in pairs(S.key_of) do proxies = proxies + 1 end
  return { sent = S.sent, received = S.received, dropped = S.dropped, proxies = proxies }
end

-- The ref of node `name`'s own /system/node actor (its service), or nil.
function M.service(name)
  local n = S and S.nodes[name]
  return n and n.up and n.service or nil
end

function M.running() return S ~= nil end

local function service_of(name, fn)
  if type(name) ~= "string" then
    error(fn .. ": node: expected a node name, got " .. type(name), 3)
  end
  if not S then fail(E.NodeError, fn .. ": this process is no node (start one with --node NAME)", 3) end
  local svc = M.service(name)
  if not svc then fail(E.NodeDown, string.format("%s: node '%s' is not connected", fn, name), 3) end
  return svc
end

-- tend.spawn_on(node, "module.factory", opts) -> the remote actor's ref:
-- module is loaded there (require) and factory spawned there with opts,
-- under /system/remote/<this node>. Waits like an ask (opts.timeout,
-- default 5 s, is the wait; the rest are spawn options).
function M.spawn_on(name, spec, opts)
  if type(spec) ~= "string" or not spec:match("^(.+)%.([%w_]+)$") then
    error("tend.spawn_on: factory: expected \"module.factory\", got "
      .. (type(spec) == "string" and string.format("%q", spec) or type(spec)), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("tend.spawn_on: opts: expected a table, got " .. type(opts), 2)
  end
  local o, timeout = {}, 5
  for k, v in pairs(opts or {}) do
    if k == "timeout" then timeout = v else o[k] = v end
  end
  if name == (S and S.name) then -- this node: a local spawn, same parent
    return core.spawn(spec, o)
  end
  local svc = service_of(name, "tend.spawn_on")
  local r = core.ask(svc, { op = "spawn", spec = spec, opts = o, origin = S.name }, timeout)
  if r.error then fail(E.SpawnError, string.format("tend.spawn_on: %s on node %s", r.error, name), 2) end
  return r.ref
end

-- The supervision tree of node `name`, as text (tend.tree() there).
function M.tree(name)
  if name == nil or name == (S and S.name) then return core.tree() end
  return core.ask(service_of(name, "tend.node.tree"), { op = "tree" }, 5)
end

-- tend.node.start{name, nats, timeout, retry, limit}: see lua/tend/nats.lua.
function M.start(opts)
  return require("tend.nats").start(opts)
end

-- tend.pg's frame msg to each node of the list `names` (encoded once),
-- after what this node sent it before.
function M.pg_send(names, msg)
  local body = core.codec_encode(msg, S.limit)
  for _, name in ipairs(names) do publish(name, { PG, S.name, S.inc }, body) end
end

-- (tend.pg may be loaded after nodes came up: it is told of them now.)
function M.pg_hooks(hooks)
  pg = hooks
  for _, name in ipairs(S and sorted_keys(S.nodes) or {}) do
    if S.nodes[name].up then pg.up(name, S.nodes[name].inc) end
  end
end

-- The node's state is gone (the host closes, or a simulated node crashed).
function M.reset()
  S = nil
  if pg.reset then pg.reset() end
end

-- This host leaves the cluster (the world of simulated nodes, at
-- tend.sim.stop): every other node is down for it, its node actor stops.
function M.stop()
  if not S then return end
  for _, name in ipairs(sorted_keys(S.nodes)) do node_down(name, "left") end
  for _, name in ipairs(sorted_keys(S.by_node)) do -- for good: no node comes back
    for _, e in ipairs(proxies_of(name, function() return true end)) do end_proxy(e[2], "noconnection") end
  end
  local svc = S.service
  S = nil
  if pg.reset then pg.reset() end
  core.stop(svc)
  local global = package.loaded["tend.global"]
  if global then global.stop() end
end

-- The transport's key-value store (JetStream's on NATS, the world's for
-- simulated nodes): see lua/tend/nats.lua's kv. NodeError when none.
function M.kv(op, args)
  if not (S and S.transport.kv) then
    fail(E.NodeError, "tend.global: this process is no node on NATS (start one with --node NAME --nats URL)", 3)
  end
  return S.transport.kv(op, args)
end

function M.has_kv() return S ~= nil and S.transport.kv ~= nil end

return M
