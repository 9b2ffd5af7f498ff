-- tend.observe.literal: a Lua literal read as data, never run: nil,
-- booleans, numbers (decimal, hex, exponents), strings ('...', "..." with
-- the usual escapes, [[...]] and [==[...]==]), and tables of these
-- ({1, 2, x = 3, ["k"] = v}, nested at most 32 deep). Anything else (a
-- name, a call, an operator) is refused, saying where. What the observer's
-- "send" action parses the message with.
local M = {}

M.MAX_DEPTH = 32

local ESC = { n = "\n", t = "\t", r = "\r", a = "\a", b = "\b", f = "\f", v = "\v",
  ["\\"] = "\\", ['"'] = '"', ["'"] = "'", ["\n"] = "\n" }

-- Parses text; returns the value, or nil and "at character N: why".
function M.parse(text)
  if type(text) ~= "string" then return nil, "expected a string, got " .. type(text) end
  local pos = 1
  local function fail(why) error({ why = string.format("at character %d: %s", pos, why) }, 0) end
  local function skip()
    while true do
      local s = text:match("^%s*", pos)
      pos = pos + #s
      if text:sub(pos, pos + 1) == "--" then -- a comment: long or to the end of the line
        local eq = text:match("^%-%-%[(=*)%[", pos)
        if eq then
          local _, e = text:find("]" .. eq .. "]", pos, true)
          if not e then fail("unfinished long comment") end
          pos = e + 1
        else
          local e = text:find("\n", pos, true)
          pos = e and e + 1 or #text + 1
        end
      else return end
    end
  end
  local value
  local function long_string()
    local eq = text:match("^%[(=*)%[", pos)
    if not eq then return nil end
    local start = pos + #eq + 2
    local s, e = text:find("]" .. eq .. "]", start, true)
    if not s then fail("unfinished long string") end
    pos = e + 1
    local body = text:sub(start, s - 1)
    return (body:gsub("^\r?\n", ""))
  end
  local function quoted(q)
    local out, i = {}, pos + 1
    while true do
      local c = text:sub(i, i)
      if c == "" or c == "\n" then pos = i fail("unfinished string") end
      if c == q then pos = i + 1 return table.concat(out) end
      if c == "\\" then
        local d = text:sub(i + 1, i + 1)
        if ESC[d] then out[#out + 1] = ESC[d]; i = i + 2
        elseif d:match("%d") then
          local digits = text:match("^%d%d?%d?", i + 1)
          local n = tonumber(digits)
          if n > 255 then pos = i fail("decimal escape too large") end
          out[#out + 1] = string.char(n); i = i + 1 + #digits
        elseif d == "x" then
          local hex = text:match("^%x%x", i + 2)
          if not hex then pos = i fail("bad \\x escape") end
          out[#out + 1] = string.char(tonumber(hex, 16)); i = i + 4
        elseif d == "z" then
          i = i + 2
          i = i + #text:match("^%s*", i)
        elseif d == "u" then
          local hex = text:match("^{(%x+)}", i + 2)
          if not hex or tonumber(hex, 16) > 0x7FFFFFFF then pos = i fail("bad \\u escape") end
          out[#out + 1] = utf8.char(tonumber(hex, 16)); i = i + 4 + #hex
        else pos = i fail("bad escape \\" .. d) end
      else out[#out + 1] = c; i = i + 1 end
    end
  end
  local function number()
    local s = text:match("^%-?0[xX]%x*%.?%x*[pP]?[-+]?%d*", pos) or text:match("^%-?%d*%.?%d*[eE]?[-+]?%d*", pos)
    if s == nil or s == "" or s == "-" then return nil end
    local n = tonumber(s)
    if n == nil then fail("malformed number '" .. s .. "'") end
    pos = pos + #s
    return n
  end
  local function table_(depth)
    if depth > M.MAX_DEPTH then fail("tables nested deeper than " .. M.MAX_DEPTH) end
    pos = pos + 1
    local t, n = {}, 0
    while true do
      skip()
      if text:sub(pos, pos) == "}" then pos = pos + 1 return t end
      local key
      local name = text:match("^([%a_][%w_]*)%s*=[^=]", pos)
      if name then
        key = name
        pos = text:find("=", pos, true) + 1
      elseif text:sub(pos, pos) == "[" and not text:match("^%[=*%[", pos) then
        pos = pos + 1
        key = value(depth + 1)
        skip()
        if text:sub(pos, pos) ~= "]" then fail("expected ]") end
        pos = pos + 1
        skip()
        if text:sub(pos, pos) ~= "=" then fail("expected =") end
        pos = pos + 1
        if key == nil or key ~= key then fail("a table key cannot be nil or NaN") end
      end
      local v = value(depth + 1)
      if key ~= nil then t[key] = v else n = n + 1; t[n] = v end
      skip()
      local c = text:sub(pos, pos)
      if c == "," or c == ";" then pos = pos + 1
      elseif c == "}" then pos = pos + 1 return t
      else fail("expected , or } in a table") end
    end
  end
  function value(depth)
    skip()
    local c = text:sub(pos, pos)
    if c == "" then fail("expected a value, got the end") end
    if c == '"' or c == "'" then return quoted(c) end
    if c == "{" then return table_(depth) end
    if c == "[" then
      local s = long_string()
      if s then return s end
    end
    for word, v in pairs { ["nil"] = false, ["true"] = true, ["false"] = false } do
      if text:match("^" .. word .. "%f[^%w_]", pos) then
        pos = pos + #word
        if word == "nil" then return nil end
        return v
      end
    end
    local n = number()
    if n ~= nil then return n end
    local word = text:match("^[%a_][%w_]*", pos)
    fail(word and ("'" .. word .. "' is a name: only literals are read, nothing runs")
      or ("unexpected '" .. c .. "'"))
  end
  local ok, res = pcall(function()
    local v = value(1)
    skip()
    if pos <= #text then fail("unexpected text after the value") end
    return v
  end)
  if ok then return res end
  if type(res) == "table" then return nil, res.why end
  error(res, 0)
end

return M
