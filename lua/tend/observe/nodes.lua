-- tend.observe.nodes: the live observer's nodes, each a tree of its own.
-- The nodes are the simulated ones of this process (tend.sim.list(): up,
-- crashed or ended) and the real ones this node has seen over NATS
-- (tend.node.list(): up; one seen before and gone from it is down). Each
-- node that is up and reachable is asked for its rows over the node
-- protocol (its /system/node service's "ps"), at most every M.EVERY
-- seconds (the answer kept in between; ASK seconds at most, a node that
-- does not answer keeps its last rows and says why). A node's rows come
-- back under /@NAME (as the time slider's do), with a first row for the
-- node itself: { path = "/@NAME", node, depth = 0, state = "up" | "down" |
-- "partitioned", partitioned = {names} }.
-- The world of tend.sim.nodes is no node unless it joins
-- (tend.sim.nodes(list, { join = NAME })): only then can it ask; until
-- then a simulated node shows its state alone, with why.
-- The actions on simulated nodes (partition, repair, crash_node,
-- restart_node) go through tend.chaos, which writes each as a trace event.
local core = require "tend.core"
local json = require "tend.observe.json"

local M = {}

M.EVERY = 1 -- seconds between two asks of one node
local ASK = 1 -- seconds a node has to answer

local cache = {}  -- name -> { t, rows, why }
local seen = {}   -- real nodes seen up once: name -> true
local cut = {}    -- "a|b" (sorted) -> true while partitioned (from trace events)

local function pair(a, b) if a > b then a, b = b, a end return a .. "|" .. b end

-- A trace event, as the observer keeps it: partitions and repairs of nodes.
function M.see(e)
  if e.ev ~= "chaos" or type(e.path) ~= "string" or type(e.to) ~= "string" then return end
  local a, b = e.path:match("^/node/(.+)$"), e.to:match("^/node/(.+)$")
  if not (a and b) then return end
  if e.detail == "partition" then cut[pair(a, b)] = true
  elseif e.detail == "repair" then cut[pair(a, b)] = nil end
end

local function partitioned(name)
  local out = json.array({})
  for k in pairs(cut) do
    local a, b = k:match("^(.-)|(.*)$")
    if a == name then out[#out + 1] = b elseif b == name then out[#out + 1] = a end
  end
  table.sort(out)
  return out
end

local function ask(name, node)
  local now = core.now()
  local c = cache[name]
  if c and now - c.t < M.EVERY then return c end
  c = c or { rows = nil }
  c.t = now
  local svc = node.service(name)
  if not svc then
    c.why = "not connected"
    return c
  end
  local ok, rows = pcall(core.ask, svc, { op = "ps" }, ASK)
  if ok and type(rows) == "table" then
    c.rows, c.why = rows, nil
  else
    c.why = "no answer: " .. tostring(rows)
  end
  cache[name] = c
  return c
end

-- The rows of every node, to append to the tree's; and the nodes' list
-- ({ name, up, state, sim, real, partitioned, why }).
function M.rows()
  local node = package.loaded["tend.node"]
  local me = node and node.name()
  local list, rows = json.array({}), json.array({})
  local function add(name, up, state, kind, why)
    local entry = { name = name, up = up, state = state, [kind] = true }
    local head = { path = "/@" .. name, node = name, depth = 0, restarts = 0 }
    local block = { head }
    if up then
      entry.partitioned = partitioned(name)
      if #entry.partitioned > 0 then state = "partitioned" end
      if node and node.running() and name ~= me then
        local c = ask(name, node)
        why = c.why
        for _, r in ipairs(c.rows or {}) do
          local copy = {}
          for k, v in pairs(r) do copy[k] = v end
          copy.path = "/@" .. name .. r.path
          copy.depth = (r.depth or 0) + 1
          copy.node_path = r.path
          block[#block + 1] = copy
        end
      elseif name == me then
        why = "this node (its tree is the tree above)"
      elseif not why then
        why = "the observer's host is no node (tend.sim.nodes{..., join = NAME} lets it ask)"
      end
    end
    head.state, head.partitioned, head.why = state, entry.partitioned, why
    entry.state, entry.why = state, why
    list[#list + 1] = entry
    for _, r in ipairs(block) do rows[#rows + 1] = r end
  end
  local sims = {}
  if package.loaded["tend.simnodes"] then
    local sim = core.sim_list()
    table.sort(sim, function(x, y) return x.name < y.name end)
    for _, n in ipairs(sim) do
      sims[n.name] = true
      add(n.name, n.state == "up", n.state == "up" and "up" or "down", "sim",
        n.state ~= "up" and ("the node " .. n.state) or nil)
    end
  end
  if node then
    local up = {}
    for _, n in ipairs(node.list()) do
      up[n] = true
      seen[n] = true
    end
    local names = {}
    for n in pairs(seen) do names[#names + 1] = n end
    table.sort(names)
    for _, n in ipairs(names) do
      if not sims[n] then add(n, up[n] == true, up[n] and "up" or "down", "real", not up[n] and "not seen within the node timeout" or nil) end
    end
  end
  return rows, list
end

local VERBS = { partition = true, repair = true, crash_node = true, restart_node = true }

-- POST /api/action?do=partition|repair&node=A&to=B, do=crash_node|
-- restart_node&node=A: through tend.chaos (each a trace event). Returns
-- the answer, or nil, status, message.
function M.act(verb, q)
  if not VERBS[verb] then return nil end
  local function sim(name, what)
    if type(name) ~= "string" then
      return nil, string.format("%s: expected a simulated node's name, got none", what)
    end
    if package.loaded["tend.simnodes"] then
      for _, n in ipairs(core.sim_list()) do
        if n.name == name then return name end
      end
    end
    return nil, string.format("%s: no simulated node named %q", what, name)
  end
  local a, why = sim(q.node, "node")
  if not a then return nil, 404, why end
  local chaos = require("tend").chaos
  local ok, err
  if verb == "partition" or verb == "repair" then
    local b, why2 = sim(q.to, "to")
    if not b then return nil, 404, why2 end
    if a == b then return nil, 400, "to: expected another node than " .. a end
    ok, err = pcall(chaos[verb], a, b)
  else
    ok, err = pcall(chaos[verb], a)
  end
  if not ok then return nil, 409, tostring(err):gsub("^[^:]*:%d+: ", "") end
  return { done = verb, node = a, to = q.to }
end

-- Forgets what it was told (a new observer, or a spec).
function M.reset() cache, seen, cut = {}, {}, {} end

return M
