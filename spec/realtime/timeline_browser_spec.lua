-- The timeline SVG in a real browser (design §6.4): headless Chromium
-- (Debian's chromium) opens the drawing of spec/timeline_story.lua and of a
-- three-node scenario, through scripts/browser.mjs (node and the DevTools
-- protocol, nothing from npm); the page has no errors, its lanes, life
-- bars, outages, axis, legend and tooltips are there, and a screenshot of
-- its size is taken. Skipped, saying why, without chromium or node.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local timeline = require "tend.timeline"

if tend.virtual_time() then return end
local function has(cmd) return os.execute("command -v " .. cmd .. " >/dev/null 2>&1") end
if not (has("chromium") or has("chromium-browser") or has("google-chrome")) then
  print("timeline_browser_spec: skipped: no chromium (scripts/deps browser installs it)")
  return
end
if not has("node") then
  print("timeline_browser_spec: skipped: no node (scripts/deps browser installs it)")
  return
end

TestTimelineBrowser = {}

-- Opens url in Chromium, evaluates expr there; returns the flat result
-- (its fields, errors, ms).
local function browse(url, expr, extra)
  local words = { "node", "--experimental-websocket", "scripts/browser.mjs", url, "--timeout", "60", "--eval", expr }
  for _, w in ipairs(extra or {}) do words[#words + 1] = w end
  for i, w in ipairs(words) do words[i] = "'" .. w:gsub("'", "'\\''") .. "'" end
  local p = assert(io.popen(table.concat(words, " ") .. " 2>&1"))
  local out = p:read("a")
  p:close()
  local r, why = timeline.parse_line(out:match("([^\n]*)\n*$"))
  lu.assertNotNil(r, "browser.mjs said: " .. out .. " (" .. tostring(why) .. ")")
  return r
end

local COUNTS = [[(() => {
  const n = (sel) => document.querySelectorAll(sel).length;
  const marks = [...document.querySelectorAll("g.marks > *")];
  return {
    parsererror: n("parsererror"), lanes: n("g.lane"), running: n("rect.life.running"),
    backoff: n("rect.life.backoff"), waiting: n("rect.life.waiting"), stopped: n("rect.life.stopped"),
    downtime: n("rect.downtime"), partition: n("rect.partition"), axes: n("g.axis"),
    legend: [...document.querySelectorAll("g.legend text[dominant-baseline]")].map((t) => t.textContent),
    marks: marks.length, untitled: marks.filter((m) => !m.querySelector("title")).length,
    width: Math.round(document.documentElement.getBBox().width),
    downtime_box: (() => { const r = document.querySelector("rect.downtime").getBBox();
      return [Math.round(r.x), Math.round(r.width)]; })(),
  };
})()]]

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function TestTimelineBrowser:test_the_story_draws_without_errors_and_with_every_part()
  local svg = os.tmpname() .. ".svg"
  write(svg, timeline.render(require "timeline_story"))
  local png = os.tmpname() .. ".png"
  local r = browse("file://" .. svg, COUNTS, { "--screenshot", png, "--width", "1100", "--height", "700" })
  lu.assertEquals(r.errors, {})
  lu.assertEquals(r.parsererror, 0)
  lu.assertEquals(r.lanes, 15)
  lu.assertEquals({ r.running, r.backoff, r.waiting, r.stopped }, { 10, 2, 1, 4 })
  lu.assertEquals({ r.downtime, r.partition, r.axes }, { 1, 2, 2 })
  lu.assertEquals(r.legend[1], "running")
  lu.assertEquals(#r.legend, 19)
  lu.assertEquals(r.untitled, 0) -- every mark has its tooltip
  lu.assertTrue(r.marks >= 20)
  lu.assertEquals(r.width, 1100)
  -- node a was down from 5 to 7 s of 10 (the plot runs from x=260 to 1070)
  lu.assertEquals(r.downtime_box, { 665, 162 })
  local f = assert(io.open(png, "rb"))
  local head = f:read(24)
  f:close()
  lu.assertEquals(head:sub(2, 4), "PNG")
  lu.assertEquals({ string.unpack(">I4I4", head, 17) }, { 1100, 700, 25 })
  os.remove(svg)
  os.remove(png)
end

function TestTimelineBrowser:test_a_three_node_scenario_shows_its_downtime_and_partition()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir " .. dir)
  local svg = dir .. "/leader.svg"
  H.run({ "scenario", "examples/explore/leader.lua", "--seed", "4", "--svg", svg })
  local r = browse("file://" .. svg, COUNTS)
  lu.assertEquals(r.errors, {})
  lu.assertEquals(r.parsererror, 0)
  lu.assertEquals(r.downtime, 1) -- node a, crashed at 8.775 s
  lu.assertEquals(r.partition, 2) -- c | a, over both bands
  lu.assertEquals(r.axes, 3) -- on top, after 25 lanes, at the bottom
  lu.assertEquals(r.untitled, 0)
  os.execute("rm -rf " .. dir)
end
