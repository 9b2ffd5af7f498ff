-- tend.doc: the one source of the reference. help(fn) at the REPL,
-- docs/reference.md, types/tend.lua and docs/tend.1 are all made from it
-- (scripts/gen-docs.lua writes the files; make test fails when they are
-- stale or when a public function has no entry).
--
-- Each group is a file lua/tend/doc/<group>.lua returning a list of
-- entries, in the order the reference shows them. A function:
--   { name = "tend.spawn",             -- the full dotted name; a method "ref:send"
--     sig = "tend.spawn(factory [, opts]) -> ref", -- the one-line call
--     summary = "Starts an actor under /user.",     -- one sentence
--     text = [[...]],                  -- the rest, plain prose (may be "")
--     params = { { "factory", "function|string", "what it is" }, ... },
--     returns = { { "tend.Ref", "what it is" }, ... },
--     errors = { "BadArg when ..." },  -- may be {}
--     example = [[runnable Lua]] }     -- may be "" for a REPL helper
-- and an option table or an object, as a class:
--   { class = "tend.SpawnOpts", summary = "...",
--     fields = { { "name", "string?", "what it is" }, ... } }
-- (with `parent = "tend.X"` when it has every field of tend.X besides its own)
-- or a name for a type (an alias, no fields):
--   { class = "tend.Factory", summary = "...", type = "tend.BackoffSpec|fun(ctx: tend.Ctx): any" }
-- Types are lua-language-server's (string, integer, fun(msg: any): any,
-- tend.Ref, T? for optional, A|B). Optional fields an entry may add:
-- `class` (a method's class when its receiver is not in M.receivers),
-- `alias` (other names of the same function, e.g. "tend.retry"),
-- `vararg` (the type of a trailing ..., for types/tend.lua), `value` (the
-- LuaLS type of a name that is a value, not a function: tend.version).
-- A method "x:m" belongs to the class M.receivers[x] (or its `class`).
local M = {}

-- The groups, in the reference's order: the file, its title, and the
-- names it owns (a prefix: "tend.pg" owns tend.pg.*, an exact name owns
-- itself), so a check can tell whose entry is missing.
M.groups = {
  { name = "core", title = "Actors and messages" },
  { name = "supervision", title = "Supervision" },
  { name = "toolbox", title = "The toolbox" },
  { name = "scenario", title = "Failure scenarios",
    owns = { "tend.trace", "tend.trace_file", "tend.chaos", "tend.timeline", "tend.scenario", "tend.test",
      "tend.invariant", "tend.eventually" } },
  { name = "process", title = "OS processes", owns = { "tend.process" } },
  { name = "net", title = "Network",
    owns = { "tend.tcp", "tend.http", "tend.simnet", "ctx:write", "ctx:close" } },
  { name = "nodes", title = "Nodes",
    owns = { "tend.node", "tend.nats", "tend.global", "tend.cluster", "tend.sim", "tend.spawn_on" } },
  { name = "streams", title = "Streams", owns = { "tend.stream" } },
  { name = "repl", title = "The REPL's helpers" },
}

-- A method's receiver -> its class (for types/tend.lua and the reference).
M.receivers = {
  ref = "tend.Ref", ctx = "tend.Ctx", timer = "tend.Timer", probe = "tend.Probe",
  spec = "tend.BackoffSpec", action = "tend.TypedAction", supervised = "tend.SupervisedSpec",
  p = "tend.SimProcess",
}

local FIELDS = { name = "string", sig = "string", summary = "string", text = "string",
  params = "table", returns = "table", errors = "table", example = "string",
  class = "string", alias = "table", vararg = "string", value = "string" }
local CLASS_FIELDS = { class = "string", summary = "string", fields = "table", type = "string",
  parent = "string" }

-- Raises an error naming the group and the entry when e is not of the
-- format above (a misspelt field, a missing summary, a bad row).
local function check(e, group, i)
  local where = string.format("tend.doc.%s: entry %d (%s)", group, i, tostring(e.name or e.class))
  local shape = e.name and FIELDS or CLASS_FIELDS
  for k, v in pairs(e) do
    if not shape[k] then error(where .. ": unknown field " .. tostring(k), 0) end
    if type(v) ~= shape[k] then
      error(string.format("%s: %s: expected a %s, got %s", where, k, shape[k], type(v)), 0)
    end
  end
  local needed = e.name and { "sig", "summary", "text", "params", "returns", "errors", "example" }
    or e.type and { "summary" } or { "summary", "fields" }
  for _, k in ipairs(needed) do
    if e[k] == nil then error(where .. ": no " .. k, 0) end
  end
  for _, list in ipairs { e.params or {}, e.returns or {}, e.fields or {} } do
    for _, row in ipairs(list) do
      if type(row) ~= "table" or #row < 2 then error(where .. ": a row is not {name, type, what}", 0) end
      for _, cell in ipairs(row) do
        if type(cell) ~= "string" then error(where .. ": a row has a " .. type(cell), 0) end
      end
    end
  end
  if e.name then
    local recv = e.name:match("^([%w_]+):")
    if recv and not (e.class or M.receivers[recv]) then
      error(where .. ": no class for the receiver " .. recv, 0)
    end
  end
end

M.check = check

-- Loads one group: its list, or nil when its file is not there (yet).
local function load_group(name)
  local mod = "tend.doc." .. name
  local ok, list = pcall(require, mod)
  if ok then return list end
  if tostring(list):find("module '" .. mod .. "' not found", 1, true) then return nil end
  error(list, 0)
end

M.entries, M.by_name, M.classes, M.present = {}, {}, {}, {}
for _, g in ipairs(M.groups) do
  local list = load_group(g.name)
  if list then
    M.present[g.name] = true
    for i, e in ipairs(list) do
      check(e, g.name, i)
      e.group = g.name
      local key = e.name or e.class
      if M.by_name[key] or M.classes[key] then
        error(string.format("tend.doc.%s: %s has two entries", g.name, key), 0)
      end
      if e.name then
        M.entries[#M.entries + 1] = e
        M.by_name[e.name] = e
        for _, a in ipairs(e.alias or {}) do M.by_name[a] = e end
      else
        M.classes[#M.classes + 1] = e
        M.classes[e.class] = e
      end
    end
  end
end

-- The class a method entry belongs to ("tend.Ctx" for "ctx:reply"), or nil
-- for a function.
function M.class_of(e)
  local recv = e.name:match("^([%w_]+):")
  return recv and (e.class or M.receivers[recv]) or nil
end

-- The group that owns a public name ("tend.tcp.write" -> "net"): the
-- longest prefix a group claims, else nil (core, supervision, toolbox and
-- repl share what no other group claims).
function M.owner(name)
  local best, len = nil, 0
  for _, g in ipairs(M.groups) do
    for _, p in ipairs(g.owns or {}) do
      if (name == p or name:sub(1, #p + 1) == p .. ".") and #p > len then best, len = g.name, #p end
    end
  end
  return best
end

return M
