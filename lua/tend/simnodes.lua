-- tend.sim: several nodes in one process under --virtual-time (the C side:
-- src/runtime/nodes/simnodes.c). Each node is a host of its own (its own Lua
-- state, tree, names and modules) running a script; the world (the
-- scenario) steps them all on one virtual clock, and a simulated bus
-- carries the node layer (lua/tend/node.lua) between them as NATS would,
-- with the same node API on every node: tend.node.*, tend.spawn_on,
-- remote refs, DeathWatch, tend.global (on a simulated key-value store
-- with leases). The chaos verbs partition, repair, latency, crash_node
-- and restart_node act on it. A seed replays the whole cluster.
local core = require "tend.core"
local internal = require "tend.internal"
local node = require "tend.node"

local M = {}

local OPTS = { timeout = true, limit = true, join = true, latency = true, jitter = true }
local NODE_OPTS = { script = true, code = true, args = true }

local defaults = {} -- what nodes{} was given: timeout, limit (restart_node uses it)
local specs = {}    -- node name -> what it runs (restart_node runs it again)
local subs = {}     -- this host's subscriptions: subject -> function(data, subject)
local joined = false -- the world's node name when it takes part, else false
local ender = false  -- the watch that ends the world with the main chunk:
                     -- { ref = its task once it runs }, else false

local function dispatch(subject, data)
  local fn = subs[subject]
  if fn then fn(data, subject) end
end

-- The node layer's transport over the bus (publish, send, subscribe,
-- close) and the store (kv, as lua/tend/nats.lua's).
local transport = {
  publish = function(subject, data) core.sim_publish(subject, data) end,
  -- one envelope, as a batch of one (runtime/nodes/wire.h)
  send = function(subject, data) core.sim_publish(subject, core.wire_batch(data)) end,
  subscribe = function(subject, fn) subs[subject] = fn end,
  close = function() end,
  kv = function(op, args)
    if op == "bucket" then return core.sim_kv(op, args.bucket, nil, nil, args.ttl) end
    return core.sim_kv(op, args.bucket, args.key, args.value, args.revision)
  end,
}

local function start_node(name, inc, o)
  core.sim_dispatch(dispatch)
  node.start_on(transport, { name = name, inc = inc, timeout = o.timeout, limit = o.limit })
end

-- In a node's own state, before anything else runs there (called by
-- core.sim_open): it becomes node `name`; returns its main chunk and args.
function M.boot(name, inc, bytes)
  local o = core.codec_decode(bytes)
  package.path, package.cpath = o.path, o.cpath -- the world's: one program
  start_node(name, inc, o)
  local chunk, err
  if o.code then
    chunk, err = load(o.code, "=(node " .. name .. ")")
  else
    chunk, err = loadfile(o.script)
  end
  if not chunk then error(err, 0) end
  local args = o.args or {}
  _G.arg = { [0] = o.script or "-" }
  for i, v in ipairs(args) do _G.arg[i] = v end
  return chunk, args
end

local function bad(fn, what, expected, v)
  error(string.format("%s: %s: expected %s, got %s", fn, what, expected,
    type(v) == "string" and string.format("%q", v) or tostring(v)), 3)
end

local function check_spec(name, spec)
  local fn = "tend.sim.nodes"
  if type(name) ~= "string" or not name:match("^[%w_-]+$") then
    bad(fn, "node name", "letters, digits, '_' or '-'", name)
  end
  if type(spec) == "string" then return { script = spec } end
  if type(spec) ~= "table" then
    bad(fn, "node " .. name, "a script path or a table {script = ..., code = ..., args = ...}", spec)
  end
  for k in pairs(spec) do
    if not NODE_OPTS[k] then bad(fn, "node " .. name, "the options script, code, args", k) end
  end
  if (spec.script == nil) == (spec.code == nil) then
    bad(fn, "node " .. name, "one of script (a file) or code (a chunk)", nil)
  end
  if spec.args ~= nil and type(spec.args) ~= "table" then bad(fn, "node " .. name .. ": args", "a list", spec.args) end
  return { script = spec.script, code = spec.code, args = spec.args }
end

local function open(name)
  local o = {}
  for k, v in pairs(specs[name]) do o[k] = v end
  o.timeout, o.limit = defaults.timeout, defaults.limit
  o.path, o.cpath = package.path, package.cpath
  return core.sim_open(name, core.codec_encode(o))
end

-- Called from the main chunk, nodes{} starts a task of tend's own that
-- ends the world (M.stop) when the chunk returns, as tend scenario does:
-- the nodes' heartbeats would otherwise move the virtual clock for ever.
local function end_with_main()
  local main = core.self()
  if ender or main == nil or main:path() ~= "/user/main" then return end
  local mine = {}
  ender = mine
  internal.after(0, function()
    if ender ~= mine then return end -- the world was stopped meanwhile
    mine.ref = core.self()
    core.watch(main)
    repeat
      local m = core.receive()
    until type(m) == "table" and m.tend == "terminated"
    if ender == mine then
      ender = false
      M.stop()
    end
  end)
