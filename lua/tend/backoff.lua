-- tend.backoff and tend.retry: builders that produce backoff specs (plain
-- data). The C core validates them (core.backoff_check, and again at spawn)
-- and runs every state machine, delay and timer. The typed builders
-- (tend.supervise, tend.restart_with_backoff, ...) are C constructors.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local internal = require "tend.internal"

local M = {}

----------------------------------------------------------------- BackoffOpts
local Spec = core.backoff_mt()
Spec.__index = Spec

local function check(spec, fn, level)
  local ok, err = core.backoff_check(spec, fn)
  if not ok then error(err, level + 1) end
  return spec
end

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- A new spec: spec's fields with `changes`, checked for `fn`.
local function with(spec, changes, fn)
  local s = setmetatable(copy(spec), Spec)
  for k, v in pairs(changes) do s[k] = v end
  return check(s, fn, 3)
end

-- The child on another scheduler (option `scheduler`): a stand-in of this
-- scheduler's (lua/tend/away.lua) is the backoff supervisor's child, for
-- the actor made there by "module.factory".
local function elsewhere(factory, k, fn)
  local _, n = core.scheduler()
  if math.type(k) ~= "integer" or k < 0 or k >= n then
    error(("%s: option 'scheduler': expected an integer in 0..%d, got %s"):format(fn, n - 1,
      tostring(k)), 4)
  end
  if type(factory) ~= "string" or not factory:find(".", 2, true) then
    error(fn .. ": factory: a child on another scheduler is named as \"module.factory\" (its"
      .. " module is loaded there), got " .. (type(factory) == "function" and "a closure" or type(factory)), 4)
  end
  return function(ctx, ...)
    return require("tend.away").standin(ctx, k, factory, { ... })
  end
end

local function make(mode, factory, opts, fn)
  if opts ~= nil and type(opts) ~= "table" then
    error(fn .. ": options: expected a table, got " .. type(opts), 3)
  end
  local s = setmetatable(copy(opts or {}), Spec)
  if s.scheduler ~= nil then
    factory = elsewhere(factory, s.scheduler, fn)
    s.scheduler = nil
  end
  s.mode, s.factory = mode, factory
  return check(s, fn, 3)
end

function M.on_failure(factory, opts)
  return make("on_failure", factory, opts, "tend.backoff.on_failure")
end

function M.on_stop(factory, opts)
  return make("on_stop", factory, opts, "tend.backoff.on_stop")
end

function Spec:with_auto_reset(seconds)
  return with(self, { reset = "auto", reset_after = seconds }, "with_auto_reset")
end

function Spec:with_manual_reset()
  return with(self, { reset = "manual" }, "with_manual_reset")
end

function Spec:with_max_retries(n)
  return with(self, { max_retries = n }, "with_max_retries")
end

function Spec:with_supervisor_strategy(strategy)
  return with(self, { supervisor_strategy = strategy }, "with_supervisor_strategy")
end

function Spec:with_reply_while_stopped(value)
  return with(self, { reply_while_stopped = value }, "with_reply_while_stopped")
end

-- Akka's withHandlerWhileStopped: messages go to `ref` while the child is
-- stopped (their sender kept).
function Spec:with_handler_while_stopped(ref)
  return with(self, { handler_while_stopped = ref }, "with_handler_while_stopped")
end

function Spec:with_stash(capacity)
  return with(self, { stash = capacity }, "with_stash")
end

function Spec:with_final_stop_message(pred)
  return with(self, { final_stop_message = pred }, "with_final_stop_message")
end

function Spec:with_default_stopping_strategy()
  return with(self, { default_stopping_strategy = true }, "with_default_stopping_strategy")
end

-- Queries of a running backoff supervisor (Akka's GetCurrentChild,
-- GetRestartCount, Reset): answered at once by the C core.
M.child = core.backoff_child
M.restart_count = core.backoff_restart_count
M.reset = core.backoff_reset

-- tend.backoff.delays(opts, n): the first n delays of this config (drawn
-- from a copy of the generator: the running system is not disturbed).
function M.delays(opts, n)
  return core.backoff_delays(opts, n)
end

-- tend.backoff{ mode = ..., factory = ..., ... }: the same, as one table.
setmetatable(M, {
  __call = function(_, t)
    if type(t) ~= "table" then error("tend.backoff: expected a table, got " .. type(t), 2) end
    local s = setmetatable(copy(t), Spec)
    if s.scheduler ~= nil then
      s.factory = elsewhere(s.factory, s.scheduler, "tend.backoff")
      s.scheduler = nil
    end
    return check(s, "tend.backoff", 2)
  end,
})

------------------------------------------------------------------- retry
local retry_keys = { min_backoff = true, max_backoff = true, random_factor = true,
  max_restarts = true, jitter = true, algorithm = true, slot_time = true, ceiling = true,
  stay_at_ceiling = true }

-- tend.retry(fn, opts): calls fn; on error waits the next backoff delay (only
-- the calling actor waits) and calls again, up to max_restarts retries; then
-- raises RetriesExhausted with .last (the last error) and .attempts.
function M.retry(fn, opts)
  if type(fn) ~= "function" then
    error("tend.retry: fn: expected a function, got " .. type(fn), 2)
  end
  if type(opts) ~= "table" then
    error("tend.retry: options: expected a table, got " .. type(opts), 2)
  end
  local unknown = internal.check_keys(opts, retry_keys, "tend.retry")
  if unknown then error(unknown, 2) end
  local max = opts.max_restarts
  if max == nil then max = 10 end
  if math.type(max) ~= "integer" or max < 0 then
    error("tend.retry: option 'max_restarts': expected an integer >= 0, got " .. tostring(max), 2)
  end
  local cfg = {}
  for k, v in pairs(opts) do if k ~= "max_restarts" then cfg[k] = v end end
  local ok_gen, delays = pcall(core.backoff_delay_generator, cfg, "tend.retry")
  if not ok_gen then error(delays, 2) end
  local attempts = 0
  while true do
    attempts = attempts + 1
    local results = table.pack(pcall(fn))
    if results[1] then return table.unpack(results, 2, results.n) end
    if attempts > max then
      local e = core.error(K.RetriesExhausted,
        string.format("gave up after %d attempts: %s", attempts, tostring(results[2])))
      e.last = results[2]
      e.attempts = attempts
      error(e, 2)
    end
    core.sleep((delays:next()))
  end
end

return M
