-- A port of Apache Pekko's BackoffSupervisorSpec and
-- BackoffOnRestartSupervisorSpec (actor-tests, org.apache.pekko.pattern):
-- each test names the case it comes from and checks what it checks, with
-- tend.backoff under the virtual clock (so the delays are exact: Pekko's
-- "~200 millis" is 0.2 s here). GetCurrentChild, GetRestartCount and Reset
-- are tend.backoff.child, .restart_count and .reset.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestPekkoBackoff = {}

function TestPekkoBackoff:tearDown() H.assert_clean_and_no_mail() end

-- BackoffSupervisorSpec's Child: "boom" raises, anything else goes to the
-- probe; with manual, it resets the backoff after each such message.
local function child(p, manual)
  return function()
    return function(msg, ctx)
      if msg == "boom" then tend.raise("TestException", "boom") end
      p.ref:send(msg)
      if manual then ctx:reset_backoff() end
    end
  end
end

local function on_stop(p, max_retries, factory)
  local o = tend.backoff.on_stop(factory or child(p),
    { name = "c1", min_backoff = 0.1, max_backoff = 3, random_factor = 0.2 })
  if max_retries then o = o:with_max_retries(max_retries) end
  return o
end

local function on_failure(p, max_retries, factory)
  local o = tend.backoff.on_failure(factory or child(p),
    { name = "c1", min_backoff = 0.1, max_backoff = 3, random_factor = 0.2 })
  if max_retries then o = o:with_max_retries(max_retries) end
  return o
end

-- Waits until the supervisor has a child other than old; returns it.
local function next_child(sup, old)
  for _ = 1, 100 do
    local c = tend.backoff.child(sup)
    if c and c ~= old then return c end
    tend.sleep(0.05)
  end
  error("no new child")
end

-- "start child again when it stops when using `Backoff.onStop`"
function TestPekkoBackoff:test_start_child_again_when_it_stops_on_stop()
  local p = tk.probe()
  local sup = tend.spawn(on_stop(p))
  H.settle()
  local c1 = tend.backoff.child(sup)
  p:watch(c1)
  tend.poison(c1)
  p:expect_terminated(c1)
  lu.assertNotEquals(next_child(sup, c1), c1)
  H.stop_all(sup, p.ref)
end

-- "forward messages to the child"
function TestPekkoBackoff:test_forward_messages_to_the_child()
  local p = tk.probe()
  for _, o in ipairs { on_stop(p), on_failure(p) } do
    local sup = tend.spawn(o)
    sup:send("hello")
    p:expect_msg("hello")
    H.stop_all(sup)
  end
  H.stop_all(p.ref)
end

-- "support custom supervision strategy": on_stop with a stopping
-- strategy, on_failure with a restarting one: a new child after "boom".
function TestPekkoBackoff:test_support_custom_supervision_strategy()
  local p = tk.probe()
  local stopping = tend.one_for_one { decider = tend.decider { TestException = "stop" } }
  local restarting = tend.one_for_one { decider = tend.decider { TestException = "restart" } }
  for _, o in ipairs { on_stop(p):with_supervisor_strategy(stopping),
                       on_failure(p):with_supervisor_strategy(restarting) } do
    local sup = tend.spawn(o)
    H.settle()
    local c1 = tend.backoff.child(sup)
    p:watch(c1)
    c1:send("boom")
    p:expect_terminated(c1)
    lu.assertNotEquals(next_child(sup, c1), c1)
    H.stop_all(sup)
  end
  H.stop_all(p.ref)
end

-- "support default stopping strategy when using `Backoff.onStop`"
function TestPekkoBackoff:test_default_stopping_strategy_on_stop()
  local p = tk.probe()
  local sup = tend.spawn(on_stop(p):with_default_stopping_strategy())
  H.settle()
  local c1 = tend.backoff.child(sup)
  p:watch(c1)
  lu.assertEquals(tend.backoff.restart_count(sup), 0)
  c1:send("boom")
  p:expect_terminated(c1)
  next_child(sup, c1)
  lu.assertEquals(tend.backoff.restart_count(sup), 1)
  H.stop_all(sup, p.ref)
end

