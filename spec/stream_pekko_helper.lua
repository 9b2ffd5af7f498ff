-- Helpers of the specs ported from Pekko Streams' operator specs
-- (stream_pekko_spec.lua, stream_pekko_async_spec.lua).
local lu = require "luaunit"
local tend = require "tend"
local S = tend.stream

local P = {}

function P.add(a, b) return a + b end

-- The error a run raised (it must raise).
function P.failure(s, ...)
  local ok, e = pcall(s.run_with, s, ...)
  lu.assertFalse(ok, "the run should have failed")
  return e
end

-- An endless source that counts its pulls.
function P.counted()
  local c = { pulls = 0 }
  c.src = S.unfold(1, function(s) c.pulls = c.pulls + 1 return s + 1, s end)
  return c
end

-- Seconds since t0, to the microsecond (sums of steps are not exact).
function P.since(t0)
  return math.floor((tend.now() - t0) * 1e6 + 0.5) / 1e6
end

-- Each element with the tend-clock time it reached the sink.
function P.timed(s)
  local t0 = tend.now()
  return s:map(function(x) return { x, P.since(t0) } end):run_seq()
end

-- A source of the list's elements, made one at a time, each after
-- waiting delays[element] seconds (none if absent). Unlike S.from's,
-- its elements are pulled one by one (no batch driver).
function P.paced(list, delays)
  return S.unfold(1, function(i)
    if i > #list then return nil end
    local d = delays[list[i]]
    if d then tend.sleep(d) end
    return i + 1, list[i]
  end)
end

-- The elements a sink saw before the run failed, and the failure.
function P.seen_then_failure(s)
  local seen = {}
  local ok, e = pcall(s.run_foreach, s, function(x) seen[#seen + 1] = x end)
  lu.assertFalse(ok, "the run should have failed")
  return seen, e
end

return P
