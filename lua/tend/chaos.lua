-- tend.chaos: seeded fault injection (design §3.6). Rules live here; the C
-- core calls the two filters below only while some rule exists. Every
-- injection is a "chaos" trace event. Random choices use tend.random, so a
-- seed replays them.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local internal = require "tend.internal"

local M = {}

local crash_rules = {} -- {path, pred, nth, p, kind, seen}
local link_rules = {}  -- {from, to, delay | p}
local frozen = {}      -- list of refs frozen by freeze()

-- A ref, or a path ("/user/db"), or "*" (any), as a path pattern.
local function path_of(x, what, fn)
  if x == nil or x == "*" then return "*" end
  if type(x) == "string" then return x end
  local ok, p = pcall(function() return x:path() end)
  if ok and type(p) == "string" then return p end
  error(string.format("%s: %s: expected a ref, a path or \"*\", got %s", fn, what, type(x)), 3)
end

-- Checks a duration argument as every duration of tend is checked: a
-- number >= 0 (> 0 when positive), at most 1e9 s (math.huge only where
-- huge is true); raises at the caller of fn.
local function check_seconds(fn, what, s, positive, huge)
  if type(s) ~= "number" or s ~= s or s < 0 or (positive and s == 0) then
    error(string.format("%s: %s: expected a number %s, got %s", fn, what,
      positive and "> 0" or ">= 0", tostring(s)), 3)
  end
  if s > 1e9 and not (huge and s == math.huge) then
    error(string.format("%s: %s: expected a number of seconds <= 1e9%s, got %s", fn, what,
      huge and " (or math.huge)" or "", tostring(s)), 3)
  end
end

local function matches(pattern, ref)
  return pattern == "*" or (ref ~= nil and ref:path() == pattern)
end

local function on_receive(ref, msg)
  for _, r in ipairs(crash_rules) do
    if matches(r.path, ref) and r.pred(msg) then
      r.seen = r.seen + 1
      local hit
      if r.nth then hit = r.seen % r.nth == 0 else hit = core.random() < r.p end
      if hit then
        core.chaos_event(ref, "crash_on")
        return core.error(r.kind, "injected by tend.chaos.crash_on")
      end
    end
  end
  return nil
end

-- from, to: the actors at the two ends (for an ask's request and reply,
-- the asker at its end); real_to, real_from: where a delayed message goes
-- and who sent it (the pending ask itself, for ask traffic).
local function on_send(from, to, msg, real_to, real_from)
  for _, r in ipairs(link_rules) do
    if matches(r.from, from) and matches(r.to, to) then
      if r.delay then
        core.chaos_event(from or "*", string.format("delay %.3f s", r.delay), to:path())
        internal.after(r.delay, function() core.chaos_deliver(real_to, msg, real_from) end)
        return true, false -- taken, to be delivered later
      elseif core.random() < r.p then
        core.chaos_event(from or "*", "drop", to:path())
        return true, true -- taken: a dead letter
      end
    end
  end
  return nil
end

