-- tend.invariant and tend.eventually (lua/tend/invariant.lua), and how a
-- scenario run fails: the `failure:` line (Kind, name or message, time)
-- for a broken invariant, an eventually not met in time, no progress, a
-- failure escalated past the guardian and an error in the script; the
-- timeline and the summary still print and the run exits 1.
local lu = require "luaunit"
local H = require "helper"
local tend = require "tend"

TestInvariant = {}

local function scenario(body)
  return H.script('local tend = require "tend"\n' .. body)
end

local function run(body, ...)
  local path = scenario(body)
  local out, err, code = H.run({ "scenario", path, "--seed", "1", ... })
  os.remove(path)
  return out, code, err, path
end

-- Checked after each pass in which the virtual time moved, and at the
-- end: never twice at one time.
function TestInvariant:test_checked_once_per_time_and_at_the_end()
  local out, code = run([[
local calls, times = 0, {}
tend.invariant("counted", function()
  calls = calls + 1
  times[#times + 1] = tend.now()
  return true
end)
for _ = 1, 5 do tend.sleep(1) end
tend.send(tend.spawn(function() return function() end end), "x") -- (no time moves)
tend.sleep(0)
print("calls " .. calls)
]])
  lu.assertEquals(code, 0, out)
  lu.assertStrContains(out, "calls 5\n") -- t = 1..5; the end's comes after the print
end

-- The first pass at which fn returns false ends the run there; its line
-- names the invariant and the time; the message says what fn returned.
function TestInvariant:test_a_broken_invariant_fails_the_run_at_its_time()
  local out, code = run([[
local n = 0
tend.invariant("n below 3", function() return n < 3 end)
local w = tend.spawn(function() return function() n = n + 1 end end, { name = "w" })
for _ = 1, 5 do tend.sleep(1.25) tend.send(w, "x") end
tend.sleep(10)
print("not reached")
]])
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, 'scenario failed: InvariantFailed: "n below 3" at t=3.750: returned false\n')
  lu.assertStrContains(out, 'failure: InvariantFailed "n below 3" at t=3.750\n')
  lu.assertStrContains(out, "result: FAILED")
  lu.assertNotStrContains(out, "not reached")
end

-- An invariant that raises fails with its message; one broken only at
-- the end (no time moved since) is caught there.
function TestInvariant:test_an_error_and_the_end()
  local out, code = run([[
tend.invariant("raises", function() if tend.now() >= 2 then error("the books do not balance", 0) end return true end)
for _ = 1, 5 do tend.sleep(1) end
]])
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, '"raises" at t=2.000: the books do not balance')
  out, code = run([[
local ok = true
tend.invariant("ok at the end", function() return ok end)
tend.sleep(1)
ok = false
]])
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, 'failure: InvariantFailed "ok at the end" at t=1.000\n')
end

-- eventually: true in time passes; not true `within` seconds after it
-- was declared fails at that time.
function TestInvariant:test_eventually()
  local out, code = run([[
local up = false
tend.after(3, function() up = true end)
tend.eventually("up within 5 s", function() return up end, 5)
tend.sleep(20)
]])
  lu.assertEquals(code, 0, out)
  out, code = run([[
local up = false
tend.after(7, function() up = true end)
tend.sleep(1)
tend.eventually("up within 5 s", function() return up end, 5)
tend.sleep(20)
]])
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, 'failure: EventuallyFailed "up within 5 s" at t=6.000\n')
end

-- after_heal: the window is off while a fault the schedule injected is
-- active, and starts again at its heal.
function TestInvariant:test_eventually_after_heal()
  local body = [[
local w = tend.spawn(function() return function() end end, { name = "w" })
local frozen_until = 0
tend.chaos.schedule { { t = 2, fault = "freeze", target = "/user/w", heal_after = 10 } }
tend.eventually("recovered", function() return tend.now() >= %d end, 3, { after_heal = true })
tend.sleep(30)
]]
  local out, code = run(string.format(body, 14)) -- healed at 12: 3 s after
  lu.assertEquals(code, 0, out)
  out, code = run(string.format(body, 16))
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, 'failure: EventuallyFailed "recovered" at t=15.000\n')
end

-- No progress: the script waits and nothing can happen any more.
function TestInvariant:test_no_progress()
  local out, code = run([[
tend.sleep(2)
tend.receive()
]])
  lu.assertEquals(code, 1)
  lu.assertStrContains(out,
    'failure: NoProgress "/user/main waits and nothing can happen any more" at t=2.000\n')
  lu.assertStrContains(out, "-- summary")
end

-- A failure escalated past the guardian and an error in the script: the
-- kind, and a message that begins with where it happened.
function TestInvariant:test_escalation_and_script_errors()
  local out, code = run([[
tend.guardian_strategy(tend.one_for_one { decider = tend.decider { ["*"] = "escalate" } })
local w = tend.spawn(function() return function() tend.raise("Mine", "exploded") end end, { name = "w" })
tend.sleep(1)
tend.send(w, "x")
tend.sleep(1)
]])
  lu.assertEquals(code, 1)
  lu.assertStrMatches(out, '.*\nfailure: Escalated "/user/w: [^"]*:3: Mine: exploded" at t=1%.000\n.*')
  local path
  out, code, _, path = run([[
tend.sleep(2.5)
tend.raise("Overdrawn", "account a1")
]])
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, 'failure: Overdrawn "' .. path .. ':3: account a1" at t=2.500\n')
  out, code, _, path = run("tend.sleep(1)\nerror('plain')\n")
  lu.assertStrContains(out, 'failure: Error "' .. path .. ':3: plain" at t=1.000\n')
end

function TestInvariant:test_bad_arguments()
  lu.assertErrorMsgContains("tend.invariant: name: expected a string, got number",
    tend.invariant, 1, function() end)
  lu.assertErrorMsgContains("tend.invariant: fn: expected a function, got nil", tend.invariant, "x")
  lu.assertErrorMsgContains("tend.eventually: within: expected seconds > 0, got 0",
    tend.eventually, "x", function() end, 0)
  lu.assertErrorMsgContains("tend.eventually: options: expected { after_heal = true }, got option 'after'",
    tend.eventually, "x", function() end, 1, { after = true })
end

-- The examples of docs/guide/explore.md fail (and pass) as it says: leader
-- and bank for the seeds it shows, fixed_bank and the fixed leader.
function TestInvariant:test_the_explore_examples()
  local function scenario_run(file, seed, ...)
    local out, _, code = H.run({ "scenario", "examples/explore/" .. file, "--seed", seed, ... })
    return out:match("\nfailure: ([^\n]*)") or out:match("result: (%a+)"), code
  end
  lu.assertEquals({ scenario_run("leader.lua", "4") },
    { 'InvariantFailed "at most one leader" at t=11.003', 1 })
  lu.assertEquals({ scenario_run("leader.lua", "4", "--", "fixed") }, { "ok", 0 })
  lu.assertEquals({ scenario_run("bank.lua", "3") },
    { 'InvariantFailed "the total is constant" at t=7.000', 1 })
  for _, seed in ipairs { "3", "4" } do
    lu.assertEquals({ scenario_run("fixed_bank.lua", seed) }, { "ok", 0 })
  end
end