-- "support manual reset": the child resets the backoff on each message.
function TestPekkoBackoff:test_support_manual_reset()
  local p = tk.probe()
  local stopping = tend.one_for_one { decider = tend.decider { TestException = "stop" } }
  local restarting = tend.one_for_one { decider = tend.decider { TestException = "restart" } }
  for _, o in ipairs {
    on_stop(p, nil, child(p, true)):with_manual_reset():with_supervisor_strategy(stopping),
    on_failure(p, nil, child(p, true)):with_manual_reset():with_supervisor_strategy(restarting),
  } do
    local sup = tend.spawn(o)
    H.settle()
    local c1 = tend.backoff.child(sup)
    p:watch(c1)
    c1:send("boom")
    p:expect_terminated(c1)
    H.settle()
    lu.assertEquals(tend.backoff.restart_count(sup), 1)
    next_child(sup, c1)
    sup:send("hello")
    p:expect_msg("hello")
    sup:send("hello") -- the reset is handled by the supervisor
    p:expect_msg("hello")
    lu.assertEquals(tend.backoff.restart_count(sup), 0)
    H.stop_all(sup)
  end
  H.stop_all(p.ref)
end

-- "reply to sender if replyWhileStopped is specified", "use provided
-- actor while stopped and withHandlerWhileStopped is specified", "not
-- reply to sender if replyWhileStopped is NOT specified" (a dead letter).
function TestPekkoBackoff:test_while_stopped()
  local p = tk.probe()
  local handler = tend.spawn(function()
    return function(msg, ctx) if msg == "still there?" then ctx:reply("not here!") end end
  end)
  local function slow() -- 100 s before the next child
    return tend.backoff.on_failure(child(p), { name = "c1", min_backoff = 100,
      max_backoff = 300, random_factor = 0.2 }):with_max_retries(-1)
  end
  for _, case in ipairs {
    { slow():with_reply_while_stopped("child was stopped"), "boom", "child was stopped" },
    { slow():with_handler_while_stopped(handler), "still there?", "not here!" },
    { slow(), "boom", nil },
  } do
    local sup = tend.spawn(case[1])
    H.settle()
    local c1 = tend.backoff.child(sup)
    p:watch(c1)
    lu.assertEquals(tend.backoff.restart_count(sup), 0)
    c1:send("boom")
    p:expect_terminated(c1)
    H.settle()
    lu.assertEquals(tend.backoff.restart_count(sup), 1)
    local dead = tend.stats().dead_letters
    p:send_to(sup, case[2])
    if case[3] then
      p:expect_msg(case[3])
    else
      p:expect_no_msg(0.5)
      lu.assertEquals(tend.stats().dead_letters - dead, 1)
    end
    H.stop_all(sup)
  end
  H.stop_all(handler, p.ref)
end

-- "correctly calculate the delay" (RetrySupport.calculateDelay, random
-- factor 0): the delay of restart n. Pekko's row for Int.MaxValue
-- restarts is left out (tend.backoff.delays lists the delays from the
-- first); tend's durations stop at 1e9 s, so 10000 days (8.64e8 s) fits.
function TestPekkoBackoff:test_correctly_calculate_the_delay()
  local day, minute = 86400, 60
  for _, row in ipairs {
    { 0, 0, 0, 0 }, { 0, 5 * minute, 7 * minute, 5 * minute }, { 2, 5, 7, 7 },
    { 2, 5, 7 * day, 20 }, { 29, 5 * minute, 10 * minute, 10 * minute },
    { 29, 10000 * day, 10000 * day, 10000 * day },
  } do
    local spec = tend.backoff.on_failure(function() return function() end end,
      { min_backoff = row[2], max_backoff = row[3], random_factor = 0 })
    local ds = tend.backoff.delays(spec, row[1] + 1)
    lu.assertEquals(ds[row[1] + 1], row[4], "restart " .. row[1])
  end
end

-- "stop restarting the child after reaching maxNrOfRetries limit
-- (Backoff.onStop)" and "(Backoff.onFailure)"
function TestPekkoBackoff:test_stop_restarting_after_max_retries()
  for _, mode in ipairs { "on_stop", "on_failure" } do
    local p = tk.probe()
    local w = tk.probe()
    local sup = tend.spawn(mode == "on_stop" and on_stop(p, 2) or on_failure(p, 2))
    w:watch(sup)
    H.settle()
    lu.assertEquals(tend.backoff.restart_count(sup), 0)
    local c = tend.backoff.child(sup)
    for i = 1, 3 do
      p:watch(c)
      if mode == "on_stop" then tend.poison(c) else c:send("boom") end
      p:expect_terminated(c)
      if i < 3 then
        H.settle()
        lu.assertEquals(tend.backoff.restart_count(sup), i, mode)
        c = next_child(sup, c)
      end
    end
    w:expect_terminated(sup)
    H.stop_all(p.ref, w.ref)
  end
end

