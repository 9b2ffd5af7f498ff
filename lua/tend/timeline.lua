-- tend.timeline: a trace drawn as an SVG timeline (design §6). One lane per
-- actor (paths sorted, so a subtree's lanes sit together), failures as red
-- marks, backoff waits as bars, restarts, starts and stops marked, a time
-- axis with readable ticks, a legend, the seed in the title. Plain string
-- building; `tend timeline TRACE.jsonl -o OUT.svg` is main().
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

---------------------------------------------------------------------- SVG
local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;" }))
end

-- A tick step of 1, 2 or 5 times a power of ten giving about `n` ticks.
local function nice_step(span, n)
  local raw = span / n
  local p = 10 ^ math.floor(math.log(raw, 10))
  for _, m in ipairs { 1, 2, 5, 10 } do
    if m * p >= raw then return m * p end
  end
  return 10 * p
end

local function fmt_t(t)
  local s = string.format("%.3f", t):gsub("0+$", ""):gsub("%.$", "")
  return s
end

-- The freezes (tend.chaos.freeze) as bars: {path, from, to, label}, each
-- ending at its thaw or after the duration its event names.
local function freeze_bars(events)
  local bars, open = {}, {}
  for _, e in ipairs(events) do
    if e.ev == "chaos" and type(e.detail) == "string" and type(e.path) == "string" then
      local secs = tonumber(e.detail:match("^freeze ([%d.]+) s"))
      if secs then
        local b = { path = e.path, from = e.t, to = e.t + secs, label = e.detail }
        bars[#bars + 1] = b
        open[e.path] = b
      elseif e.detail == "thaw" and open[e.path] then
        open[e.path].to = math.min(open[e.path].to, e.t)
        open[e.path] = nil
      end
    end
  end
  return bars
end

-- Renders events as an SVG document (a string).
function M.render(events, title)
  -- a simulated node's events (their `node` field) sit in a band of their
  -- own: /@a/user/... under a lane "node a"
  local banded = {}
  for i, e in ipairs(events) do
    if type(e.node) == "string" and type(e.path) == "string" then
      local c = {}
      for k, v in pairs(e) do c[k] = v end
      c.path = "/@" .. e.node .. (e.path == "/" and "" or e.path)
      e = c
    end
    banded[i] = e
  end
  events = banded
  local lanes, lane_of = {}, {}
  local t_max, seed = 0, nil
  local function lane(p) -- p and its ancestors (/user, /system, ...) get a lane
    if lane_of[p] then return end
    lane_of[p] = true
    lanes[#lanes + 1] = p
    local parent = p:match("^(/.+)/[^/]+$")
    if parent then lane(parent) end
  end
  lane("/user/main") -- the main chunk has a lane even when nothing happened to it
  local freezes = freeze_bars(events)
  for _, e in ipairs(events) do
    if e.ev == "trace" and type(e.detail) == "string" then seed = e.detail:match("seed (%-?%d+)") end
    local p = e.path
    if type(p) == "string" and p:match("^/.") and p ~= "*" then lane(p) end
    local finish = e.t + ((e.ev == "backoff" and type(e.delay) == "number") and e.delay or 0)
    if finish > t_max then t_max = finish end
  end
  for _, b in ipairs(freezes) do
    if b.to > t_max then t_max = b.to end
  end
  -- a failure's place (lane and time): a restart there is drawn beside it
  local failed_at = {}
  for _, e in ipairs(events) do
    if e.ev == "fail" and type(e.path) == "string" then failed_at[e.path .. "@" .. e.t] = true end
  end
  -- natural order: "w2" before "w10", and a subtree right after its root
  local function key(p)
    return (p:gsub("%d+", function(d) return string.format("%012d", tonumber(d)) end):gsub("/", "\1"))
  end
  table.sort(lanes, function(a, b) return key(a) < key(b) end)
  for i, p in ipairs(lanes) do lane_of[p] = i end
  if t_max <= 0 then t_max = 1 end
  -- OS processes: each run from spawn_os to its exit (or the end) is a bar
  local runs, open_run, is_process = {}, {}, {}
  for _, e in ipairs(events) do
    if e.ev == "spawn_os" and type(e.path) == "string" then
      is_process[e.path] = true
      open_run[e.path] = { path = e.path, from = e.t, pid = e.pid }
      runs[#runs + 1] = open_run[e.path]
    elseif e.ev == "exit" and open_run[e.path] then
      open_run[e.path].to = e.t
      open_run[e.path] = nil
    end
  end
  local left, right, top, lane_h = 260, 30, 70, 24
  local width = 1100
  local plot_w = width - left - right
  local height = top + #lanes * lane_h + 90
  local function x(t) return left + t / t_max * plot_w end
  local function y(i) return top + (i - 1) * lane_h + lane_h / 2 end
  local out = {}
  local function add(...) out[#out + 1] = string.format(...) end
  add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">',
    width, height, width, height)
  add('<rect width="100%%" height="100%%" fill="white"/>')
  add('<text class="title" x="%d" y="24" font-size="16" font-weight="bold">%s</text>', left,
    esc(title or ("tend timeline" .. (seed and (" - seed " .. seed) or ""))))
  -- lanes
  for i, p in ipairs(lanes) do
    local depth = select(2, p:gsub("/", "")) - 1
    local name = p:match("[^/]+$") or p
    if name:sub(1, 1) == "@" and depth == 0 then name = "node " .. name:sub(2) end
    add('<g class="lane" data-path="%s">', esc(p))
    if i % 2 == 0 then
      add('<rect x="%d" y="%.1f" width="%d" height="%d" fill="#f4f6f8"/>', left, y(i) - lane_h / 2,
        plot_w, lane_h)
    end
    add('<text x="%d" y="%.1f" dominant-baseline="middle"%s>%s%s</text>', 8 + depth * 12, y(i),
      depth == 0 and ' font-weight="bold"' or "", esc(name), is_process[p] and " (OS process)" or "")
    add('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ccc"/>', left, y(i), left + plot_w, y(i))
    add('</g>')
  end
  -- axis
  local step = nice_step(t_max, 8)
  local axis_y = top + #lanes * lane_h + 10
  add('<g class="axis">')
  add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>', left, axis_y, left + plot_w, axis_y)
  local t = 0
  while t <= t_max + 1e-9 do
    add('<line class="tick" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>', x(t), axis_y, x(t), axis_y + 5)
    add('<text x="%.1f" y="%d" text-anchor="middle">%s s</text>', x(t), axis_y + 18, fmt_t(t))
    t = t + step
  end
  add('</g>')
  -- process runs under the marks
  add('<g class="process-runs">')
  for _, r in ipairs(runs) do
    local i = lane_of[r.path]
    local x1, x2 = x(r.from), x(r.to or t_max)
    add('<rect class="process-run" x="%.1f" y="%.1f" width="%.1f" height="6" fill="#1f77b4" fill-opacity="0.35"><title>%s</title></rect>',
      x1, y(i) - 3, math.max(1, x2 - x1), esc(string.format("pid %s from t=%s", tostring(r.pid), fmt_t(r.from))))
  end
  add('</g>')
  -- marks (failures last, so they stay on top)
  add('<g class="marks">')
  for _, b in ipairs(freezes) do
    local i = lane_of[b.path]
    add('<rect class="freeze" x="%.1f" y="%.1f" width="%.1f" height="14" fill="#1f77b4" fill-opacity="0.25" stroke="#1f77b4"><title>%s</title></rect>',
      x(b.from), y(i) - 7, math.max(1, x(b.to) - x(b.from)),
      esc(string.format("t=%s..%s %s", fmt_t(b.from), fmt_t(b.to), b.label)))
  end
  local ordered = {}
  for _, e in ipairs(events) do if e.ev ~= "fail" then ordered[#ordered + 1] = e end end
  for _, e in ipairs(events) do if e.ev == "fail" then ordered[#ordered + 1] = e end end
  for _, e in ipairs(ordered) do
    local i = lane_of[e.path]
    if type(i) == "number" then
      local cx, cy = x(e.t), y(i)
      local label = esc(string.format("t=%s %s %s", fmt_t(e.t), e.ev, e.kind or e.detail or e.reason or ""))
      if e.ev == "fail" then
        add('<circle class="fail" cx="%.1f" cy="%.1f" r="5" fill="#d62728"><title>%s</title></circle>', cx, cy, label)
      elseif e.ev == "backoff" and type(e.delay) == "number" then
        add('<rect class="backoff" x="%.1f" y="%.1f" width="%.1f" height="8" fill="#ff7f0e" fill-opacity="0.6"><title>%s</title></rect>',
          cx, cy - 4, math.max(1, x(e.t + e.delay) - cx), label)
      elseif e.ev == "restart" then
        if failed_at[e.path .. "@" .. e.t] then cx = cx + 11 end -- beside the failure, not under it
        add('<path class="restart" d="M %.1f %.1f l 5 8 l -10 0 z" fill="#2ca02c"><title>%s</title></path>', cx, cy - 6, label)
      elseif e.ev == "start" then
        add('<line class="start" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#2ca02c" stroke-width="2"><title>%s</title></line>',
          cx, cy - 7, cx, cy + 7, label)
      elseif e.ev == "terminated" then
        add('<rect class="stop" x="%.1f" y="%.1f" width="8" height="8" fill="none" stroke="#555" stroke-width="1.5"><title>%s</title></rect>', cx - 4, cy - 4, label)
      elseif e.ev == "escalate" then
        add('<path class="escalate" d="M %.1f %.1f l 6 -10 l 6 10 z" fill="#9467bd"><title>%s</title></path>', cx - 6, cy + 4, label)
      elseif e.ev == "chaos" then
        add('<text class="chaos" x="%.1f" y="%.1f" text-anchor="middle" fill="#8c564b" font-size="14">*<title>%s</title></text>', cx, cy + 5, label)
      elseif e.ev == "exit" then
        local clean = e.status == 0
        add('<path class="exit" d="M %.1f %.1f l 8 8 m 0 -8 l -8 8" stroke="%s" stroke-width="2"><title>%s</title></path>',
          cx - 4, cy - 4, clean and "#555" or "#d62728",
          esc(string.format("t=%s exit %s", fmt_t(e.t), e.signal and ("signal " .. tostring(e.signal)) or ("status " .. tostring(e.status)))))
      elseif e.ev == "node" then -- a node up or down, a drop, a lost claim
        local d = tostring(e.detail or "")
        local color = d == "up" and "#2ca02c" or d:match("^down") and "#d62728" or "#7f7f7f"
        add('<path class="node" d="M %.1f %.1f l 5 5 l -5 5 l -5 -5 z" fill="%s"><title>%s</title></path>',
          cx, cy - 5, color, label)
      elseif e.ev == "dead_letter" then
        add('<circle class="dead_letter" cx="%.1f" cy="%.1f" r="2" fill="#999"><title>%s</title></circle>', cx, cy, label)
      end
    end
  end
  add('</g>')
  -- legend
  add('<g class="legend">')
  local items = {
    { '<circle cx="%d" cy="%d" r="5" fill="#d62728"/>', "failure" },
    { '<rect x="%d" y="%d" width="16" height="8" fill="#ff7f0e" fill-opacity="0.6"/>', "backoff wait" },
    { '<path d="M %d %d l 5 8 l -10 0 z" fill="#2ca02c"/>', "restart" },
    { '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#2ca02c" stroke-width="2"/>', "start" },
    { '<rect x="%d" y="%d" width="8" height="8" fill="none" stroke="#555" stroke-width="1.5"/>', "terminated" },
    { '<path d="M %d %d l 6 -10 l 6 10 z" fill="#9467bd"/>', "escalate" },
    { '<text x="%d" y="%d" fill="#8c564b" font-size="14">*</text>', "chaos" },
    { '<rect x="%d" y="%d" width="16" height="8" fill="#1f77b4" fill-opacity="0.25" stroke="#1f77b4"/>', "frozen" },
    { '<rect x="%d" y="%d" width="16" height="6" fill="#1f77b4" fill-opacity="0.35"/>', "process runs" },
    { '<path d="M %d %d l 8 8 m 0 -8 l -8 8" stroke="#d62728" stroke-width="2"/>', "process exit" },
    { '<path d="M %d %d l 5 5 l -5 5 l -5 -5 z" fill="#d62728"/>', "node up / down" },
  }
  for k, it in ipairs(items) do -- two rows of six
    local lx = left + ((k - 1) % 6) * 130
    local ly = height - 44 + (k > 6 and 22 or 0)
    local shape = it[1]
    if shape:find('height="6"', 1, true) then add(shape, lx - 8, ly - 3)
    elseif shape:find("m 0 %-8") then add(shape, lx - 4, ly - 4)
    elseif shape:find("<line") then add(shape, lx, ly - 7, lx, ly + 7)
    elseif shape:find('width="16"', 1, true) then add(shape, lx - 8, ly - 4)
    elseif shape:find("<rect") then add(shape, lx - 4, ly - 4)
    elseif shape:find("l 5 8") then add(shape, lx, ly - 6)
    elseif shape:find("l 6 %-10") then add(shape, lx - 6, ly + 4)
    elseif shape:find("<text") then add(shape, lx - 3, ly + 5)
    elseif shape:find("l 5 5") then add(shape, lx, ly - 5)
    else add(shape, lx, ly) end
    add('<text x="%d" y="%d" dominant-baseline="middle">%s</text>', lx + 12, ly, it[2])
  end
  add('</g>')
  add('</svg>')
  return table.concat(out, "\n") .. "\n"
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
