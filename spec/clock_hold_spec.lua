-- The held virtual clock (the observer's pause: tend.core's clock_hold and
-- clock_step, which POST /api/clock calls; its HTTP side is
-- spec/realtime/observe_clock_spec.lua), in a program run as `tend
-- --virtual-time`: held, the clock jumps only as often as it was stepped,
-- to the next timer's instant each time; let go, it runs on; held again
-- with one step granted, it takes that one jump and no more (nothing can
-- happen then: the run ends there).
local lu = require "luaunit"
local H = require "helper"

TestClockHold = {}

-- main gets a tick each second; a silent timer prints at 1.5 s and 3.5 s
-- (it wakes nobody: a jump to it is a whole step)
local PROGRAM = [[
local tend = require "tend"
local core = require "tend.core"
local main = tend.self()
tend.spawn(function(ctx) ctx:every(1, "tick") return function() tend.send(main, tend.now()) end end)
tend.spawn(function(ctx)
  ctx:after(1.5, "s")
  ctx:after(3.5, "s")
  return function() print("silent", tend.now()) end
end)
core.clock_hold(true)
print("held", core.clock_hold(), tend.now())
core.clock_step()
print("one step", tend.receive(), tend.now())
core.clock_step()
core.clock_step()
print("two steps", tend.receive(), tend.now())
core.clock_hold(false)
print("let go", tend.receive(), tend.now())
core.clock_hold(true)
core.clock_step()
print("one step more", tend.receive(), tend.now())
]]

function TestClockHold:test_a_held_clock_jumps_once_a_step_and_runs_on_when_let_go()
  local path = H.script(PROGRAM)
  local out, code = H.run_bounded(30, { "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(out, table.concat({
    "held\ttrue\t0.0",
    "one step\t1.0\t1.0",
    "silent\t1.5",       -- the first of the two steps
    "two steps\t2.0\t2.0",
    "let go\t3.0\t3.0",
    "silent\t3.5",       -- the one step granted: the tick at 4 s never comes
  }, "\n") .. "\n")
  lu.assertEquals(code, 0)
end

-- 256 steps granted at once: the pump's 256 jumps a pass all go, and the
-- last lands on a tick that is then due at once (it was left unfired, and
-- the run ended, when a held clock counted only jumps as work)
local STEPS = [[
local tend = require "tend"
local core = require "tend.core"
local main = tend.self()
local n = 0
tend.spawn(function(ctx)
  ctx:every(1, "tick")
  return function() n = n + 1 if n == 256 then tend.send(main, n) end end
end)
core.clock_hold(true)
for _ = 1, 256 do core.clock_step() end
print("after 256 steps", tend.receive(), tend.now())
]]

function TestClockHold:test_the_timer_the_last_step_lands_on_fires()
  local path = H.script(STEPS)
  local out, code = H.run_bounded(30, { "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(out, "after 256 steps\t256\t256.0\n")
  lu.assertEquals(code, 0)
end
