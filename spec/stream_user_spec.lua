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

-- Options and arguments the blueprint took silently (an unknown key, a
-- word misspelt, a nil element to be) are refused when it is made, naming
-- the option, what was expected and what was given.
function TestStreamUser:test_unchecked_options_are_refused()
  for _, case in ipairs({
    { function() S.queue({ size = 2, sise = 4 }) end,
      "tend.stream.queue: options: expected size or overflow, got \"sise\"" },
    { function() S.tcp({ host = "127.0.0.1", port = 1, bogus = 1 }) end,
      "tend.stream.tcp: options: expected host, port, framing, timeout, max_line or from, got \"bogus\"" },
    { function() S.lines({ cmd = { "true" }, bogus = 1 }) end,
      "tend.stream.lines: spec: tend.process: unknown option 'bogus'" },
    { function() S.lines({ cmd = { "true" } }) end,
      "tend.stream.lines: spec: tend.process: a real command cannot run under the virtual clock" },
    { function() S.range(1, 2):scan(nil, id) end, "tend.stream.scan: init: expected a value (nil is no element), got nil" },
    { function() S.range(1, 2):fold(nil, id) end, "tend.stream.fold: init: expected a value (nil is no element), got nil" },
    { function() S.range(1, 2):map_async(2, id, { retri = {} }) end,
      "tend.stream.map_async: options: expected retry, got \"retri\"" },
    { function() S.range(1, 2):map_async(2, id, { retry = { min_backof = 1 } }) end,
      "tend.stream.map_async: option 'retry': unknown option 'min_backof'" },
    { function() S.range(1, 2):map_async(2, id, { retry = { min_backoff = -1, max_backoff = 1 } }) end,
      "option 'min_backoff': expected a number of seconds >= 0, got -1" },
    { function() S.range(1, 2):map_async_unordered(2, id, { retry = { max_restarts = 1.5 } }) end,
      "tend.stream.map_async_unordered: option 'retry': option 'max_restarts': expected an integer >= 0, got 1.5" },
    { function() S.sink.tcp("conn") end, "tend.stream.sink.tcp: conn: expected a tend.tcp connection (a ref), got \"conn\"" },
    { function() S.range(1, 2):run_seq({ decider = "resumee" }) end,
      "tend.stream:run_with: option 'decider': expected a function (err) -> \"resume\" | \"restart\" | \"stop\", or one of those words, got \"resumee\"" },
    { function() S.range(1, 2):run_seq({ nmae = "x" }) end,
      "tend.stream:run_with: unknown option 'nmae' (expected name, timeout or decider)" },
    { function() S.range(1, 2):run_async(S.sink.seq()):await("x") end,
      "handle:await: timeout: expected a number of seconds > 0, got \"x\"" },
  }) do
    local msg = err_of(case[1])
    lu.assertStrContains(msg, case[2])
    lu.assertStrMatches(msg, ".-stream_user_spec%.lua:%d+: .*")
  end
  H.settle()
  -- the await above left its finished stream (it is released by an await)
  for _, p in ipairs(tend.ps()) do
    if p.path:match("^/user/stream%-") and p.depth == 1 then tend.stop(p.ref) end
  end
  H.settle()
end

-- A stream that ends leaves no dead letter behind (each run logged one at
-- info: the run task's down notice to its supervisor, already stopped).
function TestStreamUser:test_a_finished_stream_leaves_no_dead_letter()
  local before = tend.stats().dead_letters
  lu.assertEquals(S.range(1, 3):run_seq(), { 1, 2, 3 })
  lu.assertEquals(S.range(1, 3):map_async(2, id):async():run_fold(0, function(a, x) return a + x end), 6)
  pcall(function() return S.failed("no"):run_seq() end)
  local h = S.tick(1, 1):run_async(S.sink.ignore())
  h:cancel()
  pcall(h.await, h)
  H.settle()
  lu.assertEquals(tend.stats().dead_letters - before, 0)
end

-- handle:await(timeout) that times out leaves the stream running (Akka's
-- Await.result on the materialized future); a later await gets its value.
-- A run's { timeout = s } still cancels the stream.
function TestStreamUser:test_await_with_a_timeout_leaves_the_stream_running()
  local t0 = tend.now()
  local h = S.tick(1, "t"):take(3):run_async(S.sink.seq())
  local ok, e = pcall(h.await, h, 1.5)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "Timeout")
  lu.assertFalse(h:done())
  ok, e = pcall(h.await, h, 1)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "Timeout")
  lu.assertEquals(h:await(), { "t", "t", "t" })
  lu.assertEquals(tend.now() - t0, 3)
  lu.assertEquals(h:await(), { "t", "t", "t" }) -- the handle keeps it
  lu.assertTrue(h:done())
  ok, e = pcall(function() return S.tick(1, 1):run_seq({ timeout = 1.5 }) end)
  lu.assertEquals(e.kind, "Timeout")
  H.settle()
