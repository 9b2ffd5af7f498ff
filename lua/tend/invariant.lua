-- tend.invariant and tend.eventually: properties of a run, checked after
-- every scheduler pass in which the virtual time moved (the host's pass
-- hook, src/api/linvariant.c) and at the end. The first that fails ends
-- the run: InvariantFailed, EventuallyFailed, or NoProgress when nothing
-- can happen any more while the scenario still waits. The scenario runner
-- (lua/tend/scenario.lua) reports it; elsewhere the host exits 1 after
-- one line on stderr.
local core = require "tend.core"
local K = require "tend.kinds"
local internal = require "tend.internal"

local M = {}

local checks = {}  -- { name, fn }, in the order declared
local waits = {}   -- tend.eventually: { name, fn, within, after_heal, deadline, done }
local failed       -- the first failure: { kind, name, message, t }
local hooked = false
M.on_failure = nil -- the scenario runner's report (else: stderr, exit 1)
M.waiting = nil    -- the scenario runner's: does the run still wait?

local function fail(kind, name, message)
  if failed then return end
  failed = { kind = kind, name = name, message = message, t = core.now() }
  if M.on_failure then return M.on_failure(failed) end
  io.stderr:write(string.format("tend: %s \"%s\" at t=%.3f: %s\n", kind, name, failed.t, message))
  core.shutdown(1)
end

-- The failure so far, or nil.
function M.failed() return failed end

-- Calls fn protected: true when it returned true; else false and why.
local function holds(fn)
  local ok, r = pcall(fn)
  if ok and r == true then return true end
  if not ok then return false, tostring(type(r) == "table" and r.message or r) end
  return false, "returned " .. tostring(r)
end

-- Checks every invariant and eventually now (the pass hook, the end).
function M.check()
  if failed then return end
  for i = 1, #checks do
    local c = checks[i]
    local ok, r = pcall(c.fn)
    if not (ok and r == true) then
      return fail(K.InvariantFailed, c.name, not ok
        and tostring(type(r) == "table" and r.message or r) or "returned " .. tostring(r))
    end
  end
  if #waits == 0 then return end
  local now = internal.now_ns()
  for _, w in ipairs(waits) do
    if not w.done and w.deadline then
      if holds(w.fn) then
        w.done = true
      elseif now >= w.deadline then
        return fail(K.EventuallyFailed, w.name, string.format("not true within %g s%s", w.within,
          w.after_heal and " after the last heal" or ""))
      end
    end
  end
end

local check = M.check
local function on_pass(stalled)
  check()
  if stalled and M.waiting and M.waiting() then
    local why = "/user/main waits and nothing can happen any more"
    fail(K.NoProgress, why, why)
  end
end

-- Installs the pass hook (once; the scenario runner does, for NoProgress).
function M.hook()
  if hooked then return end
  hooked = true
  core.pass_hook(on_pass)
end

local function check_name(fn, name)
  if type(name) ~= "string" or name == "" then
    error(string.format("%s: name: expected a string, got %s", fn, type(name)), 3)
  end
end

-- tend.invariant(name, fn): fn() must return true after every pass and
-- at the end; false, nil or an error fails the run.
function M.invariant(name, fn)
  check_name("tend.invariant", name)
  if type(fn) ~= "function" then error("tend.invariant: fn: expected a function, got " .. type(fn), 2) end
  checks[#checks + 1] = { name = name, fn = fn }
  M.hook()
end

-- Arms w's window from now.
local function arm(w)
  w.done = false
  w.deadline = internal.now_ns() + math.floor(w.within * 1e9 + 0.5)
  internal.after(w.within, function() end) -- the clock reaches the deadline
end

-- tend.eventually(name, fn, within [, { after_heal = true }]): fn() must
-- return true within `within` seconds of now; after_heal: of the last
-- heal of a nemesis or schedule (the window is off while a fault it
-- injected is active, and restarts at each heal).
function M.eventually(name, fn, within, opts)
  local fname = "tend.eventually"
  check_name(fname, name)
  if type(fn) ~= "function" then error(fname .. ": fn: expected a function, got " .. type(fn), 2) end
  if type(within) ~= "number" or not (within > 0 and within <= 1e9) then
    error(fname .. ": within: expected seconds > 0, got " .. tostring(within), 2)
  end
  if opts ~= nil and (type(opts) ~= "table" or next(opts) ~= nil and next(opts) ~= "after_heal"
      or next(opts, "after_heal") ~= nil) then
    error(fname .. ": options: expected { after_heal = true }, got " ..
      (type(opts) == "table" and "option '" .. tostring(next(opts)) .. "'" or type(opts)), 2)
  end
  local w = { name = name, fn = fn, within = within, after_heal = opts and opts.after_heal }
  waits[#waits + 1] = w
  arm(w)
  if w.after_heal then
    local nemesis = require "tend.nemesis"
    nemesis.listeners[#nemesis.listeners + 1] = function(active)
      if active == 0 then arm(w) else w.deadline = nil end
    end
  end
  M.hook()
end

return M
