-- The nemesis and the schedule (lua/tend/nemesis.lua), on the virtual
-- clock: injections at the times drawn from the nemesis's own generator,
-- within `every`, `from` and `to`; heals heal_after later; targets by
-- pattern; tend.chaos.schedule; a seed replays its trace byte for byte;
-- --chaos-schedule replaces every nemesis and leaves the rest of the run
-- as it was; bad options name the option, what was expected and what
-- was given.
local lu = require "luaunit"
local H = require "helper"
local tend = require "tend"
local timeline = require "tend.timeline"

TestNemesis = {}

function TestNemesis:tearDown() H.assert_clean() end

-- A tree of three workers under /user/workers, then what `body` says.
local function scenario(body)
  return H.script([[
local tend = require "tend"
tend.spawn(function(ctx)
  for i = 1, 3 do ctx:spawn(function() return function() end end, { name = "w" .. i }) end
  return function() end
end, { name = "workers" })
tend.spawn(function() return function() end end, { name = "other" })
tend.sleep(0.5)
]] .. body)
end

-- Runs a scenario; returns its stdout, exit code and trace events.
local function run(path, seed, ...)
  local trace = os.tmpname()
  local args = { "scenario", path, "--seed", tostring(seed), "--trace", trace, ... }
  local out, err, code = H.run(args)
  local f = assert(io.open(trace, "rb"))
  local text = f:read("a")
  f:close()
  os.remove(trace)
  local events = {}
  for line in text:gmatch("[^\n]+") do events[#events + 1] = timeline.parse_line(line) end
  return out, code, events, text, err
end

local function chaos_by(events, by)
  local out = {}
  for _, e in ipairs(events) do
    if e.ev == "chaos" and e.by == by then out[#out + 1] = e end
  end
  return out
end

local NEMESIS = [[
tend.chaos.nemesis { faults = { "crash", "freeze", "drop" }, targets = { "/user/workers/*" },
  every = { 1, 3 }, heal_after = { 0.5, 2 }, from = 2, to = 30, p = { 0.2, 0.4 } }
tend.sleep(40)
]]

-- Every injection is one event at a time drawn in `every` after the one
-- before (from `from`, none after `to`), on a target the pattern names,
-- with its parameters; each heal comes heal_after later.
function TestNemesis:test_injections_at_the_drawn_times_and_their_heals()
  local path = scenario(NEMESIS)
  local out, code, events = run(path, 11)
  lu.assertEquals(code, 0, out)
  local injected, heals, prev = {}, {}, 2
  for _, e in ipairs(chaos_by(events, "nemesis")) do
    lu.assertEquals(e.path, "/system/nemesis")
    if e.heal then heals[#heals + 1] = e else injected[#injected + 1] = e end
  end
  lu.assertTrue(#injected >= 9, "injections: " .. #injected) -- 28 s at most 3 s apart
  for _, e in ipairs(injected) do
    local gap = e.t - prev
    lu.assertTrue(gap >= 1 - 1e-9 and gap <= 3 + 1e-9, "gap " .. gap)
    lu.assertTrue(e.t <= 30)
    lu.assertEquals(e.t * 1000, math.floor(e.t * 1000 + 0.5), "on the millisecond")
    prev = e.t
    local target = e.target or e.a
    lu.assertStrMatches(target, "/user/workers/w[123]")
    if e.fault == "drop" then
      lu.assertStrMatches(e.b, "/user/workers/w[123]")
      lu.assertNotEquals(e.a, e.b)
      lu.assertTrue(e.p >= 0.2 and e.p <= 0.4)
    end
    if e.fault == "crash" then -- (supervision heals it)
      lu.assertNil(e.heal_after)
      goto next
    end
    lu.assertTrue(e.heal_after >= 0.5 and e.heal_after <= 2)
    local found = false
    for _, h in ipairs(heals) do
      if h.fault == e.fault and h.target == e.target and h.a == e.a
        and math.abs(h.t - (e.t + e.heal_after)) < 1e-6 then found = true end
    end
    lu.assertTrue(found, "a heal of " .. e.fault .. " at " .. e.t)
    ::next::
  end
  local healable = 0
  for _, e in ipairs(injected) do if e.heal_after then healable = healable + 1 end end
  lu.assertEquals(#heals, healable)
  os.remove(path)
end

-- The same seed writes the same trace, byte for byte; another seed draws
-- other times.
function TestNemesis:test_a_seed_replays_byte_for_byte()
  local path = scenario(NEMESIS)
  local out1, _, ev1, text1 = run(path, 5)
  local out2, _, _, text2 = run(path, 5)
  local _, _, ev3 = run(path, 6)
  lu.assertEquals(text1, text2)
  lu.assertEquals(out1, out2)
  lu.assertNotEquals(chaos_by(ev1, "nemesis")[1].t, chaos_by(ev3, "nemesis")[1].t)
  os.remove(path)
end

-- A schedule's entry (an injection event without ev, path and by)
-- written as Lua.
local function entry(e)
  local parts = { string.format("t = %.17g", e.t), string.format("fault = %q", e.fault) }
  for _, k in ipairs { "target", "a", "b", "signal" } do
    if e[k] then parts[#parts + 1] = string.format("%s = %q", k, e[k]) end
  end
  for _, k in ipairs { "seconds", "p", "latency", "jitter", "heal_after" } do
    if e[k] then parts[#parts + 1] = string.format("%s = %.17g", k, e[k]) end
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- --chaos-schedule LIST.lua: the nemesis applies the list of its own
-- injections instead of drawing; the timeline, the summary and every
-- other event are as they were (only `by` differs).
function TestNemesis:test_its_schedule_replaces_it_and_the_rest_of_the_run_is_unchanged()
  local path = scenario([[
local count = 0
tend.spawn(function() return function() end end, { name = "sink" })
tend.after(0, function() for _ = 1, 40 do tend.sleep(tend.random()) count = count + 1 end end)
]] .. NEMESIS .. [[
print("random at the end: " .. tend.random(1000000))
]])
  local out1, code1, ev1 = run(path, 21)
  lu.assertEquals(code1, 0, out1)
  local list = {}
  for _, e in ipairs(chaos_by(ev1, "nemesis")) do
    if not e.heal then list[#list + 1] = entry(e) end
  end
  lu.assertTrue(#list > 5)
  local listfile = H.script("return {\n  " .. table.concat(list, ",\n  ") .. "\n}\n")
  local out2, code2, ev2 = run(path, 21, "--chaos-schedule", listfile)
  lu.assertEquals(code2, 0, out2)
  lu.assertEquals(out2:gsub("schedule: ", ""), (out1:gsub("nemesis: ", "")))
  lu.assertEquals(#ev2, #ev1)
  for i, e in ipairs(ev1) do
    local f = ev2[i]
    if e.by then
      lu.assertEquals(f.by, "schedule")
      e.by, f.by, e.detail, f.detail = nil, nil, nil, nil
    end
    lu.assertEquals(f, e)
  end
  os.remove(path)
  os.remove(listfile)
end

-- tend.chaos.schedule: each entry at its time (in order of time), healed
-- heal_after later, by "schedule"; a pair's fault names a and b.
function TestNemesis:test_the_schedule_api()
  local path = scenario([[
tend.chaos.schedule {
  { t = 4, fault = "crash", target = "/user/workers/w2" },
  { t = 1.5, fault = "freeze", target = "/user/other", heal_after = 2 },
  { t = 2, fault = "delay", a = "/user/workers/w1", b = "/user/other", seconds = 0.25, heal_after = 1 },
}
tend.sleep(10)
]])
  local out, code, events = run(path, 1)
  lu.assertEquals(code, 0, out)
  local got = {}
  for _, e in ipairs(chaos_by(events, "schedule")) do
    got[#got + 1] = string.format("%.3f %s %s%s%s", e.t, e.heal and "heal" or "inject", e.fault,
      e.target and (" " .. e.target) or (" " .. e.a .. " " .. e.b), e.seconds and (" " .. e.seconds) or "")
  end
  lu.assertEquals(got, {
    "1.500 inject freeze /user/other",
    "2.000 inject delay /user/workers/w1 /user/other 0.25",
    "3.000 heal delay /user/workers/w1 /user/other",
    "3.500 heal freeze /user/other",
    "4.000 inject crash /user/workers/w2",
  })
  lu.assertStrContains(out, "restart    #1")
  os.remove(path)
end

-- Patterns: "*" is one path segment; the scenario's main chunk and the
-- nemesis itself are never targets; a target that no actor matches now
-- is skipped.
function TestNemesis:test_targets_by_pattern()
  local path = scenario([[
tend.chaos.nemesis { faults = { "crash" }, targets = { "/user/*", "/user/nobody/*" },
  every = { 0.5, 1 }, to = 30 }
tend.sleep(31)
]])
  local _, code, events = run(path, 3)
  lu.assertEquals(code, 0)
  local seen = {}
  for _, e in ipairs(chaos_by(events, "nemesis")) do seen[e.target] = true end
  lu.assertEquals(seen, { ["/user/workers"] = true, ["/user/other"] = true })
  os.remove(path)
end

-- Bad options: the option named, what was expected, what was given.
function TestNemesis:test_bad_options_name_the_option()
  local cases = {
    { {}, "option 'faults': expected a list of faults" },
    { { faults = { "crush" }, targets = { "/user/x" } },
      "option 'faults' [1]: expected one of crash, kill, stop, freeze", '"crush"' },
    { { faults = { "crash" } }, "option 'targets': expected a list of paths" },
    { { faults = { "crash" }, targets = { "/user/x" }, every = { 3, 1 } },
      "option 'every': expected {min, max} with 0.001 <= min <= max <= 1e+09, got 3, 1" },
    { { faults = { "crash" }, targets = { "/user/x" }, heal = { 1, 2 } },
      "option 'heal': expected one of faults, targets, every, heal_after" },
    { { faults = { "drop" }, targets = { "/user/x" }, p = { 0.5, 2 } },
      "option 'p': expected {min, max} with 0 <= min <= max <= 1, got 0.5, 2" },
    { { faults = { "crash" }, targets = { "/user/x" }, from = 5, to = 1 },
      "option 'to': expected a time >= from (5), got 1" },
    { { faults = { "signal" }, targets = { "/user/x" }, signals = { "NOPE" } },
      "option 'signals' [1]: expected a signal name" },
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(tend.chaos.nemesis, c[1])
    lu.assertFalse(ok)
    lu.assertStrContains(tostring(err), "tend.chaos.nemesis: " .. c[2])
    if c[3] then lu.assertStrContains(tostring(err), "got " .. c[3]) end
  end
  local bad = {
    { { { t = -1, fault = "crash", target = "/user/x" } }, "entry 1: t: expected a virtual time" },
    { { { t = 1, fault = "partition", a = "n1" } }, "entry 1: a, b: expected two targets" },
    { { { t = 1, fault = "crash" } }, "entry 1: target: expected a path, host or node name" },
    { { { t = 1, fault = "drop", a = "/a", b = "/b", p = 3 } }, "entry 1: p: expected a probability" },
  }
  for _, c in ipairs(bad) do
    local ok, err = pcall(tend.chaos.schedule, c[1])
    lu.assertFalse(ok)
    lu.assertStrContains(tostring(err), "tend.chaos.schedule: " .. c[2])
  end
end

-- In the trace function too, an injection carries its fields.
function TestNemesis:test_trace_functions_see_the_fields()
  local seen = {}
  tend.trace(function(e) if e.ev == "chaos" and e.by then seen[#seen + 1] = e end end)
  local w = tend.spawn(function() return function() end end, { name = "target" })
  local ref = tend.chaos.schedule { { t = tend.now() + 1, fault = "freeze", target = "/user/target",
    heal_after = 0.5 } }
  tend.sleep(2)
  tend.stop(ref)
  tend.stop(w)
  tend.trace(false)
  lu.assertEquals(#seen, 2)
  lu.assertEquals(seen[1].fault, "freeze")
  lu.assertEquals(seen[1].target, "/user/target")
  lu.assertEquals(seen[1].heal_after, 0.5)
  lu.assertEquals(seen[1].by, "schedule")
  lu.assertEquals(seen[2].heal, true)
end