end

-- handle:shutdown() completes the stream now, with the sink's value so far
-- (Akka's KillSwitch.shutdown), wherever its run task waits: on an idle
-- queue, a slow tick, map_async's calls, a throttle, a restart's backoff
-- (it waited for the next element: for ever on an idle queue).
function TestStreamUser:test_shutdown_completes_at_once()
  local function shut(src, offer)
    local t0 = tend.now()
    local h = src:run_async(S.sink.seq())
    if offer then lu.assertEquals(h:offer(offer), "enqueued") end
    tend.sleep(1)
    h:shutdown()
    local v = h:await()
    lu.assertEquals(tend.now() - t0, 1)
    return v
  end
  lu.assertEquals(shut(S.queue({ size = 4 }), "q"), { "q" })
  lu.assertEquals(shut(S.queue({ size = 4 }):async(), "q"), { "q" })
  lu.assertEquals(shut(S.tick(100, "t")), {})
  lu.assertEquals(shut(S.tick(0.4, "t"):async()), { "t", "t" })
  lu.assertEquals(shut(S.range(1, 3):map_async(2, function(x) tend.sleep(100) return x end)), {})
  lu.assertEquals(shut(S.range(1, 10):throttle(1, 0.4)), { 1, 2, 3 })
  lu.assertEquals(shut(S.restart_source({ min_backoff = 50, max_backoff = 50 }, function()
    return S.single("r")
  end)), { "r" })
  lu.assertEquals(shut(S.tick(0.3, 1):scan(0, function(a, x) return a + x end):grouped_within(10, 100)), {})
  -- a head sink with nothing yet: NoElement, as at completion
  local h = S.tick(100, 1):run_async(S.sink.head())
  tend.sleep(1)
  h:shutdown()
  local ok, e = pcall(h.await, h)
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "NoElement")
end

-- A scan or fold whose function returns nil fails with NilElement through
-- its decider, as a map does (a scan emitted the nil and went on with it).
function TestStreamUser:test_a_scan_or_fold_returning_nil_is_a_nil_element()
  local function f(a, x) if x == 2 then return nil end return a + x end
  for _, s in ipairs({ S.range(1, 3):scan(0, f), S.range(1, 3):scan(0, f):async(), S.range(1, 3):fold(0, f) }) do
    local ok, e = pcall(s.run_seq, s)
    lu.assertFalse(ok)
    lu.assertEquals(e.cause.kind, "NilElement")
    lu.assertEquals(e.element, 2)
    lu.assertStrMatches(e.stage, "^%a+#2$")
  end
  lu.assertEquals(S.range(1, 3):scan(0, f):with_supervision("resume"):run_seq(), { 0, 1, 4 })
  lu.assertEquals(S.range(1, 3):fold(0, f):with_supervision("resume"):run_seq(), { 4 })
end

-- An offer of nil is refused at once (it waited for ever: no answer came).
function TestStreamUser:test_an_offer_of_nil_is_refused()
  local h = S.queue({ size = 2 }):run_async(S.sink.seq())
  local ok, e = pcall(function() local r = h:offer(nil) return r end)
  lu.assertFalse(ok)
  lu.assertStrMatches(e, ".-stream_user_spec%.lua:%d+: handle:offer: v: expected a value %(nil is no element%), got nil")
  lu.assertEquals(h:offer(1), "enqueued")
  h:complete()
  lu.assertEquals(h:await(), { 1 })
end

