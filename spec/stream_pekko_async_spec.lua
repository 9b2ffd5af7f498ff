-- tend.stream against the checks of Apache Pekko Streams' own operator
-- specs (stream-tests/.../scaladsl/*Spec.scala), ported where they make
-- sense in tend: each test names the Pekko spec and case it comes from.
-- Under the virtual clock: exact values, orders, counts and times. Where
-- tend differs on purpose (docs/guide/streams.md, "Where tend differs"),
-- the test checks tend's documented behaviour and says so. This file: buffers, throttle, timeouts,
-- map_async, supervision, S.queue and restarts (stream_pekko_spec.lua:
-- sources, sinks and the flows).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local P = require "stream_pekko_helper"
local S = tend.stream

TestStreamPekkoAsync = {}

function TestStreamPekkoAsync:tearDown()
  H.assert_clean()
end

-- FlowBufferSpec: "pass elements through normally in backpressured mode"
function TestStreamPekkoAsync:test_buffer_passes_everything_under_back_pressure()
  local r = S.range(1, 50):buffer(4, "backpressure"):run_with(S.sink.fold(0, function(a, x)
    tend.sleep(0.01)
    return a + x
  end))
  lu.assertEquals(r, 1275)
end

-- The elements a buffer of 4 with `overflow` lets through from 1..20 to a
-- sink that is busy 10 s on the first element. The :async(1) after it
-- stands for Pekko's test subscriber: the buffer runs on while the sink is
-- busy, and one element (the head when the sink took 1) waits in flight.
-- The source's batches reach the buffer 4 at a time (its demand), the
-- head leaving it between the first two batches.
local function through_full_buffer(overflow)
  local seen = {}
  S.range(1, 20):buffer(4, overflow):async(1):run_foreach(function(x)
    seen[#seen + 1] = x
    if x == 1 then tend.sleep(10) end
  end)
  return seen
end

-- FlowBufferSpec: "drop head elements if buffer is full and configured so":
-- the oldest are dropped, the newest 4 kept (5: in flight)
function TestStreamPekkoAsync:test_buffer_drop_head_keeps_the_newest()
  lu.assertEquals(through_full_buffer("drop_head"), { 1, 5, 17, 18, 19, 20 })
end

-- FlowBufferSpec: "drop tail elements if buffer is full and configured so":
-- the youngest in the buffer makes room for each new one (2: in flight;
-- 2 3 4 5 held when 6 7 8 came, 8 the youngest, then room for one more)
function TestStreamPekkoAsync:test_buffer_drop_tail_replaces_the_youngest()
  lu.assertEquals(through_full_buffer("drop_tail"), { 1, 2, 3, 4, 8, 20 })
end

-- FlowBufferSpec: "drop new elements if buffer is full and configured so"
-- (2: in flight; 2 3 4 5 held when 6 7 8 came, then room for 9 only)
function TestStreamPekkoAsync:test_buffer_drop_new_keeps_the_oldest()
  lu.assertEquals(through_full_buffer("drop_new"), { 1, 2, 3, 4, 5, 9 })
end

-- FlowBufferSpec: "fail upstream if buffer is full and configured so"
function TestStreamPekkoAsync:test_buffer_fail_fails_the_stream()
  local seen = {}
  local ok, e = pcall(function()
    S.range(1, 20):buffer(4, "fail"):async(1):run_foreach(function(x)
      seen[#seen + 1] = x
      if x == 1 then tend.sleep(10) end
    end)
  end)
  lu.assertFalse(ok)
  lu.assertEquals(seen, { 1 })
  lu.assertEquals(e.cause.kind, "BufferOverflow")
  lu.assertEquals(e.stage, "buffer#2")
end

-- FlowThrottleSpec: "burst according to its maximum" then one per period
-- (the bucket starts full)
function TestStreamPekkoAsync:test_throttle_bursts_then_paces()
  local r = P.timed(S.range(1, 7):throttle(1, 0.2, 5))
  local at = {}
  for i, p in ipairs(r) do at[i] = p[2] end
  lu.assertEquals(at, { 0, 0, 0, 0, 0, 0.2, 0.4 })
end

-- FlowThrottleSpec: "burst some elements if have enough time": a pause
-- refills the bucket (up to burst)
function TestStreamPekkoAsync:test_throttle_refills_during_a_pause()
  local src = S.range(1, 9):map(function(x)
    if x == 6 then tend.sleep(0.5) end -- 2.5 tokens come back meanwhile
    return x
  end)
  local r = P.timed(src:throttle(1, 0.2, 5))
  local at = {}
  for i, p in ipairs(r) do at[i] = p[2] end
  lu.assertEquals(at, { 0, 0, 0, 0, 0, 0.5, 0.5, 0.6, 0.8 })
end

-- FlowThrottleSpec: "work for the happy case" / elements are never dropped
-- and "send elements downstream as soon as time comes"
function TestStreamPekkoAsync:test_throttle_shapes_without_dropping()
  local r = P.timed(S.range(1, 5):throttle(2, 1, 1))
  lu.assertEquals(r, { { 1, 0 }, { 2, 0.5 }, { 3, 1 }, { 4, 1.5 }, { 5, 2 } })
end

-- FlowThrottleSpec: "emit single element per tick" (a burst of 0: the
-- first element waits its period too)
function TestStreamPekkoAsync:test_throttle_without_burst_delays_every_element()
  lu.assertEquals(P.timed(S.range(1, 3):throttle(1, 0.3, 0)), { { 1, 0.3 }, { 2, 0.6 }, { 3, 0.9 } })
end

-- FlowThrottleSpec: "send elements downstream as soon as time comes" with
-- the automatic burst: 100 ms worth of tokens, at least 1
function TestStreamPekkoAsync:test_throttle_default_burst_is_a_tenth_of_a_second()
  local function at(s)
    local r = {}
    for i, p in ipairs(P.timed(s)) do r[i] = p[2] end
    return r
  end
  lu.assertEquals(at(S.range(1, 4):throttle(2, 1)), { 0, 0.5, 1, 1.5 }) -- burst 1
  lu.assertEquals(at(S.range(1, 4):throttle(10, 1)), { 0, 0.1, 0.2, 0.3 }) -- burst 1
  lu.assertEquals(at(S.range(1, 12):throttle(100, 1)),
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.01, 0.02 }) -- burst 10
end

-- FlowIdleTimeoutSpec: "pass through elements unmodified"
function TestStreamPekkoAsync:test_idle_timeout_passes_elements_through()
  lu.assertEquals(S.range(1, 5):idle_timeout(1):run_seq(), { 1, 2, 3, 4, 5 })
  lu.assertEquals(S.tick(0.5, "t"):take(3):idle_timeout(1):run_seq(), { "t", "t", "t" })
end

-- FlowIdleTimeoutSpec: "fail if time between elements is too large" (at
-- the timeout after the last element)
function TestStreamPekkoAsync:test_idle_timeout_fails_after_the_gap()
  local t0 = tend.now()
  local src = P.paced({ 1, 2, 3 }, { [3] = 5 }):idle_timeout(1)
  local seen, e = P.seen_then_failure(src)
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.cause.kind, "StreamIdleTimeout")
  lu.assertEquals(tend.now() - t0, 1)
end

--------------------------------------------------------------- map_async

-- FlowMapAsyncSpec: "produce future elements in order" (results in input
-- order even when later calls end first; n at once)
function TestStreamPekkoAsync:test_map_async_in_input_order_with_n_at_once()
  local t0 = tend.now()
  local done = {}
  local r = S.range(1, 8):map_async(4, function(x)
    tend.sleep(1 / x)
    done[#done + 1] = x
    return x
  end):run_seq()
  lu.assertEquals(r, { 1, 2, 3, 4, 5, 6, 7, 8 })
  -- as Pekko's: a call ended out of turn still holds its place, so the
  -- fifth starts only when the first (the slowest) ends
  lu.assertEquals(done, { 4, 3, 2, 1, 8, 7, 6, 5 })
  lu.assertEquals(P.since(t0), 1.2)
end

-- FlowMapAsyncSpec: "not run more futures than configured"
function TestStreamPekkoAsync:test_map_async_never_runs_more_than_n()
  local running, most, calls = 0, 0, 0
  S.range(1, 20):map_async(3, function(x)
    running, calls = running + 1, calls + 1
    most = math.max(most, running)
    tend.sleep(0.1 * (x % 4 + 1))
    running = running - 1
    return x
  end):run_ignore()
  lu.assertEquals(most, 3)
  lu.assertEquals(calls, 20)
end

-- FlowMapAsyncSpec: "signal error from mapAsync": the elements before,
-- then the failure naming the element
function TestStreamPekkoAsync:test_map_async_failure_fails_after_earlier_results()
  local seen, e = P.seen_then_failure(S.range(1, 5):map_async(1, function(x)
    if x == 3 then tend.raise("Err", "3") end
    return x
  end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.cause.kind, "Err")
  lu.assertEquals(e.element, 3)
end

-- FlowMapAsyncSpec: "resume after future failure" / "resume when mapAsync
-- throws": the element dropped, the order kept
function TestStreamPekkoAsync:test_map_async_resume_drops_the_failed_element()
  local s = S.range(1, 5):map_async(4, function(x)
    tend.sleep(0.1 * (6 - x))
    if x == 3 then tend.raise("Err", "3") end
    return x
  end)
  lu.assertEquals(s:with_supervision("resume"):run_seq(), { 1, 2, 4, 5 })
end

-- FlowMapAsyncSpec: "finish after future failure" with a resuming decider
function TestStreamPekkoAsync:test_map_async_finishes_after_a_resumed_last_failure()
  local r = S.range(1, 3):map_async(1, function(x)
    if x == 3 then tend.raise("Err", "3") end
    return x
  end):with_supervision("resume"):grouped(10):run_seq()
  lu.assertEquals(r, { { 1, 2 } })
end

-- FlowMapAsyncSpec: a decider on map_async sees the error; "restart" acts
-- as resume (map_async has no state)
function TestStreamPekkoAsync:test_map_async_decider_sees_the_error()
  local kinds = {}
  local r = S.range(1, 4):map_async(2, function(x)
    if x % 2 == 0 then tend.raise("Even", tostring(x)) end
    return x
  end):with_supervision(function(e)
    kinds[#kinds + 1] = e.kind
    return "restart"
  end):run_seq()
  lu.assertEquals(r, { 1, 3 })
  lu.assertEquals(kinds, { "Even", "Even" })
end

-- FlowMapAsyncUnorderedSpec: "produce future elements in the order they
-- are ready"
function TestStreamPekkoAsync:test_map_async_unordered_as_they_end()
  local r = P.timed(S.from({ 4, 1, 3, 2 }):map_async_unordered(4, function(x)
    tend.sleep(x)
    return x
  end))
  lu.assertEquals(r, { { 1, 1 }, { 2, 2 }, { 3, 3 }, { 4, 4 } })
end

-- FlowMapAsyncUnorderedSpec: "resume after future failure"
function TestStreamPekkoAsync:test_map_async_unordered_resume()
  local r = S.range(1, 5):map_async_unordered(4, function(x)
    tend.sleep(0.1 * x)
    if x == 3 then tend.raise("Err", "3") end
    return x
  end):with_supervision("resume"):run_seq()
  lu.assertEquals(r, { 1, 2, 4, 5 })
end

------------------------------------------------------------ supervision

-- FlowSupervisionSpec: "stop and complete stream with failure by default"
function TestStreamPekkoAsync:test_supervision_stops_by_default()
  local seen, e = P.seen_then_failure(S.range(1, 5):map(function(x)
    if x == 3 then error("three") end
    return x
  end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.element, 3)
  lu.assertEquals(e.stage, "map#2")
end

-- FlowSupervisionSpec: "resume stream when exception is thrown" (filter too)
function TestStreamPekkoAsync:test_supervision_resume_on_map_and_filter()
  local bad = function(x) if x == 2 then error("two") end return x end
  lu.assertEquals(S.range(1, 4):map(bad):with_supervision("resume"):run_seq(), { 1, 3, 4 })
  lu.assertEquals(S.range(1, 4):filter(bad):with_supervision("resume"):run_seq(), { 1, 3, 4 })
end

-- FlowSupervisionSpec: the decider of the stage, not the whole stream:
-- a stage's own decider wins over the one given after it
function TestStreamPekkoAsync:test_stage_decider_wins_over_the_streams()
  local bad = function(x) if x == 2 then error("two") end return x end
  local r = S.range(1, 3):map(bad):with_supervision("resume"):map(bad):with_supervision("stop"):run_seq()
  lu.assertEquals(r, { 1, 3 })
end

-- FlowSupervisionSpec: "complete stream with NPE failure when null is
-- emitted" (tend: nil is no element; a map returning nil fails the stream
-- with NilElement, fused or not)
function TestStreamPekkoAsync:test_map_returning_nil_fails_the_stream()
  local odd = function(x) if x ~= 2 then return x end end
  for _, s in ipairs({ S.range(1, 3):map(odd), S.range(1, 3):map(odd):grouped(5) }) do
    local _, e = P.seen_then_failure(s)
    lu.assertEquals(e.kind, "StreamFailed")
    lu.assertEquals(e.cause.kind, "NilElement")
    lu.assertEquals(e.element, 2)
    lu.assertEquals(e.stage, "map#2")
  end
  local seen = P.seen_then_failure(S.range(1, 3):map(odd))
  lu.assertEquals(seen, { 1 })
end

-- FlowSupervisionSpec: "resume stream when null is emitted"
function TestStreamPekkoAsync:test_resume_drops_a_nil_from_map()
  local odd = function(x) if x % 2 == 1 then return x end end
  lu.assertEquals(S.range(1, 5):map(odd):with_supervision("resume"):run_seq(), { 1, 3, 5 })
  lu.assertEquals(S.range(1, 5):map(odd):with_supervision("resume"):grouped(5):run_seq(), { { 1, 3, 5 } })
end

-- UnfoldSourceSpec (a null element): a state with no element fails
function TestStreamPekkoAsync:test_unfold_state_without_element_fails()
  local seen, e = P.seen_then_failure(S.unfold(1, function(s)
    if s == 3 then return s + 1 end
    return s + 1, s
  end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.cause.kind, "NilElement")
  lu.assertEquals(e.stage, "unfold#1")
end

-- FlowMapAsyncSpec: "signal NPE when future is completed with null"
function TestStreamPekkoAsync:test_map_async_nil_fails()
  local e = P.failure(S.range(1, 3):map_async(2, function(x) if x ~= 2 then return x end end), S.sink.seq())
  lu.assertEquals(e.cause.kind, "NilElement")
  lu.assertEquals(e.element, 2)
end

-- FlowAsyncSpec / any boundary: an element made at once is not held back
-- by a later element that takes time to make
function TestStreamPekkoAsync:test_boundary_sends_ready_elements_at_once()
  local r = P.timed(S.from({ 1, 2, 3 }):map(function(x)
    if x == 3 then tend.sleep(5) end
    return x
  end):async())
  lu.assertEquals(r, { { 1, 0 }, { 2, 0 }, { 3, 5 } })
end

------------------------------------------------------------------- queue

-- QueueSourceSpec: "emit received messages to the stream" / "complete the
-- stream when the queue is completed" (what was offered is delivered)
function TestStreamPekkoAsync:test_queue_delivers_then_completes()
  local h = S.queue({ size = 10 }):run_async(S.sink.seq())
  for i = 1, 5 do lu.assertEquals(h:offer(i), "enqueued") end
  h:complete()
  lu.assertEquals(h:await(), { 1, 2, 3, 4, 5 })
end

-- QueueSourceSpec: "return QueueClosed when stream is completed" (offers
-- after complete and after fail)
function TestStreamPekkoAsync:test_queue_offers_after_the_end_are_closed()
  local h = S.queue({ size = 2 }):run_async(S.sink.seq())
  h:complete()
  lu.assertEquals(h:offer(1), "closed")
  lu.assertEquals(h:await(), {})
  local f = S.queue({ size = 2 }):run_async(S.sink.seq())
  f:fail(tend.error("Gone", "x"))
  lu.assertEquals(f:offer(1), "closed")
  local ok, e = pcall(f.await, f)
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "Gone")
end

-- A queue of 2 with `overflow` whose stream is busy 10 s on the first
-- element: the words offer returns for 1..5, and what the stream got.
local function offers_to_a_busy_queue(overflow)
  local seen = {}
  local h2 = S.queue({ size = 2, overflow = overflow }):map(function(x)
    seen[#seen + 1] = x
    if x == 1 then tend.sleep(10) end
    return x
  end):run_async(S.sink.ignore())
  local words = { h2:offer(1) }
  tend.sleep(0.5) -- the stream took 1 and is busy with it
  for i = 2, 5 do words[i] = h2:offer(i) end
  h2:complete()
  local ok, e = pcall(h2.await, h2)
  return words, seen, ok, e
end

-- QueueSourceSpec: "drop head": the oldest queued element makes room;
-- every offer is enqueued
function TestStreamPekkoAsync:test_queue_drop_head()
  local words, seen = offers_to_a_busy_queue("drop_head")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "enqueued", "enqueued" })
  lu.assertEquals(seen, { 1, 4, 5 })
end

-- QueueSourceSpec: "drop tail": the youngest queued element makes room
function TestStreamPekkoAsync:test_queue_drop_tail()
  local words, seen = offers_to_a_busy_queue("drop_tail")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "enqueued", "enqueued" })
  lu.assertEquals(seen, { 1, 2, 5 })
end

-- QueueSourceSpec: "return Dropped when buffer is full and dropNew"
function TestStreamPekkoAsync:test_queue_drop_new()
  local words, seen = offers_to_a_busy_queue("drop_new")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "dropped", "dropped" })
  lu.assertEquals(seen, { 1, 2, 3 })
end

-- QueueSourceSpec: "fail offer future when stream is completed" with the
-- fail strategy: the stream fails with BufferOverflow (tend: that offer
-- answers "dropped", later ones "closed")
function TestStreamPekkoAsync:test_queue_fail()
  local words, seen, ok, e = offers_to_a_busy_queue("fail")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "dropped", "closed" })
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "BufferOverflow")
  lu.assertEquals(seen, { 1 })
end

-- QueueSourceSpec: "wait for demand when buffer is full" (backpressure:
-- the offering actor waits until there is room)
function TestStreamPekkoAsync:test_queue_backpressure_waits_for_room()
  local h = S.queue({ size = 1 }):map(function(x) tend.sleep(1) return x end):run_async(S.sink.seq())
  local t0 = tend.now()
  local at = {}
  for i = 1, 4 do
    lu.assertEquals(h:offer(i), "enqueued")
    at[i] = tend.now() - t0
  end
  h:complete()
  lu.assertEquals(h:await(), { 1, 2, 3, 4 })
  lu.assertEquals(at, { 0, 0, 1, 2 })
end

-------------------------------------------------------------- restarts

local fixed = { min_backoff = 1, max_backoff = 1, random_factor = 0 }

local function with(opts)
  local o = {}
  for k, v in pairs(fixed) do o[k] = v end
  for k, v in pairs(opts) do o[k] = v end
  return o
end

-- RestartSpec: "restart when source completes" (then stop after maxRestarts)
function TestStreamPekkoAsync:test_restart_source_restarts_on_completion()
  local made = 0
  local r = P.timed(S.restart_source(with({ max_restarts = 2 }), function()
    made = made + 1
    return S.from({ "a", "b" })
  end))
  lu.assertEquals(r, { { "a", 0 }, { "b", 0 }, { "a", 1 }, { "b", 1 }, { "a", 2 }, { "b", 2 } })
  lu.assertEquals(made, 3)
end

-- RestartSpec: "restart on failure": the elements before each failure
function TestStreamPekkoAsync:test_restart_source_restarts_on_failure()
  local r = S.restart_source(with({ max_restarts = 2 }), function()
    return S.from({ "a", "b" }):concat(S.failed(tend.error("Ex", "x")))
  end):run_seq()
  lu.assertEquals(r, { "a", "b", "a", "b", "a", "b" })
end

-- RestartSpec: "backoff before restart" (exponential, up to max_backoff)
function TestStreamPekkoAsync:test_restart_source_backs_off_exponentially()
  local times = {}
  S.restart_source({ min_backoff = 0.5, max_backoff = 3, random_factor = 0, max_restarts = 5 }, function()
    times[#times + 1] = tend.now()
    return S.failed(tend.error("Ex", "x"))
  end):run_ignore()
  lu.assertEquals(H.gaps(times), { 0.5, 1, 2, 3, 3 })
end

-- RestartSpec: "stop on completion if it should only be restarted in
-- failures" and "restart on failure when only due to failures should be
-- restarted"
function TestStreamPekkoAsync:test_restart_source_on_failures_only()
  local made = 0
  local r = S.restart_source(with({ max_restarts = 3, on_failures_only = true }), function()
    made = made + 1
    if made == 1 then return S.from({ "a" }):concat(S.failed(tend.error("Ex", "x"))) end
    return S.from({ "b" })
  end):run_seq()
  lu.assertEquals(r, { "a", "b" })
  lu.assertEquals(made, 2)
end

-- RestartSpec: "not restart the source when cancelled"
function TestStreamPekkoAsync:test_restart_source_not_restarted_when_cancelled()
  local made = 0
  local r = S.restart_source(with({}), function()
    made = made + 1
    return S.tick(1, made)
  end):take(3):run_seq()
  lu.assertEquals(r, { 1, 1, 1 })
  H.settle()
  lu.assertEquals(made, 1)
  lu.assertEquals(tend.stats().timers, 0)
end

-- RestartSpec: "reset exponential backoff back to minimum when source runs
-- for at least minimum backoff without completing" (tend: the delays keep
-- growing; only max_restarts_within forgets old restarts)
function TestStreamPekkoAsync:test_restart_source_backoff_does_not_reset_after_a_long_run()
  local times, made = {}, 0
  S.restart_source({ min_backoff = 1, max_backoff = 8, random_factor = 0, max_restarts = 3 }, function()
    made = made + 1
    times[#times + 1] = tend.now()
    return S.tick(5, "t"):take(1):concat(S.failed(tend.error("Ex", "x")))
  end):run_ignore()
  lu.assertEquals(made, 4)
  -- each run lasts 5 s (longer than min_backoff), then 1, 2, 4 s of backoff
  lu.assertEquals(H.gaps(times), { 6, 7, 9 })
end

-- RestartSpec (RestartFlow): "restart on failure": the flow is made again
-- over the same upstream; the failing element is lost
function TestStreamPekkoAsync:test_restart_flow_made_again_after_a_failure()
  local made = 0
  local flow = S.restart_flow(with({ max_restarts = 2 }), function()
    made = made + 1
    return S.flow():map(function(x)
      if x == 3 then tend.raise("Ex", "3") end
      return x * 10
    end)
  end)
  lu.assertEquals(S.range(1, 5):via(flow):run_seq(), { 10, 20, 40, 50 })
  lu.assertEquals(made, 2)
end

-- RestartSpec (RestartSink): "restart on failure": a new sink after each
-- failure (the failing element is lost); after max_restarts the run ends
-- with the sink's value
function TestStreamPekkoAsync:test_restart_sink_made_again_after_a_failure()
  local made, seen = 0, {}
  S.range(1, 6):run_with(S.restart_sink(with({ max_restarts = 1 }), function()
    made = made + 1
    local me = made
    return S.sink.foreach(function(x)
      if x % 3 == 0 then tend.raise("Ex", tostring(x)) end
      seen[#seen + 1] = me .. ":" .. x
    end)
  end))
  lu.assertEquals(seen, { "1:1", "1:2", "2:4", "2:5" })
  lu.assertEquals(made, 2)
end

-- RestartSpec: "reset maxRestarts when source runs for at least minimum
-- backoff without completing" (tend: max_restarts counts the restarts of
-- the last max_restarts_within seconds; older ones are forgotten)
function TestStreamPekkoAsync:test_restart_source_forgets_restarts_outside_the_window()
  local made = 0
  local r = S.restart_source({ min_backoff = 1, max_backoff = 1, random_factor = 0,
    max_restarts = 1, max_restarts_within = 3 }, function()
    made = made + 1
    return S.tick(3, made):take(1):concat(S.failed(tend.error("Ex", "x")))
  end):take(4):run_seq()
  -- each restart is 4 s after the one before: never 2 within 3 s
  lu.assertEquals(r, { 1, 2, 3, 4 })
  lu.assertEquals(made, 4)
  -- within the window, the second restart is refused: the source completes
  made = 0
  r = S.restart_source({ min_backoff = 1, max_backoff = 1, random_factor = 0,
    max_restarts = 1, max_restarts_within = 10 }, function()
    made = made + 1
    return S.tick(3, made):take(1):concat(S.failed(tend.error("Ex", "x")))
  end):run_seq()
  lu.assertEquals(r, { 1, 2 })
  lu.assertEquals(made, 2)
end

-- FlowMapAsyncSpec: "handle cancel properly": calls in flight when the
-- stream is cancelled leave nothing behind (tearDown: no actor, no timer)
function TestStreamPekkoAsync:test_map_async_cancelled_with_calls_in_flight()
  local started = 0
  local h = S.range(1, 100):map_async(4, function(x)
    started = started + 1
    tend.sleep(10)
    return x
  end):run_async(S.sink.seq())
  tend.sleep(1)
  lu.assertEquals(started, 4)
  h:cancel()
  lu.assertErrorMsgContains("cancelled", function() h:await() end)
  tend.sleep(20)
  lu.assertEquals(started, 4)
end

-- FlowSupervisionSpec: the decider gets the error itself (its kind and
-- message), once per failing element
function TestStreamPekkoAsync:test_decider_gets_each_error()
  local got = {}
  local r = S.range(1, 6):map(function(x)
    if x % 3 == 0 then tend.raise("Third", "at " .. x) end
    return x
  end):with_supervision(function(e)
    got[#got + 1] = e.kind .. " " .. e.message
    return "resume"
  end):run_seq()
  lu.assertEquals(r, { 1, 2, 4, 5 })
  lu.assertEquals(got, { "Third at 3", "Third at 6" })
end
