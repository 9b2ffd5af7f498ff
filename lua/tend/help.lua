-- tend.help: help on one function at the REPL (`help(tend.spawn)`, as
-- iex's h/1) from its entry in tend.doc, and "did you mean" for a
-- mistyped global, field or method.
local M = {}

-- The texts of the functions whose group of the reference (tend.doc) is
-- not there yet: help uses an entry of tend.doc first, these otherwise.
-- A group's texts go once its file lua/tend/doc/<group>.lua exists.
M.pending = {}

-- The method tables of the objects a user holds: receiver -> methods.
local function method_tables()
  local reg = debug.getregistry()
  local ctx = reg["tend.Ctx"]
  local out = { ctx = ctx and ctx.methods }
  for recv, class in pairs(require("tend.doc").receivers) do
    local mt = reg[class]
    if mt and type(mt.__index) == "table" then out[recv] = mt.__index end
  end
  return out
end

-- The name a function is known by: "tend.x", "tend.backoff.x" (and the
-- other modules'), "ctx:reply" (a method) or a REPL helper; nil when none.
local function name_of(fn, helpers)
  local tend = require "tend"
  local doc = require "tend.doc"
  for k, v in pairs(helpers or {}) do
    if rawequal(v, fn) and doc.by_name[k] then return k end
  end
  for k, v in pairs(tend) do
    if rawequal(v, fn) then return "tend." .. k end
  end
  for _, m in ipairs({ "backoff", "pg", "process", "tcp", "http", "node" }) do
    for k, v in pairs(tend[m]) do
      if rawequal(v, fn) then return "tend." .. m .. "." .. k end
    end
  end
  for _, m in ipairs({ "testkit", "chaos", "simnet", "global", "sim" }) do -- loaded on first use: only when they are
    for k, v in pairs(rawget(tend, m) or package.loaded["tend." .. m] or {}) do
      local name = "tend." .. m .. "." .. k
      if rawequal(v, fn) and (doc.by_name[name] or M.pending[name]) then return name end
    end
  end
  for recv, methods in pairs(method_tables()) do
    for k, v in pairs(methods) do
      if rawequal(v, fn) and doc.by_name[recv .. ":" .. k] then return recv .. ":" .. k end
    end
  end
  return nil
end

-- Words of s wrapped at width, each line after indent.
local function wrap(s, indent, width)
  local lines, line = {}, nil
  for word in s:gmatch("%S+") do
    if line and #line + 1 + #word > width then
      lines[#lines + 1] = indent .. line
      line = word
    else
      line = line and (line .. " " .. word) or word
    end
  end
  if line then lines[#lines + 1] = indent .. line end
  return table.concat(lines, "\n")
end

-- An entry of tend.doc as help prints it: the call, what it does, the
-- arguments, returns and errors.
function M.render(e)
  local out = { e.sig }
  local prose = e.summary .. (e.text ~= "" and (" " .. e.text) or "")
  out[#out + 1] = wrap(prose, "  ", 74)
  for _, p in ipairs(e.params) do
    out[#out + 1] = wrap(string.format("%s (%s): %s", p[1], p[2], p[3] or ""), "    ", 72):gsub("^    ", "  - ")
  end
  if #e.returns > 0 then
    local r = {}
    for i, x in ipairs(e.returns) do r[i] = string.format("%s (%s)", x[2] or "", x[1]) end
    out[#out + 1] = wrap("returns " .. table.concat(r, ", "), "  ", 74)
  end
  if #e.errors > 0 then out[#out + 1] = wrap("raises " .. table.concat(e.errors, "; "), "  ", 74) end
  return table.concat(out, "\n")
end

-- A class of tend.doc (an option table, an object) as help prints it:
-- what it is, then its fields or its type.
function M.render_class(c)
  local out = { c.class, wrap(c.summary, "  ", 74) }
  if c.type then out[#out + 1] = wrap("type: " .. c.type, "  ", 74) end
  for _, f in ipairs(c.fields or {}) do
    out[#out + 1] = wrap(string.format("%s (%s): %s", f[1], f[2], f[3] or ""), "    ", 72):gsub("^    ", "  - ")
  end
  return table.concat(out, "\n")
end

-- The help text for v (a function, its name as a string, or the name of
-- a class: help("tend.SpawnOpts")).
function M.text(v, helpers)
  local doc = require "tend.doc"
  if type(v) == "string" and doc.classes[v] then return M.render_class(doc.classes[v]) end
  local name = type(v) == "string" and v or name_of(v, helpers)
  for _, n in ipairs(name and { name, "tend." .. name } or {}) do
    if doc.by_name[n] then return M.render(doc.by_name[n]) end
    if M.pending[n] then return M.pending[n] end
  end
  if type(v) == "string" then -- "tend.chaos.freeze": the function at that path
    local f, first = nil, true
    for part in v:gmatch("[^.]+") do
      if first then
        f = part == "tend" and require "tend" or nil
        first = false
      elseif type(f) == "table" then
        local ok, x = pcall(function() return f[part] end)
        f = ok and x or nil
      else
        f = nil
      end
    end
    if type(f) == "function" then v = f end
  end
  if type(v) == "function" then
    local info = debug.getinfo(v, "Su")
    if info.what == "C" then
      return (name or "this function") .. ": a builtin function with no help text"
    end
    local params = {}
    for i = 1, info.nparams do params[i] = debug.getlocal(v, i) end
    if info.isvararg then params[#params + 1] = "..." end
    return string.format("%s(%s)\n  defined at %s:%d", name or "function", table.concat(params, ", "),
      info.short_src, info.linedefined)
  end
  return "help: expected a function or its name (help(tend.spawn), help(\"tend.spawn\")), got " ..
    (type(v) == "string" and ("'" .. v .. "'") or type(v))
end

-------------------------------------------------------------- did you mean
-- Edits (insert, delete, change, swap two neighbours) from a to b; 3 for
-- anything farther than 2.
local function distance(a, b)
  if math.abs(#a - #b) > 2 then return 3 end
  local d = {}
  for i = 0, #a do d[i] = { [0] = i } end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

local function add_keys(t, out)
  if type(t) ~= "table" then return end
  for k in pairs(t) do
    if type(k) == "string" then out[k] = true end
  end
end

-- The names that could be meant where a nil `what` ("global", "field",
-- "method", "upvalue", "local") named `name` was used.
local function candidates(what)
  local out = {}
  if what == "global" then
    add_keys(_G, out)
    return out
  end
  -- a method: the methods of refs, timers, ... (metatables with an
  -- __index table) and of strings
  local reg = debug.getregistry()
  for k, mt in pairs(reg) do
    if type(k) == "string" and type(mt) == "table" and type(mt.__index) == "table" then
      add_keys(mt.__index, out)
    end
  end
  add_keys(string, out)
  if what == "method" then return out end
  -- a field: also the fields of every global table and of tend
  for _, v in pairs(_G) do add_keys(v, out) end
  local tend = package.loaded.tend
  if type(tend) == "table" then
    add_keys(tend, out)
    add_keys(rawget(tend, "backoff"), out)
  end
  return out
end

-- The closest name to `name` among the candidates (at most 2 edits, 1 for
-- names of 3 letters or fewer), or nil.
function M.closest(name, names)
  local best, best_d
  local limit = #name <= 3 and 1 or 2
  local sorted = {}
  for k in pairs(names) do sorted[#sorted + 1] = k end
  table.sort(sorted)
  for _, k in ipairs(sorted) do
    if k ~= name then
      local d = distance(name, k)
      if d <= limit and (best_d == nil or d < best_d) then best, best_d = k, d end
    end
  end
  return best
end

-- An error message with " (did you mean 'x'?)" added when it is about a
-- nil global, field or method with a close name; else the message as is.
function M.suggest(msg)
  if type(msg) ~= "string" then return msg end
  local what, name = msg:match("a nil value %((%a+) '([%w_]+)'%)")
  if not what or what == "local" or what == "upvalue" then return msg end
  local guess = M.closest(name, candidates(what))
  if not guess then return msg end
  return (msg:gsub("(a nil value %(%a+ '[%w_]+'%))", "%1 (did you mean '" .. guess .. "'?)", 1))
end

return M
