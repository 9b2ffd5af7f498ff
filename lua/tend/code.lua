-- tend.code: the code inside actors. tend.inspect(ref) is OTP's
-- sys:get_state: an actor's state read from outside without stopping it
-- (a busy actor, parked in the middle of a message, goes on undisturbed).
local core = require "tend.core"

local M = {}

local function is_module(v)
  for _, m in pairs(package.loaded) do
    if rawequal(m, v) then return true end
  end
  return false
end

-- The state a behavior holds: a function's upvalues (its closure's locals;
-- not _ENV, functions or modules such as tend: code, not state), a hook
-- table's fields other than its hooks (functions).
function M.behavior_state(b)
  local vars = {}
  if type(b) == "function" then
    for i = 1, math.huge do
      local name, value = debug.getupvalue(b, i)
      if name == nil then break end
      if name ~= "_ENV" and name ~= "" and type(value) ~= "function" and not is_module(value) then
        vars[name] = value
      end
    end
  elseif type(b) == "table" then
    for k, v in next, b do
      if type(v) ~= "function" then vars[k] = v end
    end
  end
  return vars
end

-- The message a parked coroutine is in the middle of: the argument of the
-- behavior's (or its receive hook's) frame. Returns found, message.
local function current_message(thread, behavior, hooks)
  local fn = behavior
  if hooks then
    local ok, r = pcall(function() return behavior.receive end)
    fn = ok and r or nil
  end
  if type(fn) ~= "function" then return false end
  for level = 0, 200 do
    local info = debug.getinfo(thread, level, "f")
    if info == nil then break end
    if rawequal(info.func, fn) then
      local _, msg = debug.getlocal(thread, level, hooks and 2 or 1)
      return true, msg
    end
  end
  return false
end

local function state_of(ref)
  for _, row in ipairs(core.ps()) do
    if row.ref == ref then return row.state end
  end
  return "dead"
end

-- tend.inspect(ref) -> {path, state, behavior = "function"|"hooks", vars,
-- mailbox, busy, current, restarts, timers, watchers, watching, factory},
-- or nil when the actor is dead.
function M.inspect(ref)
  local ok, a = pcall(core.code_actor, ref)
  if not ok then error((tostring(a):gsub("^[^:]*:%d+: ", "")), 2) end -- the caller's place
  if a == nil then return nil end
  local s = {
    path = a.path,
    state = state_of(a.ref),
    behavior = a.hooks and "hooks" or (a.behavior == nil and "none" or "function"),
    vars = M.behavior_state(a.behavior),
    mailbox = a.mailbox,
    busy = a.op ~= "idle",
    restarts = a.restarts,
    timers = a.timers,
    watchers = a.watchers,
    watching = a.watching,
    factory = a.factory,
  }
  if a.op ~= "idle" then s.doing = a.op end
  if a.thread and a.op == "receive" then
    local found, msg = current_message(a.thread, a.behavior, a.hooks)
    if found then s.current = msg end
  end
  return s
end

return M
