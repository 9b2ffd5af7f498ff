-- tend scenario and tend timeline, run as subprocesses.
local lu = require "luaunit"
local H = require "helper"

TestScenario = {}

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local passing = [[
local tend = require "tend"
local a = tend.spawn(function() return function(m) if m == "boom" then tend.raise("Boom", "x") end end end,
  { name = "a" })
a:send("boom")
tend.sleep(tend.random() * 10)
assert(tend.alive(a))
]]

function TestScenario:test_timeline_summary_and_exit_0()
  local path = H.script(passing)
  local out, err, code = H.run({ "scenario", path, "--seed", "4" })
  lu.assertEquals(code, 0, err)
  lu.assertStrContains(out, "t=0.000      /user/a                          fail       (Boom: x)")
  lu.assertStrContains(out, "directive  restart (default)")
  lu.assertStrContains(out, "restarts  /user/a                                  1")
  lu.assertStrContains(out, "failures  Boom                                     1")
  lu.assertStrMatches(out, ".*dead letters 0, virtual time %d+%.%d%d%d s, seed 4\n.*")
  lu.assertStrContains(out, "result: ok,")
  lu.assertStrContains(err, "wall time")
  local again = H.run({ "scenario", path, "--seed", "4" })
  lu.assertEquals(again, out) -- stdout replays byte for byte
  os.remove(path)
end

function TestScenario:test_a_failed_check_exits_1()
  local path = H.script(passing .. "\nassert(false, 'the check failed')\n")
  local out, _, code = H.run({ "scenario", path, "--seed", "1" })
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, "scenario failed: ")
  lu.assertStrContains(out, "the check failed")
  lu.assertStrContains(out, "result: FAILED")
  os.remove(path)
end

function TestScenario:test_seeds_range_reports_each_seed_and_the_failures()
  local path = H.script([[
local tend = require "tend"
assert(tend.seed() % 3 ~= 0, "seed divisible by 3")
]])
  local out, _, code = H.run({ "scenario", path, "--seeds", "1..6" })
  lu.assertEquals(code, 1)
  for s = 1, 6 do lu.assertStrContains(out, "seed " .. s .. ": ") end
  lu.assertStrContains(out, "seed 3: FAILED")
  lu.assertStrContains(out, "seed 4: ok")
  lu.assertStrContains(out, "failed seeds: 3 6 (replay one with: tend scenario " .. path .. " --seed N)")
  local _, err, bad = H.run({ "scenario", path, "--seeds", "9..2" })
  lu.assertEquals(bad, 2)
  lu.assertStrContains(err, "--seeds: expected A..B with integers A <= B, got '9..2'")
  os.remove(path)
end

function TestScenario:test_syntax_error_exits_1()
  local path = H.script("local = 1\n")
  local _, err, code = H.run({ "scenario", path })
  lu.assertEquals(code, 1)
  lu.assertStrContains(err, path .. ":1:")
  os.remove(path)
end

function TestScenario:test_svg_and_trace_outputs()
  local path = H.script(passing)
  local svg, trace = os.tmpname() .. ".svg", os.tmpname()
  local _, err, code = H.run({ "scenario", path, "--seed", "2", "--svg", svg, "--trace", trace })
  lu.assertEquals(code, 0, err)
  local s = read(svg)
  lu.assertStrContains(s, "<svg xmlns=")
  lu.assertStrContains(s, "seed 2")
  lu.assertStrContains(s, '<g class="lane" data-path="/user/a">')
  lu.assertStrContains(s, '<circle class="fail"')
  lu.assertStrContains(s, '<path class="restart"')
  lu.assertStrContains(s, '<g class="axis">')
  lu.assertStrContains(s, '<g class="legend">')
  lu.assertStrContains(read(trace), '"ev":"restart","path":"/user/a"')
  -- tend timeline draws the same trace
  local svg2 = os.tmpname() .. ".svg"
  local out2, err2, code2 = H.run({ "timeline", trace, "-o", svg2 })
  lu.assertEquals(code2, 0, err2)
  lu.assertStrContains(out2, "events, written")
  local t = read(svg2)
  local fails = select(2, t:gsub('<circle class="fail"', ""))
  local trace_fails = select(2, read(trace):gsub('"ev":"fail"', ""))
  lu.assertEquals(fails, trace_fails) -- one mark per failure event
  lu.assertTrue(select(2, t:gsub('<line class="tick"', "")) >= 3)
  for _, p in ipairs { path, svg, trace, svg2 } do os.remove(p) end
end

function TestScenario:test_backoff_bars_in_the_timeline()
  local path = H.script([[
local tend = require "tend"
local s = tend.spawn(tend.backoff.on_failure(function(ctx)
  ctx.self:send("x")
  return function() error("down") end
end, { min_backoff = 1, max_backoff = 4 }):with_max_retries(3), { name = "sup" })
tend.sleep(20)
]])
  local svg = os.tmpname() .. ".svg"
  local _, err, code = H.run({ "scenario", path, "--seed", "1", "--svg", svg })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(select(2, read(svg):gsub('<rect class="backoff"', "")), 3)
  os.remove(path)
  os.remove(svg)
end

function TestScenario:test_malformed_trace_names_the_line_and_leaves_no_svg()
  local trace = os.tmpname()
  local f = io.open(trace, "w")
  f:write('{"t":0.000000,"ev":"trace","path":"/"}\n{"t":1,"ev":"fail",}\n')
  f:close()
  local svg = os.tmpname() .. ".svg"
  local _, err, code = H.run({ "timeline", trace, "-o", svg })
  lu.assertEquals(code, 1)
  lu.assertStrContains(err, trace .. ":2: malformed trace line")
  lu.assertNil(read(svg))
  local _, uerr, ucode = H.run({ "timeline" })
  lu.assertEquals(ucode, 2)
  lu.assertStrContains(uerr, "usage: tend timeline TRACE.jsonl|- [-o OUT.svg]")
  os.remove(trace)
end
