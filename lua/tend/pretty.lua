-- tend.pretty: values printed as values, as the Erlang shell and iex print
-- terms. Strings quoted, tables with their keys sorted (the list part
-- first, then numbers, then names, then the other keys), nested tables
-- shown up to a depth, each table up to a width, a table met again inside
-- itself marked <cycle>, refs and errors as their tostring (Ref(/user/x)),
-- functions as function<source:line>. On one line when it fits, else one
-- field a line, indented.
local M = {}

M.depth = 6    -- tables deeper than this print as {...}
M.width = 40   -- fields shown per table; the rest as ... (N more)
M.columns = 78 -- a table whose one-line form is longer is broken up

local escapes = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ['"'] = '\\"', ["\\"] = "\\\\" }

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\%d", c:byte())
  end) .. '"'
end

local function scalar(v)
  local t = type(v)
  if t == "string" then return quote(v) end
  if t == "number" or t == "boolean" or t == "nil" then return tostring(v) end
  if t == "function" then
    local info = debug.getinfo(v, "S")
    if info.what == "C" then return "function<builtin>" end
    return string.format("function<%s:%d>", info.short_src, info.linedefined)
  end
  local mt = debug.getmetatable(v)
  if t == "table" and not (type(mt) == "table" and mt.__tostring) then return nil end
  local ok, s = pcall(tostring, v)
  if not ok or type(s) ~= "string" then return t end
  if mt and mt.__name == "tend.Error" then return "Error(" .. s .. ")" end
  return s
end

local rank = { number = 1, string = 2, boolean = 3 }

local function key_less(a, b)
  local ra, rb = rank[type(a)] or 4, rank[type(b)] or 4
  if ra ~= rb then return ra < rb end
  if ra == 1 or ra == 2 then return a < b end
  return tostring(a) < tostring(b)
end

-- The fields of t in print order: {key or nil (list part), value}.
local function fields(t)
  local out, n = {}, #t
  for i = 1, n do out[i] = { nil, rawget(t, i) } end
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, key_less)
  for _, k in ipairs(keys) do out[#out + 1] = { k, rawget(t, k) } end
  return out
end

local function key_text(k, sub)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  return "[" .. sub(k) .. "]"
end

-- Renders v; `open` holds the tables being rendered (for cycles).
local function render(v, depth, open, indent)
  local s = scalar(v)
  if s then return s end
  if open[v] then return "<cycle>" end
  if depth >= M.depth then return "{...}" end
  local fs = fields(v)
  if #fs == 0 then return "{}" end
  open[v] = true
  local parts, keyed = {}, {}
  local function sub(x) return render(x, depth + 1, open, indent .. "  ") end
  for i, f in ipairs(fs) do
    if i > M.width then
      parts[#parts + 1] = string.format("... (%d more)", #fs - M.width)
      break
    end
    local text = sub(f[2])
    parts[#parts + 1] = f[1] == nil and text or (key_text(f[1], sub) .. " = " .. text)
    keyed[#parts] = f[1] ~= nil
  end
  open[v] = nil
  local line = "{" .. table.concat(parts, ", ") .. "}"
  if #indent + #line <= M.columns and not line:find("\n") then return line end
  -- broken up: a named field a line; short list items share a line up to
  -- the column limit
  local lines, cur = {}, nil
  local room = M.columns - #indent - 2
  for i, p in ipairs(parts) do
    local text = p .. (i < #parts and "," or "")
    if cur and not keyed[i] and not keyed[i - 1] and not p:find("\n")
      and not cur:find("\n") and #cur + 1 + #text <= room then
      cur = cur .. " " .. text
    else
      if cur then lines[#lines + 1] = cur end
      cur = text
    end
  end
  lines[#lines + 1] = cur
  return "{\n" .. indent .. "  " .. table.concat(lines, "\n" .. indent .. "  ") .. "\n" .. indent .. "}"
end

-- format(v) -> the text of v.
function M.format(v)
  return render(v, 0, {}, "")
end

-- format_all(...) -> the texts of every argument, tab-separated (as lua.c
-- prints several results).
function M.format_all(...)
  local n = select("#", ...)
  local out = {}
  for i = 1, n do out[i] = M.format((select(i, ...))) end
  return table.concat(out, "\t")
end

return M