-- handle:abort(err) fails the stream at once with err (Akka's
-- KillSwitch.abort), and the sink learns of it as of any failure: an
-- actor sink's ref gets on_failure (it got nothing).
function TestStreamUser:test_abort_fails_the_stream_and_tells_the_sink()
  local got = {}
  local a = tend.spawn(function()
    return function(m) got[#got + 1] = type(m) == "table" and m.kind or m end
  end)
  local events = {}
  tend.trace(function(e) if e.ev:match("^stream_") then events[#events + 1] = e.ev .. " " .. tostring(e.detail) end end)
  local t0 = tend.now()
  local h = S.tick(1, "t"):run_async(S.sink.actor(a, { on_complete = "done", on_failure = function(e) return e end }))
  tend.sleep(2.5)
  h:abort(tend.error("Why", "enough"))
  local ok, e = pcall(h.await, h)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "Why")
  lu.assertEquals(tend.now() - t0, 2.5)
  H.settle()
  tend.trace(false)
  lu.assertEquals(got, { "t", "t", "StreamFailed" })
  lu.assertEquals(events, { "stream_start nil", "stream_fail abort" })
  tend.stop(a)
  H.settle()
end

-- A handle's queue methods on a stream with no queue, and a failure with
-- no error, are refused as offer's are (queue:fail() left the stream
-- running for ever, abort() failed it with "nil", complete() did nothing).
function TestStreamUser:test_handle_methods_refuse_what_cannot_work()
  local h = S.range(1, 3):run_async(S.sink.seq())
  for _, m in ipairs({ "offer", "complete", "fail" }) do
    local ok, e = pcall(function() h[m](h, 1) end)
    lu.assertFalse(ok, m)
    lu.assertStrMatches(e, ".-stream_user_spec%.lua:%d+: handle:" .. m .. ": the stream's source is no tend.stream.queue")
  end
  lu.assertEquals(h:await(), { 1, 2, 3 })
  local q = S.queue({ size = 2 }):run_async(S.sink.seq())
  local ok, e = pcall(function() q:fail() end)
  lu.assertFalse(ok)
  lu.assertStrContains(e, "handle:fail: err: expected an error (not nil), got nil")
  ok, e = pcall(function() q:abort() end)
  lu.assertFalse(ok)
  lu.assertStrContains(e, "handle:abort: err: expected an error (not nil), got nil")
  q:fail(tend.error("Gone", "g"))
  ok, e = pcall(q.await, q)
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "Gone")
end

