-- tend.stream under the virtual clock: values, orders, counts and times of
-- the operators; demand (no stage runs ahead of its buffer); stream
-- supervision, restarts with backoff and per-element retry; the ends
-- (completion, cancellation, a dying owner) leaving nothing behind.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local S = tend.stream

TestStream = {}

function TestStream:tearDown()
  tend.trace(false)
  H.assert_clean()
end

local function add(a, b) return a + b end

-- The events of stream kind seen while fn runs, as "ev detail".
local function stream_events(fn)
  local seen = {}
  tend.trace(function(e)
    if e.ev:match("^stream_") then seen[#seen + 1] = e.ev .. " " .. e.path .. (e.detail and (" " .. e.detail) or "") end
  end)
  local ok, err = pcall(fn)
  H.settle() -- listeners are told after the turn
  tend.trace(false)
  if not ok then error(err, 0) end
  return seen
end

function TestStream:test_fused_map_filter_fold()
  local sq = S.range(1, 10):map(function(x) return x * x end):filter(function(x) return x % 2 == 0 end)
  lu.assertEquals(sq:run_fold(0, add), 220)
  lu.assertEquals(sq:run_fold(0, add), 220) -- a blueprint runs again
  lu.assertEquals(sq:run_seq(), { 4, 16, 36, 64, 100 })
end

function TestStream:test_blueprints_are_immutable()
  local base = S.from({ 1, 2, 3 })
  local doubled = base:map(function(x) return 2 * x end)
  lu.assertEquals(base:run_seq(), { 1, 2, 3 })
  lu.assertEquals(doubled:run_seq(), { 2, 4, 6 })
end

function TestStream:test_sources()
  lu.assertEquals(S.range(10, 1, -3):run_seq(), { 10, 7, 4, 1 })
  lu.assertEquals(S.unfold(1, function(s) if s < 20 then return s * 2, s end end):run_seq(), { 1, 2, 4, 8, 16 })
  lu.assertEquals(S.single("x"):run_seq(), { "x" })
  lu.assertEquals(S.empty():run_seq(), {})
  local ok, e = pcall(S.failed(tend.error("Boom", "b")).run_seq, S.failed(tend.error("Boom", "b")))
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "Boom")
  lu.assertEquals(e.stage, "failed#1")
  lu.assertEquals(S.lazy(function() return S.range(1, 3) end):run_last(), 3)
end

