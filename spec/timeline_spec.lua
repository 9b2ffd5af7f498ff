-- tend timeline (design §6.4): `-` reads stdin, TRACE.svg by default,
-- a cut trace drawn up to its last good line with a warning, a freeze as a
-- bar for its duration, a restart beside a failure at the same instant,
-- /user/main always a lane, tasks under /system.
-- tend timeline: `-` reads stdin, TRACE.svg by default, a cut trace drawn
-- up to its last good line with a warning, a freeze as a bar for its
-- duration, a restart beside a failure at the same instant, /user/main
-- always a lane, tasks under /system; bad arguments refused.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestTimeline = {}

function TestTimeline:tearDown() H.assert_clean() end

local timeline = require "tend.timeline"

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local trace = table.concat({
  '{"t":0.000000,"ev":"trace","path":"/","detail":"seed 9"}',
  '{"t":0.000000,"ev":"spawn","path":"/user/db"}',
  '{"t":1.000000,"ev":"chaos","path":"/user/db","detail":"freeze 4.000 s"}',
  '{"t":2.000000,"ev":"fail","path":"/user/w","kind":"Boom","message":"x"}',
  '{"t":2.000000,"ev":"restart","path":"/user/w","count":1}',
  '{"t":3.000000,"ev":"spawn","path":"/system/$7"}',
  '{"t":5.000000,"ev":"chaos","path":"/user/db","detail":"thaw"}',
  '{"t":6.000000,"ev":"chaos","path":"/user/c","detail":"freeze 2.000 s"}',
  '{"t":9.000000,"ev":"dead_letter","path":"/deadLetters"}',
}, "\n") .. "\n"

