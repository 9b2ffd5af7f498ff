-- tend.observe.live: the observer of the running tree (tend.observe{...},
-- `tend --observe [HOST:]PORT SCRIPT`, observe() at the REPL). An actor
-- /system/observer owns the HTTP server (tend.observe.server: the token,
-- the errors) and keeps the last RING trace events (its own left out);
-- the page follows /api/events (polling /api/tree only if that fails).
-- Endpoints (each needs ?token=):
--   /api/info          { mode = "live", t }
--   /api/tree[?all=1]  { t, actors = {path, state, restarts, mailbox, depth,
--                      since (its last start, else when first seen),
--                      failures, last_failure, pid, socket, busy,
--                      strategy (a supervisor's), stream = {state, stages}
--                      (a stream's, from its stream_* events)}, then each
--                      node's rows under /@NAME (tend.observe.nodes), nodes
--                      (simulated ones, and the real ones seen),
--                      counters, rates,
--                      events }; /system/observer is left out unless all=1
--   /api/actor?path=P  its tend.inspect, its last failure, its restarts
--   /api/events[?from=N] a stream of server-sent events: "tree" (the
--                      /api/tree answer) at once, after new events (at
--                      most every 2 * TICK) and every 2 s; "trace" (a
--                      batch of kept events, its id the last one's number)
--                      as they come; from=N (or Last-Event-ID) starts after
--                      event N. ?format=json: { events, seq } once, the
--                      events after N (500 at most)
--   /api/timeline.svg  the kept events drawn by tend.timeline
--   POST /api/action?do=send|stop|kill|crash|suspend|resume&path=P (send:
--                      the body is the message, a Lua literal read as data
--                      by tend.observe.literal). Each action is a "chaos"
--                      trace event ("observer: ..."; crash, kill, suspend
--                      and resume through tend.chaos, which writes its own).
--   POST /api/clock?do=pause|resume|step: under --virtual-time, the
--                      clock held (actors at its instant still run, HTTP
--                      still answers; the event stream ends after each
--                      tree while held), let go, or one jump granted to the
--                      next timer; each a chaos trace event on /clock
--   POST /api/action?do=partition|repair&node=A&to=B, do=crash_node|
--                      restart_node&node=A: on simulated nodes, through
--                      tend.chaos (tend.observe.nodes)
local core = require "tend.core"
local internal = require "tend.internal"
local server = require "tend.observe.server"
local json = require "tend.observe.json"
local literal = require "tend.observe.literal"
local state = require "tend.observe.state"
local nodes_of = require "tend.observe.nodes"

local M = {}

M.RING = 5000 -- trace events kept for the live timeline and /api/events
M.TICK = 0.05 -- how often an event stream looks for new events (seconds)
local OWN = "/system/observer"

local running -- the handle of the observer of this host, once started
local running_ref -- its actor (its HTTP server a child of it)

local function own(p) return type(p) == "string" and (p == OWN or p:sub(1, #OWN + 1) == OWN .. "/") end

-- The events kept: a ring of the last RING, numbered from 1; and what
-- they tell of each path: since (its last start), failures, last_failure,
-- stream.
local ring, seq, told = {}, 0, {}
local function keep(e)
  if own(e.path) then return end
  nodes_of.see(e)
  seq = seq + 1
  ring[seq] = e
  ring[seq - M.RING] = nil
  if type(e.path) ~= "string" then return end
  local i = told[e.path]
  if e.ev == "spawn" or e.ev == "start" or e.ev == "restart" then -- its first start, or a restart
    i = i or { failures = 0 }
    i.since = e.t
  elseif e.ev == "fail" then
    i = i or { failures = 0 }
    i.failures = i.failures + 1
    i.last_failure = { t = e.t, kind = e.kind, message = e.message }
  elseif type(e.ev) == "string" and e.ev:sub(1, 7) == "stream_" then
    i = i or { failures = 0 }
    i.stream = state.stream(i.stream, e)
  end
  told[e.path] = i
end

local function rows(all)
  local tend = require "tend"
  local out = json.array({})
  for _, r in ipairs(tend.ps()) do
    if all or not own(r.path) then
      out[#out + 1] = { path = r.path, state = r.state, restarts = r.restarts, mailbox = r.mailbox,
        depth = r.depth, pid = r.pid, socket = r.socket, busy = r.busy, strategy = r.strategy,
        backing_off = r.backing_off, backoff_restarts = r.backoff_restarts }
    end
  end
  return out
end

local function find(path)
  local tend = require "tend"
  for _, r in ipairs(tend.ps()) do
    if r.path == path then return r.ref end
  end
end

local COUNTERS = { "messages", "restarts", "failures", "dead_letters", "spawned", "actors", "runnable" }

-- The routes of the live observer.
local function routes()
  local tend = require "tend"
  local first_seen = {}
  local prev, rates = nil, {}
  local r = {}
  r["/api/info"] = function()
    return { mode = "live", t = core.now(), timeline = true, virtual = core.virtual_time(),
      paused = core.virtual_time() and core.clock_hold() or false }
  end
  -- the pause of a virtual-time run: the host's clock held (core.clock_hold)
  -- and stepped (core.clock_step), each verb a trace event on /clock
  r["/api/clock"] = function(q)
    local verb = q["do"]
    if verb ~= "pause" and verb ~= "resume" and verb ~= "step" then
      return nil, 400, "do: expected pause, resume or step, got " .. string.format("%q", tostring(verb))
    end
    if not core.virtual_time() then
      return nil, 409, "do=" .. verb .. ": only a run under --virtual-time can be paused (this one is on the real clock)"
    end
    local t = core.now()
    if verb == "step" then
      if not core.clock_hold() then return nil, 409, "do=step: the clock runs; pause it first" end
      core.chaos_event("/clock", string.format("observer: step at %.9g s", t))
      core.clock_step()
    elseif (verb == "pause") ~= core.clock_hold() then
      core.chaos_event("/clock", "observer: " .. verb)
      core.clock_hold(verb == "pause")
    end
    return { done = verb, t = t, paused = core.clock_hold() }
  end
  local function tree(all)
    local now = core.now()
    local actors = rows(all)
    for _, a in ipairs(actors) do
      first_seen[a.path] = first_seen[a.path] or now
      local i = told[a.path]
      a.since = i and i.since or first_seen[a.path]
      a.failures = i and i.failures or 0
      a.last_failure = i and i.last_failure
      a.stream = i and i.stream
    end
    local s = tend.stats()
    local counters = {}
    for _, k in ipairs(COUNTERS) do counters[k] = s[k] end
    counters.memory_bytes = (s.lua_bytes or 0) + (s.c_bytes or 0)
    if prev == nil or now - prev.t >= 0.5 then -- a rate over half a second at least
      if prev and now > prev.t then
        for _, k in ipairs { "messages", "restarts", "failures", "dead_letters", "spawned" } do
          rates[k] = math.floor(((s[k] or 0) - (prev.s[k] or 0)) / (now - prev.t) + 0.5)
        end
      end
      prev = { t = now, s = s }
    end
    local node_rows, nodes = nodes_of.rows() -- each node a tree of its own, after this host's
    for _, a in ipairs(node_rows) do actors[#actors + 1] = a end
    return { t = now, actors = actors, nodes = nodes, outages = json.array({}), counters = counters,
      rates = rates, events = seq, paused = core.virtual_time() and core.clock_hold() or false }
  end
  r["/api/tree"] = function(q) return tree(q.all == "1") end
  r["/api/actor"] = function(q)
    local ref = type(q.path) == "string" and find(q.path)
    if not ref then return nil, 404, "path: no live actor at " .. string.format("%q", tostring(q.path)) end
    local pretty = require "tend.pretty"
    local st = tend.inspect(ref)
    local history = json.array({})
    for i = math.max(1, seq - M.RING + 1), seq do
      local e = ring[i]
      if e and e.path == q.path and (e.ev == "fail" or e.ev == "restart" or e.ev == "chaos") then
        history[#history + 1] = e
      end
    end
    while #history > 20 do table.remove(history, 1) end
    return { path = q.path, inspect = st and pretty.format(st) or "dead", history = history }
  end
  -- the kept events after `from` (a number), 500 at most
  local function after(from)
    local out = json.array({})
    for i = math.max(math.floor(from) + 1, seq - M.RING + 1, 1), seq do
      out[#out + 1] = ring[i]
      if #out == 500 then break end
    end
    return out
  end
  r["/api/events"] = function(q, req)
    local from = q.from or (req.headers or {})["last-event-id"]
    if from ~= nil and not tonumber(from) then
      return nil, 400, "from: expected an event number, got " .. string.format("%q", tostring(from))
    end
    if q.format == "json" then
      from = tonumber(from or 0)
      return { events = after(from), seq = seq }
    elseif q.format ~= nil then
      return nil, 400, "format: expected json (or none: a stream), got " .. string.format("%q", q.format)
    end
    -- the stream: the tree at once, then each new batch of events (within
    -- TICK) and the tree after them (at most every TICK * 2), the tree at
    -- least every 2 s (mailboxes, counters)
    local sent = tonumber(from) or seq
    local tree_t, tree_seq, first = -math.huge, nil, true
    local all = q.all == "1"
    return server.events(function()
      local chunks = {}
      if first then chunks[1] = "retry: 1000\n\n" first = false end
      while true do
        local now = core.now()
        if sent < seq - M.RING then sent = seq - M.RING end
        while sent < seq do
          local batch = after(sent)
          sent = sent + #batch
          chunks[#chunks + 1] = "id: " .. sent .. "\nevent: trace\ndata: " .. json.encode(batch) .. "\n\n"
        end
        if (tree_seq ~= sent and now - tree_t >= M.TICK * 2) or now - tree_t >= 2 then
          tree_t, tree_seq = now, sent
          chunks[#chunks + 1] = "event: tree\ndata: " .. json.encode(tree(all)) .. "\n\n"
        end
        if #chunks > 0 then return table.concat(chunks) end
        -- the clock held: a sleep would wait for the next step; the stream
        -- ends instead (the browser comes back after its retry, 1 s)
        if core.virtual_time() and core.clock_hold() then return nil end
        tend.sleep(M.TICK)
        -- a sleep cut short: the request's actor is being stopped (the
        -- client left, or the host is shutting down): the stream ends
        if core.now() - now < M.TICK / 2 then return nil end
      end
    end)
  end
  r["/api/timeline.svg"] = function()
    local list = {}
    for i = math.max(1, seq - M.RING + 1), seq do list[#list + 1] = ring[i] end
    return require("tend.timeline").render(list, "tend observer (live)")
  end
  r["/api/action"] = function(q, req)
    local verb, path = q["do"], q.path
    local done, status, why = nodes_of.act(verb, q)
    if done then return done end
    if status then return nil, status, why end
    local ref = type(path) == "string" and find(path)
    if not ref then return nil, 404, "path: no live actor at " .. string.format("%q", tostring(path)) end
    local chaos = tend.chaos
    if verb == "send" then
      local msg, why = literal.parse(req.body or "")
      if why then return nil, 400, "the message: " .. why end
      core.chaos_event(ref, "observer: send " .. (req.body or ""):sub(1, 200))
      tend.send(ref, msg)
    elseif verb == "stop" then
      core.chaos_event(ref, "observer: stop")
      tend.stop(ref)
    elseif verb == "kill" then chaos.kill(ref)
    elseif verb == "crash" then chaos.crash(ref)
    elseif verb == "suspend" then chaos.freeze(ref, math.huge)
    elseif verb == "resume" then chaos.thaw(ref)
    else
      return nil, 400, "do: expected send, stop, kill, crash, suspend, resume (path=), partition, repair "
        .. "(node=, to=), crash_node or restart_node (node=), got "
        .. string.format("%q", tostring(verb))
    end
    return { done = verb, path = path }
  end
  return r
end

local KEYS = { port = true, host = true, paused = true }

M.routes = routes -- (for specs: the routes without the HTTP server)

-- tend.observe{ port, host, paused } -> { url, token, port }: starts the
-- observer of this host (once: a second call returns the first's); paused
-- (under --virtual-time) holds the clock from then on, until the page
-- resumes it.
function M.start(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("tend.observe: options: expected a table { port, host }, got " .. type(opts), 2)
  end
  local unknown = internal.check_keys(opts, KEYS, "tend.observe")
  if unknown then error(unknown, 2) end
  local port = opts.port == nil and server.DEFAULT_PORT or opts.port
  if math.type(port) ~= "integer" or port < 0 or port > 65535 then
    error("tend.observe: port: expected an integer 0-65535, got " .. tostring(port), 2)
  end
  local host = opts.host or "127.0.0.1"
  if type(host) ~= "string" or host == "" then
    error("tend.observe: host: expected a host name or address, got " .. tostring(host), 2)
  end
  if opts.paused ~= nil and type(opts.paused) ~= "boolean" then
    error("tend.observe: paused: expected a boolean, got " .. type(opts.paused), 2)
  end
  if opts.paused and not core.virtual_time() then
    error("tend.observe: paused: only a run under --virtual-time can be paused (this one is on the real clock)", 2)
  end
  if running then return running end
  local tend = require "tend"
  tend.trace(keep)
  local ref = core.node_spawn(function()
    return function(msg, ctx)
      if type(msg) == "table" and msg.start then
        local ok, srv, url, token = pcall(server.start, { host = host, port = port, routes = routes(),
          types = { ["/api/timeline.svg"] = "image/svg+xml" },
          post = { ["/api/action"] = true, ["/api/clock"] = true },
          page = require("tend.observe.page") })
        if not ok then ctx:reply({ error = tostring(srv) }) return end
        ctx:reply({ url = url, token = token, port = tonumber(url:match(":(%d+)/")) })
      end
    end
  end, { name = "observer" })
  local r = tend.ask(ref, { start = true }, 10)
  if r.error then
    tend.stop(ref)
    error("tend.observe: cannot serve on " .. host .. ":" .. port .. ": " .. r.error, 2)
  end
  running, running_ref = r, ref
  if opts.paused then -- the clock held from here: the page resumes or steps it
    core.chaos_event("/clock", "observer: pause")
    core.clock_hold(true)
  end
  return r
end

-- Stops the observer of this host, its listener with it, forgets the
-- nodes it saw, and lets the clock run (for specs: one process runs many, and each must leave the
-- host as it found it). Its trace listener stays (tend.trace(false) ends
-- it). A later start starts anew.
function M.stop()
  if not running then return end
  if core.virtual_time() and core.clock_hold() then core.clock_hold(false) end
  local tend = require "tend"
  local ref = running_ref
  running, running_ref = nil, nil
  require("tend.observe.nodes").reset() -- the nodes it saw, their cuts
  tend.stop(ref)
  while tend.alive(ref) do tend.sleep(0.01) end
end

-- `tend --observe [HOST:]PORT`: starts it and prints its URL on stderr.
function M.from_cli()
  local address = debug.getregistry()["tend.observe.cli"]
  if not address then return end
  debug.getregistry()["tend.observe.cli"] = nil
  local host, port = server.parse_address(address, "--observe")
  if not host then
    io.stderr:write("tend: " .. port .. "\n")
    return require("tend").shutdown(2)
  end
  -- under the virtual clock the run starts paused: it would otherwise be
  -- over before the page opens
  local paused = core.virtual_time()
  local h = M.start({ host = host, port = port, paused = paused })
  io.stderr:write("tend: observer at " .. h.url .. "\n")
  if paused then io.stderr:write("tend: the virtual clock is paused at 0 s: resume or step it from the page\n") end
end

return M
