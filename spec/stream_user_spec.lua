-- tend.stream as a new user meets it: what the guide promises for bad
-- arguments, handles, shutdown and the ends, checked under the virtual
-- clock (each test names the defect a first hour found).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local S = tend.stream

TestStreamUser = {}

function TestStreamUser:tearDown()
  H.assert_clean()
end

local id = function(x) return x end

-- The error of fn(), which must raise.
local function err_of(fn)
  local ok, e = pcall(fn)
  lu.assertFalse(ok, "no error")
  return tostring(e)
end

-- A bad argument is reported at the caller's line, not inside tend.
function TestStreamUser:test_a_bad_argument_points_at_the_callers_line()
  local here = ".-stream_user_spec%.lua:%d+: "
  for _, case in ipairs({
    { function() S.from("abc") end, 'tend.stream.from: list: expected a table %(list%), got "abc"' },
    { function() S.range(1, 2, 0) end, "tend.stream.range: step" },
    { function() S.tick(0, 1) end, "tend.stream.tick: interval" },
    { function() S.queue({ size = 0 }) end, "tend.stream.queue: option 'size'" },
    { function() S.lines() end, "tend.stream.lines: spec" },
    { function() S.range(1, 2):map(3) end, "tend.stream.map: fn: expected a function, got 3" },
    { function() S.range(1, 2):take(-1) end, "tend.stream.take: n" },
    { function() S.range(1, 2):throttle(1, 0) end, "tend.stream.throttle: per" },
    { function() S.range(1, 2):merge({}) end, "tend.stream.merge: other" },
    { function() S.range(1, 2):map_async(0, id) end, "tend.stream.map_async: n" },
    { function() S.range(1, 2):with_supervision("resumee") end, "tend.stream.with_supervision: decider" },
    { function() S.range(1, 2):via(S.range(1, 2)) end, "tend.stream.via: flow" },
    { function() S.sink.fold(0) end, "tend.stream.sink.fold: fn" },
    { function() S.range(1, 2):run_fold(0) end, "tend.stream.sink.fold: fn" },
    { function() S.restart_source({ min_backof = 1 }, id) end, "tend.stream.restart_source: options" },
    { function() S.restart_source({ min_backoff = 1, max_backoff = 2, max_restarts = -1 }, id) end,
      "tend.stream.restart_source: option 'max_restarts'" },
  }) do
    local msg = err_of(case[1])
    lu.assertStrMatches(msg, here .. case[2] .. ".*")
  end
end