-- "stop restarting the child if final stop message received
-- (Backoff.onStop)" and "supervisor must not stop when final stop
-- message has not been received"
function TestPekkoBackoff:test_final_stop_message()
  local function is_stop(m) return m == "stop" end
  local p, w = tk.probe(), tk.probe()
  local sup = tend.spawn(on_stop(p, 100):with_final_stop_message(is_stop))
  H.settle()
  local c1 = tend.backoff.child(sup)
  p:watch(c1)
  w:watch(sup)
  sup:send("stop")
  p:expect_msg("stop") -- forwarded to the child
  tend.poison(c1)
  p:expect_terminated(c1)
  w:expect_terminated(sup)

  sup = tend.spawn(on_stop(p, 100):with_final_stop_message(is_stop))
  H.settle()
  c1 = tend.backoff.child(sup)
  p:watch(c1)
  w:watch(sup)
  tend.poison(c1)
  p:expect_terminated(c1)
  local dead = tend.stats().dead_letters
  sup:send("ping")
  w:expect_no_msg(0.02) -- the supervisor does not stop
  sup:send("stop")
  w:expect_terminated(sup)
  lu.assertEquals(tend.stats().dead_letters - dead, 2)
  H.stop_all(p.ref, w.ref)
end

-- BackoffOnRestartSupervisorSpec's TestActor: tells the probe "STARTED"
-- when built; "DIE" stops it, "THROW" raises NormalException,
-- "THROW_STOPPING_EXCEPTION" raises StoppingException, {"TO_PARENT", m}
-- sends m to its parent, anything else goes to the probe.
local function test_actor(p)
  return function(ctx)
    p.ref:send("STARTED")
    return function(msg, ctx)
      if msg == "DIE" then return tend.stopped
      elseif msg == "THROW" then tend.raise("NormalException", "normal exception")
      elseif msg == "THROW_STOPPING_EXCEPTION" then
        tend.raise("StoppingException", "stopping exception")
      elseif type(msg) == "table" and msg[1] == "TO_PARENT" then ctx.parent:send(msg[2])
      else p.ref:send(msg) end
    end
  end
end

local function restart_props(p, strategy)
  return tend.backoff.on_failure(test_actor(p), { name = "someChildName",
    min_backoff = 0.2, max_backoff = 10, random_factor = 0 }):with_max_retries(-1)
    :with_supervisor_strategy(strategy or tend.one_for_one { max_retries = 5, within = 30,
      decider = tend.decider { StoppingException = "stop", ["*"] = "restart" } })
end

-- BackoffOnRestartSupervisorSpec "terminate when child terminates" and
-- "stop on exceptions as dictated by the supervisor strategy"
function TestPekkoBackoff:test_on_restart_terminates_with_its_child()
  for _, msg in ipairs { "DIE", "THROW_STOPPING_EXCEPTION" } do
    local p = tk.probe()
    local sup = tend.spawn(restart_props(p))
    p:expect_msg("STARTED")
    p:watch(sup)
    sup:send(msg)
    p:expect_terminated(sup)
    H.stop_all(p.ref)
  end
end

