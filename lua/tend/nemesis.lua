-- tend.chaos.nemesis and tend.chaos.schedule: faults injected at times
-- drawn from a generator of the nemesis's own (derived from the run's
-- seed), or at the times of an explicit list. Each injection and each
-- heal is one "chaos" trace event carrying what replays it (by, fault,
-- target or a and b, its parameters, heal_after); the faults go through
-- the verbs of tend.chaos (lua/tend/chaos.lua), whose own events are
-- quiet meanwhile. A schedule entry is such an event without ev, path
-- and by: { t = 12.5, fault = "partition", a = "n1", b = "n2",
-- heal_after = 3 }.
local core = require "tend.core"
local K = require "tend.kinds"
local internal = require "tend.internal"

local M = {}

-- What each fault acts on: an actor, a pair of actors (from, to), a pair
-- of hosts or nodes, a node, a pair of nodes.
local CLASS = { crash = "actor", kill = "actor", stop = "actor", freeze = "actor",
  flaky = "actor", signal = "actor", reset = "actor", delay = "actors", drop = "actors",
  partition = "hosts", latency = "hosts", crash_node = "node", restart_node = "node",
  partition_nodes = "nodes" }
local FAULTS = { "crash", "kill", "stop", "freeze", "delay", "drop", "flaky", "signal",
  "partition", "latency", "reset", "crash_node", "restart_node", "partition_nodes" }
-- The faults a heal undoes (the others heal by supervision, or not).
local HEALS = { freeze = true, delay = true, drop = true, flaky = true, partition = true,
  latency = true, crash_node = true, partition_nodes = true }
-- Each fault's parameters, in the order its event carries them.
local PARAMS = { delay = { "seconds" }, drop = { "p" }, flaky = { "p" }, signal = { "signal" },
  latency = { "latency", "jitter" } }

local replacement    -- the list of --chaos-schedule, or nil
local started = 0    -- nemeses and schedules started in this run
local active = 0     -- faults injected and not yet healed
M.listeners = {}     -- fn(active) at each injection healed later, each heal

local function chaos() return require "tend.chaos" end

-- ------------------------------------------------------------ the generator

-- splitmix64: the nemesis's own numbers, so that replacing it by its
-- schedule leaves every other random choice of the run as it was.
local function generator(seed)
  local s = seed
  return function()
    s = s + 0x9E3779B97F4A7C15
    local z = s
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return ((z ~ (z >> 31)) >> 11) * 2.0 ^ -53 -- in [0, 1)
  end
end

local function ms(x) return math.floor(x * 1000 + 0.5) / 1000 end

-- A number of [lo, hi], on the millisecond (the trace writes times to
-- the microsecond: a drawn value replays exactly).
local function between(u, range) return ms(range[1] + u() * (range[2] - range[1])) end

-- ------------------------------------------------------------ targets

local function glob(pattern)
  return "^" .. pattern:gsub("[%^%$%(%)%%%.%[%]%+%-%?]", "%%%0"):gsub("%*", "[^/]*") .. "$"
end

-- Never a target: the guardians, the scenario's main chunk, the nemeses.
local function spared(path)
  return path == "/user" or path == "/system" or path == "/user/main"
    or path:match("^/system/nemesis") or path:match("^/system/schedule")
end

-- The actors' rows (tend.ps), read once a step (cleared by inject).
local rows
local function live()
  rows = rows or core.ps()
  return rows
end