function TestStream:test_flow_operators()
  local r = S.range(1, 10)
  lu.assertEquals(r:drop(7):run_seq(), { 8, 9, 10 })
  lu.assertEquals(r:take_while(function(x) return x < 4 end):run_seq(), { 1, 2, 3 })
  lu.assertEquals(r:take(4):scan(0, add):run_seq(), { 0, 1, 3, 6, 10 })
  lu.assertEquals(r:take(5):grouped(2):run_seq(), { { 1, 2 }, { 3, 4 }, { 5 } })
  lu.assertEquals(S.from({ 1, 2 }):concat(S.from({ 3 })):run_seq(), { 1, 2, 3 })
  lu.assertEquals(S.from({ 1, 2 }):flat_map(function(x) return S.from({ x, x * 10 }) end):run_seq(), { 1, 10, 2, 20 })
  lu.assertEquals(S.from({ 1, 2 }):zip(S.from({ "a", "b", "c" })):run_seq(), { { 1, "a" }, { 2, "b" } })
  local merged = S.range(1, 5):merge(S.range(6, 10)):run_seq()
  table.sort(merged)
  lu.assertEquals(merged, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
  lu.assertEquals(S.range(1, 5):map(function(x) if x == 3 then error("three") end return x end)
    :recover(function(e) return "recovered" end):run_seq(), { 1, 2, "recovered" })
  lu.assertEquals(S.from({ 3, 1, 2 }):run_with(S.sink.reduce(math.max)), 3)
  lu.assertEquals(S.from({ 3, 1, 2 }):run_head(), 3)
  local seen = {}
  lu.assertNil(S.from({ 1, 2 }):run_foreach(function(x) seen[#seen + 1] = x end))
  lu.assertEquals(seen, { 1, 2 })
  lu.assertNil(S.range(1, 3):run_ignore())
end

function TestStream:test_via_and_to()
  local inc = S.flow():map(function(x) return x + 1 end)
  lu.assertEquals(S.range(1, 3):via(inc):via(inc):run_seq(), { 3, 4, 5 })
  lu.assertEquals(S.range(1, 3):run_with(inc:to(S.sink.fold(0, add))), 9)
end

function TestStream:test_tick_and_throttle_times()
  local t0 = tend.now()
  local times = S.tick(0.5, "t"):take(3):map(function() return tend.now() - t0 end):run_seq()
  lu.assertEquals(H.gaps({ 0, table.unpack(times) }), { 0.5, 0.5, 0.5 })
  t0 = tend.now()
  times = S.range(1, 5):throttle(2, 1, 1):map(function() return tend.now() - t0 end):run_seq()
  lu.assertEquals(H.gaps({ 0, table.unpack(times) }), { 0, 0.5, 0.5, 0.5, 0.5 })
end

function TestStream:test_grouped_within_cuts_by_count_and_time()
  local t0 = tend.now()
  local groups = S.tick(0.1, 1):scan(0, add):drop(1):grouped_within(3, 0.25):take(3)
    :map(function(g) return { g, tend.now() - t0 } end):run_seq()
  lu.assertEquals(groups[1][1], { 1, 2, 3 })
  lu.assertEquals(groups[2][1], { 4, 5, 6 })
  lu.assertEquals(groups[3][1], { 7, 8, 9 })
  local slow = S.tick(0.2, "x"):take(4):grouped_within(10, 0.5):run_seq()
  lu.assertEquals(#slow[1], 3) -- 0.2, 0.4, 0.6 arrive before 0.2 + 0.5
  lu.assertEquals(#slow[2], 1)
end

function TestStream:test_map_async_keeps_order_and_bounds_parallelism()
  local running, most = 0, 0
  local t0 = tend.now()
  local r = S.range(1, 10):map_async(4, function(x)
    running = running + 1
    most = math.max(most, running)
    tend.sleep((11 - x) * 0.1) -- later elements finish first
    running = running - 1
    return x * 10
  end):run_seq()
  lu.assertEquals(r, { 10, 20, 30, 40, 50, 60, 70, 80, 90, 100 })
  lu.assertEquals(most, 4)
  lu.assertTrue(tend.now() - t0 < 3)
  local u = S.from({ 3, 1, 2 }):map_async_unordered(3, function(x) tend.sleep(x) return x end):run_seq()
  lu.assertEquals(u, { 1, 2, 3 })
end

function TestStream:test_map_async_asks_actors()
  local echo = tend.spawn(function() return function(m, ctx) ctx:reply(m + 1) end end)
  lu.assertEquals(S.range(1, 5):map_async(2, function(x) return tend.ask(echo, x) end):run_seq(), { 2, 3, 4, 5, 6 })
  tend.stop(echo)
end

function TestStream:test_a_failure_names_cause_element_and_stage()
  local s = S.range(1, 5):map_async(2, function(x)
    if x == 3 then tend.raise("Bad", "three") end
    return x
  end)
  local ok, e = pcall(s.run_seq, s)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "Bad")
  lu.assertEquals(e.element, 3)
  lu.assertEquals(e.stage, "map_async#2")
end

function TestStream:test_supervision_resume_restart_stop()
  local bad = function(x) if x % 3 == 0 then error("bad " .. x) end return x end
  lu.assertEquals(S.range(1, 7):map(bad):with_supervision("resume"):run_seq(), { 1, 2, 4, 5, 7 })
  local events = stream_events(function()
    S.range(1, 4):map(bad):with_supervision(function() return "resume" end):run_seq()
  end)
  lu.assertEquals(#events, 3) -- start, one drop, complete
  lu.assertStrContains(events[2], "stream_drop")
  lu.assertStrContains(events[2], "map#2 resume")
  -- restart: the scan starts again from its initial value, emitted again
  -- (Pekko's FlowScanSpec "restart properly")
  local sums = S.from({ 1, 2, 0, 3, 4 }):scan(0, function(a, x)
    if x == 0 then error("zero") end
    return a + x
  end):with_supervision("restart"):run_seq()
  lu.assertEquals(sums, { 0, 1, 3, 0, 3, 7 })
  local fold = S.from({ 1, 2, 0, 3 }):run_with(S.sink.fold(0, function(a, x)
    if x == 0 then error("zero") end
    return a + x
  end), { decider = "restart" })
  lu.assertEquals(fold, 3)
  local ok, e = pcall(function() return S.range(1, 7):map(bad):run_seq() end)
  lu.assertFalse(ok)
  lu.assertEquals(e.element, 3)
  lu.assertEquals(e.stage, "map#2")
end

function TestStream:test_restart_source_backs_off_then_completes()
  local made, times = 0, {}
  local s = S.restart_source({ min_backoff = 1, max_backoff = 4, random_factor = 0, max_restarts = 3 }, function()
    made = made + 1
    times[#times + 1] = tend.now()
    return S.failed(tend.error("Down", "503"))
  end)
  local events = stream_events(function()
    local ok, e = pcall(s.run_head, s)
    lu.assertFalse(ok)
    lu.assertEquals(e.kind, "StreamFailed")
    lu.assertEquals(e.cause.kind, "NoElement")
  end)
  lu.assertEquals(made, 4)
  lu.assertEquals(H.gaps(times), { 1, 2, 4 })
  local kinds = {}
  for _, ev in ipairs(events) do kinds[#kinds + 1] = ev:match("^(%S+)") end
  lu.assertEquals(kinds, { "stream_start", "stream_backoff", "stream_restart", "stream_backoff", "stream_restart",
    "stream_backoff", "stream_restart", "stream_fail" })
end

function TestStream:test_restart_source_on_completion_unless_failures_only()
  local n = 0
  local all = S.restart_source({ min_backoff = 0.1, max_backoff = 0.1, max_restarts = 2 }, function()
    n = n + 1
    return S.single(n)
  end):run_seq()
  lu.assertEquals(all, { 1, 2, 3 })
  n = 0
  local once = S.restart_source({ min_backoff = 0.1, max_backoff = 0.1, max_restarts = 2, on_failures_only = true },
    function() n = n + 1 return S.single(n) end):run_seq()
  lu.assertEquals(once, { 1 })
end

function TestStream:test_per_request_restart_inside_map_async()
  local calls = {}
  local function get(id) -- fails the first two calls of each id
    calls[id] = (calls[id] or 0) + 1
    if calls[id] <= 2 then tend.raise("HttpError", "500") end
    return id * id
  end
  local sum = S.range(1, 10):map_async(4, function(id)
    return S.restart_source({ min_backoff = 0.2, max_backoff = 1, random_factor = 0, max_restarts = 10 },
      function() return S.lazy(function() return S.single(get(id)) end) end):run_head()
  end):run_fold(0, add)
  lu.assertEquals(sum, 385)
  for id = 1, 10 do lu.assertEquals(calls[id], 3) end
end

function TestStream:test_map_async_retry_gives_retries_exhausted()
  local attempts = 0
  local s = S.range(1, 4):map_async(2, function(x)
    if x == 3 then attempts = attempts + 1 tend.raise("HttpError", "500") end
    return x
  end, { retry = { min_backoff = 0.1, max_backoff = 0.1, max_restarts = 2 } })
  local ok, e = pcall(s.run_seq, s)
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "RetriesExhausted")
  lu.assertEquals(e.cause.attempts, 3)
  lu.assertEquals(e.cause.last.kind, "HttpError")
  lu.assertEquals(attempts, 3)
  lu.assertEquals(s:with_supervision("resume"):run_seq(), { 1, 2, 4 })
end

function TestStream:test_demand_bounds_an_async_boundary()
  local made = 0
  local src = S.unfold(1, function(s) made = made + 1 return s + 1, s end)
  local h = src:async():run_async(S.sink.foreach(function() tend.sleep(1) end))
  tend.sleep(10.5)
  -- 11 taken by the sink; the producer at most a buffer (16) ahead
  lu.assertTrue(made >= 11 and made <= 11 + 16 + 1, "made " .. made)
  h:cancel()
  lu.assertErrorMsgContains("cancelled", function() h:await() end)
end

function TestStream:test_buffer_drops_when_full()
  local got = S.range(1, 100):buffer(4, "drop_new"):run_with(S.sink.fold(0, function(a) tend.sleep(1) return a + 1 end))
  lu.assertTrue(got < 100)
  local e = select(2, pcall(function()
    return S.range(1, 100):buffer(2, "fail"):run_foreach(function() tend.sleep(1) end)
  end))
  lu.assertEquals(e.cause.kind, "BufferOverflow")
end

function TestStream:test_take_after_an_infinite_source_stops_it()
  local events = stream_events(function()
    lu.assertEquals(S.tick(1, 1):take(3):run_fold(0, add), 3)
  end)
  lu.assertEquals(#events, 2)
  lu.assertStrContains(events[1], "stream_start /user/stream-")
  lu.assertStrContains(events[2], "stream_complete")
  H.settle()
  lu.assertEquals(tend.stats().timers, 0)
end

function TestStream:test_timeout_cancels_the_stream()
  local ok, e = pcall(function() return S.tick(1, 1):run_seq({ timeout = 2.5 }) end)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "Timeout")
end

function TestStream:test_a_dying_owner_cancels_its_stream()
  local owner = tend.spawn(function()
    return function()
      S.tick(0.1, 1):run_with(S.sink.ignore(), { name = "owned" })
    end
  end)
  owner:send("go")
  tend.sleep(0.35)
  lu.assertNotNil(tend.whereis("/user/owned"))
  local events = stream_events(function()
    tend.stop(owner)
    tend.sleep(0.1)
  end)
  lu.assertNil(tend.whereis("/user/owned"))
  lu.assertEquals(events, { "stream_cancel /user/owned owner" })
end

function TestStream:test_queue_offers_and_back_pressure()
  local h = S.queue({ size = 2 }):map(function(x) tend.sleep(1) return x end):run_async(S.sink.seq())
  local t0 = tend.now()
  for i = 1, 6 do lu.assertEquals(h:offer(i), "enqueued") end
  lu.assertTrue(tend.now() - t0 >= 2) -- the offers waited for room
  h:complete()
  lu.assertEquals(h:await(), { 1, 2, 3, 4, 5, 6 })
  lu.assertEquals(h:offer(7), "closed")
  local d = S.queue({ size = 1, overflow = "drop_new" }):map(function(x) tend.sleep(1) return x end)
    :run_async(S.sink.seq())
  local words = {}
  for i = 1, 4 do words[i] = d:offer(i) end
  lu.assertEquals(words[4], "dropped")
  d:complete()
  lu.assertTrue(#d:await() < 4)
end

function TestStream:test_actor_sink_with_ack()
  local got = {}
  local slow = tend.spawn(function()
    return function(m, ctx)
      got[#got + 1] = { m, tend.now() }
      if m ~= "done" then tend.sleep(1) ctx:reply("ack") end
    end
  end)
  local t0 = tend.now()
  S.range(1, 3):run_with(S.sink.actor(slow, { ack = true, on_complete = "done" }))
  lu.assertEquals(tend.now() - t0, 3)
  H.settle()
  lu.assertEquals(#got, 4)
  lu.assertEquals(got[4][1], "done")
  tend.stop(slow)
end

function TestStream:test_named_stream_in_the_tree()
  local h = S.tick(1, 1):async():map_async(1, function(x) tend.sleep(5) return x end)
    :run_async(S.sink.ignore(), { name = "ingest" })
  tend.sleep(1.5)
  local tree = tend.tree()
  lu.assertStrContains(tree, "ingest")
  lu.assertStrContains(tree, "run")
  lu.assertStrContains(tree, "async#2-") -- the boundary's producer
  lu.assertNotStrContains(tree, "map_async") -- its calls are fibers of run
  h:cancel()
  lu.assertErrorMsgContains("cancelled", function() h:await() end)
end

function TestStream:test_shutdown_completes_with_the_value_so_far()
  local h = S.tick(1, 1):run_async(S.sink.fold(0, add))
  local t0 = tend.now()
  tend.sleep(3.5)
  h:shutdown()
  lu.assertEquals(h:await(), 3) -- at once: the ticks of 1, 2 and 3 s
  lu.assertEquals(tend.now() - t0, 3.5)
  lu.assertTrue(h:done())
end

function TestStream:test_idle_timeout()
  local s = S.tick(2, 1):idle_timeout(1)
  local ok, e = pcall(s.run_seq, s)
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "StreamIdleTimeout")
  lu.assertEquals(e.stage, "idle_timeout#2")
end

function TestStream:test_bad_input_names_the_option()
  lu.assertErrorMsgContains("tend.stream.range: step: expected a number other than 0, got 0",
    function() S.range(1, 2, 0) end)
  lu.assertErrorMsgContains("tend.stream.take: n: expected an integer >= 0, got -1",
    function() S.range(1, 2):take(-1) end)
  lu.assertErrorMsgContains("tend.stream.queue: option 'overflow'",
    function() S.queue({ size = 1, overflow = "drop" }) end)
  lu.assertErrorMsgContains("tend.stream.map_async: n: expected an integer >= 1",
    function() S.range(1, 2):map_async(0, print) end)
  lu.assertErrorMsgContains("unknown option 'nmae'", function() S.range(1, 2):run_seq({ nmae = "x" }) end)
  lu.assertErrorMsgContains("tend.stream.restart_source: option 'max_restarts'",
    function() S.restart_source({ min_backoff = 1, max_backoff = 2, max_restarts = -1 }, S.empty) end)
end

function TestStream:test_a_crashed_stage_task_fails_the_stream()
  local t0 = tend.now()
  local h = S.range(1, 3):map_async(1, function(x) tend.sleep(1) return x end)
    :run_async(S.sink.seq(), { name = "crashy" })
  tend.sleep(0.5)
  local run
  for _, p in ipairs(tend.ps()) do if p.path == "/user/crashy/run" then run = p.ref end end
  tend.chaos.crash(run)
  local ok, e = pcall(h.await, h)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "StageFailed")
  lu.assertStrContains(e.cause.message, "run task ended")
  lu.assertEquals(tend.now() - t0, 0.5) -- at once, not after the sleeping call
end
