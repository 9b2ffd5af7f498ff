-- tend.observe.state: the state of a traced run at any instant, a pure
-- function of its trace events (what `tend observe TRACE.jsonl` shows as
-- its time slider moves; design §6.4). No clock, no I/O.
--   M.at(events, t)          the tree, states, nodes, partitions, counters
--   M.step(events, t, what, dir)  the time of the next (or previous) event
--                            of a kind: failure, restart, chaos, any
local lives = require "tend.timeline.lives"

local M = {}

-- The kinds step() looks for.
M.KINDS = {
  failure = { fail = true, escalate = true, give_up = true, stream_fail = true },
  restart = { restart = true, stream_restart = true },
  chaos = { chaos = true },
}

local COUNTED = { -- counter -> the events it counts
  failures = M.KINDS.failure, restarts = M.KINDS.restart, chaos = M.KINDS.chaos,
  dead_letters = { dead_letter = true }, http = { http = true },
  spawns = { spawn = true, spawn_os = true },
}

local function depth(p) return select(2, p:gsub("/", "")) end

local STREAM_STATE = { stream_start = "running", stream_complete = "completed",
  stream_fail = "failed", stream_cancel = "cancelled" }

-- What a stream_* event e tells of the stream run by its actor, folded
-- into s ({ state, stages = {name...} } or nil; returned): its state, and
-- the stages its events named (restarts, backoffs, drops, a stage's
-- failure), in the order first named. Shared by the live observer.
function M.stream(s, e)
  s = s or { state = "running", stages = {} }
  s.state = STREAM_STATE[e.ev] or s.state
  local stage = type(e.detail) == "string" and e.ev ~= "stream_cancel" and e.detail:match("^(%S+)")
  if stage and not (e.ev == "stream_fail" and (stage == "run" or stage == "abort")) then
    local seen = false
    for _, x in ipairs(s.stages) do seen = seen or x == stage end
    if not seen then s.stages[#s.stages + 1] = stage end
  end
  return s
end

-- The state at t (events up to and including t): { t, actors = { {path,
-- node, depth, state, since, incarnation, restarts, failures,
-- last_failure = {t, kind, message}, pid, stream = {state, stages}}
-- sorted by path }, nodes = {
-- {name, up} }, outages = { the partitions and downtimes open at t },
-- counters = { name = total so far }, rates = { name = count in the last
-- second (t-1, t] }, events = how many events so far, last = the last event
-- at or before t }. A lane with no life event (/user, /net/db) has state
-- false. Mailboxes are not in a trace: no actor has a mailbox field here.
function M.at(events, t)
  local upto = {}
  for _, e in ipairs(events) do
    if e.t > t then break end
    upto[#upto + 1] = e
  end
  local banded, nodes = lives.band(upto)
  local by_path, list = {}, {}
  local function actor(p)
    local a = by_path[p]
    if a then return a end
    a = { path = p, depth = depth(p) - 1, state = false, restarts = 0, failures = 0 }
    a.node = p:match("^/@([^/]+)")
    by_path[p] = a
    list[#list + 1] = a
    local up = p:match("^(/.+)/[^/]+$")
    if up then actor(up) end
    return a
  end
  local counters, rates = {}, {}
  for name in pairs(COUNTED) do counters[name], rates[name] = 0, 0 end
  for _, e in ipairs(banded) do
    local p = e.path
    if type(p) == "string" and p:match("^/.") then
      local a = actor(p)
      if e.incarnation then a.incarnation = e.incarnation end
      if M.KINDS.restart[e.ev] then a.restarts = a.restarts + 1 end
      if e.ev == "fail" or e.ev == "stream_fail" then
        a.failures = a.failures + 1
        a.last_failure = { t = e.t, kind = e.kind, message = e.message }
      end
      if e.ev == "spawn_os" then a.pid = e.pid elseif e.ev == "exit" then a.pid = nil end
      if e.ev:sub(1, 7) == "stream_" then a.stream = M.stream(a.stream, e) end
    end
    for name, kinds in pairs(COUNTED) do
      if kinds[e.ev] then
        counters[name] = counters[name] + 1
        if e.t > t - 1 then rates[name] = rates[name] + 1 end
      end
    end
  end
  -- each lane's state: its span that holds t (the last one, at an instant
  -- where several meet)
  for _, s in ipairs(lives.lives(banded, t)) do
    local a = by_path[s.path]
    if a and s.from <= t then a.state, a.since = s.state, s.from end
  end
  -- tree order: an actor's subtree right after it ("/a/b" before "/a-b")
  table.sort(list, function(x, y) return x.path:gsub("/", "\1") < y.path:gsub("/", "\1") end)
  local outages, down = {}, {}
  for _, s in ipairs(lives.outages(banded, t)) do
    if s.open then
      outages[#outages + 1] = { kind = s.kind, a = s.a, b = s.b, from = s.from, label = s.label }
      if s.kind == "down" then down[s.a] = true end
    end
  end
  local names = {}
  for n in pairs(nodes) do names[#names + 1] = n end
  table.sort(names)
  local node_list = {}
  for _, n in ipairs(names) do node_list[#node_list + 1] = { name = n, up = not down[n] } end
  return { t = t, actors = list, nodes = node_list, outages = outages, counters = counters,
    rates = rates, events = #upto, last = upto[#upto] }
end

-- The time of the first event of kind `what` (a key of M.KINDS, or "any")
-- after t (dir "next") or the last one before t (dir "prev"); nil if none.
function M.step(events, t, what, dir)
  local kinds = M.KINDS[what]
  if what ~= "any" and not kinds then
    error("tend.observe.state.step: what: expected failure, restart, chaos or any, got "
      .. tostring(what), 2)
  end
  local function fits(e) return what == "any" or kinds[e.ev] end
  if dir == "prev" then
    for i = #events, 1, -1 do
      local e = events[i]
      if e.t < t and fits(e) then return e.t end
    end
    return nil
  end
  for _, e in ipairs(events) do
    if e.t > t and fits(e) then return e.t end
  end
  return nil
end

return M
