-- tend.code: the code inside actors. tend.inspect(ref) is OTP's
-- sys:get_state: an actor's state read from outside without stopping it
-- (a busy actor, parked in the middle of a message, goes on undisturbed).
-- tend.reload(mod) is Erlang's l(Mod) with code_change: the module is
-- loaded again from disk, and every live actor whose factory came from its
-- file moves to the new code at its next message boundary.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)

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

----------------------------------------------------------------- reload
-- What the moves did, in order: {path, how = "code_change" | "restart",
-- reason}. M.on_move(entry), when set (the REPL sets it), hears each.
M.moves = {}

local function strip(path) return (path:gsub("^%./", "")) end

-- Whether f was defined in the file `file`.
local function from_file(f, file)
  local src = debug.getinfo(f, "S").source
  return src:sub(1, 1) == "@" and strip(src:sub(2)) == strip(file)
end

-- The new module's counterpart of the old factory f: the field of the same
-- name (or the module itself when it is the factory).
local function counterpart(old, new, f)
  if rawequal(old, f) then return type(new) == "function" and new or nil end
  if type(old) ~= "table" or type(new) ~= "table" then return nil end
  for k, v in pairs(old) do
    if rawequal(v, f) then
      return type(new[k]) == "function" and new[k] or nil, k
    end
  end
  return nil
end

local function record(entry)
  M.moves[#M.moves + 1] = entry
  if M.on_move then pcall(M.on_move, entry) end
end

-- The behavior that takes the actor's next message: it puts the message
-- back in front, builds the new behavior with the new factory and, when
-- that has a code_change(self, old_state) hook, becomes it with the old
-- state carried over; else it fails with CodeChange, so its supervisor
-- restarts it with the new factory (its mailbox kept).
local function mover(path, mod, old_behavior, factory, args)
  local tend = require "tend"
  return function(msg, ctx)
    core.code_requeue(msg)
    local old_state = M.behavior_state(old_behavior)
    local ok, nb = pcall(factory, ctx, table.unpack(args or {}))
    local why
    if not ok then
      why = "the new factory raised: " .. tostring(nb)
    elseif type(nb) == "table" and type(rawget(nb, "code_change")) == "function" then
      local done, err = pcall(nb.code_change, nb, old_state)
      if done then
        record { path = path, how = "code_change" }
        return nb
      end
      why = "code_change raised: " .. tostring(err)
    else
      why = "no code_change hook"
    end
    record { path = path, how = "restart", reason = why }
    error(tend.error(K.CodeChange, path .. " moves to the new code of " .. mod .. " (" .. why .. ")"), 0)
  end
end

-- tend.reload(mod) -> {module, moving = {path, ...}, failed = {{path,
-- reason}, ...}}. Raises when the module cannot be found or loaded (then
-- nothing changed).
function M.reload(mod)
  if type(mod) ~= "string" then
    error("tend.reload: mod: expected a module name (a string), got " .. type(mod), 2)
  end
  local file, err = package.searchpath(mod, package.path)
  if not file then error("tend.reload: module '" .. mod .. "' not found:" .. err, 2) end
  local chunk, lerr = loadfile(file)
  if not chunk then error("tend.reload: " .. lerr, 2) end
  local ok, new = pcall(chunk, mod, file)
  if not ok then error("tend.reload: " .. mod .. " raised: " .. tostring(new), 2) end
  if new == nil then new = true end
  local old = package.loaded[mod]
  package.loaded[mod] = new
  local report = { module = mod, file = file, moving = {}, failed = {} }
  for _, row in ipairs(core.ps()) do
    local a = core.code_actor(row.ref)
    if a and type(a.factory) == "function" and from_file(a.factory, file) then
      local nf = counterpart(old, new, a.factory)
      local done, why = false, "its factory is not a field of the module " .. mod
      if nf then
        done, why = core.code_install(row.ref, nf, mover(a.path, mod, a.behavior, nf, a.args))
      end
      if done then
        report.moving[#report.moving + 1] = a.path
      else
        report.failed[#report.failed + 1] = { path = a.path, reason = why }
      end
    end
  end
  return report
end

return M
