-- tend.stream against the checks of Apache Pekko Streams' own operator
-- specs (stream-tests/.../scaladsl/*Spec.scala), ported where they make
-- sense in tend: each test names the Pekko spec and case it comes from.
-- Under the virtual clock: exact values, orders, counts and times. Where
-- tend differs on purpose (docs/guide/streams.md, "Where tend differs"),
-- the test checks tend's documented behaviour and says so.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local S = tend.stream

TestStreamPekko = {}

function TestStreamPekko:tearDown()
  H.assert_clean()
end

local function add(a, b) return a + b end

-- The error a run raised (it must raise).
local function failure(s, ...)
  local ok, e = pcall(s.run_with, s, ...)
  lu.assertFalse(ok, "the run should have failed")
  return e
end

-- An endless source that counts its pulls.
local function counted()
  local c = { pulls = 0 }
  c.src = S.unfold(1, function(s) c.pulls = c.pulls + 1 return s + 1, s end)
  return c
end

-- Seconds since t0, to the microsecond (sums of steps are not exact).
local function since(t0)
  return math.floor((tend.now() - t0) * 1e6 + 0.5) / 1e6
end

-- Each element with the tend-clock time it reached the sink.
local function timed(s)
  local t0 = tend.now()
  return s:map(function(x) return { x, since(t0) } end):run_seq()
end

-- A source of the list's elements, made one at a time, each after
-- waiting delays[element] seconds (none if absent). Unlike S.from's,
-- its elements are pulled one by one (no batch driver).
local function paced(list, delays)
  return S.unfold(1, function(i)
    if i > #list then return nil end
    local d = delays[list[i]]
    if d then tend.sleep(d) end
    return i + 1, list[i]
  end)
end

-- The elements a sink saw before the run failed, and the failure.
local function seen_then_failure(s)
  local seen = {}
  local ok, e = pcall(s.run_foreach, s, function(x) seen[#seen + 1] = x end)
  lu.assertFalse(ok, "the run should have failed")
  return seen, e
end

------------------------------------------------------------------ sources

-- UnfoldSourceSpec: "generate a finite fibonacci sequence"
function TestStreamPekko:test_unfold_fibonacci_until_none()
  local fib = S.unfold({ 0, 1 }, function(s)
    if s[1] > 100 then return nil end
    return { s[2], s[1] + s[2] }, s[1]
  end):run_seq()
  lu.assertEquals(fib, { 0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89 })
end

-- UnfoldSourceSpec: "terminate with a failure if there is an exception thrown"
function TestStreamPekko:test_unfold_failure_after_its_elements()
  local seen, e = seen_then_failure(S.unfold(1, function(s)
    if s == 4 then tend.raise("Boom", "at 4") end
    return s + 1, s
  end))
  lu.assertEquals(seen, { 1, 2, 3 })
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "Boom")
  lu.assertEquals(e.stage, "unfold#1")
end

-- TickSourceSpec: "produce ticks" (tend: no initial delay argument; the
-- first tick comes one interval after the start)
function TestStreamPekko:test_tick_produces_ticks_every_interval()
  lu.assertEquals(timed(S.tick(1, "tick"):take(3)), { { "tick", 1 }, { "tick", 2 }, { "tick", 3 } })
end

-- TickSourceSpec: "drop ticks when not requested" (tend: a tick due while
-- the consumer was busy comes when it asks again, at most one; the ticks
-- missed meanwhile are dropped and the next keeps the start's phase)
function TestStreamPekko:test_tick_drops_ticks_a_busy_consumer_missed()
  local t0 = tend.now()
  local at = {}
  S.tick(1, "t"):take(3):run_foreach(function()
    at[#at + 1] = tend.now() - t0
    tend.sleep(2.5)
  end)
  lu.assertEquals(at, { 1, 3.5, 6 })
end

-- TickSourceSpec: "be usable with zip for a simple form of rate limiting"
function TestStreamPekko:test_tick_zipped_paces_a_list()
  local r = timed(S.from({ "a", "b", "c" }):zip(S.tick(1, "t")))
  lu.assertEquals(r, { { { "a", "t" }, 1 }, { { "b", "t" }, 2 }, { { "c", "t" }, 3 } })
end

-- TickSourceSpec: "have a Cancellable" / cancellation stops the timer
function TestStreamPekko:test_tick_cancelled_leaves_no_timer()
  local h = S.tick(1, "t"):run_async(S.sink.ignore())
  tend.sleep(2.5)
  h:cancel()
  lu.assertErrorMsgContains("cancelled", function() h:await() end)
  H.settle()
  lu.assertEquals(tend.stats().timers, 0)
end

-------------------------------------------------------------------- sinks

-- HeadSinkSpec: "yield the first value" (and cancel upstream after it)
function TestStreamPekko:test_head_takes_one_element_and_cancels()
  local c = counted()
  lu.assertEquals(c.src:run_head(), 1)
  lu.assertEquals(c.pulls, 1)
end

-- HeadSinkSpec: "yield error on empty stream" (Pekko: NoSuchElementException)
function TestStreamPekko:test_head_of_empty_fails_with_no_element()
  local e = failure(S.empty(), S.sink.head())
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "NoElement")
end

-- LastSinkSpec: "yield the last value" / "yield error on empty stream"
function TestStreamPekko:test_last_value_and_empty_fails()
  lu.assertEquals(S.range(1, 42):run_last(), 42)
  lu.assertEquals(failure(S.empty(), S.sink.last()).cause.kind, "NoElement")
end

-- HeadSinkSpec / LastSinkSpec: "yield the first error"
function TestStreamPekko:test_head_and_last_of_failed_source_fail_with_its_cause()
  lu.assertEquals(failure(S.failed(tend.error("Ex", "x")), S.sink.head()).cause.kind, "Ex")
  lu.assertEquals(failure(S.failed(tend.error("Ex", "x")), S.sink.last()).cause.kind, "Ex")
end

-- ReduceSinkSpec: "reduce the elements" (the first element is the start)
function TestStreamPekko:test_reduce_starts_from_the_first_element()
  local calls = {}
  lu.assertEquals(S.from({ "a", "b", "c" }):run_with(S.sink.reduce(function(acc, x)
    calls[#calls + 1] = acc .. "+" .. x
    return acc .. x
  end)), "abc")
  lu.assertEquals(calls, { "a+b", "ab+c" })
  lu.assertEquals(S.single(7):run_with(S.sink.reduce(add)), 7)
end

-- ReduceSinkSpec: "fail on empty stream" (Pekko: NoSuchElementException)
function TestStreamPekko:test_reduce_of_empty_fails_with_no_element()
  lu.assertEquals(failure(S.empty(), S.sink.reduce(add)).cause.kind, "NoElement")
end

-- FoldSinkSpec: "fold" / an empty source folds to the zero
function TestStreamPekko:test_fold_of_empty_is_the_zero()
  lu.assertEquals(S.range(1, 100):run_fold(0, add), 5050)
  lu.assertEquals(S.empty():run_fold("zero", add), "zero")
end

-- FoldSinkSpec / ReduceSinkSpec: "propagate an error" from the function
function TestStreamPekko:test_fold_function_failure_fails_the_run()
  local e = failure(S.range(1, 5), S.sink.fold(0, function(a, x)
    if x == 4 then tend.raise("Bad", "4") end
    return a + x
  end))
  lu.assertEquals(e.cause.kind, "Bad")
  lu.assertEquals(e.element, 4)
end

-- SinkSpec (Sink.seq) / "Sink.ignore must complete" on an empty source
function TestStreamPekko:test_seq_and_ignore_of_empty()
  lu.assertEquals(S.empty():run_seq(), {})
  lu.assertNil(S.empty():run_ignore())
end

-- SinkForeachSpec: "foreach ... in order" and a failing function fails it
function TestStreamPekko:test_foreach_order_and_failure()
  local seen = {}
  S.range(1, 4):run_foreach(function(x) seen[#seen + 1] = x end)
  lu.assertEquals(seen, { 1, 2, 3, 4 })
  local e = failure(S.range(1, 4), S.sink.foreach(function(x) if x == 2 then error("two") end end))
  lu.assertEquals(e.element, 2)
end

-- ActorRefBackpressureSinkSpec: "send the elements to the ActorRef" then
-- the completion message, in order
function TestStreamPekko:test_actor_sink_sends_in_order_then_on_complete()
  local got = {}
  local a = tend.spawn(function() return function(m) got[#got + 1] = m end end)
  S.range(1, 3):run_with(S.sink.actor(a, { on_complete = "done" }))
  H.settle()
  lu.assertEquals(got, { 1, 2, 3, "done" })
  tend.stop(a)
end

-- ActorRefBackpressureSinkSpec: "cancel stream when actor terminates"
function TestStreamPekko:test_actor_sink_to_a_stopped_actor_fails_the_run()
  local a = tend.spawn(function() return function(_, ctx) ctx:reply("ack") end end)
  tend.stop(a)
  H.settle()
  local c = counted()
  local e = failure(c.src, S.sink.actor(a, { ack = true }))
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(c.pulls, 1)
end

-------------------------------------------------------------------- flows

-- FlowTakeSpec: "complete eagerly when zero or less is taken independently
-- of upstream completion": take(0) pulls nothing
function TestStreamPekko:test_take_zero_completes_at_once_pulling_nothing()
  local c = counted()
  lu.assertEquals(c.src:take(0):run_seq(), {})
  lu.assertEquals(c.pulls, 0)
end

-- FlowTakeSpec: "take": the first n, and upstream cancelled after them
function TestStreamPekko:test_take_cancels_upstream_after_n()
  local c = counted()
  lu.assertEquals(c.src:take(3):run_seq(), { 1, 2, 3 })
  lu.assertEquals(c.pulls, 3)
  lu.assertEquals(S.range(1, 2):take(5):run_seq(), { 1, 2 })
end

-- FlowDropSpec: "drop": beyond the end gives nothing, drop(0) everything
function TestStreamPekko:test_drop_beyond_the_end_and_zero()
  lu.assertEquals(S.range(1, 3):drop(5):run_seq(), {})
  lu.assertEquals(S.range(1, 3):drop(0):run_seq(), { 1, 2, 3 })
  lu.assertEquals(S.range(1, 5):drop(3):run_seq(), { 4, 5 })
end

-- FlowTakeWhileSpec: "take while predicate is true" (upstream cancelled at
-- the first false) / "complete the future for an empty stream"
function TestStreamPekko:test_take_while_stops_at_the_first_false()
  local c = counted()
  lu.assertEquals(c.src:take_while(function(x) return x < 4 end):run_seq(), { 1, 2, 3 })
  lu.assertEquals(c.pulls, 4)
  lu.assertEquals(S.empty():take_while(function() return true end):run_seq(), {})
end

-- FlowTakeWhileSpec: "continue if error" (resume drops the element)
function TestStreamPekko:test_take_while_resume_drops_the_failing_element()
  local r = S.range(1, 4):take_while(function(x)
    if x == 3 then error("three") end
    return true
  end):with_supervision("resume"):run_seq()
  lu.assertEquals(r, { 1, 2, 4 })
end

-- FlowScanSpec: "Scan" (every state, the zero first) / "Scan empty"
function TestStreamPekko:test_scan_emits_zero_first_even_when_empty()
  lu.assertEquals(S.from({ 1, 2, 3 }):scan(0, add):run_seq(), { 0, 1, 3, 6 })
  lu.assertEquals(S.empty():scan(0, add):run_seq(), { 0 })
end

-- FlowScanSpec: "fail when upstream failed" (the zero, then the error)
function TestStreamPekko:test_scan_of_failed_source_gives_zero_then_fails()
  local seen, e = seen_then_failure(S.failed(tend.error("Ex", "x")):scan(0, add))
  lu.assertEquals(seen, { 0 })
  lu.assertEquals(e.cause.kind, "Ex")
end

-- FlowScanSpec: "emit values promptly": the zero and the first state before
-- the source's next element, which never comes
function TestStreamPekko:test_scan_emits_promptly()
  local r = S.single(1):concat(S.tick(1000, 0)):scan(0, add):take(2):run_seq()
  lu.assertEquals(r, { 0, 1 })
  lu.assertTrue(tend.now() < 1000)
end

-- FlowScanSpec: "restart properly": the state goes back to the zero, which
-- is emitted again
function TestStreamPekko:test_scan_restart_emits_the_zero_again()
  local positive = function(acc, x)
    if x <= 0 then error("not positive") end
    return acc + x
  end
  lu.assertEquals(S.from({ 1, 3, -1, 5, 7 }):scan(0, positive):with_supervision("restart"):run_seq(),
    { 0, 1, 4, 0, 5, 12 })
  -- the same behind an asynchronous boundary (scan pulled, not fused)
  lu.assertEquals(S.from({ 1, 3, -1, 5, 7 }):scan(0, positive):with_supervision("restart")
    :grouped(10):run_seq(), { { 0, 1, 4, 0, 5, 12 } })
end

-- FlowScanSpec: "resume properly": the element is dropped, the state kept
function TestStreamPekko:test_scan_resume_keeps_the_state()
  local positive = function(acc, x)
    if x <= 0 then error("not positive") end
    return acc + x
  end
  lu.assertEquals(S.from({ 1, 3, -1, 5, 7 }):scan(0, positive):with_supervision("resume"):run_seq(),
    { 0, 1, 4, 9, 16 })
end

-- FlowFilterSpec: "filter": the kept elements in order, upstream to its end
function TestStreamPekko:test_filter_keeps_order()
  lu.assertEquals(S.range(1, 10):filter(function(x) return x % 3 == 0 end):run_seq(), { 3, 6, 9 })
  lu.assertEquals(S.range(1, 3):filter(function() return false end):run_seq(), {})
end

-- FlowFoldSpec: "fold" emits one element at completion / "fold empty": the
-- zero / "restart when the Future is failed" (tend: restart starts again
-- from the zero)
function TestStreamPekko:test_flow_fold_one_element_at_completion()
  lu.assertEquals(S.range(1, 4):fold(0, add):run_seq(), { 10 })
  lu.assertEquals(S.empty():fold(0, add):run_seq(), { 0 })
  local r = S.from({ 1, 2, 0, 3, 4 }):fold(0, function(a, x)
    if x == 0 then error("zero") end
    return a + x
  end):with_supervision("restart"):run_seq()
  lu.assertEquals(r, { 7 })
end

-- FlowGroupedSpec: "group evenly" / "group with rest"
function TestStreamPekko:test_grouped_evenly_and_with_rest()
  lu.assertEquals(S.range(1, 6):grouped(3):run_seq(), { { 1, 2, 3 }, { 4, 5, 6 } })
  lu.assertEquals(S.range(1, 7):grouped(3):run_seq(), { { 1, 2, 3 }, { 4, 5, 6 }, { 7 } })
  lu.assertEquals(S.empty():grouped(3):run_seq(), {})
end

-- FlowGroupedWithinSpec: "deliver buffered elements onComplete before the
-- timeout" / "not emit empty group when finished while empty"
function TestStreamPekko:test_grouped_within_flushes_at_completion()
  lu.assertEquals(timed(S.from({ 1, 2, 3 }):grouped_within(10, 5)), { { { 1, 2, 3 }, 0 } })
  lu.assertEquals(S.empty():grouped_within(10, 5):run_seq(), {})
end

-- FlowGroupedWithinSpec: "group elements within the duration" (tend: the
-- window opens at the group's first element; no empty group in between)
function TestStreamPekko:test_grouped_within_cuts_by_time_without_empty_groups()
  local src = paced({ 1, 2, 3, 4 }, { [3] = 5 }) -- a gap of several windows
  -- 1 2 at 0 (cut at 1), 3 and 4 at 5 (cut by the completion right after)
  lu.assertEquals(timed(src:grouped_within(10, 1)), { { { 1, 2 }, 1 }, { { 3, 4 }, 5 } })
end

-- FlowZipSpec: "work in the happy case" / completes when the shorter side
-- does, cancelling the other
function TestStreamPekko:test_zip_completes_with_the_shorter_side()
  lu.assertEquals(S.range(1, 4):zip(S.from({ "A", "B", "C", "D", "E" })):run_seq(),
    { { 1, "A" }, { 2, "B" }, { 3, "C" }, { 4, "D" } })
  local c = counted()
  lu.assertEquals(S.from({ "a", "b" }):zip(c.src):run_seq(), { { "a", 1 }, { "b", 2 } })
  H.settle()
  lu.assertTrue(c.pulls <= 2 + 16, "the endless side ran ahead " .. c.pulls)
end

-- FlowZipSpec: "complete if one side is empty" (either side)
function TestStreamPekko:test_zip_with_an_empty_side_is_empty()
  lu.assertEquals(S.empty():zip(S.range(1, 3)):run_seq(), {})
  lu.assertEquals(S.range(1, 3):zip(S.empty()):run_seq(), {})
end

-- FlowZipSpec: a failure on either side fails the zip
function TestStreamPekko:test_zip_fails_when_a_side_fails()
  lu.assertEquals(failure(S.range(1, 3):zip(S.failed(tend.error("Ex", "x"))), S.sink.seq()).cause.kind, "Ex")
end

-- GraphMergeSpec: "work in the happy case": every element once, each side
-- in its own order
function TestStreamPekko:test_merge_keeps_each_sides_order()
  local r = S.range(1, 5):merge(S.range(6, 10)):run_seq()
  lu.assertEquals(#r, 10)
  local left, right = {}, {}
  for _, x in ipairs(r) do
    if x <= 5 then left[#left + 1] = x else right[#right + 1] = x end
  end
  lu.assertEquals(left, { 1, 2, 3, 4, 5 })
  lu.assertEquals(right, { 6, 7, 8, 9, 10 })
end

-- GraphMergeSpec: "work with one immediately completed and one nonempty
-- publisher" and completes only when both are complete
function TestStreamPekko:test_merge_completes_when_both_complete()
  lu.assertEquals(S.empty():merge(S.range(1, 3)):run_seq(), { 1, 2, 3 })
  lu.assertEquals(S.range(1, 3):merge(S.empty()):run_seq(), { 1, 2, 3 })
  local r = timed(S.from({ "a" }):merge(S.tick(1, "t"):take(2)))
  lu.assertEquals(r, { { "a", 0 }, { "t", 1 }, { "t", 2 } })
end

-- GraphMergeSpec: "pass along early cancellation" / a failure of either side
function TestStreamPekko:test_merge_fails_when_a_side_fails()
  lu.assertEquals(failure(S.tick(1, 1):merge(S.failed(tend.error("Ex", "x"))), S.sink.seq()).cause.kind, "Ex")
end

-- FlowConcatSpec: "work with one immediately completed and one nonempty
-- publisher": the first's elements, then the second's
function TestStreamPekko:test_concat_order()
  lu.assertEquals(S.range(1, 3):concat(S.range(4, 6)):run_seq(), { 1, 2, 3, 4, 5, 6 })
  lu.assertEquals(S.empty():concat(S.range(1, 2)):run_seq(), { 1, 2 })
  lu.assertEquals(S.range(1, 2):concat(S.empty()):run_seq(), { 1, 2 })
end

-- FlowConcatSpec: "work with one immediately failed and one nonempty
-- publisher": the second is never pulled (tend: nor made)
function TestStreamPekko:test_concat_after_a_failure_never_starts_the_second()
  local made = 0
  local second = S.lazy(function() made = made + 1 return S.range(1, 3) end)
  local seen, e = seen_then_failure(S.from({ 1 }):concat(S.failed(tend.error("Ex", "x"))):concat(second))
  lu.assertEquals(seen, { 1 })
  lu.assertEquals(e.cause.kind, "Ex")
  lu.assertEquals(made, 0)
end

-- FlowConcatSpec: "concat lazily": the second starts only when the first
-- completed (its elements' times follow the first's)
function TestStreamPekko:test_concat_starts_the_second_after_the_first()
  local r = timed(S.tick(1, "a"):take(2):concat(S.tick(1, "b"):take(1)))
  lu.assertEquals(r, { { "a", 1 }, { "a", 2 }, { "b", 3 } })
end

-- FlowFlatMapConcatSpec: "flatten": inner sources one after another, in order
function TestStreamPekko:test_flat_map_concatenates_in_order()
  lu.assertEquals(S.range(1, 3):flat_map(function(x) return S.range(1, x) end):run_seq(),
    { 1, 1, 2, 1, 2, 3 })
  -- an inner source that takes time still keeps its place
  local r = S.from({ 2, 1 }):flat_map(function(x)
    return S.tick(x, x):take(2)
  end):run_seq()
  lu.assertEquals(r, { 2, 2, 1, 1 })
  lu.assertEquals(S.range(1, 3):flat_map(function() return S.empty() end):run_seq(), {})
end

-- FlowFlatMapConcatSpec: "propagate substream failure" / "propagate failure
-- from map function"
function TestStreamPekko:test_flat_map_failures()
  local seen, e = seen_then_failure(S.range(1, 3):flat_map(function(x)
    if x == 2 then return S.failed(tend.error("Inner", "2")) end
    return S.single(x)
  end))
  lu.assertEquals(seen, { 1 })
  lu.assertEquals(e.cause.kind, "Inner")
  seen, e = seen_then_failure(S.range(1, 3):flat_map(function(x)
    if x == 3 then tend.raise("Fn", "3") end
    return S.single(x)
  end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.cause.kind, "Fn")
  lu.assertEquals(e.element, 3)
end

-- FlowRecoverSpec: "recover when there is a handler": the elements before
-- the failure, the handler's element, then completion
function TestStreamPekko:test_recover_after_some_elements()
  local r = S.range(1, 4):map(function(x)
    if x == 3 then tend.raise("Ex", "3") end
    return x
  end):recover(function(e) return e.kind end):run_seq()
  lu.assertEquals(r, { 1, 2, "Ex" })
end

-- FlowRecoverSpec: "not influence stream when there is no exceptions" /
-- "finish stream if it's empty"
function TestStreamPekko:test_recover_without_failure_changes_nothing()
  local called = 0
  local h = function() called = called + 1 return 0 end
  lu.assertEquals(S.range(1, 3):recover(h):run_seq(), { 1, 2, 3 })
  lu.assertEquals(S.empty():recover(h):run_seq(), {})
  lu.assertEquals(called, 0)
end

-- FlowRecoverSpec: "failed stream if handler is not for such exception
-- type" (tend: the handler raises to pass a failure on; nil completes)
function TestStreamPekko:test_recover_handler_passes_a_failure_on_by_raising()
  local only_timeouts = function(e)
    if e.kind ~= "Timeout" then error(e, 0) end
    return "late"
  end
  local e = failure(S.failed(tend.error("Ex", "x")):recover(only_timeouts), S.sink.seq())
  lu.assertEquals(e.cause.kind, "Ex")
  lu.assertEquals(S.failed(tend.error("Timeout", "t")):recover(only_timeouts):run_seq(), { "late" })
  lu.assertEquals(S.failed(tend.error("Ex", "x")):recover(function() return nil end):run_seq(), {})
end

-- FlowBufferSpec: "pass elements through normally in backpressured mode"
function TestStreamPekko:test_buffer_passes_everything_under_back_pressure()
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
function TestStreamPekko:test_buffer_drop_head_keeps_the_newest()
  lu.assertEquals(through_full_buffer("drop_head"), { 1, 5, 17, 18, 19, 20 })
end

-- FlowBufferSpec: "drop tail elements if buffer is full and configured so":
-- the youngest in the buffer makes room for each new one (2: in flight;
-- 2 3 4 5 held when 6 7 8 came, 8 the youngest, then room for one more)
function TestStreamPekko:test_buffer_drop_tail_replaces_the_youngest()
  lu.assertEquals(through_full_buffer("drop_tail"), { 1, 2, 3, 4, 8, 20 })
end

-- FlowBufferSpec: "drop new elements if buffer is full and configured so"
-- (2: in flight; 2 3 4 5 held when 6 7 8 came, then room for 9 only)
function TestStreamPekko:test_buffer_drop_new_keeps_the_oldest()
  lu.assertEquals(through_full_buffer("drop_new"), { 1, 2, 3, 4, 5, 9 })
end

-- FlowBufferSpec: "fail upstream if buffer is full and configured so"
function TestStreamPekko:test_buffer_fail_fails_the_stream()
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
function TestStreamPekko:test_throttle_bursts_then_paces()
  local r = timed(S.range(1, 7):throttle(1, 0.2, 5))
  local at = {}
  for i, p in ipairs(r) do at[i] = p[2] end
  lu.assertEquals(at, { 0, 0, 0, 0, 0, 0.2, 0.4 })
end

-- FlowThrottleSpec: "burst some elements if have enough time": a pause
-- refills the bucket (up to burst)
function TestStreamPekko:test_throttle_refills_during_a_pause()
  local src = S.range(1, 9):map(function(x)
    if x == 6 then tend.sleep(0.5) end -- 2.5 tokens come back meanwhile
    return x
  end)
  local r = timed(src:throttle(1, 0.2, 5))
  local at = {}
  for i, p in ipairs(r) do at[i] = p[2] end
  lu.assertEquals(at, { 0, 0, 0, 0, 0, 0.5, 0.5, 0.6, 0.8 })
end

-- FlowThrottleSpec: "work for the happy case" / elements are never dropped
-- and "send elements downstream as soon as time comes"
function TestStreamPekko:test_throttle_shapes_without_dropping()
  local r = timed(S.range(1, 5):throttle(2, 1, 1))
  lu.assertEquals(r, { { 1, 0 }, { 2, 0.5 }, { 3, 1 }, { 4, 1.5 }, { 5, 2 } })
end

-- FlowIdleTimeoutSpec: "pass through elements unmodified"
function TestStreamPekko:test_idle_timeout_passes_elements_through()
  lu.assertEquals(S.range(1, 5):idle_timeout(1):run_seq(), { 1, 2, 3, 4, 5 })
  lu.assertEquals(S.tick(0.5, "t"):take(3):idle_timeout(1):run_seq(), { "t", "t", "t" })
end

-- FlowIdleTimeoutSpec: "fail if time between elements is too large" (at
-- the timeout after the last element)
function TestStreamPekko:test_idle_timeout_fails_after_the_gap()
  local t0 = tend.now()
  local src = paced({ 1, 2, 3 }, { [3] = 5 }):idle_timeout(1)
  local seen, e = seen_then_failure(src)
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.cause.kind, "StreamIdleTimeout")
  lu.assertEquals(tend.now() - t0, 1)
end

--------------------------------------------------------------- map_async

-- FlowMapAsyncSpec: "produce future elements in order" (results in input
-- order even when later calls end first; n at once)
function TestStreamPekko:test_map_async_in_input_order_with_n_at_once()
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
  lu.assertEquals(since(t0), 1.2)
end

-- FlowMapAsyncSpec: "not run more futures than configured"
function TestStreamPekko:test_map_async_never_runs_more_than_n()
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
function TestStreamPekko:test_map_async_failure_fails_after_earlier_results()
  local seen, e = seen_then_failure(S.range(1, 5):map_async(1, function(x)
    if x == 3 then tend.raise("Err", "3") end
    return x
  end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.cause.kind, "Err")
  lu.assertEquals(e.element, 3)
end

-- FlowMapAsyncSpec: "resume after future failure" / "resume when mapAsync
-- throws": the element dropped, the order kept
function TestStreamPekko:test_map_async_resume_drops_the_failed_element()
  local s = S.range(1, 5):map_async(4, function(x)
    tend.sleep(0.1 * (6 - x))
    if x == 3 then tend.raise("Err", "3") end
    return x
  end)
  lu.assertEquals(s:with_supervision("resume"):run_seq(), { 1, 2, 4, 5 })
end

-- FlowMapAsyncSpec: "finish after future failure" with a resuming decider
function TestStreamPekko:test_map_async_finishes_after_a_resumed_last_failure()
  local r = S.range(1, 3):map_async(1, function(x)
    if x == 3 then tend.raise("Err", "3") end
    return x
  end):with_supervision("resume"):grouped(10):run_seq()
  lu.assertEquals(r, { { 1, 2 } })
end

-- FlowMapAsyncSpec: a decider on map_async sees the error; "restart" acts
-- as resume (map_async has no state)
function TestStreamPekko:test_map_async_decider_sees_the_error()
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
function TestStreamPekko:test_map_async_unordered_as_they_end()
  local r = timed(S.from({ 4, 1, 3, 2 }):map_async_unordered(4, function(x)
    tend.sleep(x)
    return x
  end))
  lu.assertEquals(r, { { 1, 1 }, { 2, 2 }, { 3, 3 }, { 4, 4 } })
end

-- FlowMapAsyncUnorderedSpec: "resume after future failure"
function TestStreamPekko:test_map_async_unordered_resume()
  local r = S.range(1, 5):map_async_unordered(4, function(x)
    tend.sleep(0.1 * x)
    if x == 3 then tend.raise("Err", "3") end
    return x
  end):with_supervision("resume"):run_seq()
  lu.assertEquals(r, { 1, 2, 4, 5 })
end

------------------------------------------------------------ supervision

-- FlowSupervisionSpec: "stop and complete stream with failure by default"
function TestStreamPekko:test_supervision_stops_by_default()
  local seen, e = seen_then_failure(S.range(1, 5):map(function(x)
    if x == 3 then error("three") end
    return x
  end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.element, 3)
  lu.assertEquals(e.stage, "map#2")
end

-- FlowSupervisionSpec: "resume stream when exception is thrown" (filter too)
function TestStreamPekko:test_supervision_resume_on_map_and_filter()
  local bad = function(x) if x == 2 then error("two") end return x end
  lu.assertEquals(S.range(1, 4):map(bad):with_supervision("resume"):run_seq(), { 1, 3, 4 })
  lu.assertEquals(S.range(1, 4):filter(bad):with_supervision("resume"):run_seq(), { 1, 3, 4 })
end

-- FlowSupervisionSpec: the decider of the stage, not the whole stream:
-- a stage's own decider wins over the one given after it
function TestStreamPekko:test_stage_decider_wins_over_the_streams()
  local bad = function(x) if x == 2 then error("two") end return x end
  local r = S.range(1, 3):map(bad):with_supervision("resume"):map(bad):with_supervision("stop"):run_seq()
  lu.assertEquals(r, { 1, 3 })
end

-- FlowSupervisionSpec: "complete stream with NPE failure when null is
-- emitted" (tend: nil is no element; a map returning nil fails the stream
-- with NilElement, fused or not)
function TestStreamPekko:test_map_returning_nil_fails_the_stream()
  local odd = function(x) if x ~= 2 then return x end end
  for _, s in ipairs({ S.range(1, 3):map(odd), S.range(1, 3):map(odd):grouped(5) }) do
    local _, e = seen_then_failure(s)
    lu.assertEquals(e.kind, "StreamFailed")
    lu.assertEquals(e.cause.kind, "NilElement")
    lu.assertEquals(e.element, 2)
    lu.assertEquals(e.stage, "map#2")
  end
  local seen = seen_then_failure(S.range(1, 3):map(odd))
  lu.assertEquals(seen, { 1 })
end

-- FlowSupervisionSpec: "resume stream when null is emitted"
function TestStreamPekko:test_resume_drops_a_nil_from_map()
  local odd = function(x) if x % 2 == 1 then return x end end
  lu.assertEquals(S.range(1, 5):map(odd):with_supervision("resume"):run_seq(), { 1, 3, 5 })
  lu.assertEquals(S.range(1, 5):map(odd):with_supervision("resume"):grouped(5):run_seq(), { { 1, 3, 5 } })
end

-- UnfoldSourceSpec (a null element): a state with no element fails
function TestStreamPekko:test_unfold_state_without_element_fails()
  local seen, e = seen_then_failure(S.unfold(1, function(s)
    if s == 3 then return s + 1 end
    return s + 1, s
  end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertEquals(e.cause.kind, "NilElement")
  lu.assertEquals(e.stage, "unfold#1")
end

-- Known differences in code this round leaves to others (the lead is
-- changing stream_async.lua's producer and map_async for speed): each is
-- a test that fails now, not defined (H.skip says why); define it by
-- hand to see it fail.

-- FlowMapAsyncSpec: "signal NPE when future is completed with null"
local function map_async_nil_fails()
  local e = failure(S.range(1, 3):map_async(2, function(x) if x ~= 2 then return x end end), S.sink.seq())
  lu.assertEquals(e.cause.kind, "NilElement")
  lu.assertEquals(e.element, 2)
end
if not H.skip("test_map_async_nil_fails",
  "map_async passes a call's nil on as an element (seq drops it: 1,3); Pekko fails with an NPE") then
  TestStreamPekko.test_map_async_nil_fails = map_async_nil_fails
end

-- FlowAsyncSpec / any boundary: an element made at once is not held back
-- by a later element that takes time to make
local function boundary_sends_ready_elements_at_once()
  local r = timed(S.from({ 1, 2, 3 }):map(function(x)
    if x == 3 then tend.sleep(5) end
    return x
  end):async())
  lu.assertEquals(r, { { 1, 0 }, { 2, 0 }, { 3, 5 } })
end
if not H.skip("test_boundary_sends_ready_elements_at_once",
  "an async producer driven by S.from/S.range batches 1 and 2 with 3, whose map sleeps 5 s: all arrive at 5") then
  TestStreamPekko.test_boundary_sends_ready_elements_at_once = boundary_sends_ready_elements_at_once
end

------------------------------------------------------------------- queue

-- QueueSourceSpec: "emit received messages to the stream" / "complete the
-- stream when the queue is completed" (what was offered is delivered)
function TestStreamPekko:test_queue_delivers_then_completes()
  local h = S.queue({ size = 10 }):run_async(S.sink.seq())
  for i = 1, 5 do lu.assertEquals(h:offer(i), "enqueued") end
  h:complete()
  lu.assertEquals(h:await(), { 1, 2, 3, 4, 5 })
end

-- QueueSourceSpec: "return QueueClosed when stream is completed" (offers
-- after complete and after fail)
function TestStreamPekko:test_queue_offers_after_the_end_are_closed()
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
function TestStreamPekko:test_queue_drop_head()
  local words, seen = offers_to_a_busy_queue("drop_head")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "enqueued", "enqueued" })
  lu.assertEquals(seen, { 1, 4, 5 })
end

-- QueueSourceSpec: "drop tail": the youngest queued element makes room
function TestStreamPekko:test_queue_drop_tail()
  local words, seen = offers_to_a_busy_queue("drop_tail")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "enqueued", "enqueued" })
  lu.assertEquals(seen, { 1, 2, 5 })
end

-- QueueSourceSpec: "return Dropped when buffer is full and dropNew"
function TestStreamPekko:test_queue_drop_new()
  local words, seen = offers_to_a_busy_queue("drop_new")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "dropped", "dropped" })
  lu.assertEquals(seen, { 1, 2, 3 })
end

-- QueueSourceSpec: "fail offer future when stream is completed" with the
-- fail strategy: the stream fails with BufferOverflow (tend: that offer
-- answers "dropped", later ones "closed")
function TestStreamPekko:test_queue_fail()
  local words, seen, ok, e = offers_to_a_busy_queue("fail")
  lu.assertEquals(words, { "enqueued", "enqueued", "enqueued", "dropped", "closed" })
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "BufferOverflow")
  lu.assertEquals(seen, { 1 })
end

-- QueueSourceSpec: "wait for demand when buffer is full" (backpressure:
-- the offering actor waits until there is room)
function TestStreamPekko:test_queue_backpressure_waits_for_room()
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
function TestStreamPekko:test_restart_source_restarts_on_completion()
  local made = 0
  local r = timed(S.restart_source(with({ max_restarts = 2 }), function()
    made = made + 1
    return S.from({ "a", "b" })
  end))
  lu.assertEquals(r, { { "a", 0 }, { "b", 0 }, { "a", 1 }, { "b", 1 }, { "a", 2 }, { "b", 2 } })
  lu.assertEquals(made, 3)
end

-- RestartSpec: "restart on failure": the elements before each failure
function TestStreamPekko:test_restart_source_restarts_on_failure()
  local r = S.restart_source(with({ max_restarts = 2 }), function()
    return S.from({ "a", "b" }):concat(S.failed(tend.error("Ex", "x")))
  end):run_seq()
  lu.assertEquals(r, { "a", "b", "a", "b", "a", "b" })
end

-- RestartSpec: "backoff before restart" (exponential, up to max_backoff)
function TestStreamPekko:test_restart_source_backs_off_exponentially()
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
function TestStreamPekko:test_restart_source_on_failures_only()
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
function TestStreamPekko:test_restart_source_not_restarted_when_cancelled()
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
function TestStreamPekko:test_restart_source_backoff_does_not_reset_after_a_long_run()
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
function TestStreamPekko:test_restart_flow_made_again_after_a_failure()
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
function TestStreamPekko:test_restart_sink_made_again_after_a_failure()
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