-- The lanes of an SVG, in drawing order.
local function lanes(svg)
  local out = {}
  for p in svg:gmatch('<g class="lane" data%-path="([^"]+)">') do out[#out + 1] = p end
  return out
end

-- The x of the lane marks: the plot starts at 260 and is 810 wide.
local function x_of(t, t_max) return 260 + t / t_max * 810 end

function TestTimeline:test_stdin_and_the_default_output()
  local out, err, code = H.run({ "timeline", "-", "-o", os.tmpname() .. ".svg" }, trace)
  lu.assertEquals(code, 0, err)
  lu.assertStrContains(out, "9 events, written")
  local path = os.tmpname() .. ".jsonl"
  write(path, trace)
  out, err, code = H.run({ "timeline", path })
  lu.assertEquals(code, 0, err)
  local svg = path:gsub("%.jsonl$", ".svg")
  lu.assertEquals(out, svg .. ": 9 events, written\n")
  lu.assertStrContains(read(svg), "<svg xmlns=")
  lu.assertEquals(timeline.default_output("run.jsonl"), "run.svg")
  lu.assertEquals(timeline.default_output("run"), "run.svg")
  lu.assertEquals(timeline.default_output("-"), "trace.svg")
  os.remove(path)
  os.remove(svg)
end

function TestTimeline:test_a_cut_trace_is_drawn_up_to_its_last_good_line()
  local cut = trace:sub(1, #trace - 20) -- the last line loses its end
  local svg = os.tmpname() .. ".svg"
  local out, err, code = H.run({ "timeline", "-", "-o", svg }, cut)
  lu.assertEquals(code, 0, err)
  lu.assertStrContains(err, "tend timeline: warning: stdin:9: the trace ends in a cut line")
  lu.assertStrContains(err, "drawn up to line 8")
  lu.assertEquals(out, svg .. ": 8 events, written (truncated trace)\n")
  lu.assertStrContains(read(svg), 'class="freeze"')
  os.remove(svg)
end

function TestTimeline:test_a_bad_line_in_the_middle_is_still_an_error()
  local bad = trace:gsub('"ev":"restart"', '"ev":restart', 1)
  local svg = os.tmpname() .. ".svg"
  local _, err, code = H.run({ "timeline", "-", "-o", svg }, bad)
  lu.assertEquals(code, 1)
  lu.assertStrContains(err, "stdin:5: malformed trace line")
  lu.assertNil(read(svg))
end

function TestTimeline:test_usage_errors_name_what_is_missing()
  local _, err, code = H.run({ "timeline" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "expected a trace file (or - for stdin), got nothing")
  _, err, code = H.run({ "timeline", "x.jsonl", "-o" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "-o: expected a file name, got nothing")
end

function TestTimeline:test_a_freeze_is_a_bar_to_its_thaw_or_for_its_duration()
  local events = {}
  for line in trace:gmatch("[^\n]+") do events[#events + 1] = assert(timeline.parse_line(line)) end
  local svg = timeline.render(events)
  local bars = {}
  for x, w, title in svg:gmatch('<rect class="freeze" x="([%d.]+)" y="[%d.]+" width="([%d.]+)"[^>]*><title>([^<]*)</title>') do
    bars[#bars + 1] = { tonumber(x), tonumber(w), title }
  end
  lu.assertEquals(#bars, 2)
  -- t_max is 9 (the last event): db frozen 1..5 (thawed early), c 6..8
  lu.assertAlmostEquals(bars[1][1], x_of(1, 9), 0.1)
  lu.assertAlmostEquals(bars[1][2], x_of(5, 9) - x_of(1, 9), 0.1)
  lu.assertEquals(bars[1][3], "t=1..5 freeze 4.000 s")
  lu.assertAlmostEquals(bars[2][2], x_of(8, 9) - x_of(6, 9), 0.1)
  lu.assertStrContains(svg, ">frozen</text>") -- in the legend
end

function TestTimeline:test_a_restart_stays_visible_beside_a_failure_at_the_same_instant()
  local events = {}
  for line in trace:gmatch("[^\n]+") do events[#events + 1] = assert(timeline.parse_line(line)) end
  local svg = timeline.render(events)
  local fx = tonumber(svg:match('<circle class="fail" cx="([%d.]+)"'))
  local rx = tonumber(svg:match('<path class="restart" d="M ([%d.]+)'))
  lu.assertAlmostEquals(fx, x_of(2, 9), 0.1)
  lu.assertAlmostEquals(rx, fx + 11, 0.1) -- the triangle beside the circle
end

function TestTimeline:test_main_has_a_lane_and_tasks_sit_under_system()
  local events = {}
  for line in trace:gmatch("[^\n]+") do events[#events + 1] = assert(timeline.parse_line(line)) end
  lu.assertEquals(lanes(timeline.render(events)), {
    "/deadLetters", "/system", "/system/$7", "/user", "/user/c", "/user/db", "/user/main", "/user/w" })
  -- a trace from a run: main spawns a task (tend.after) under /system
  local path = H.script([[
local tend = require "tend"
tend.after(0.5, function() end)
tend.sleep(1)
]])
  local tr, svg = os.tmpname(), os.tmpname() .. ".svg"
  local _, err, code = H.run({ "--virtual-time", "--trace", tr, path })
  lu.assertEquals(code, 0, err)
  _, err, code = H.run({ "timeline", tr, "-o", svg })
  lu.assertEquals(code, 0, err)
  local got = lanes(read(svg))
  lu.assertEquals(got[1], "/system")
  lu.assertStrMatches(got[2], "/system/%$%d+")
  lu.assertEquals(got[3], "/user")
  lu.assertEquals(got[4], "/user/main")
  for _, p in ipairs { path, tr, svg } do os.remove(p) end
end

-- tend timeline: "t":1e400 is valid JSON (infinity) and drew an axis of
-- endless ticks; a directory gave a Lua traceback.
function TestTimeline:test_timeline_refuses_infinity_and_directories()
  local trace = os.tmpname()
  local f = assert(io.open(trace, "wb"))
  f:write('{"t":0.5,"ev":"spawn","path":"/user/a"}\n{"t":1e400,"ev":"spawn","path":"/user/b"}\n')
  f:close()
  local svg = os.tmpname()
  local _, err, code = H.run({ "timeline", trace, "-o", svg })
  lu.assertEquals(code, 1)
  lu.assertStrContains(err, trace .. ":2: malformed trace line: number out of range: 1e400")
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir " .. dir)
  _, err, code = H.run({ "timeline", dir, "-o", svg })
  lu.assertEquals(code, 1)
  lu.assertEquals(err, "tend timeline: " .. dir .. ": Is a directory\n")
  os.remove(trace)
  os.remove(svg)
  os.execute("rmdir " .. dir)
end

function TestTimeline:test_a_lane_says_the_scheduler_of_its_actor()
  local events = {
    { t = 0, ev = "spawn", sched = 0, path = "/user/here" },
    { t = 0, ev = "spawn", sched = 2, path = "/user/there" },
    { t = 1, ev = "fail", sched = 2, path = "/user/there", kind = "Error" },
  }
  local svg = timeline.render(events)
  lu.assertStrContains(svg, ">there (scheduler 2)</text>")
  lu.assertStrContains(svg, ">here</text>") -- scheduler 0: nothing said
  lu.assertStrContains(svg, "sched: 2") -- in the mark's tooltip
end