-- The live actors whose path matches one of the patterns, in tree order.
local function actors(patterns)
  local out = {}
  for _, p in ipairs(patterns) do
    if p:sub(1, 1) == "/" then
      live()
      local lp = glob(p)
      for _, r in ipairs(rows) do
        if not spared(r.path) and r.path:match(lp) and not out[r.path] then
          out[#out + 1], out[r.path] = r.path, true
        end
      end
    end
  end
  return out
end

local function sim_nodes()
  return package.loaded["tend.simnodes"]
end

-- The targets that are no path: host names, or node names (when nodes).
local function names(targets, nodes_only)
  local out, sim = {}, sim_nodes()
  for _, t in ipairs(targets) do
    if t:sub(1, 1) ~= "/" then
      local is_node = sim and sim.has(t)
      if not nodes_only or is_node then out[#out + 1] = t end
    end
  end
  return out
end

local function node_up(name)
  for _, n in ipairs(core.sim_list()) do
    if n.name == name then return n.state == "up" end
  end
  return false
end

-- The candidates of a fault of class c now: a list of targets.
local function candidates(c, targets)
  if c == "actor" or c == "actors" then return actors(targets) end
  if c == "hosts" then return names(targets, false) end
  local list = names(targets, true)
  if c == "node" then
    local up = {}
    for _, n in ipairs(list) do
      if node_up(n) then up[#up + 1] = n end
    end
    return up
  end
  return list
end

-- The ref of the live actor at path, or nil.
local function ref_at(path)
  for _, r in ipairs(live()) do
    if r.path == path then return r.ref end
  end
  return nil
end

-- ------------------------------------------------------------ applying

-- The event of an injection or a heal: by, fault, target | a, b, the
-- fault's parameters, heal_after, heal.
local function emit(path, by, e, heal)
  local f = { "by", by, "fault", e.fault }
  local what = e.target or (e.a .. " " .. e.b)
  if e.target then
    f[#f + 1], f[#f + 2] = "target", e.target
  else
    f[#f + 1], f[#f + 2], f[#f + 3], f[#f + 4] = "a", e.a, "b", e.b
  end
  local detail = by .. ": " .. (heal and "heal " or "") .. e.fault .. " " .. what
  if not heal then
    for _, k in ipairs(PARAMS[e.fault] or {}) do
      if e[k] ~= nil then
        f[#f + 1], f[#f + 2] = k, e[k]
        detail = detail .. " " .. k .. "=" .. tostring(e[k])
      end
    end
    if e.heal_after then
      f[#f + 1], f[#f + 2] = "heal_after", e.heal_after
      detail = detail .. string.format(" (heal after %.3f s)", e.heal_after)
    end
  else
    f[#f + 1], f[#f + 2] = "heal", true
  end
  core.chaos_event(path, detail, nil, f)
end

local function always() return true end

-- Applies e (quietly: the event is emit's); returns its undo or nil.
local function apply(e)
  local c, fault = chaos(), e.fault
  local class = CLASS[fault]
  if class == "actor" then
    local ref = ref_at(e.target)
    if not ref then return nil end
    if fault == "crash" then c.crash(ref)
    elseif fault == "kill" then c.kill(ref)
    elseif fault == "stop" then core.stop(ref)
    elseif fault == "signal" then c.signal(ref, e.signal)
    elseif fault == "reset" then c.reset(ref)
    elseif fault == "freeze" then
      c.freeze(ref, math.huge)
      return function() if core.alive(ref) then c.thaw(ref) end end
    elseif fault == "flaky" then
      local rule = c.crash_on(e.target, always, { p = e.p, error = K.ChaosError })
      return function() c.lift(rule) end
    end
  elseif class == "actors" then
    local rule = fault == "delay" and c.delay(e.a, e.b, e.seconds) or c.drop(e.a, e.b, e.p)
    return function() c.lift(rule) end
  elseif fault == "partition" or fault == "partition_nodes" then
    c.partition(e.a, e.b)
    return function() c.repair(e.a, e.b) end
  elseif fault == "latency" then
    c.latency(e.a, e.b, e.latency, e.jitter)
    return function() c.latency(e.a, e.b, 0, 0) end
  elseif fault == "crash_node" then
    c.crash_node(e.target)
    return function() if not node_up(e.target) then c.restart_node(e.target) end end
  elseif fault == "restart_node" then
    c.crash_node(e.target)
    c.restart_node(e.target)
  end
  return nil
end

local function quietly(fn, ...)
  core.chaos_quiet(true)
  local ok, err = pcall(fn, ...)
  core.chaos_quiet(false)
  return ok, err
end

-- Injects e now (its event first), and arms its heal.
local function inject(path, by, e)
  emit(path, by, e, false)
  local ok, undo = quietly(apply, e)
  rows = nil
  if not (ok and undo and e.heal_after) then return end
  active = active + 1
  for _, fn in ipairs(M.listeners) do fn(active) end
  internal.after(e.heal_after, function()
    emit(path, by, e, true)
    quietly(undo)
    active = active - 1
    for _, fn in ipairs(M.listeners) do fn(active) end
  end)
end

-- How many faults are injected and not healed (tend.eventually).
function M.active() return active end

-- Waits until the virtual time t (seconds), to the nanosecond.
local function sleep_until(t)
  local d = math.floor(t * 1e9 + 0.5) - internal.now_ns()
  if d > 0 then core.sleep(d / 1e9) end
end

-- Starts the actor /system/<name> running body once, then idle.
local function start(name, body)
  started = started + 1
  local n = started == 1 and name or (name .. "-" .. started)
  local ref = core.node_spawn(function()
    local done = false
    return function()
      if done then return end
      done = true
      body("/system/" .. n)
    end
  end, { name = n })
  core.send(ref, "go")
  return ref
end

-- ------------------------------------------------------------ checking

-- Raises "fn: what: expected ..., got ..." at the caller of the API
-- (level: bad's callers between, 4 by default).
local function bad(fn, what, expected, got, level)
  local shown = type(got) == "string" and string.format("%q", got)
    or type(got) == "number" and tostring(got) or type(got)
  error(string.format("%s: %s: expected %s, got %s", fn, what, expected, shown), level or 4)
end

local function is_seconds(x) return type(x) == "number" and x == x and x >= 0 and x <= 1e9 end

local function check_entry(i, e)
  local fn, what = "tend.chaos.schedule", "entry " .. i
  if type(e) ~= "table" then bad(fn, what, "a table {t = ..., fault = ..., ...}", e, 5) end
  if not is_seconds(e.t) then bad(fn, what .. ": t", "a virtual time in seconds >= 0", e.t, 5) end
  local class = CLASS[e.fault]
  if not class then bad(fn, what .. ": fault", "one of " .. table.concat(FAULTS, ", "), e.fault, 5) end
  local pair = class == "actors" or class == "hosts" or class == "nodes"
  if pair then
    if type(e.a) ~= "string" or type(e.b) ~= "string" then
      bad(fn, what .. ": a, b", "two targets (paths, hosts or nodes) for " .. e.fault,
        type(e.a) == "string" and e.b or e.a, 5)
    end
  elseif type(e.target) ~= "string" then
    bad(fn, what .. ": target", "a path, host or node name for " .. e.fault, e.target, 5)
  end
  if e.heal_after ~= nil and not is_seconds(e.heal_after) then
    bad(fn, what .. ": heal_after", "seconds >= 0", e.heal_after, 5)
  end
  if (e.fault == "drop" or e.fault == "flaky") and not (type(e.p) == "number" and e.p >= 0 and e.p <= 1) then
    bad(fn, what .. ": p", "a probability in [0, 1]", e.p, 5)
  end
  if e.fault == "delay" and not is_seconds(e.seconds) then bad(fn, what .. ": seconds", "seconds >= 0", e.seconds, 5) end
  if e.fault == "latency" and not is_seconds(e.latency) then bad(fn, what .. ": latency", "seconds >= 0", e.latency, 5) end
  if e.fault == "signal" and (type(e.signal) ~= "string" or not core.signal_number(e.signal)) then
    bad(fn, what .. ": signal", "a signal name such as \"TERM\"", e.signal, 5)
  end
end

-- The body of a schedule: each entry at its time, in order of time.
local function run_list(list, by)
  return function(path)
    for _, e in ipairs(list) do
      sleep_until(e.t)
      inject(path, by, e)
    end
  end
end

local function sorted(list)
  local out = {}
  for i, e in ipairs(list) do
    check_entry(i, e)
    out[i] = setmetatable({}, { __index = e })
    out[i].i = i
  end
  table.sort(out, function(x, y) if x.t ~= y.t then return x.t < y.t end return x.i < y.i end)
  return out
end

-- tend.chaos.schedule(list) -> ref: /system/schedule applies each entry
-- at its time t (virtual seconds) and heals it heal_after seconds later.
function M.schedule(list)
  if type(list) ~= "table" then bad("tend.chaos.schedule", "list", "a list of entries", list) end
  return start("schedule", run_list(sorted(list), "schedule"))
end

-- --chaos-schedule: every nemesis of the run runs this list instead (the
-- first the list, the others none).
function M.replace(list)
  replacement = sorted(list)
end

-- ------------------------------------------------------------ the nemesis

local OPTS = { faults = true, targets = true, every = true, heal_after = true, from = true,
  to = true, delay = true, p = true, latency = true, jitter = true, signals = true }
local OPT_LIST = "faults, targets, every, heal_after, from, to, delay, p, latency, jitter, signals"

local function range(fn, o, k, default, lo, hi)
  local r = o[k]
  if r == nil then return default end
  if type(r) ~= "table" or type(r[1]) ~= "number" or type(r[2]) ~= "number"
    or not (r[1] >= lo and r[1] <= r[2] and r[2] <= hi) then
    error(string.format("%s: option '%s': expected {min, max} with %g <= min <= max <= %g, got %s",
      fn, k, lo, hi, type(r) == "table" and tostring(r[1]) .. ", " .. tostring(r[2]) or tostring(r)), 4)
  end
  return r
end

local function check(o)
  local fn = "tend.chaos.nemesis"
  if type(o) ~= "table" then bad(fn, "options", "a table {faults = ..., targets = ...}", o) end
  for k in pairs(o) do
    if not OPTS[k] then bad(fn, "option '" .. tostring(k) .. "'", "one of " .. OPT_LIST, k) end
  end
  if type(o.faults) ~= "table" or #o.faults == 0 then
    bad(fn, "option 'faults'", "a list of faults (" .. table.concat(FAULTS, ", ") .. ")", o.faults)
  end
  for i, f in ipairs(o.faults) do
    if not CLASS[f] then bad(fn, "option 'faults' [" .. i .. "]", "one of " .. table.concat(FAULTS, ", "), f) end
  end
  if type(o.targets) ~= "table" or #o.targets == 0 then
    bad(fn, "option 'targets'", "a list of paths (\"/user/workers/*\"), host or node names", o.targets)
  end
  for i, t in ipairs(o.targets) do
    if type(t) ~= "string" or t == "" then bad(fn, "option 'targets' [" .. i .. "]", "a path, host or node name", t) end
  end
  for _, k in ipairs { "from", "to" } do
    if o[k] ~= nil and not is_seconds(o[k]) then bad(fn, "option '" .. k .. "'", "a virtual time in seconds >= 0", o[k]) end
  end
  if o.from and o.to and o.to < o.from then bad(fn, "option 'to'", "a time >= from (" .. o.from .. ")", o.to) end
  if o.signals ~= nil then
    if type(o.signals) ~= "table" or #o.signals == 0 then bad(fn, "option 'signals'", "a list of signal names", o.signals) end
    for i, s in ipairs(o.signals) do
      if type(s) ~= "string" or not core.signal_number(s) then
        bad(fn, "option 'signals' [" .. i .. "]", "a signal name such as \"TERM\"", s)
      end
    end
  end
  return {
    faults = o.faults, targets = o.targets, from = o.from, to = o.to,
    every = range(fn, o, "every", { 1, 5 }, 0.001, 1e9),
    heal_after = range(fn, o, "heal_after", nil, 0, 1e9),
    delay = range(fn, o, "delay", { 0.05, 1 }, 0, 1e9),
    p = range(fn, o, "p", { 0.5, 1 }, 0, 1),
    latency = range(fn, o, "latency", { 0.05, 0.5 }, 0, 1e9),
    jitter = range(fn, o, "jitter", { 0, 0.05 }, 0, 1e9),
    signals = o.signals or { "TERM", "KILL" },
  }
end

-- Two distinct members of list (nil when fewer than two).
local function two(u, list)
  if #list < 2 then return nil end
  local i = 1 + math.floor(u() * #list)
  local j = 1 + math.floor(u() * (#list - 1))
  if j >= i then j = j + 1 end
  return list[i], list[j]
end

-- One injection drawn now (nil when no fault has a target now).
local function draw(u, o)
  local fault = o.faults[1 + math.floor(u() * #o.faults)]
  local class = CLASS[fault]
  local list = candidates(class, o.targets)
  local e = { fault = fault }
  if class == "actors" or class == "hosts" or class == "nodes" then
    e.a, e.b = two(u, list)
    if not e.a then return nil end
  else
    if #list == 0 then return nil end
    e.target = list[1 + math.floor(u() * #list)]
  end
  if fault == "delay" then e.seconds = between(u, o.delay)
  elseif fault == "drop" or fault == "flaky" then e.p = between(u, o.p)
  elseif fault == "latency" then e.latency, e.jitter = between(u, o.latency), between(u, o.jitter)
  elseif fault == "signal" then e.signal = o.signals[1 + math.floor(u() * #o.signals)]
  end
  if o.heal_after and HEALS[fault] then e.heal_after = between(u, o.heal_after) end
  return e
end

-- tend.chaos.nemesis{ faults, targets, every = {min, max}, heal_after =
-- {min, max}, from = t0, to = t1, delay, p, latency, jitter, signals }
-- -> ref: /system/nemesis injects a fault drawn from faults on a target
-- drawn from targets every `every` seconds from t0 to t1 (virtual
-- times), each healed heal_after later. Under --chaos-schedule it runs
-- that list instead.
function M.nemesis(opts)
  local o = check(opts)
  if replacement then
    local list = replacement
    replacement = {} -- (the later nemeses: none)
    return start("nemesis", run_list(list, "schedule"))
  end
  local u = generator(core.seed() ~ ((started + 1) * 0x2545F4914F6CDD1D))
  return start("nemesis", function(path)
    local t = o.from or ms(core.now())
    while true do
      t = ms(t + between(u, o.every))
      if o.to and t > o.to then return end
      sleep_until(t)
      rows = nil
      local e = draw(u, o)
      if e then
        e.t = t
        inject(path, "nemesis", e)
      end
    end
  end)
end

return M
