-- What SIGINT and SIGTERM do to a host whose actor is out of the
-- watchdog's reach.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestSignals = {}

function TestSignals:tearDown() H.assert_clean() end

-- Signals while an actor spins where the watchdog cannot preempt it (a
-- gsub callback, a sort comparator, a __gc metamethod): the loop never
-- runs, so the signal is kept by the watchdog (one signal: exit after a
-- grace of 1 s) or the handler (a second signal: at once), with 128 + sig.
local SPIN = {
  gsub = 'string.gsub("x", "x", function() while true do end end)',
  sort = 'table.sort({3, 2, 1}, function(a, b) while true do end end)',
  gc = 'setmetatable({}, { __gc = function() while true do end end }); collectgarbage()',
}

-- Runs a script whose actor spins in `place`, sends sig `times` times once
-- it spins; returns the exit status and what the host wrote.
local function signalled(place, sig, times)
  local script = H.script(string.format([[
    local tend = require "tend"
    tend.spawn(function(ctx)
      ctx:after(0.01, "go")
      return function()
        io.stdout:write("spinning\n") io.stdout:flush()
        %s
      end
    end)]], SPIN[place]))
  local out = os.tmpname()
  local kills = string.rep("kill -" .. sig .. " $pid; sleep 0.05; ", times)
  local sh = table.concat({
    "'" .. require("tend.internal").executable() .. "' " .. script .. " >" .. out .. " 2>&1 & pid=$!",
    "for i in $(seq 100); do grep -q spinning " .. out .. " && break; sleep 0.05; done",
    kills .. "wait $pid; echo $?",
  }, "\n")
  local p = io.popen("sh -c '" .. sh:gsub("'", "'\\''") .. "'")
  local status = tonumber(p:read("a"):match("(%d+)%s*$"))
  p:close()
  local f = io.open(out, "rb")
  local text = f:read("a")
  f:close()
  os.remove(out)
  os.remove(script)
  return status, text
end

function TestSignals:test_signal_once_while_spinning_in_gsub_sort_or_gc()
  local status, text = signalled("gsub", "INT", 1)
  lu.assertEquals(status, 130)
  lu.assertStrContains(text, "signal 2 not taken within 1 s")
  lu.assertEquals((signalled("sort", "TERM", 1)), 143)
  lu.assertEquals((signalled("gc", "HUP", 1)), 129)
end

function TestSignals:test_second_signal_while_spinning_exits_at_once()
  local status, text = signalled("sort", "INT", 2)
  lu.assertEquals(status, 130)
  lu.assertNotStrContains(text, "not taken within") -- the handler, not the watchdog
  lu.assertEquals((signalled("gc", "TERM", 2)), 143)
  lu.assertEquals((signalled("gsub", "HUP", 2)), 129) -- HUP never forces: the grace
end