local function install()
  core.chaos_filters(#crash_rules > 0 and on_receive or nil,
    #link_rules > 0 and on_send or nil)
end

-- Raises (at the caller of fn) unless x is an actor ref.
local function check_ref(x, fn)
  if not pcall(core.alive, x) then
    error(string.format("%s: ref: expected an actor ref, got %s", fn, type(x)), 3)
  end
end

-- crash(ref, err): fail ref as if its behavior raised err (a kind or a
-- tend.error value; default "ChaosCrash").
function M.crash(ref, err)
  check_ref(ref, "tend.chaos.crash")
  core.chaos_event(ref, "crash")
  core.chaos_crash(ref, err or K.ChaosCrash)
end

-- kill(ref): fail ref with Killed now, wherever it is (tend.kill queues
-- Akka's Kill behind its mail instead).
function M.kill(ref)
  check_ref(ref, "tend.chaos.kill")
  core.chaos_event(ref, "kill")
  core.chaos_crash(ref, core.error(K.Killed, ref:path() .. " was killed"))
end

-- signal(ref, name): sends the signal to ref's OS process (its group),
-- or to a simulated process.
function M.signal(ref, sig)
  check_ref(ref, "tend.chaos.signal")
  if type(sig) ~= "string" or not core.signal_number(sig) then
    error(string.format("tend.chaos.signal: signal: expected a signal name such as \"SEGV\", got %s",
      tostring(sig)), 2)
  end
  local sim = require("tend.process").is_sim(ref)
  if not sim and not core.alive(ref) then return end
  core.chaos_event(ref, "signal " .. sig)
  if sim then
    core.chaos_deliver(ref, { signal = sig })
  elseif not core.process_signal_ref(ref, sig) then
    error("tend.chaos.signal: ref: " .. tostring(ref) .. " runs no OS process", 2)
  end
end

-- flaky(fn, {p = 0.5, error = "ChaosError"}) -> a function that raises
-- error with probability p, else calls fn.
function M.flaky(fn, opts)
  if type(fn) ~= "function" then error("tend.chaos.flaky: fn: expected a function, got " .. type(fn), 2) end
  if opts ~= nil and type(opts) ~= "table" then
    error("tend.chaos.flaky: options: expected a table {p = ..., error = ...}, got " .. type(opts), 2)
  end
  opts = opts or {}
  local p, kind = opts.p or 0.5, opts.error or K.ChaosError
  if type(p) ~= "number" or p < 0 or p > 1 then
    error("tend.chaos.flaky: option 'p': expected a number in [0, 1], got " .. tostring(p), 2)
  end
  return function(...)
    if core.random() < p then
      core.chaos_event(core.self() or "/", "flaky")
      core.raise(kind, "injected by tend.chaos.flaky")
    end
    return fn(...)
  end
end

-- crash_on(ref_or_path, pred, {nth = N} | {p = P}, [error kind]): the actor
-- fails on every Nth matching message it receives, or on each with
-- probability P.
function M.crash_on(target, pred, opts)
  local path = path_of(target, "ref_or_path", "tend.chaos.crash_on")
  if type(pred) ~= "function" then
    error("tend.chaos.crash_on: pred: expected a function, got " .. type(pred), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("tend.chaos.crash_on: options: expected a table {nth = ...} or {p = ...}, got " .. type(opts), 2)
  end
  opts = opts or { nth = 1 }
  if opts.nth ~= nil and (math.type(opts.nth) ~= "integer" or opts.nth < 1) then
    error("tend.chaos.crash_on: option 'nth': expected an integer >= 1, got " .. tostring(opts.nth), 2)
  end
  if opts.p ~= nil and (type(opts.p) ~= "number" or opts.p < 0 or opts.p > 1) then
    error("tend.chaos.crash_on: option 'p': expected a number in [0, 1], got " .. tostring(opts.p), 2)
  end
  local rule = { path = path, pred = pred, nth = opts.nth,
    p = opts.p or 1, kind = opts.error or K.ChaosCrash, seen = 0 }
  crash_rules[#crash_rules + 1] = rule
  install()
  return rule
end

-- delay(from, to, seconds): messages from `from` to `to` arrive later.
function M.delay(from, to, seconds)
  check_seconds("tend.chaos.delay", "seconds", seconds) -- (never: drop)
  local rule = { from = path_of(from, "from", "tend.chaos.delay"),
    to = path_of(to, "to", "tend.chaos.delay"), delay = seconds }
  link_rules[#link_rules + 1] = rule
  install()
  return rule
end

-- drop(from, to, p): each such message is lost with probability p.
function M.drop(from, to, p)
  if type(p) ~= "number" or p < 0 or p > 1 then
    error("tend.chaos.drop: p: expected a number in [0, 1], got " .. tostring(p), 2)
  end
  local rule = { from = path_of(from, "from", "tend.chaos.drop"),
    to = path_of(to, "to", "tend.chaos.drop"), p = p }
  link_rules[#link_rules + 1] = rule
  install()
  return rule
end

-- lift(rule): the rule crash_on, delay or drop returned goes (the others
-- stay); a rule already gone is no error.
function M.lift(rule)
  for _, list in ipairs { crash_rules, link_rules } do
    for i = #list, 1, -1 do
      if list[i] == rule then table.remove(list, i) end
    end
  end
  install()
end

-- freeze(ref, seconds): ref processes nothing for that long (its mailbox
-- fills), then goes on; math.huge: until thaw(ref) or heal().
function M.freeze(ref, seconds)
  check_seconds("tend.chaos.freeze", "seconds", seconds, true, true) -- huge: until heal
  check_ref(ref, "tend.chaos.freeze")
  core.chaos_event(ref, string.format("freeze %.3f s", seconds))
  core.chaos_freeze(ref)
  frozen[#frozen + 1] = ref
  if seconds == math.huge then return end
  internal.after(seconds, function()
    core.chaos_thaw(ref)
    core.chaos_event(ref, "thaw")
  end)
end

-- thaw(ref): a frozen ref takes messages again now.
function M.thaw(ref)
  check_ref(ref, "tend.chaos.thaw")
  core.chaos_thaw(ref)
  core.chaos_event(ref, "thaw")
end

-- nemesis{...} and schedule(list): faults drawn from a generator of their
-- own, or a list of them (lua/tend/nemesis.lua).
function M.nemesis(opts) return require("tend.nemesis").nemesis(opts) end
function M.schedule(list) return require("tend.nemesis").schedule(list) end

-- heal(): every rule goes, every frozen actor thaws.
-- The network (the simulated one, under --virtual-time; turmoil's verbs):
-- a and b are host names or actor refs (the host each lives on).
local function simnet() return require "tend.simnet" end
local function net(verb, ...) -- its errors are the caller's
  local ok, err = pcall(simnet()[verb], ...)
  if not ok then error(err, 3) end
end
-- Two simulated nodes (tend.sim.nodes): the bus between them instead.
local function nodes(a, b)
  local sim = package.loaded["tend.simnodes"]
  return sim and sim.has(a) and sim.has(b) and sim
end
function M.partition(a, b)
  local sim = nodes(a, b)
  if sim then sim.partition(a, b) else net("partition", a, b) end
end
function M.repair(a, b)
  local sim = nodes(a, b)
  if sim then sim.repair(a, b) else net("repair", a, b) end
end
function M.hold(a, b) net("hold", a, b) end
function M.release(a, b) net("release", a, b) end
function M.latency(a, b, seconds, jitter)
  check_seconds("tend.chaos.latency", "seconds", seconds)
  if jitter ~= nil then check_seconds("tend.chaos.latency", "jitter", jitter) end
  local sim = nodes(a, b)
  if sim then sim.latency(a, b, seconds, jitter) else net("latency", a, b, seconds, jitter) end
end

-- crash_node(name) / restart_node(name): a simulated node (tend.sim.nodes)
-- dies at once, as with kill -9 (no post_stop runs; the others see it
-- down after the node timeout), or starts again as a new incarnation.
local function sim_verb(verb, name)
  local sim = package.loaded["tend.simnodes"]
  if not (sim and sim.has(name)) then
    error(string.format("tend.chaos.%s: node: expected the name of a simulated node (tend.sim.nodes), got %s",
      verb, type(name) == "string" and string.format("%q", name) or type(name)), 3)
  end
  local ok, err = pcall(verb == "crash_node" and sim.crash or sim.restart, name)
  if not ok then error(err, 3) end
end
function M.crash_node(name) sim_verb("crash_node", name) end
function M.restart_node(name) sim_verb("restart_node", name) end

-- reset(conn): the connection ends abruptly (RST): both ends see `closed`
-- with reason "reset". A real connection or a simulated one.
function M.reset(conn)
  local s = require("tend.tcp").socket_of(conn)
  if s == nil then
    error("tend.chaos.reset: conn: expected a live connection ref (tend.tcp.connect, "
      .. "or a handler's ctx.self), got " .. tostring(conn), 2)
  end
  s:reset()
end

function M.heal()
  crash_rules, link_rules = {}, {}
  install()
  for _, ref in ipairs(frozen) do core.chaos_thaw(ref) end
  frozen = {}
  if package.loaded["tend.simnet"] then simnet().heal() end -- links as new
  if package.loaded["tend.simnodes"] then package.loaded["tend.simnodes"].heal() end
  core.chaos_event("*", "heal")
end

return M
