-- tend.timeline.svg: a trace drawn as an SVG document (design §6.4). One
-- lane per actor (paths sorted, a subtree's lanes together, a simulated
-- node's lanes in a band of their own); each actor's life a bar coloured
-- by state (tend.timeline.lives); a node's downtime and a partition shaded
-- across their bands; failures, restarts, starts, stops, chaos, process
-- runs and stream events as marks, each with a tooltip (<title>) giving
-- the event whole; the time axis on top, repeated every SCREEN lanes and
-- at the bottom, with a grid line per tick; a legend under the title.
local lives = require "tend.timeline.lives"

local M = {}

M.SCREEN = 25 -- lanes between two copies of the axis (about one screen)

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
M.fmt_t = fmt_t

-- An event's tooltip: "t=T ev summary", then its other fields, one a line.
local function details(e, first)
  local lines = { first or string.format("t=%s %s %s", fmt_t(e.t), e.ev,
    tostring(e.kind or e.detail or e.reason or "")) }
  local keys = {}
  for k in pairs(e) do
    if k ~= "t" and k ~= "ev" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = e[k]
    if type(v) == "table" then
      local parts = {}
      for _, x in ipairs(v) do parts[#parts + 1] = tostring(x) end
      v = "[" .. table.concat(parts, ", ") .. "]"
    end
    lines[#lines + 1] = k .. ": " .. tostring(v)
  end
  return esc(table.concat(lines, "\n"))
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

local COLOR = { running = "#59a14f", waiting = "#edc948", backoff = "#f28e2b", stopped = "#b0b0b0",
  fail = "#d62728", restart = "#2ca02c", start = "#2ca02c", escalate = "#9467bd", chaos = "#8c564b",
  frozen = "#1f77b4", stream = "#17becf", down = "#d62728", partition = "#9467bd" }

-- The shapes of the marks, each drawn at (x, y) with a class and a title
-- (nil in the legend).
local function title(t) return t and ("<title>" .. t .. "</title>") or "" end
local SHAPE = {
  fail = function(x, y, cls, t)
    return string.format('<circle class="%s" cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="white">%s</circle>',
      cls, x, y, COLOR.fail, title(t))
  end,
  restart = function(x, y, cls, t, color)
    return string.format('<path class="%s" d="M %.1f %.1f l 5 8 l -10 0 z" fill="%s" stroke="white" stroke-width="0.5">%s</path>',
      cls, x, y - 6, color or COLOR.restart, title(t))
  end,
  start = function(x, y, cls, t, color)
    return string.format('<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2">%s</line>',
      cls, x, y - 8, x, y + 8, color or COLOR.start, title(t))
  end,
  stop = function(x, y, cls, t)
    return string.format('<rect class="%s" x="%.1f" y="%.1f" width="8" height="8" fill="white" stroke="#555" stroke-width="1.5">%s</rect>',
      cls, x - 4, y - 4, title(t))
  end,
  escalate = function(x, y, cls, t)
    return string.format('<path class="%s" d="M %.1f %.1f l 6 -10 l 6 10 z" fill="%s">%s</path>',
      cls, x - 6, y + 4, COLOR.escalate, title(t))
  end,
  chaos = function(x, y, cls, t)
    return string.format('<text class="%s" x="%.1f" y="%.1f" text-anchor="middle" fill="%s" font-size="16" font-weight="bold">*%s</text>',
      cls, x, y + 6, COLOR.chaos, title(t))
  end,
  exit = function(x, y, cls, t, color)
    return string.format('<path class="%s" d="M %.1f %.1f l 8 8 m 0 -8 l -8 8" stroke="%s" stroke-width="2">%s</path>',
      cls, x - 4, y - 4, color or COLOR.fail, title(t))
  end,
  node = function(x, y, cls, t, color)
    return string.format('<path class="%s" d="M %.1f %.1f l 5 5 l -5 5 l -5 -5 z" fill="%s">%s</path>',
      cls, x, y - 5, color or COLOR.fail, title(t))
  end,
  dot = function(x, y, cls, t, color)
    return string.format('<circle class="%s" cx="%.1f" cy="%.1f" r="2.5" fill="%s">%s</circle>',
      cls, x, y, color or "#999", title(t))
  end,
  check = function(x, y, cls, t)
    return string.format('<path class="%s" d="M %.1f %.1f l 3 4 l 6 -9" fill="none" stroke="%s" stroke-width="2">%s</path>',
      cls, x - 4, y, COLOR.stream, title(t))
  end,
}

local function bar(cls, x1, x2, y, h, color, opacity, t)
  return string.format('<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"%s>%s</rect>',
    cls, x1, y - h / 2, math.max(1, x2 - x1), h, color,
    opacity and string.format(' fill-opacity="%s"', opacity) or "", title(t))
end

-- natural order: "w2" before "w10", and a subtree right after its root
local function key(p)
  return (p:gsub("%d+", function(d) return string.format("%012d", tonumber(d)) end):gsub("/", "\1"))
end

-- Renders events as an SVG document (a string).
function M.render(events, heading)
  local nodes
  events, nodes = lives.band(events)
  local lanes, lane_of = {}, {}
  local t_max, seed = 0, nil
  local function lane(p) -- p and its ancestors (/user, /system, ...) get a lane
    if lane_of[p] then return end
    lane_of[p] = true
    lanes[#lanes + 1] = p
    local up = p:match("^(/.+)/[^/]+$")
    if up then lane(up) end
  end
  lane("/user/main") -- the main chunk has a lane even when nothing happened to it
  for n in pairs(nodes) do lane("/@" .. n) end
  local freezes = freeze_bars(events)
  local is_stream, is_process, sched_of = {}, {}, {} -- sched_of: other than 0
  for _, e in ipairs(events) do
    if e.ev == "trace" and type(e.detail) == "string" then seed = e.detail:match("seed (%-?%d+)") end
    local p = e.path
    if type(p) == "string" and p:match("^/.") and p ~= "*" then lane(p) end
    if type(p) == "string" and e.ev:match("^stream_") then is_stream[p] = true end
    if type(p) == "string" and e.ev == "spawn_os" then is_process[p] = true end
    if type(p) == "string" and math.type(e.sched) == "integer" and e.sched > 0 then sched_of[p] = e.sched end
    local finish = e.t + (((e.ev == "backoff" or e.ev == "stream_backoff") and type(e.delay) == "number")
      and e.delay or 0)
    if finish > t_max then t_max = finish end
  end
  for _, b in ipairs(freezes) do
    if b.to > t_max then t_max = b.to end
  end
  if t_max <= 0 then t_max = 1 end
  -- a failure's place (lane and time): a restart there is drawn beside it
  local failed_at = {}
  for _, e in ipairs(events) do
    if (e.ev == "fail" or e.ev == "stream_fail") and type(e.path) == "string" then
      failed_at[e.path .. "@" .. e.t] = true
    end
  end
  table.sort(lanes, function(a, b) return key(a) < key(b) end)
  for i, p in ipairs(lanes) do lane_of[p] = i end

  local left, right, width, lane_h, axis_h = 260, 30, 1100, 22, 26
  local plot_w = width - left - right
  local legend_top = 44
  local top = legend_top + 3 * 20 + axis_h + 4 -- the first lane's top
  local copies = math.floor((#lanes - 1) / M.SCREEN) -- repeated axes between lanes
  local bottom_axis = #lanes > 12
  local height = top + #lanes * lane_h + copies * axis_h + (bottom_axis and axis_h + 4 or 0) + 12
  local function x(t) return left + t / t_max * plot_w end
  local function lane_top(i) return top + (i - 1) * lane_h + math.floor((i - 1) / M.SCREEN) * axis_h end
  local function y(i) return lane_top(i) + lane_h / 2 end
  local out = {}
  local function add(...) out[#out + 1] = string.format(...) end
  -- data-*: the time scale, for a page that maps a click to an instant
  add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12" data-t-max="%.6f" data-x0="%d" data-x1="%d">',
    width, height, width, height, t_max, left, left + plot_w)
  add('<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="%s" stroke-width="3" stroke-opacity="0.35"/></pattern></defs>',
    COLOR.partition)
  add('<rect width="100%%" height="100%%" fill="white"/>')
  add('<text class="title" x="%d" y="26" font-size="16" font-weight="bold">%s</text>', left,
    esc(heading or ("tend timeline" .. (seed and (" - seed " .. seed) or ""))))

  -- bands: a simulated node's lanes (/@a and under) share a tinted band
  local band_of = {} -- node -> { first, last }
  for i, p in ipairs(lanes) do
    local n = p:match("^/@([^/]+)")
    if n then
      local b = band_of[n] or { first = i }
      b.last = i
      band_of[n] = b
    end
  end
  local function span_y(i, j) return lane_top(i), lane_top(j) + lane_h - lane_top(i) end

  -- lanes
  local step = nice_step(t_max, 8)
  for i, p in ipairs(lanes) do
    local depth = select(2, p:gsub("/", "")) - 1
    local name = p:match("[^/]+$") or p
    local node = name:sub(1, 1) == "@" and depth == 0
    if node then name = "node " .. name:sub(2) end
    add('<g class="lane" data-path="%s">', esc(p))
    if node or i % 2 == 0 then
      add('<rect x="0" y="%.1f" width="%d" height="%d" fill="%s"/>', lane_top(i), width, lane_h,
        node and "#e8eef6" or "#f6f7f9")
    end
    local suffix = (is_process[p] and " (OS process)" or is_stream[p] and " (stream)" or "")
      .. (sched_of[p] and (" (scheduler " .. sched_of[p] .. ")") or "")
    add('<text x="%d" y="%.1f" dominant-baseline="middle"%s>%s%s</text>', 8 + depth * 12, y(i),
      (depth == 0 or node) and ' font-weight="bold"' or "", esc(name), suffix)
    add('</g>')
  end
  -- the grid: one line per tick across every lane
  add('<g class="grid">')
  local t = step
  while t <= t_max + 1e-9 do
    add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#e3e3e3"/>', x(t), top, x(t),
      lane_top(#lanes) + lane_h)
    t = t + step
  end
  add('</g>')
  -- outages under the marks: downtime over a node's band, a partition
  -- over both sides' bands (or lanes)
  add('<g class="outages">')
  for _, s in ipairs(lives.outages(events, t_max)) do
    local sides = s.kind == "down" and { s.a } or { s.a, s.b }
    for _, side in ipairs(sides) do
      local i, j
      if s.where == "node" and band_of[side] then i, j = band_of[side].first, band_of[side].last
      elseif s.where == "lane" and lane_of[side] then i, j = lane_of[side], lane_of[side] end
      if i then
        local y0, h = span_y(i, j)
        local what = string.format("t=%s..%s %s", fmt_t(s.from), fmt_t(s.to), s.label)
        if s.kind == "down" then
          add('<rect class="downtime" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.15" stroke="%s" stroke-opacity="0.5"><title>%s</title></rect>',
            x(s.from), y0, math.max(1, x(s.to) - x(s.from)), h, COLOR.down, COLOR.down, esc(what))
        else
          add('<rect class="partition" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#hatch)" stroke="%s" stroke-opacity="0.5"><title>%s</title></rect>',
            x(s.from), y0, math.max(1, x(s.to) - x(s.from)), h, COLOR.partition, esc(what))
        end
      end
    end
  end
  add('</g>')
  -- lives: one bar per span, coloured by state; stopped is a thin line
  add('<g class="lives">')
  for _, s in ipairs(lives.lives(events, t_max)) do
    local i = lane_of[s.path]
    if i then
      local what = esc(string.format("%s: %s t=%s..%s (from %s)", s.path, s.state, fmt_t(s.from),
        fmt_t(s.to), s.why.ev))
      local x1, x2 = x(s.from), x(s.to)
      if s.state == "stopped" then
        out[#out + 1] = bar("life stopped", x1, x2, y(i), 2, COLOR.stopped, nil, what)
      else
        out[#out + 1] = bar("life " .. s.state, x1, x2, y(i), 10, COLOR[s.state], "0.55", what)
      end
    end
  end
  add('</g>')
  -- OS processes: each run from spawn_os to its exit (or the end) is a bar
  add('<g class="process-runs">')
  local open_run = {}
  local runs = {}
  for _, e in ipairs(events) do
    if e.ev == "spawn_os" and type(e.path) == "string" then
      open_run[e.path] = { path = e.path, from = e.t, pid = e.pid }
      runs[#runs + 1] = open_run[e.path]
    elseif e.ev == "exit" and open_run[e.path] then
      open_run[e.path].to = e.t
      open_run[e.path] = nil
    end
  end
  for _, r in ipairs(runs) do
    local i = lane_of[r.path]
    out[#out + 1] = bar("process-run", x(r.from), x(r.to or t_max), y(i) + 7, 4, "#1f77b4", "0.6",
      esc(string.format("pid %s from t=%s", tostring(r.pid), fmt_t(r.from))))
  end
  add('</g>')
  -- marks (failures last, so they stay on top)
  add('<g class="marks">')
  for _, b in ipairs(freezes) do
    local i = lane_of[b.path]
    add('<rect class="freeze" x="%.1f" y="%.1f" width="%.1f" height="16" fill="%s" fill-opacity="0.2" stroke="%s"><title>%s</title></rect>',
      x(b.from), y(i) - 8, math.max(1, x(b.to) - x(b.from)), COLOR.frozen, COLOR.frozen,
      esc(string.format("t=%s..%s %s", fmt_t(b.from), fmt_t(b.to), b.label)))
  end
  local ordered = {}
  for _, e in ipairs(events) do if e.ev ~= "fail" then ordered[#ordered + 1] = e end end
  for _, e in ipairs(events) do if e.ev == "fail" then ordered[#ordered + 1] = e end end
  for _, e in ipairs(ordered) do
    local i = lane_of[e.path]
    if type(i) == "number" then
      local cx, cy = x(e.t), y(i)
      local label = details(e)
      local ev = e.ev
      if (ev == "restart" or ev == "stream_restart") and failed_at[e.path .. "@" .. e.t] then
        cx = cx + 11 -- beside the failure, not under it
      end
      if ev == "fail" then add("%s", SHAPE.fail(cx, cy, "fail", label))
      elseif ev == "backoff" and type(e.delay) == "number" then
        -- under the supervisor's life bar (its child's bar says backing off)
        out[#out + 1] = bar("backoff", cx, x(e.t + e.delay) - 1, cy + 7, 4, COLOR.backoff, "0.9", label)
      elseif ev == "restart" then add("%s", SHAPE.restart(cx, cy, "restart", label))
      elseif ev == "start" then add("%s", SHAPE.start(cx, cy, "start", label))
      elseif ev == "terminated" then add("%s", SHAPE.stop(cx, cy, "stop", label))
      elseif ev == "escalate" then add("%s", SHAPE.escalate(cx, cy, "escalate", label))
      elseif ev == "chaos" then add("%s", SHAPE.chaos(cx, cy, "chaos", label))
      elseif ev == "exit" then
        local first = string.format("t=%s exit %s", fmt_t(e.t),
          e.signal and ("signal " .. tostring(e.signal)) or ("status " .. tostring(e.status)))
        add("%s", SHAPE.exit(cx, cy, "exit", details(e, first), e.status == 0 and "#555" or nil))
      elseif ev == "node" then -- a node up or down, a drop, a lost claim
        local d = tostring(e.detail or "")
        local color = d == "up" and COLOR.start or d:match("^down") and COLOR.fail or "#7f7f7f"
        add("%s", SHAPE.node(cx, cy, "node", label, color))
      elseif ev == "dead_letter" then add("%s", SHAPE.dot(cx, cy, "dead_letter", label))
      elseif ev == "stream_start" then add("%s", SHAPE.start(cx, cy, "stream-start", label, COLOR.stream))
      elseif ev == "stream_restart" then add("%s", SHAPE.restart(cx, cy, "stream-restart", label, COLOR.stream))
      elseif ev == "stream_complete" then add("%s", SHAPE.check(cx, cy, "stream-complete", label))
      elseif ev == "stream_fail" then add("%s", SHAPE.fail(cx, cy, "stream-fail", label))
      elseif ev == "stream_cancel" then add("%s", SHAPE.stop(cx, cy, "stream-cancel", label))
      elseif ev == "stream_drop" then add("%s", SHAPE.dot(cx, cy, "stream-drop", label, COLOR.stream))
      elseif ev == "stream_backoff" then
        local to = type(e.delay) == "number" and x(e.t + e.delay) or cx + 6
        out[#out + 1] = bar("stream-backoff", cx, to, cy, 8, COLOR.backoff, "0.8", label)
      end
    end
  end
  add('</g>')
  -- the axis: on top, again every SCREEN lanes, and at the bottom
  local function axis(base) -- base: the axis line's y; labels above it
    add('<g class="axis">')
    add('<rect x="%d" y="%d" width="%d" height="%d" fill="white" fill-opacity="0.9"/>', left - 20,
      base - axis_h + 4, plot_w + 40, axis_h - 4)
    add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>', left, base, left + plot_w, base)
    local tt = 0
    while tt <= t_max + 1e-9 do
      add('<line class="tick" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>', x(tt), base - 5, x(tt), base)
      add('<text x="%.1f" y="%d" text-anchor="middle">%s s</text>', x(tt), base - 8, fmt_t(tt))
      tt = tt + step
    end
    add('</g>')
  end
  axis(top - 2)
  for k = 1, copies do axis(math.floor(lane_top(k * M.SCREEN + 1)) - 2) end
  if bottom_axis then axis(math.floor(lane_top(#lanes) + lane_h + axis_h)) end
  -- legend, under the title
  add('<g class="legend">')
  local items = {
    { function(lx, ly) return bar("", lx - 8, lx + 8, ly, 10, COLOR.running, "0.55") end, "running" },
    { function(lx, ly) return bar("", lx - 8, lx + 8, ly, 10, COLOR.waiting, "0.55") end, "waiting / stopping" },
    { function(lx, ly) return bar("", lx - 8, lx + 8, ly, 10, COLOR.backoff, "0.8") end, "backing off" },
    { function(lx, ly) return bar("", lx - 8, lx + 8, ly, 2, COLOR.stopped) end, "stopped" },
    { function(lx, ly) return SHAPE.fail(lx, ly, "") end, "failure" },
    { function(lx, ly) return SHAPE.restart(lx, ly, "") end, "restart" },
    { function(lx, ly) return SHAPE.start(lx, ly, "") end, "start" },
    { function(lx, ly) return SHAPE.stop(lx, ly, "") end, "terminated" },
    { function(lx, ly) return SHAPE.escalate(lx, ly, "") end, "escalate" },
    { function(lx, ly) return SHAPE.chaos(lx, ly, "") end, "chaos" },
    { function(lx, ly)
      return string.format('<rect x="%d" y="%d" width="16" height="12" fill="%s" fill-opacity="0.2" stroke="%s"/>',
        lx - 8, ly - 6, COLOR.frozen, COLOR.frozen)
    end, "frozen" },
    { function(lx, ly) return bar("", lx - 8, lx + 8, ly, 4, "#1f77b4", "0.6") end, "process runs" },
    { function(lx, ly) return SHAPE.exit(lx, ly, "") end, "process exit" },
    { function(lx, ly) return SHAPE.node(lx, ly, "") end, "node up / down" },
    { function(lx, ly)
      return string.format('<rect x="%d" y="%d" width="16" height="14" fill="%s" fill-opacity="0.15" stroke="%s"/>',
        lx - 8, ly - 7, COLOR.down, COLOR.down)
    end, "node down" },
    { function(lx, ly)
      return string.format('<rect x="%d" y="%d" width="16" height="14" fill="url(#hatch)" stroke="%s"/>',
        lx - 8, ly - 7, COLOR.partition)
    end, "partition" },
    { function(lx, ly) return SHAPE.dot(lx, ly, "") end, "dead letter" },
    { function(lx, ly) return SHAPE.start(lx, ly, "", nil, COLOR.stream) end, "stream start" },
    { function(lx, ly) return SHAPE.check(lx, ly, "") end, "stream complete" },
  }
  for k, it in ipairs(items) do -- three rows of seven
    local lx = 20 + ((k - 1) % 7) * 150
    local ly = legend_top + math.floor((k - 1) / 7) * 20
    add("%s", it[1](lx + 8, ly))
    add('<text x="%d" y="%d" dominant-baseline="middle">%s</text>', lx + 22, ly, it[2])
  end
  add('</g>')
  add('</svg>')
  return table.concat(out, "\n") .. "\n"
end

return M
