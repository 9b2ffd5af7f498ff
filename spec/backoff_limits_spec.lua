-- Backoff supervisors and their limits: windows, resets, max_retries, the
-- draw of each delay, where a backoff child's messages go.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestBackoffLimits = {}

function TestBackoffLimits:tearDown() H.assert_clean() end

local tk = tend.testkit

local function crasher(starts)
  return function(ctx)
    starts[#starts + 1] = tend.now()
    return function(msg, ctx)
      if msg == "crash" then error("boom") end
    end
  end
end

-- A backoff child that fails on "boom"; starts counted in `starts`.
local function boomer(starts)
  return function()
    starts[#starts + 1] = tend.now()
    return function(m) if m == "boom" then error("boom") end end
  end
end

-- The strategy's `within` under a backoff supervisor, as Akka counts it
-- (backoff_spec has Akka's own case): the count is the backoff's, and the
-- window only starts over a lone restart. Three quick restarts (the
-- window's reset at 1 s finds 3, not 1), then 2 s without a failure but
-- no auto reset (reset_after 1000): the fourth failure is over the limit.
function TestBackoffLimits:test_a_backoff_window_does_not_reset_three_restarts()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 0.1, max_backoff = 0.1,
    random_factor = 0, reset_after = 1000 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 3, within = 1 }))
  local p = tk.probe()
  p:watch(sup)
  for _ = 1, 3 do sup:send("boom") tend.sleep(0.2) end
  tend.sleep(2) -- longer than the window
  lu.assertTrue(tend.alive(sup))
  lu.assertEquals(#starts, 4)
  lu.assertEquals(tend.backoff.restart_count(sup), 3)
  sup:send("boom")
  p:expect_terminated(sup, 1)
  lu.assertEquals(#starts, 4)
  H.stop_all(p.ref)
end

-- A backoff reset starts the strategy's count over too.
function TestBackoffLimits:test_a_backoff_reset_starts_the_strategys_count_over()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 1, max_backoff = 1,
    random_factor = 0, reset_after = 5 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 2, within = 1000 }))
  for _ = 1, 2 do sup:send("boom") tend.sleep(1.5) end
  tend.sleep(6) -- ran 5 s: reset
  for _ = 1, 2 do sup:send("boom") tend.sleep(1.5) end
  lu.assertTrue(tend.alive(sup))
  lu.assertEquals(#starts, 5)
  H.stop_all(sup)
end

-- min_backoff = 0 is allowed (Akka): every delay is 0.
function TestBackoffLimits:test_min_backoff_0_restarts_at_once()
  lu.assertEquals(tend.backoff.delays(tend.backoff.on_failure(function() end,
    { min_backoff = 0, max_backoff = 0, random_factor = 0 }), 4), { 0, 0, 0, 0 })
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(boomer(starts), { min_backoff = 0, max_backoff = 10,
    random_factor = 0.5 }))
  local t0 = tend.now()
  for _ = 1, 3 do sup:send("boom") H.settle() end
  lu.assertEquals(starts, { t0, t0, t0, t0 })
  H.stop_all(sup)
end

-- max_retries counts the restarts since the last reset.
function TestBackoffLimits:test_a_reset_starts_max_retries_over()
  local starts = {}
  local sup = tend.spawn(tend.backoff.on_failure(crasher(starts),
    { min_backoff = 1, max_backoff = 1, random_factor = 0 }):with_max_retries(2))
  sup:send("crash") tend.sleep(1.5) -- restart 1
  sup:send("crash") tend.sleep(3)   -- restart 2, then 1 s of running: reset
  sup:send("crash") tend.sleep(1.5) -- restart 1 again, not the end
  lu.assertTrue(tend.alive(sup))
  lu.assertEquals(#starts, 4)
  H.stop_all(sup)
end

-- A backoff supervisor forwards to its child; what the child sends it goes
-- to the supervisor's parent.
function TestBackoffLimits:test_a_backoff_childs_messages_go_to_the_supervisors_parent()
  local got = {}
  local parent = tend.spawn(function(ctx)
    local sup = ctx:spawn(tend.backoff.on_failure(function()
      return function(msg, c) if msg == "hi" then c.parent:send("from the child") end end
    end, { name = "kid", min_backoff = 1, max_backoff = 1 }), { name = "bsup" })
    return function(msg, ctx)
      if msg == "go" then sup:send("hi") else got[#got + 1] = msg end
    end
  end)
  parent:send("go")
  H.settle()
  lu.assertEquals(got, { "from the child" })
  H.stop_all(parent)
end

function TestBackoffLimits:test_backoff_events_carry_their_draw_even_0()
  local draws = {}
  tend.trace(function(e) if e.ev == "backoff" then draws[#draws + 1] = e.draw end end)
  math.randomseed(7)
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    ctx.self:send("crash")
    return function() error("boom") end
  end, { algorithm = "slotted", slot_time = 0.001, ceiling = 3, stay_at_ceiling = true })
    :with_max_retries(4))
  local p = tk.probe()
  p:watch(sup)
  p:expect_terminated(sup, 1)
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(draws, { 0, 2, 2, 0 })
  H.stop_all(p.ref)
end

-- A backoff supervisor that reaches max_retries stops itself: watchers
-- see "normal".
function TestBackoffLimits:test_max_retries_stops_the_backoff_supervisor_normally()
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(function(ctx)
    ctx.self:send("crash")
    return function() error("boom") end
  end, { min_backoff = 1, max_backoff = 1, random_factor = 0 }):with_max_retries(1))
  p:watch(sup)
  lu.assertEquals(p:expect_terminated(sup, 5).reason, "normal")
  H.stop_all(p.ref)
end
