-- A stream with map_async, throttle, tick, grouped_within, backoff
-- restarts, chaos (a flaky call) and a simulated HTTP service replays byte
-- for byte under --virtual-time --seed N: stdout and the trace, run twice.
local lu = require "luaunit"
local H = require "helper"

TestStreamReplay = {}

local function run(seed)
  local trace = os.tmpname()
  local out, err, code = H.run({ "--virtual-time", "--seed", tostring(seed), "--trace", trace,
    "examples/streams/seed_sum_sim.lua" })
  local f = assert(io.open(trace, "rb"))
  local t = f:read("a")
  f:close()
  os.remove(trace)
  return out, t, err, code
end

function TestStreamReplay:test_the_same_seed_replays_stdout_and_trace()
  local out1, trace1, err1, code1 = run(3)
  local out2, trace2 = run(3)
  lu.assertEquals(code1, 0, err1)
  lu.assertStrContains(out1, "per-request: sum = 385 after ")
  lu.assertStrContains(out1, "groups: [2,4,6,8] [10,12,14,16]")
  lu.assertEquals(out2, out1)
  lu.assertEquals(trace2, trace1)
  local n = 0
  for ev in trace1:gmatch('"ev":"(stream_%a+)"') do n = n + 1 end
  lu.assertTrue(n >= 30, "stream events in the trace: " .. n)
  lu.assertStrContains(trace1, '"ev":"stream_backoff"')
  lu.assertStrContains(trace1, '"ev":"stream_restart"')
end

function TestStreamReplay:test_another_seed_another_run()
  local out1 = run(3)
  local out2 = run(4)
  lu.assertStrContains(out2, "per-request: sum = 385 after ")
  lu.assertNotEquals(out2, out1)
end
