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
