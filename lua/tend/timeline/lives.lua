-- tend.timeline.lives: what a trace says happened to each lane over time
-- (design §6.4), as plain data the SVG (tend.timeline) and the observer's
-- time travel draw from. Pure functions of the events: no clock, no I/O.
--   M.band(events)      a simulated node's events moved into its band
--   M.lives(events, t)  each actor's life as spans of one state
--   M.outages(events, t) node downtimes and partitions as spans
local M = {}

-- The states of a life, in the legend's order.
M.STATES = { "running", "waiting", "backoff", "stopped" }

-- A copy of events where a simulated node's events (their `node` field)
-- sit under /@NODE (/@a/user/w), and the world's events about a node
-- (/node/a, as the chaos verbs write them) on that node's band, /@a.
-- Returns the events and the set of node names with a band.
function M.band(events)
  local nodes = {}
  for _, e in ipairs(events) do
    if type(e.node) == "string" and type(e.path) == "string" then nodes[e.node] = true end
  end
  local out = {}
  for i, e in ipairs(events) do
    local p = type(e.path) == "string" and e.path or nil
    local moved
    if p and type(e.node) == "string" then
      moved = "/@" .. e.node .. (p == "/" and "" or p)
    elseif p and nodes[p:match("^/node/([^/]+)$") or false] then
      moved = "/@" .. p:match("^/node/([^/]+)$")
    end
    if moved then
      local c = {}
      for k, v in pairs(e) do c[k] = v end
      c.path = moved
      e = c
    end
    out[i] = e
  end
  return out, nodes
end

local function parent(p) return p:match("^(/.+)/[^/]+$") end

-- The lane a node's name or a simnet host's stands for.
local function place(p)
  local n = type(p) == "string" and p:match("^/@([^/]+)$")
  if n then return "node", n end
  n = type(p) == "string" and p:match("^/node/([^/]+)$")
  if n then return "node", n end
  return "lane", p
end