-- BackoffOnRestartSupervisorSpec "restart the child with an exponential
-- back off": 0.2, 0.4, 0.8, 1.6 s; one child at the end.
function TestPekkoBackoff:test_on_restart_exponential_back_off()
  local p = tk.probe()
  local sup = tend.spawn(restart_props(p))
  p:expect_msg("STARTED")
  for _, d in ipairs { 0.2, 0.4, 0.8, 1.6 } do
    sup:send("THROW")
    local t0 = tend.now()
    p:expect_msg("STARTED", d + 0.25)
    lu.assertAlmostEquals(tend.now() - t0, d, 1e-6)
  end
  lu.assertEquals(#tend.children(sup), 1)
  sup:send("testmsg")
  p:expect_msg("testmsg")
  p:expect_no_msg(0.5)
  H.stop_all(sup, p.ref)
end

-- BackoffOnRestartSupervisorSpec "forward messages from the child to the
-- parent of the supervisor"
function TestPekkoBackoff:test_on_restart_forward_from_child_to_parent()
  local p = tk.probe()
  local parent = tend.spawn(function(ctx)
    ctx:spawn(restart_props(p))
    return function(msg, ctx) p.ref:tell(msg, ctx.sender) end
  end)
  p:expect_msg("STARTED")
  local c = tend.backoff.child(tend.children(parent)[1].ref)
  c:send({ "TO_PARENT", "TEST_MESSAGE" })
  p:expect_msg("TEST_MESSAGE")
  H.stop_all(parent, p.ref)
end

-- BackoffOnRestartSupervisorSpec "accept commands while child is
-- terminating": the child's post_stop takes 3 s; meanwhile it is still
-- the current child and the count is 0; then a new child comes.
function TestPekkoBackoff:test_on_restart_accept_commands_while_child_is_terminating()
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(function()
    return {
      receive = function(self, msg, ctx)
        if msg == "THROW" then ctx:reply("THROWN") tend.raise("NormalException", "normal")
        elseif msg == "PING" then ctx:reply("PONG") end
      end,
      post_stop = function(self, ctx) ctx:sleep(3) end,
    }
  end, { name = "someChildName", min_backoff = 1e-9, max_backoff = 1e-9, random_factor = 0 })
    :with_max_retries(-1):with_supervisor_strategy(tend.one_for_one { log = false,
      decider = tend.decider { StoppingException = "stop", ["*"] = "restart" } }))
  H.settle()
  local c = tend.backoff.child(sup)
  p:send_to(c, "PING")
  p:expect_msg("PONG")
  p:send_to(sup, "THROW")
  p:expect_msg("THROWN")
  p:send_to(c, "PING")
  p:expect_no_msg(0.1) -- in its post_stop
  -- Pekko still names the stopping child as the current one; tend names
  -- none from the moment it stops (it takes no more messages), though
  -- the old one is still alive in its post_stop
  lu.assertNil(tend.backoff.child(sup))
  lu.assertTrue(tend.alive(c))
  lu.assertEquals(tend.backoff.restart_count(sup), 0)
  local t0 = tend.now()
  lu.assertNotEquals(next_child(sup, c), c)
  lu.assertFalse(tend.alive(c))
  lu.assertTrue(tend.now() - t0 >= 2.8, "the new child came after the old one's post_stop")
  p:watch(sup)
  tend.stop(sup)
  p:expect_terminated(sup, 5) -- its child's post_stop takes 3 s again
  H.stop_all(p.ref)
end

-- BackoffOnRestartSupervisorSpec "respect maxNrOfRetries property of
-- OneForOneStrategy": the sixth failure within 30 s stops it.
function TestPekkoBackoff:test_on_restart_respect_max_nr_of_retries()
  local p = tk.probe()
  local sup = tend.spawn(restart_props(p))
  p:expect_msg("STARTED")
  p:watch(sup)
  for i = 1, 6 do
    sup:send("THROW")
    if i < 6 then p:expect_msg("STARTED", 4) end
  end
  p:expect_terminated(sup)
  H.stop_all(p.ref)
end

-- BackoffOnRestartSupervisorSpec "respect withinTimeRange property of
-- OneForOneStrategy": 3 per 1 s, backoff from 0.3 s: three quick
-- failures, a fourth after 1 s of running restarts again (the backoff
-- reset), three more stop it.
function TestPekkoBackoff:test_on_restart_respect_within_time_range()
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(test_actor(p), { name = "someChildName",
    min_backoff = 0.3, max_backoff = 10, random_factor = 0 }):with_max_retries(-1)
    :with_supervisor_strategy(tend.one_for_one { max_retries = 3, within = 1,
      decider = tend.decider { StoppingException = "stop", ["*"] = "restart" } }))
  p:expect_msg("STARTED")
  p:watch(sup)
  for _ = 1, 3 do
    sup:send("THROW")
    p:expect_msg("STARTED")
  end
  tend.sleep(1)
  for _ = 1, 3 do
    sup:send("THROW")
    p:expect_msg("STARTED")
  end
  sup:send("THROW")
  p:expect_terminated(sup)
  H.stop_all(p.ref)
end

-- BackoffOnRestartSupervisorSpec "keep restarting when failures happen
-- outside of withinTimeRange": 3 per 10 ms, backoff 0.1 s: every restart
-- is outside the last one's window, so it never stops.
function TestPekkoBackoff:test_on_restart_keep_restarting_outside_within_time_range()
  local p = tk.probe()
  local sup = tend.spawn(tend.backoff.on_failure(test_actor(p), { name = "child",
    min_backoff = 0.1, max_backoff = 0.8, random_factor = 0 })
    :with_supervisor_strategy(tend.one_for_one { max_retries = 3, within = 0.01 }),
    { name = "supervisor" })
  p:watch(sup)
  p:expect_msg("STARTED")
  for _ = 1, 3 do
    sup:send("THROW")
    p:expect_msg("STARTED")
  end
  sup:send("THROW")
  p:expect_msg("STARTED", 1)
  sup:send("PING")
  p:expect_msg("PING")
  lu.assertTrue(tend.alive(sup))
  H.stop_all(sup, p.ref)
end