-- A restart's stream_backoff event names the failure's own kind (it named
-- StreamFailed, the wrapper of every failure, whatever failed).
function TestStreamUser:test_a_backoff_event_names_the_cause()
  local seen = {}
  tend.trace(function(e)
    if e.ev == "stream_backoff" then seen[#seen + 1] = e.kind .. ": " .. e.message end
  end)
  local s = S.restart_source({ min_backoff = 1, max_backoff = 1, max_restarts = 1 }, function()
    return S.failed(tend.error("Down", "the feed is down"))
  end)
  pcall(s.run_head, s)
  H.settle()
  tend.trace(false)
  lu.assertEquals(seen, { "Down: the feed is down" })
end

-- A restart_* factory that returns the wrong thing fails the stream with
-- BadArg, naming the stage, at once: it is no failure to back off from (a
-- source's was restarted until the limit and the run ended empty, a flow
-- given a source ran it, others raised an index error inside tend).
function TestStreamUser:test_a_restart_factory_of_the_wrong_kind_is_refused()
  local o = { min_backoff = 1, max_backoff = 1, max_restarts = 3 }
  local t0 = tend.now()
  for _, case in ipairs({
    { function() return S.restart_source(o, function() return 5 end):run_seq() end,
      "restart_source#1: factory: expected a source, got 5" },
    { function() return S.range(1, 2):via(S.restart_flow(o, function() return S.range(1, 2) end)):run_seq() end,
      "restart_flow#2: factory: expected a flow (tend.stream.flow()...), got a source" },
    { function() return S.range(1, 2):via(S.restart_flow(o, function() return 5 end)):run_seq() end,
      "restart_flow#2: factory: expected a flow (tend.stream.flow()...), got 5" },
    { function() return S.range(1, 2):run_with(S.restart_sink(o, function() return 5 end)) end,
      "restart_sink#2: factory: expected a sink (tend.stream.sink.*), got 5" },
  }) do
    local ok, e = pcall(case[1])
    lu.assertFalse(ok, case[2])
    lu.assertEquals(e.kind, "StreamFailed")
    lu.assertEquals(e.cause.kind, "BadArg")
    lu.assertStrContains(e.cause.message, case[2])
  end
  lu.assertEquals(tend.now() - t0, 0)
end

-- S.tcp on the simulated network takes tend.tcp.connect's options, 'from'
-- (the host it connects from) and 'timeout' among them.
function TestStreamUser:test_tcp_source_on_the_simulated_network()
  local server = tend.tcp.listen({ host = "b", port = 7000, handler = function(ctx)
    ctx:write("hi") ctx:close()
    return function() end
  end })
  lu.assertEquals(S.tcp({ host = "b", port = 7000, from = "a" }):run_seq(), { "hi" })
  tend.chaos.partition("a", "b")
  local t0 = tend.now()
  local ok, e = pcall(function() return S.tcp({ host = "b", port = 7000, from = "a", timeout = 1 }):run_seq() end)
  lu.assertFalse(ok)
  lu.assertEquals(e.cause.kind, "ConnectError")
  lu.assertEquals(tend.now() - t0, 1)
  tend.chaos.heal()
  tend.stop(server)
  H.settle()
end

-- A stream cancelled through its handle leaves nothing behind, awaited or
-- not (its supervisor stayed, with no children, until the owner ended: an
-- actor cancelling its streams in post_stop at each restart piled them up);
-- an await after it still raises Cancelled.
function TestStreamUser:test_a_cancelled_stream_leaves_nothing_behind()
  local before = tend.stats().actors
  local h = S.tick(1, 1):run_async(S.sink.ignore(), { name = "gone" })
  tend.sleep(1.5)
  h:cancel()
  H.settle()
  lu.assertNil(tend.whereis("/user/gone"))
  lu.assertEquals(tend.stats().actors, before)
  local ok, e = pcall(h.await, h)
  lu.assertFalse(ok)
  lu.assertEquals(e.kind, "StreamFailed")
  lu.assertEquals(e.cause.kind, "Cancelled")
  lu.assertTrue(h:done())
  -- one that completed before the cancel keeps its value
  local d = S.range(1, 3):run_async(S.sink.seq())
  H.settle()
  d:cancel()
  lu.assertEquals(d:await(), { 1, 2, 3 })
end

-- An actor sink waiting for its ref's ack is stopped there by a shutdown
-- or an abort too (it waited for the ack, for ever from a ref that does not
-- answer).
function TestStreamUser:test_shutdown_ends_a_wait_for_an_ack()
  local got = {}
  local mute = tend.spawn(function()
    return function(m) got[#got + 1] = type(m) == "table" and m.kind or m end -- never replies
  end)
  for _, stop in ipairs({ "shutdown", "abort" }) do
    got = {}
    local t0 = tend.now()
    local h = S.range(1, 3):run_async(S.sink.actor(mute, { ack = true, on_complete = "done",
      on_failure = function(e) return e end }))
    tend.sleep(1)
    if stop == "shutdown" then h:shutdown() else h:abort(tend.error("Enough", "e")) end
    local ok, v = pcall(h.await, h)
    lu.assertEquals(ok, stop == "shutdown")
    if not ok then lu.assertEquals(v.cause.kind, "Enough") end
    lu.assertEquals(tend.now() - t0, 1)
    H.settle()
    lu.assertEquals(got, { 1, stop == "shutdown" and "done" or "StreamFailed" })
  end
  tend.stop(mute)
  H.settle()
end

-- The actor that runs a stream restarting cancels it, as its dying does
-- (design §5.6; Akka: a stream materialized in an actor's context stops
-- with its children at a restart): one stream lives after the restart,
-- the new incarnation's.
function TestStreamUser:test_an_owner_restart_cancels_its_stream()
  local w = tend.spawn(function()
    local h = S.tick(0.1, 1):run_async(S.sink.ignore())
    return function(m, ctx)
      if m == "crash" then error("x") end
      if m == "handle" then ctx:reply(h) end
    end
  end)
  tend.sleep(0.25)
  local first = tend.ask(w, "handle")
  tend.send(w, "crash")
  tend.sleep(0.25)
  local second = tend.ask(w, "handle")
  lu.assertNotEquals(first.sup, second.sup)
  lu.assertFalse(tend.alive(first.sup))
  lu.assertTrue(tend.alive(second.sup))
  tend.stop(w)
  tend.sleep(0.1)
  lu.assertFalse(tend.alive(second.sup)) -- and its death cancels the other
end
