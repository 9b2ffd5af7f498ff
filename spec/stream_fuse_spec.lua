-- tend.stream's fused chains and batched boundaries (stream_fuse.lua,
-- stream_async.lua): the same elements, orders, failures and pulls as one
-- pull per stage; a boundary carries batches; an element that takes clock
-- time is not held back in a batch.
local lu = require "luaunit"
local tend = require "tend"
local core = require "tend.core"
local H = require "helper"
local S = tend.stream

TestStreamFuse = {}

function TestStreamFuse:tearDown()
  H.settle()
  H.assert_clean()
end

local function add(a, b) return a + b end

function TestStreamFuse:test_a_fused_chain_gives_what_the_stages_give()
  local r = S.range(1, 10)
  lu.assertEquals(r:map(function(x) return x * 3 end):filter(function(x) return x % 2 == 0 end)
    :run_fold(0, add), 90)
  lu.assertEquals(r:drop(2):take(3):scan(0, add):run_seq(), { 0, 3, 7, 12 })
  lu.assertEquals(r:scan(0, add):scan(100, add):take(4):run_seq(), { 100, 100, 101, 104 })
  lu.assertEquals(S.from({ 5, 6, 7 }):take_while(function(x) return x < 7 end):run_seq(), { 5, 6 })
  lu.assertEquals(S.range(10, 1, -3):map(tostring):run_seq(), { "10", "7", "4", "1" })
  lu.assertEquals(S.range(1, 0):scan(7, add):run_seq(), { 7 })
  -- 64 a loop: the ends of the loops meet the end of the range
  lu.assertEquals(#S.range(1, 200):run_seq(), 200)
  lu.assertEquals(S.range(1, 1000, 7):run_last(), 995)
  local tenths = S.range(0, 1, 0.1):run_seq()
  local x = 0
  for k = 1, 11 do lu.assertEquals(tenths[k], x) x = x + 0.1 end -- step added as a pull adds it
  lu.assertEquals(#tenths, 11)
end

-- take stops the source after its last element: nothing more is pulled
function TestStreamFuse:test_take_pulls_no_more_than_it_takes()
  local made = 0
  local src = S.unfold(0, function(s) made = made + 1 return s + 1, s end)
  lu.assertEquals(src:map(function(x) return x * 2 end):take(5):run_seq(), { 0, 2, 4, 6, 8 })
  lu.assertEquals(made, 5)
  made = 0
  lu.assertEquals(src:take(0):run_seq(), {})
  lu.assertEquals(made, 0)
  made = 0
  -- a scan's initial value is all head wants: the source is not pulled
  lu.assertEquals(src:scan(0, add):run_head(), 0)
  lu.assertEquals(made, 0)
  -- 64 elements a loop: a head after a filter still pulls just enough
  made = 0
  lu.assertEquals(src:filter(function(x) return x == 70 end):run_head(), 70)
  lu.assertEquals(made, 71)
end

-- the failing stage and element are those of the pull chain
function TestStreamFuse:test_a_failure_names_its_stage_and_element()
  local function boom(x) if x == 4 then error("four") end return x end
  local cases = {
    { S.range(1, 9):map(boom), "map#2", 4 },
    { S.range(1, 9):map(function(x) return x end):filter(function(x) return boom(x) end), "filter#3", 4 },
    { S.range(1, 9):take(6):map(function(x) return x + 1 end):map(boom), "map#4", 4 },
  }
  for _, c in ipairs(cases) do
    local ok, e = pcall(c[1].run_seq, c[1])
    lu.assertFalse(ok)
    lu.assertEquals(e.kind, "StreamFailed")
    lu.assertEquals(e.stage, c[2])
    lu.assertEquals(e.element, c[3])
    lu.assertStrContains(tostring(e.cause), "four")
  end
  local ok, e = pcall(function() return S.range(1, 9):run_fold(0, function(a, x) return boom(x) + a end) end)
  lu.assertFalse(ok)
  lu.assertEquals({ e.stage, e.element }, { "fold#2", 4 })
  -- behind a boundary the same
  ok, e = pcall(function() return S.range(1, 9):map(boom):async():run_seq() end)
  lu.assertFalse(ok)
  lu.assertEquals({ e.stage, e.element }, { "map#2", 4 })
end

function TestStreamFuse:test_resume_and_restart_in_a_fused_chain()
  local function odd_fails(x) if x % 2 == 1 then error("odd") end return x end
  lu.assertEquals(S.range(1, 8):map(odd_fails):with_supervision("resume"):run_seq(), { 2, 4, 6, 8 })
  local sums = S.from({ 1, 2, 0, 3 }):scan(0, function(a, x) if x == 0 then error("zero") end return a + x end)
    :with_supervision("restart"):run_seq()
  lu.assertEquals(sums, { 0, 1, 3, 0, 3 }) -- the initial value again after the restart
end

-- one message carries a batch: 64 elements through a boundary with a
-- buffer of 16 are 7 messages, not 64: 16 first, then 8 at a time (the
-- demand asked again once half the buffer is free)
function TestStreamFuse:test_a_boundary_carries_batches()
  local send, sizes = core.send, {}
  core.send = function(to, m, ...)
    -- a batch is an array { sid, n, v1, ..., vn } (its end: { sid, -1 })
    if type(m) == "table" and math.type(m[2]) == "integer" and m[2] > 0 then sizes[#sizes + 1] = m[2] end
    return send(to, m, ...)
  end
  local ok, got = pcall(function() return S.range(1, 64):async():run_seq() end)
  core.send = send
  lu.assertTrue(ok, got)
  lu.assertEquals(#got, 64)
  lu.assertEquals(got[64], 64)
  lu.assertEquals(sizes, { 16, 8, 8, 8, 8, 8, 8 })
end

-- a stage above a boundary that waits now and then (its batch goes before
-- it waits) still makes no more than the buffer ahead of a slow sink: 16
-- queued and the one in the sink
function TestStreamFuse:test_a_producer_that_waits_stays_within_the_buffer()
  local made, consumed, most = 0, 0, 0
  S.range(1, 200):map(function(x)
    if x % 5 == 0 then tend.sleep(0.001) end
    made = made + 1
    most = math.max(most, made - consumed)
    return x
  end):async():run_foreach(function() tend.sleep(0.1) consumed = consumed + 1 end)
  lu.assertEquals(consumed, 200)
  lu.assertEquals(most, 17)
end

-- a flat_map below a boundary whose inner sources have boundaries of their
-- own: the task reads its mailbox inside a push (the inner stream waits),
-- where the outer producer's batches arrive too; every element once, in order
function TestStreamFuse:test_inner_boundaries_inside_a_boundary_keep_the_order()
  local got = S.range(1, 100):async()
    :flat_map(function(x) return S.range(x * 10, x * 10 + 2):async() end):run_seq()
  local want = {}
  for x = 1, 100 do for j = 0, 2 do want[#want + 1] = x * 10 + j end end
  lu.assertEquals(got, want)
end

-- an element that takes clock time to make goes at once, not with the next
function TestStreamFuse:test_a_slow_element_is_not_held_in_a_batch()
  local t0 = tend.now()
  local times = S.range(1, 3):map(function(x) tend.sleep(1) return x end):async()
    :map(function() return tend.now() - t0 end):run_seq()
  lu.assertEquals(times, { 1, 2, 3 })
end

-- demand still bounds a boundary: the producer is at most the buffer ahead
function TestStreamFuse:test_demand_bounds_a_batched_boundary()
  local made = 0
  local h = S.unfold(0, function(s) made = made + 1 return s + 1, s end):async(8)
    :run_async(S.sink.foreach(function() tend.sleep(1) end))
  tend.sleep(10.5)
  -- 10 or 11 taken, at most 8 more made and queued
  lu.assertTrue(made >= 11 and made <= 11 + 8, "made " .. made)
  h:cancel()
  pcall(h.await, h, 5) -- its sink's sleep in hand ends first
end

-- a shutdown reaches a driven chain whose elements take clock time after
-- the element in hand, not after 64 of them
function TestStreamFuse:test_shutdown_reaches_a_slow_driven_chain()
  local made = 0
  local h = S.range(1, 1000):map(function(x) made = made + 1 tend.sleep(1) return x end)
    :run_async(S.sink.seq())
  tend.sleep(5.5)
  h:shutdown()
  local got = h:await()
  lu.assertTrue(#got >= 5 and #got <= 7, "got " .. #got)
  lu.assertEquals(made, #got)
end