end

-- tend.sim.nodes({ a = "app.lua", b = { script = "app.lua", args = {...} },
-- c = { code = "..." } }, { timeout, limit, join, latency, jitter }) ->
-- the node names, sorted: each node starts (in name order) and runs its
-- script as its /user/main. timeout: the node timeout (default 15 s);
-- latency (+ jitter): every link's delay; join = "name": the world takes
-- part as a node of that name (its actors can then reach the others).
function M.nodes(list, opts)
  local fn = "tend.sim.nodes"
  if not core.virtual_time() then
    error(fn .. ": simulated nodes need the virtual clock (--virtual-time)", 2)
  end
  if type(list) ~= "table" then bad(fn, "nodes", "a table {name = script, ...}", list) end
  opts = opts or {}
  if type(opts) ~= "table" then bad(fn, "opts", "a table", opts) end
  for k in pairs(opts) do
    if not OPTS[k] then bad(fn, "opts", "the options timeout, limit, join, latency, jitter", k) end
  end
  if opts.timeout ~= nil and (type(opts.timeout) ~= "number" or not (opts.timeout > 0)) then
    bad(fn, "timeout", "seconds > 0", opts.timeout)
  end
  for _, k in ipairs { "latency", "jitter" } do -- as tend.chaos.latency's
    local s = opts[k]
    if s ~= nil and (type(s) ~= "number" or not (s >= 0 and s <= 1e9)) then
      bad(fn, k, "a number of seconds >= 0 and <= 1e9", s)
    end
  end
  local names = {}
  for name, spec in pairs(list) do
    specs[name] = check_spec(name, spec)
    names[#names + 1] = name
  end
  table.sort(names)
  if #names == 0 then bad(fn, "nodes", "at least one node", "none") end
  defaults = { timeout = opts.timeout, limit = opts.limit }
  if opts.join then
    if type(opts.join) ~= "string" then bad(fn, "join", "a node name", opts.join) end
    start_node(opts.join, core.sim_join(opts.join), defaults)
    joined = opts.join
  end
  for _, name in ipairs(names) do open(name) end
  end_with_main()
  if opts.latency or opts.jitter then
    local all = {}
    for _, n in ipairs(core.sim_list()) do all[#all + 1] = n.name end
    for i = 1, #all do
      for j = i + 1, #all do core.sim_link(all[i], all[j], nil, opts.latency or 0, opts.jitter or 0) end
    end
  end
  return names
end

-- tend.sim.list() -> { {name, state = "up" | "crashed" | "ended", inc}, ... }
function M.list() return core.sim_list() end

local function known(name, fn)
  for _, n in ipairs(core.sim_list()) do
    if n.name == name then return n end
  end
  error(string.format("%s: no simulated node named %s", fn,
    type(name) == "string" and string.format("'%s'", name) or type(name)), 3)
end

-- Is `name` a node of the cluster started by nodes{} (and not stopped)?
-- (the chaos verbs pick the bus or simnet by it)
function M.has(name)
  return specs[name] ~= nil or (joined and name == joined)
end

local function event(name, detail, to)
  core.chaos_event("/node/" .. name, detail, to and ("/node/" .. to) or nil)
end

-- tend.chaos.crash_node(name): its host closes at once (kill -9: nothing
-- runs there any more); the others see it down after the node timeout.
function M.crash(name)
  known(name, "tend.chaos.crash_node")
  if specs[name] == nil then
    error("tend.chaos.crash_node: '" .. name .. "' is the world's own node", 2)
  end
  if core.sim_crash(name) then event(name, "crash_node") end
end

-- tend.chaos.restart_node(name): a node that crashed or ended starts
-- again, as a new incarnation (refs to the old one are dead).
function M.restart(name)
  local n = known(name, "tend.chaos.restart_node")
  if specs[name] == nil then
    error("tend.chaos.restart_node: '" .. name .. "' is the world's own node", 2)
  end
  if n.state == "up" then
    error("tend.chaos.restart_node: node '" .. name .. "' is up (crash it first)", 2)
  end
  open(name)
  event(name, "restart_node")
end

function M.partition(a, b)
  core.sim_link(a, b, true)
  event(a, "partition", b)
end

function M.repair(a, b)
  core.sim_link(a, b, false)
  event(a, "repair", b)
end

function M.latency(a, b, seconds, jitter)
  core.sim_link(a, b, nil, seconds, jitter or 0)
  event(a, string.format("latency %g s", seconds), b)
end

function M.heal() core.sim_heal() end

-- tend.sim.stop(): every node's tree stops (as tend.shutdown there), the
-- world leaves the cluster and every link is healed. The nodes' heartbeats would otherwise keep
-- the virtual clock going for ever (the main chunk's return calls it).
function M.stop()
  local waiting = ender and ender.ref
  ender = false
  if waiting and waiting ~= core.self() then core.stop(waiting) end
  core.sim_stop_all()
  core.sim_heal() -- a next cluster starts on a healed bus
  if joined then node.stop() end
  joined, specs = false, {}
end

return M
