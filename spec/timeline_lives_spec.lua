-- The timeline's lives and outages (design §6.4, tend.timeline.lives) and
-- how the SVG draws them: each actor's life as spans of one state, a
-- backoff supervisor's child backing off with it, a freeze as waiting, a
-- crashed node's actors stopped with it, node downtime and partitions as
-- spans, stream lanes, the axis on top and repeated, a tooltip on every
-- mark. The same trace is opened in Chromium by
-- spec/realtime/timeline_browser_spec.lua.
local lu = require "luaunit"
local H = require "helper"
local lives = require "tend.timeline.lives"
local timeline = require "tend.timeline"
local story = require "timeline_story"

TestTimelineLives = {}

function TestTimelineLives:tearDown() H.assert_clean() end

local function rows(spans)
  local out = {}
  for _, s in ipairs(spans) do
    out[#out + 1] = string.format("%s %s %g..%g %s", s.path, s.state, s.from, s.to, s.why.ev)
  end
  return out
end

function TestTimelineLives:test_each_life_is_spans_of_one_state()
  local events, nodes = lives.band(story)
  lu.assertEquals(nodes, { a = true, b = true })
  lu.assertEquals(rows(lives.lives(events, 10)), {
    "/@a/user/kv running 0..5 spawn",
    "/@a/user/kv stopped 5..7 chaos",     -- node a crashed with it
    "/@a/user/kv running 7..10 spawn",
    "/@b/user/kv running 0..10 spawn",
    "/user/feed running 0.5..2.5 stream_start",
    "/user/feed backoff 2.5..3 stream_backoff",
    "/user/feed running 3..8 stream_restart",
    "/user/feed stopped 8..10 stream_complete",
    "/user/main running 0..10 spawn",
    "/user/main stopped 10..10 terminated", -- the state it ends in, however short
    "/user/sup running 0..10 spawn",
    "/user/sup/w running 0..1 spawn",
    "/user/sup/w backoff 1..1.5 backoff", -- its supervisor's wait
    "/user/sup/w running 1.5..3 spawn",
    "/user/sup/w waiting 3..4 chaos",     -- frozen
    "/user/sup/w running 4..9 chaos",     -- thawed
    "/user/sup/w stopped 9..10 terminated",
  })
  -- the input is left as it was
  lu.assertEquals(story[6].path, "/user/kv")
end

function TestTimelineLives:test_downtime_and_partitions_are_spans()
  local events = lives.band(story)
  local got = {}
  for _, s in ipairs(lives.outages(events, 10)) do
    got[#got + 1] = string.format("%s %s %s %s %g..%g", s.kind, s.a, tostring(s.b), s.where, s.from, s.to)
  end
  lu.assertEquals(got, { "partition a b node 2..4", "down a nil node 5..7" })
  -- open ones end with the trace; a simnet partition is between lanes
  local open = lives.outages({
    { t = 1, ev = "chaos", path = "/node/c", detail = "crash_node" },
    { t = 2, ev = "chaos", path = "/net/app", to = "/net/db", detail = "partition" },
    { t = 3, ev = "chaos", path = "/net/x", to = "/net/y", detail = "partition" },
    { t = 4, ev = "chaos", path = "*", detail = "heal" },
  }, 6)
  got = {}
  for _, s in ipairs(open) do
    got[#got + 1] = string.format("%s %s %s %s %g..%g", s.kind, s.a, tostring(s.b), s.where, s.from, s.to)
  end
  lu.assertEquals(got, { "down c nil node 1..6", "partition /net/app /net/db lane 2..4",
    "partition /net/x /net/y lane 3..4" })
end

-- The x of time t in a drawing whose last instant is t_max.
local function x_of(t, t_max) return 260 + t / t_max * (1100 - 260 - 30) end

function TestTimelineLives:test_the_svg_draws_lives_outages_streams_and_tooltips()
  local svg = timeline.render(story)
  local function count(pat) return select(2, svg:gsub(pat, "")) end
  lu.assertEquals(count('class="life running"'), 10)
  lu.assertEquals(count('class="life backoff"'), 2)
  lu.assertEquals(count('class="life waiting"'), 1)
  lu.assertEquals(count('class="life stopped"'), 4)
  lu.assertEquals(count('<rect class="downtime"'), 1)
  lu.assertEquals(count('<rect class="partition"'), 2) -- over a's band and b's
  lu.assertEquals(count('<g class="axis">'), 2)        -- on top and at the bottom (over 12 lanes)
  lu.assertStrContains(svg, ">feed (stream)</text>") -- the stream's lane
  for _, cls in ipairs { "stream-start", "stream-fail", "stream-backoff", "stream-restart",
    "stream-drop", "stream-complete" } do
    lu.assertEquals(count('class="' .. cls:gsub("%-", "%%-") .. '"'), 1, cls)
  end
  -- the downtime spans a's band from 5 to 7 s, with its tooltip
  local x, w, tip = svg:match('<rect class="downtime" x="([%d.]+)" y="[%d.]+" width="([%d.]+)"[^>]*><title>([^<]*)</title>')
  lu.assertAlmostEquals(tonumber(x), x_of(5, 10), 0.1)
  lu.assertAlmostEquals(tonumber(w), x_of(7, 10) - x_of(5, 10), 0.1)
  lu.assertEquals(tip, "t=5..7 node a down")
  -- every mark says what it is: the failure's tooltip has its fields
  lu.assertStrContains(svg, "<title>t=1 fail Error\nkind: Error\nmessage: boom\npath: /user/sup/w</title>")
  local marks = svg:match('<g class="marks">(.-)</g>')
  local shapes, titled = 0, 0
  for _ in marks:gmatch("<%a+ class=") do shapes = shapes + 1 end
  for _ in marks:gmatch("</title></%a+>") do titled = titled + 1 end
  lu.assertTrue(shapes >= 20)
  lu.assertTrue(titled >= shapes)
end

function TestTimelineLives:test_the_axis_is_on_top_and_repeated_on_long_drawings()
  local events = { { t = 0, ev = "trace", path = "/", detail = "seed 1" } }
  for i = 1, 60 do events[#events + 1] = { t = i / 10, ev = "spawn", path = "/user/w" .. i } end
  local svg = timeline.render(events)
  -- 63 lanes (/user, main, w1..w60, and /user/main's parent counted once):
  -- the top axis, one every 25 lanes, one at the bottom
  local ys = {}
  for y in svg:gmatch('<g class="axis">\n<rect[^\n]*\n<line x1="%d+" y1="(%d+)"') do ys[#ys + 1] = tonumber(y) end
  lu.assertEquals(#ys, 4)
  local first_lane = tonumber(svg:match('<g class="lane" data%-path="[^"]+">\n<[^\n]*y="([%d.]+)"'))
  lu.assertTrue(ys[1] < first_lane, "the first axis is above the first lane")
  for k = 2, #ys do lu.assertTrue(ys[k] > ys[k - 1]) end
end

