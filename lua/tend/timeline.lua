-- tend.timeline: a trace drawn as an SVG timeline (design §6.4). Reads
-- and parses a trace (JSON lines); the drawing is tend.timeline.svg, the
-- lives and outages it draws tend.timeline.lives; `tend timeline
-- TRACE.jsonl -o OUT.svg` is main().
local M = {}

---------------------------------------------------------------- JSON lines
-- Parses one trace line (a flat JSON object whose values are strings,
-- numbers, booleans, null or arrays of those). Returns the table, or nil,
-- a reason and whether the line ended too early (a cut line).
function M.parse_line(s)
  local pos = 1
  local function skip() pos = s:find("[^ \t\r]", pos) or #s + 1 end
  local function fail(why) error({ why = why .. " at column " .. pos, cut = pos > #s }, 0) end
  local value
  local function str()
    local out, i = {}, pos + 1
    while true do
      local c = s:sub(i, i)
      if c == "" then pos = i fail("unterminated string") end
      if c == '"' then pos = i + 1 return table.concat(out) end
      if c == "\\" then
        local e = s:sub(i + 1, i + 1)
        local map = { n = "\n", t = "\t", r = "\r", b = "\b", f = "\f", ['"'] = '"',
          ["\\"] = "\\", ["/"] = "/" }
        if map[e] then out[#out + 1] = map[e]; i = i + 2
        elseif e == "u" then
          local hex = s:sub(i + 2, i + 5)
          if not hex:match("^%x%x%x%x$") then fail("bad \\u escape") end
          out[#out + 1] = utf8.char(tonumber(hex, 16)); i = i + 6
        else fail("bad escape") end
      else
        out[#out + 1] = c; i = i + 1
      end
    end
  end
  function value()
    skip()
    local c = s:sub(pos, pos)
    if c == '"' then return str() end
    if c == "[" then
      pos = pos + 1
      local arr = {}
      skip()
      if s:sub(pos, pos) == "]" then pos = pos + 1 return arr end
      while true do
        arr[#arr + 1] = value()
        skip()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return arr end
        if d ~= "," then fail("expected , or ]") end
      end
    end
    for word, v in pairs { ["true"] = true, ["false"] = false, null = M.null } do
      if s:sub(pos, pos + #word - 1) == word then pos = pos + #word return v end
    end
    local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    local x = num and #num > 0 and tonumber(num)
    if x then
      -- a time or a delay: finite, and within MAX_SECONDS (1e400 is valid
      -- JSON, but infinity would draw an axis of endless ticks)
      if x ~= x or math.abs(x) > M.MAX_SECONDS then fail("number out of range: " .. num) end
      pos = pos + #num
      return x
    end
    fail("unexpected " .. (c == "" and "end of line" or "'" .. c .. "'"))
  end
  local ok, res = pcall(function()
    skip()
    if s:sub(pos, pos) ~= "{" then fail("expected {") end
    pos = pos + 1
    local obj = {}
    skip()
    if s:sub(pos, pos) == "}" then pos = pos + 1 return obj end
    while true do
      skip()
      if s:sub(pos, pos) ~= '"' then fail("expected a key") end
      local k = str()
      skip()
      if s:sub(pos, pos) ~= ":" then fail("expected :") end
      pos = pos + 1
      obj[k] = value()
      skip()
      local d = s:sub(pos, pos)
      pos = pos + 1
      if d == "}" then break end
      if d ~= "," then fail("expected , or }") end
    end
    skip()
    if pos <= #s then fail("trailing text") end
    return obj
  end)
  if ok then return res end
  if type(res) == "table" then return nil, res.why, res.cut end
  return nil, tostring(res)
end
M.null = setmetatable({}, { __tostring = function() return "null" end })
M.MAX_SECONDS = 1e10 -- about 317 years: any number in a trace beyond it is refused

-- Reads a trace file ("-": stdin); returns the events (and a warning when
-- the last line was cut: a run that was killed mid-write is drawn up to
-- its last good line), or nil and "FILE:LINE: reason".
function M.read(path)
  local f, err
  if path == "-" then f = io.stdin else f, err = io.open(path, "r") end
  if not f then return nil, err end
  local name = path == "-" and "stdin" or path
  local _, rerr = f:read(0) -- a directory opens, but cannot be read
  if rerr then
    f:close()
    return nil, name .. ": " .. rerr
  end
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = line end
  if f ~= io.stdin then f:close() end
  local last = #lines
  while last > 0 and not lines[last]:match("%S") do last = last - 1 end
  local events = {}
  for n = 1, last do
    local line = lines[n]
    if line:match("%S") then
      local e, why, cut = M.parse_line(line)
      if not e and cut and n == last then
        return events, string.format("%s:%d: the trace ends in a cut line (%s): drawn up to line %d",
          name, n, why, n - 1)
      end
      if not e then return nil, string.format("%s:%d: malformed trace line: %s", name, n, why) end
      if type(e.t) ~= "number" or type(e.ev) ~= "string" then
        return nil, string.format("%s:%d: malformed trace line: needs \"t\" and \"ev\"", name, n)
      end
      events[#events + 1] = e
    end
  end
  return events
end

-- Renders events as an SVG document (a string): tend.timeline.svg.
function M.render(events, title)
  return require("tend.timeline.svg").render(events, title)
end

-- Writes text to path through a temporary file, so a failure leaves no
-- partial file behind. Returns true or nil, message.
function M.write(path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "w")
  if not f then return nil, err end
  local ok, werr = f:write(text)
  f:close()
  if not ok then os.remove(tmp) return nil, werr end
  local renamed, rerr = os.rename(tmp, path)
  if not renamed then os.remove(tmp) return nil, rerr end
  return true
end

-- The default drawing for a trace: its name with .svg for .jsonl (or
-- .svg added), trace.svg for stdin.
function M.default_output(trace)
  if trace == "-" then return "trace.svg" end
  return (trace:gsub("%.jsonl$", ""):gsub("%.json$", "")) .. ".svg"
end

-- tend timeline TRACE.jsonl|- [-o OUT.svg]
function M.main(...)
  local core = require "tend.core"
  local args = { ... }
  local trace, out
  local i = 1
  while i <= #args do
    if args[i] == "-o" then
      out = args[i + 1]
      if out == nil then
        io.stderr:write("tend timeline: -o: expected a file name, got nothing\n")
        return core.shutdown(2)
      end
      i = i + 2
    elseif not trace then trace = args[i]; i = i + 1
    else
      io.stderr:write("tend timeline: unexpected argument '" .. args[i] .. "'\n")
      return core.shutdown(2)
    end
  end
  if not trace then
    io.stderr:write("tend timeline: expected a trace file (or - for stdin), got nothing\n" ..
      "usage: tend timeline TRACE.jsonl|- [-o OUT.svg]\n")
    return core.shutdown(2)
  end
  out = out or M.default_output(trace)
  local events, err = M.read(trace)
  if not events then
    io.stderr:write("tend timeline: " .. err .. "\n")
    return core.shutdown(1)
  end
  if err then io.stderr:write("tend timeline: warning: " .. err .. "\n") end
  local ok, werr = M.write(out, M.render(events))
  if not ok then
    io.stderr:write("tend timeline: cannot write " .. out .. ": " .. tostring(werr) .. "\n")
    return core.shutdown(1)
  end
  print(string.format("%s: %d events, %s", out, #events, err and "written (truncated trace)" or "written"))
end

return M