-- Whether a chaos event crashes a node or brings it back: the node's
-- name, crash, back (tend.chaos.crash_node / restart_node, or the
-- nemesis's crash_node and its heal).
local function node_change(e)
  local d = type(e.detail) == "string" and e.detail or ""
  local f = e.fault
  local crash = d == "crash_node" or (f == "crash_node" and not e.heal)
  local back = d == "restart_node" or f == "restart_node" or (f == "crash_node" and e.heal == true)
  if not (crash or back) then return nil end
  local where, n = place(e.path)
  if (f == "crash_node" or f == "restart_node") and type(e.target) == "string" then
    where, n = "node", e.target
  end
  if where ~= "node" then return nil end
  return n, crash, back
end

-- The state an event puts its lane in (nil: no change). A stream's events
-- (path: the stream's supervisor) drive its lane like an actor's.
local NEXT = {
  spawn = "running", start = "running", restart = "running", ready = "running",
  fail = "waiting", stop = "waiting", terminated = "stopped",
  stream_start = "running", stream_restart = "running", stream_fail = "waiting",
  stream_backoff = "backoff", stream_complete = "stopped", stream_cancel = "stopped",
}

-- Each lane's life as spans { path, state, from, to, why }: "running"
-- from its spawn or (re)start, "waiting" while failed and not yet restarted,
-- stopping, or frozen (tend.chaos.freeze), "backoff" from its supervisor's
-- backoff (or a stream's) to its restart, "stopped" from its termination
-- on. `why` is the event that began the span. Open spans end at t_end.
-- Lanes with no life event (/user, /system, /net/...) have no spans.
function M.lives(events, t_end)
  local spans, open, frozen = {}, {}, {}
  local function begin(p, state, t, why)
    local cur = open[p]
    if cur and cur.state == state then return end
    if cur then
      cur.to = t
      if cur.to > cur.from then spans[#spans + 1] = cur end
    end
    open[p] = { path = p, state = state, from = t, why = why }
  end
  for _, e in ipairs(events) do
    local p = e.path
    if type(p) == "string" and p:match("^/.") then
      local state = NEXT[e.ev]
      if e.ev == "chaos" then
        -- a crashed node's actors are gone with it
        local n, crash = node_change(e)
        if n and crash then
          local prefix = "/@" .. n .. "/"
          for q, cur in pairs(open) do
            if q:sub(1, #prefix) == prefix and cur.state ~= "stopped" then begin(q, "stopped", e.t, e) end
          end
        end
      end
      if e.ev == "backoff" then
        -- a backoff supervisor's wait: its stopped child waits with it
        for q, cur in pairs(open) do
          if parent(q) == p and cur.state == "stopped" then begin(q, "backoff", e.t, e) end
        end
      elseif e.ev == "chaos" and type(e.detail) == "string" then
        if e.detail:match("^freeze ") and open[p] and open[p].state == "running" then
          frozen[p] = true
          state = "waiting"
        elseif e.detail == "thaw" and frozen[p] then
          frozen[p] = nil
          state = "running"
        end
      end
      if state == "running" and frozen[p] and e.ev ~= "chaos" then state = "waiting" end
      if e.ev == "terminated" then frozen[p] = nil end
      if state then begin(p, state, e.t, e) end
    end
  end
  local rest = {}
  for p in pairs(open) do rest[#rest + 1] = p end
  table.sort(rest)
  for _, p in ipairs(rest) do
    local cur = open[p]
    cur.to = math.max(t_end, cur.from)
    cur.open = true -- the state it is in when the trace ends
    spans[#spans + 1] = cur
  end
  table.sort(spans, function(a, b)
    if a.path ~= b.path then return a.path < b.path end
    return a.from < b.from
  end)
  return spans
end

-- Node downtimes and partitions as spans { kind = "down"|"partition",
-- a, b (partition: both sides), where = "node"|"lane", from, to, label }:
-- a node is down from its crash_node to its restart_node (or the nemesis's
-- heal of it), two sides are partitioned from a partition to its repair
-- (or heal); open spans end at t_end, marked `open`. `a` and `b` name nodes (where =
-- "node") or lanes (a simnet host's /net/NAME).
function M.outages(events, t_end)
  local out, down, cut = {}, {}, {}
  local function close(s, t)
    s.to = t
    out[#out + 1] = s
  end
  local function pair(a, b) return a < b and a .. "|" .. b or b .. "|" .. a end
  for _, e in ipairs(events) do
    if e.ev == "chaos" then
      local d = type(e.detail) == "string" and e.detail or ""
      local f = e.fault
      local n, crash, back = node_change(e)
      if n and crash and not down[n] then
        down[n] = { kind = "down", a = n, where = "node", from = e.t, label = "node " .. n .. " down" }
      elseif n and back and down[n] then
        close(down[n], e.t)
        down[n] = nil
      end
      local a, b, where
      if f == "partition_nodes" then a, b, where = e.a, e.b, "node"
      elseif f == "partition" then a, b, where = e.a, e.b, "lane"
      elseif (d == "partition" or d == "repair") and type(e.to) == "string" then
        local wa, na = place(e.path)
        local _, nb = place(e.to)
        a, b, where = na, nb, wa
      end
      if type(a) == "string" and type(b) == "string" then
        local k = where .. ":" .. pair(a, b)
        local opening = d == "partition" or ((f == "partition" or f == "partition_nodes") and not e.heal)
        if opening and not cut[k] then
          cut[k] = { kind = "partition", a = a, b = b, where = where, from = e.t,
            label = "partition " .. a .. " | " .. b }
        elseif not opening and cut[k] then
          close(cut[k], e.t)
          cut[k] = nil
        end
      elseif d == "heal" or (d == "repair" and e.to == nil) then
        local ks = {}
        for k in pairs(cut) do ks[#ks + 1] = k end
        table.sort(ks)
        for _, k in ipairs(ks) do close(cut[k], e.t); cut[k] = nil end
      end
    end
  end
  local rest = {}
  for _, s in pairs(down) do rest[#rest + 1] = s end
  for _, s in pairs(cut) do rest[#rest + 1] = s end
  table.sort(rest, function(x, y) return x.label < y.label end)
  for _, s in ipairs(rest) do
    s.open = true -- still open when the trace ends
    close(s, math.max(t_end, s.from))
  end
  table.sort(out, function(x, y)
    if x.from ~= y.from then return x.from < y.from end
    return x.label < y.label
  end)
  return out
end

return M
