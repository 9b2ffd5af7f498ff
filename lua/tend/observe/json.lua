-- tend.observe.json: Lua values as JSON text, for the observer's
-- endpoints. Tables with a [1] (or marked by M.array) are arrays, others
-- objects with their keys sorted (the same state, the same bytes); nil and
-- tend.timeline's null are null; a number that is not finite is null.
local M = {}

local ARRAY = setmetatable({}, { __mode = "k" })

-- JSON's null where a Lua nil cannot stand (a table's field).
M.null = setmetatable({}, { __tostring = function() return "null" end })

-- Marks t as an array (so that an empty one is [] rather than {}).
function M.array(t)
  ARRAY[t] = true
  return t
end

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
  ["\r"] = "\\r", ["\t"] = "\\t" }

local function str(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function encode(v, out, seen)
  local ty = type(v)
  if ty == "string" then out[#out + 1] = str(v)
  elseif ty == "number" then
    if v ~= v or v == math.huge or v == -math.huge then out[#out + 1] = "null"
    elseif math.type(v) == "integer" then out[#out + 1] = string.format("%d", v)
    else out[#out + 1] = string.format("%.14g", v) end
  elseif ty == "boolean" then out[#out + 1] = tostring(v)
  elseif ty == "table" and getmetatable(v) == nil or ARRAY[v] then
    if seen[v] then error("tend.observe.json: a table that holds itself", 0) end
    seen[v] = true
    if ARRAY[v] or v[1] ~= nil then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out, seen)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = tostring(k) end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = str(k) .. ":"
        local x = v[k]
        if x == nil then x = v[tonumber(k)] end
        encode(x, out, seen)
      end
      out[#out + 1] = "}"
    end
    seen[v] = nil
  else out[#out + 1] = "null" end
end

-- Returns v as JSON text.
function M.encode(v)
  local out = {}
  encode(v, out, {})
  return table.concat(out)
end

return M
