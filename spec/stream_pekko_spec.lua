-- tend.stream against the checks of Apache Pekko Streams' own operator
-- specs (stream-tests/.../scaladsl/*Spec.scala), ported where they make
-- sense in tend: each test names the Pekko spec and case it comes from.
-- Under the virtual clock: exact values, orders, counts and times. Where
-- tend differs on purpose (docs/guide/streams.md, "Where tend differs"),
-- the test checks tend's documented behaviour and says so. This file: sources, sinks and the flows;
-- stream_pekko_async_spec.lua: buffers, throttle, timeouts, map_async,
-- supervision, S.queue and restarts.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local P = require "stream_pekko_helper"
local S = tend.stream

TestStreamPekko = {}

function TestStreamPekko:tearDown()
  H.assert_clean()
end

local add = P.add

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
  local seen, e = P.seen_then_failure(S.unfold(1, function(s)
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
  lu.assertEquals(P.timed(S.tick(1, "tick"):take(3)), { { "tick", 1 }, { "tick", 2 }, { "tick", 3 } })
end

-- TickSourceSpec: "drop ticks when not requested": the ticks due while the
-- consumer was busy are dropped; it gets the next one on schedule
function TestStreamPekko:test_tick_drops_ticks_a_busy_consumer_missed()
  local t0 = tend.now()
  local at = {}
  S.tick(1, "t"):take(3):run_foreach(function()
    at[#at + 1] = P.since(t0)
    tend.sleep(2.5)
  end)
  lu.assertEquals(at, { 1, 4, 7 })
  -- a consumer busy exactly one interval misses nothing
  t0, at = tend.now(), {}
  S.tick(0.1, "t"):take(4):run_foreach(function()
    at[#at + 1] = P.since(t0)
    tend.sleep(0.1)
  end)
  lu.assertEquals(at, { 0.1, 0.2, 0.3, 0.4 })
end

-- TickSourceSpec: "be usable with zip for a simple form of rate limiting"
function TestStreamPekko:test_tick_zipped_paces_a_list()
  local r = P.timed(S.from({ "a", "b", "c" }):zip(S.tick(1, "t")))
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
  local c = P.counted()
  lu.assertEquals(c.src:run_head(), 1)
  lu.assertEquals(c.pulls, 1)
end

-- HeadSinkSpec: "yield error on empty stream" (Pekko: NoSuchElementException)
function TestStreamPekko:test_head_of_empty_fails_with_no_element()
  local e = P.failure(S.empty(), S.sink.head())
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "NoElement")
end

-- LastSinkSpec: "yield the last value" / "yield error on empty stream"
function TestStreamPekko:test_last_value_and_empty_fails()
  lu.assertEquals(S.range(1, 42):run_last(), 42)
  lu.assertEquals(P.failure(S.empty(), S.sink.last()).cause.kind, "NoElement")
end

-- HeadSinkSpec / LastSinkSpec: "yield the first error"
function TestStreamPekko:test_head_and_last_of_failed_source_fail_with_its_cause()
  lu.assertEquals(P.failure(S.failed(tend.error("Ex", "x")), S.sink.head()).cause.kind, "Ex")
  lu.assertEquals(P.failure(S.failed(tend.error("Ex", "x")), S.sink.last()).cause.kind, "Ex")
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
  lu.assertEquals(P.failure(S.empty(), S.sink.reduce(add)).cause.kind, "NoElement")
end

-- FoldSinkSpec: "fold" / an empty source folds to the zero
function TestStreamPekko:test_fold_of_empty_is_the_zero()
  lu.assertEquals(S.range(1, 100):run_fold(0, add), 5050)
  lu.assertEquals(S.empty():run_fold("zero", add), "zero")
end

-- FoldSinkSpec / ReduceSinkSpec: "propagate an error" from the function
function TestStreamPekko:test_fold_function_failure_fails_the_run()
  local e = P.failure(S.range(1, 5), S.sink.fold(0, function(a, x)
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
  local e = P.failure(S.range(1, 4), S.sink.foreach(function(x) if x == 2 then error("two") end end))
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

-- ActorRefBackpressureSinkSpec: "send failure message on upstream failure"
-- (on_failure: a message, or a function of the StreamFailed)
function TestStreamPekko:test_actor_sink_tells_of_a_failure()
  local got = {}
  local a = tend.spawn(function() return function(m) got[#got + 1] = m end end)
  local src = S.from({ 1, 2 }):concat(S.failed(tend.error("Ex", "x")))
  P.failure(src, S.sink.actor(a, { on_complete = "done", on_failure = "failed" }))
  P.failure(src, S.sink.actor(a, { on_failure = function(e) return e.cause.kind end }))
  H.settle()
  lu.assertEquals(got, { 1, 2, "failed", 1, 2, "Ex" })
  tend.stop(a)
  lu.assertErrorMsgContains('tend.stream.sink.actor: options: expected on_complete, on_failure or ack, got "on_error"',
    function() S.sink.actor(a, { on_error = "x" }) end)
end

-- ActorRefBackpressureSinkSpec: "cancel stream when actor terminates"
function TestStreamPekko:test_actor_sink_to_a_stopped_actor_fails_the_run()
  local a = tend.spawn(function() return function(_, ctx) ctx:reply("ack") end end)
  tend.stop(a)
  H.settle()
  local c = P.counted()
  local e = P.failure(c.src, S.sink.actor(a, { ack = true }))
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(c.pulls, 1)
end

-------------------------------------------------------------------- flows

-- FlowTakeSpec: "complete eagerly when zero or less is taken independently
-- of upstream completion": take(0) pulls nothing
function TestStreamPekko:test_take_zero_completes_at_once_pulling_nothing()
  local c = P.counted()
  lu.assertEquals(c.src:take(0):run_seq(), {})
  lu.assertEquals(c.pulls, 0)
end

-- FlowTakeSpec: "take": the first n, and upstream cancelled after them
function TestStreamPekko:test_take_cancels_upstream_after_n()
  local c = P.counted()
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
  local c = P.counted()
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
  local seen, e = P.seen_then_failure(S.failed(tend.error("Ex", "x")):scan(0, add))
  lu.assertEquals(seen, { 0 })
  lu.assertEquals(e.cause.kind, "Ex")
end

-- FlowScanSpec: "emit values promptly": the zero and the first state before
-- the source's next element, which never comes
function TestStreamPekko:test_scan_emits_promptly()
  local t0 = tend.now()
  local r = S.single(1):concat(S.tick(1000, 0)):scan(0, add):take(2):run_seq()
  lu.assertEquals(r, { 0, 1 })
  lu.assertTrue(tend.now() - t0 < 1000)
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
  lu.assertEquals(P.timed(S.from({ 1, 2, 3 }):grouped_within(10, 5)), { { { 1, 2, 3 }, 0 } })
  lu.assertEquals(S.empty():grouped_within(10, 5):run_seq(), {})
end

-- FlowGroupedWithinSpec: "group elements within the duration" (tend: the
-- window opens at the group's first element; no empty group in between)
function TestStreamPekko:test_grouped_within_cuts_by_time_without_empty_groups()
  local src = P.paced({ 1, 2, 3, 4 }, { [3] = 5 }) -- a gap of several windows
  -- 1 2 at 0 (cut at 1), 3 and 4 at 5 (cut by the completion right after)
  lu.assertEquals(P.timed(src:grouped_within(10, 1)), { { { 1, 2 }, 1 }, { { 3, 4 }, 5 } })
end

-- FlowZipSpec: "work in the happy case" / completes when the shorter side
-- does, cancelling the other
function TestStreamPekko:test_zip_completes_with_the_shorter_side()
  lu.assertEquals(S.range(1, 4):zip(S.from({ "A", "B", "C", "D", "E" })):run_seq(),
    { { 1, "A" }, { 2, "B" }, { 3, "C" }, { 4, "D" } })
  local c = P.counted()
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
  lu.assertEquals(P.failure(S.range(1, 3):zip(S.failed(tend.error("Ex", "x"))), S.sink.seq()).cause.kind, "Ex")
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
  local r = P.timed(S.from({ "a" }):merge(S.tick(1, "t"):take(2)))
  lu.assertEquals(r, { { "a", 0 }, { "t", 1 }, { "t", 2 } })
end

-- GraphMergeSpec: "pass along early cancellation" / a failure of either side
function TestStreamPekko:test_merge_fails_when_a_side_fails()
  lu.assertEquals(P.failure(S.tick(1, 1):merge(S.failed(tend.error("Ex", "x"))), S.sink.seq()).cause.kind, "Ex")
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
  local seen, e = P.seen_then_failure(S.from({ 1 }):concat(S.failed(tend.error("Ex", "x"))):concat(second))
  lu.assertEquals(seen, { 1 })
  lu.assertEquals(e.cause.kind, "Ex")
  lu.assertEquals(made, 0)
end

-- FlowConcatSpec: "concat lazily": the second starts only when the first
-- completed (its elements' times follow the first's)
function TestStreamPekko:test_concat_starts_the_second_after_the_first()
  local r = P.timed(S.tick(1, "a"):take(2):concat(S.tick(1, "b"):take(1)))
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
  local seen, e = P.seen_then_failure(S.range(1, 3):flat_map(function(x)
    if x == 2 then return S.failed(tend.error("Inner", "2")) end
    return S.single(x)
  end))
  lu.assertEquals(seen, { 1 })
  lu.assertEquals(e.cause.kind, "Inner")
  seen, e = P.seen_then_failure(S.range(1, 3):flat_map(function(x)
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
  local e = P.failure(S.failed(tend.error("Ex", "x")):recover(only_timeouts), S.sink.seq())
  lu.assertEquals(e.cause.kind, "Ex")
  lu.assertEquals(S.failed(tend.error("Timeout", "t")):recover(only_timeouts):run_seq(), { "late" })
  lu.assertEquals(S.failed(tend.error("Ex", "x")):recover(function() return nil end):run_seq(), {})
end

-- LazySourceSpec: "never construct the source when there was no demand" /
-- the factory runs at the first pull, once
function TestStreamPekko:test_lazy_source_made_at_the_first_pull_only()
  local made = 0
  local lazy = S.lazy(function() made = made + 1 return S.range(1, 3) end)
  lu.assertEquals(lazy:take(0):run_seq(), {})
  lu.assertEquals(made, 0)
  lu.assertEquals(lazy:run_seq(), { 1, 2, 3 })
  lu.assertEquals(made, 1)
end

-- LazySourceSpec: "fail the materialized value when the factory throws"
function TestStreamPekko:test_lazy_source_factory_failure_fails_the_run()
  local e = P.failure(S.lazy(function() tend.raise("NoSource", "x") end), S.sink.seq())
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "NoSource")
  lu.assertEquals(e.stage, "lazy#1")
end

-- FlowFlatMapConcatSpec: "cancel the inner source when downstream cancels"
function TestStreamPekko:test_flat_map_take_cancels_an_endless_inner_source()
  local r = S.from({ "a", "b" }):flat_map(function(x) return S.tick(1, x) end):take(3):run_seq()
  lu.assertEquals(r, { "a", "a", "a" })
end

-- HeadSinkSpec: head of an endless tick: the first tick, then its timer is
-- cancelled (tearDown: no timer)
function TestStreamPekko:test_head_of_a_tick_cancels_it()
  local t0 = tend.now()
  lu.assertEquals(S.tick(2, "t"):run_head(), "t")
  lu.assertEquals(P.since(t0), 2)
end
