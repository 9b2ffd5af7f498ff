-- A backoff supervisor as tend.ps() and the observer's tree show it: its
-- strategy "backoff" (not one_for_one), whether it is backing off (no
-- child while its delay runs) and its restarts. Times are virtual.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

TestObserveBackoff = {}

local function row(rows, path)
  for _, r in ipairs(rows) do
    if r.path == path then return r end
  end
end

function TestObserveBackoff:test_a_backoff_supervisor_shows_its_strategy_and_its_backing_off()
  local sup = tend.spawn(tend.backoff.on_failure(function()
    return function(m) if m == "boom" then error("boom") end end
  end, { min_backoff = 1, max_backoff = 8, random_factor = 0, name = "w" }), { name = "bo" })
  tend.sleep(0.1)
  local routes = require("tend.observe.live").routes()
  local r = row(tend.ps(), "/user/bo")
  lu.assertEquals({ r.strategy, r.backing_off, r.backoff_restarts }, { "backoff", false, 0 })
  tend.send(sup, "boom")
  tend.sleep(0.5) -- within its 1 s delay: no child
  r = row(tend.ps(), "/user/bo")
  lu.assertEquals({ r.strategy, r.backing_off, r.backoff_restarts }, { "backoff", true, 1 })
  lu.assertNil(row(tend.ps(), "/user/bo/w"))
  local t = row(routes["/api/tree"]({}).actors, "/user/bo")
  lu.assertEquals({ t.strategy, t.backing_off, t.backoff_restarts }, { "backoff", true, 1 })
  tend.sleep(0.6) -- the delay is over: the child is back
  r = row(tend.ps(), "/user/bo")
  lu.assertEquals({ r.backing_off, r.backoff_restarts }, { false, 1 })
  lu.assertEquals(row(tend.ps(), "/user/bo/w").state, "running")
  -- an ordinary supervisor keeps its own strategy, and no backoff fields
  local p = tend.spawn(function(ctx) ctx:spawn(function() return function() end end) return function() end end,
    { name = "plain" })
  tend.sleep(0.1)
  r = row(tend.ps(), "/user/plain")
  lu.assertEquals({ r.strategy, r.backing_off }, { "one_for_one", nil })
  tend.stop(p)
  tend.stop(sup)
  H.settle()
end
