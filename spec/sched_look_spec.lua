-- Two schedulers on threads (`tend --real-time --schedulers 2`), as a
-- program run by this spec: 2000 round trips (a send, then an ask) from
-- scheduler 0 to a counter on scheduler 1 each come back, in order, within
-- the ask's 5 s. With a processor for each scheduler (the machines tend is
-- tested on), each looks at its inbox before its loop sleeps, and a post
-- seen while it looks wakes nobody: an envelope the look found but did not
-- take, or did not see, would wait there until the ask timed out.
local lu = require "luaunit"
local H = require "helper"

TestSchedLook = {}

local PROGRAM = [[
package.path = "spec/?.lua;" .. package.path
local tend = require "tend"
local c = tend.spawn("sched_actors.counter", { scheduler = 1 })
for i = 1, 2000 do
  tend.send(c, 1)
  local ok, n = pcall(tend.ask, c, "get", 5)
  if n ~= i then
    print("round trip " .. i .. ": " .. tostring(ok and n or n.message))
    tend.shutdown(1)
    return
  end
end
print("2000 round trips")
tend.shutdown(0)
]]

function TestSchedLook:test_round_trips_across_two_scheduler_threads_all_come_back()
  local path = H.script(PROGRAM)
  local out, code = H.run_bounded(60, { "--real-time", "--schedulers", "2", path })
  os.remove(path)
  lu.assertEquals({ out, code }, { "2000 round trips\n", 0 })
end
