-- ask fails at once, as gen_server:call does: NoActor when the target is
-- dead at the time of the ask, AskFailed (with .cause) when it dies,
-- fails, stops or restarts before replying; asks that merely get no reply
-- still time out.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestAskFail = {}

function TestAskFail:tearDown() H.assert_clean() end

-- An actor that answers "ping", raises on {fail = kind}, stops on "stop",
-- naps on {nap = s} (then answers), and keeps the sender of "hold" to
-- answer it on "release".
local function server(ctx)
  local held
  return function(msg, ctx)
    if msg == "ping" then ctx:reply("pong")
    elseif msg == "stop" then return tend.stopped
    elseif msg == "hold" then held = ctx.sender
    elseif msg == "release" then held:send("released")
    elseif type(msg) == "table" and msg.fail then tend.raise(msg.fail, "boom")
    elseif type(msg) == "table" and msg.nap then ctx:sleep(msg.nap) ctx:reply("napped")
    end
  end
end

local function ask_error(ref, msg, timeout)
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, ref, msg, timeout)
  lu.assertFalse(ok)
  return err, tend.now() - t0
end

function TestAskFail:test_asking_a_dead_actor_raises_NoActor_at_once()
  local s = tend.spawn(server, { name = "gone" })
  H.stop_all(s)
  local err, took = ask_error(s, "ping", 5)
  lu.assertEquals(err.kind, "NoActor")
  lu.assertEquals(err.message, "no actor at Ref(/user/gone) (it is dead)")
  lu.assertEquals(took, 0)
  lu.assertEquals(tend.stats().timers, 0)
end

function TestAskFail:test_asking_a_guardian_raises_NoActor()
  local user = tend.ask(tend.spawn(function() return function(m, ctx) ctx:reply(ctx.parent) ctx:stop() end end), "?", 1)
  local err = ask_error(user, "ping", 5)
  lu.assertEquals(err.kind, "NoActor")
  lu.assertStrContains(err.message, "a guardian takes no messages")
  H.settle()
end

function TestAskFail:test_ctx_ask_of_a_dead_actor_raises_NoActor_inside_an_actor()
  local s = tend.spawn(server)
  H.stop_all(s)
  local asker = tend.spawn(function()
    return function(msg, ctx)
      local ok, err = pcall(ctx.ask, ctx, s, "ping", 5)
      ctx:reply({ ok, err.kind, tend.now() })
    end
  end)
  local t0 = tend.now()
  lu.assertEquals(tend.ask(asker, "go", 1), { false, "NoActor", t0 })
  H.stop_all(asker)
end

function TestAskFail:test_a_target_restarted_by_the_request_fails_the_ask_with_its_error()
  local s = tend.spawn(server, { name = "s" })
  local err, took = ask_error(s, { fail = "DiskFull" }, 5)
  lu.assertEquals(took, 0)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertStrMatches(err.message, "/user/s restarted before replying %(.*DiskFull: boom%)")
  lu.assertEquals(err.cause.kind, "DiskFull")
  lu.assertEquals(err.cause.message, "boom")
  lu.assertEquals(tend.ask(s, "ping", 1), "pong") -- the new instance answers
  lu.assertEquals(tend.stats().timers, 0)       -- the 5 s timer went too
  H.stop_all(s)
end

function TestAskFail:test_a_target_stopped_by_its_supervisor_fails_the_ask_with_the_error()
  local sup = tend.spawn(function(ctx)
    local c = ctx:spawn(server, { name = "c" })
    return function(m, ctx) ctx:reply(c) end
  end, { name = "sup", children = tend.stopping })
  local c = tend.ask(sup, "child?", 1)
  local err, took = ask_error(c, { fail = "Fatal" }, 5)
  lu.assertEquals(took, 0)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertStrMatches(err.message, "/user/sup/c stopped before replying %(.*Fatal: boom%)")
  lu.assertEquals(err.cause.kind, "Fatal")
  lu.assertFalse(tend.alive(c))
  H.stop_all(sup)
end

function TestAskFail:test_a_target_that_stops_itself_fails_the_ask_with_normal()
  local s = tend.spawn(server, { name = "s" })
  local err, took = ask_error(s, "stop", 5)
  lu.assertEquals(took, 0)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(err.cause, "normal")
  lu.assertEquals(err.message, "/user/s stopped before replying (normal)")
end

-- A request still in the mailbox when its target is stopped fails as
-- soon as the target is dead (Erlang: the monitor fires).
function TestAskFail:test_a_request_queued_behind_a_long_message_fails_when_the_target_is_stopped()
  local s = tend.spawn(server, { name = "s" })
  s:send({ nap = 10 })
  local stopper = tend.spawn(function()
    return function(msg, ctx) ctx:sleep(1) tend.stop(s) end
  end)
  stopper:send("go")
  local err, took = ask_error(s, "ping", 5)
  lu.assertEquals(took, 1)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(err.cause, "normal")
  H.stop_all(stopper)
end

function TestAskFail:test_killing_the_target_fails_the_ask_with_Killed()
  local s = tend.spawn(server, { name = "s" })
  s:send({ nap = 10 })
  tend.after(2, function() tend.chaos.kill(s) end) -- now, mid-message
  local err, took = ask_error(s, "ping", 5)
  lu.assertEquals(took, 2)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(err.cause.kind, "Killed")
end

-- A request the target took and kept without answering is lost in a
-- restart (its new instance knows nothing of it): the ask fails. A
-- request still queued then is answered by the new instance.
function TestAskFail:test_a_restart_fails_the_requests_taken_and_keeps_the_queued_ones()
  local s = tend.spawn(server, { name = "s" })
  local results = {}
  local function asker(msg)
    return tend.spawn(function()
      return function(m, ctx)
        local ok, r = pcall(ctx.ask, ctx, s, msg, 5)
        results[msg] = ok and r or r.kind .. " " .. tostring(r.cause.kind)
      end
    end)
  end
  local a1 = asker("hold")
  a1:send("go")
  H.settle()
  s:send({ nap = 1 })      -- busy when the next request arrives
  local a2 = asker("ping")
  a2:send("go")
  H.settle()
  tend.chaos.crash(s, "Crash") -- it fails while napping: restart
  tend.sleep(0.5)
  lu.assertEquals(results, { hold = "AskFailed Crash", ping = "pong" })
  H.stop_all(s, a1, a2)
end

-- A stashed request is taken (a restart fails it); unstashed, it is
-- queued again (a restart keeps it for the new instance).
function TestAskFail:test_a_stashed_request_is_taken_and_an_unstashed_one_queued_again()
  local open = false -- outlives restarts
  local s = tend.spawn(function()
    return function(m, ctx)
      if m == "open" then
        open = true
        ctx:unstash_all()
        ctx:sleep(1)
      elseif not open then ctx:stash()
      else ctx:reply("re " .. m) end
    end
  end, { name = "g", stash = 10 })
  local results = {}
  local function asker(msg)
    local a = tend.spawn(function()
      return function(m, ctx)
        local ok, r = pcall(ctx.ask, ctx, s, msg, 5)
        results[msg] = ok and r or r.kind .. " " .. tostring(r.cause.kind)
      end
    end)
    a:send("go")
    return a
  end
  local a1 = asker("a")
  H.settle()
  tend.chaos.crash(s, "Crash")
  H.settle()
  lu.assertEquals(results, { a = "AskFailed Crash" })
  local a2 = asker("b")
  H.settle()
  s:send("open") -- b goes back in front; s sleeps 1 s in "open"
  tend.after(0.5, function() tend.chaos.crash(s, "Crash") end)
  tend.sleep(1)
  lu.assertEquals(results, { a = "AskFailed Crash", b = "re b" })
  H.stop_all(s, a1, a2)
end

function TestAskFail:test_a_kept_request_answered_later_still_succeeds()
  local s = tend.spawn(server)
  tend.after(3, function() s:send("release") end)
  local t0 = tend.now()
  lu.assertEquals(tend.ask(s, "hold", 5), "released")
  lu.assertEquals(tend.now() - t0, 3)
  H.stop_all(s)
end

-- A parent's restart stops its children ("shutdown"): an ask to a child
-- fails with that reason.
function TestAskFail:test_a_child_stopped_by_its_parents_restart_fails_with_shutdown()
  local sup = tend.spawn(function(ctx)
    local c = ctx:spawn(server, { name = "c" })
    return function(m, ctx)
      if m == "crash" then error("parent down") end
      ctx:reply(c)
    end
  end, { name = "sup" })
  local c = tend.ask(sup, "child?", 1)
  c:send({ nap = 10 })
  tend.after(1, function() sup:send("crash") end)
  local err, took = ask_error(c, "ping", 5)
  lu.assertEquals(took, 1)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertEquals(err.cause, "shutdown")
  H.stop_all(sup)
end

-- What did not change: a target that lives and does not answer makes the
-- asker wait the whole timeout.
function TestAskFail:test_a_live_target_that_does_not_answer_still_times_out()
  local s = tend.spawn(server)
  local err, took = ask_error(s, "nothing", 2)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertEquals(took, 2)
  -- and one that resumes after failing on the request drops it (Akka):
  local sup = tend.spawn(function(ctx)
    local c = ctx:spawn(server, { name = "c" })
    return function(m, ctx) ctx:reply(c) end
  end, { children = tend.one_for_one { decider = function() return "resume" end } })
  local c = tend.ask(sup, "?", 1)
  err, took = ask_error(c, { fail = "Oops" }, 2)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertEquals(took, 2)
  H.stop_all(s, sup)
end

function TestAskFail:test_an_asker_that_stops_waiting_leaves_nothing_held()
  local s = tend.spawn(server)
  local asker = tend.spawn(function()
    return function(m, ctx) ctx:ask(s, "hold", 100) end
  end)
  asker:send("go")
  H.settle()
  H.stop_all(asker)
  H.stop_all(s) -- its held list is empty: nothing to wake, nothing to crash
  lu.assertEquals(tend.stats().timers, 0)
end

-- ------------------------------------------------------------ routers

-- A request sent on by a router (a pool, a backoff supervisor: the sender
-- kept) is held by the actor it went to: that actor's failure fails the
-- ask at once, as an ask to the actor itself does.
function TestAskFail:test_an_ask_through_a_pool_fails_at_once_when_its_member_fails_on_it()
  local p = tend.pool{ size = 2, factory = server, name = "jobs" }
  local err, took = ask_error(p, { fail = "DiskFull" }, 5)
  lu.assertEquals(took, 0)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertStrMatches(err.message, "/user/jobs/1 restarted before replying %(.*DiskFull: boom%)")
  lu.assertEquals(err.cause.kind, "DiskFull")
  lu.assertEquals(err.cause.message, "boom")
  lu.assertEquals(tend.ask(p, "ping", 1), "pong") -- member 2; the pool lives on
  lu.assertEquals(tend.children(p)[1].restarts, 1)
  lu.assertEquals(tend.stats().timers, 0)
  H.stop_all(p)
end

function TestAskFail:test_an_ask_through_a_backoff_supervisor_fails_at_once_when_its_child_fails()
  local b = tend.spawn(tend.backoff.on_failure(server,
    { min_backoff = 1, max_backoff = 2, random_factor = 0 }):with_stash(10), { name = "b" })
  local err, took = ask_error(b, { fail = "Fatal" }, 5)
  lu.assertEquals(took, 0)
  lu.assertEquals(err.kind, "AskFailed")
  lu.assertStrMatches(err.message, "/user/b/child stopped before replying %(.*Fatal: boom%)")
  lu.assertEquals(err.cause.kind, "Fatal")
  -- while the child backs off, a request stashed by the supervisor goes to
  -- the next child, which holds it: it answers, or its failure fails it
  local t0 = tend.now()
  lu.assertEquals(tend.ask(b, "ping", 5), "pong")
  lu.assertEquals(tend.now() - t0, 1)
  err, took = ask_error(b, { fail = "Again" }, 5)
  lu.assertEquals({ took, err.kind, err.cause.kind }, { 0, "AskFailed", "Again" })
  err, took = ask_error(b, { fail = "Stashed" }, 10) -- stashed for 2 s
  lu.assertEquals({ took, err.kind, err.cause.kind }, { 2, "AskFailed", "Stashed" })
  H.stop_all(b)
end

-- A request the member has not taken yet when it restarts is answered by
-- its new instance (as for an ask to the member itself).
function TestAskFail:test_a_request_queued_at_a_member_survives_its_restart()
  local p = tend.pool{ size = 1, factory = server, name = "one" }
  H.settle()
  local member = tend.children(p)[1].ref
  p:send({ nap = 1 })
  tend.after(0.5, function() tend.chaos.crash(member, "Crash") end)
  local t0 = tend.now()
  lu.assertEquals(tend.ask(p, "ping", 5), "pong")
  lu.assertEquals(tend.now() - t0, 0.5)
  H.stop_all(p)
end

-- A broadcast sends the request to every member: it is held by the pool
-- (the first answer wins; one member's failure does not fail it).
function TestAskFail:test_a_broadcast_ask_is_answered_by_a_member_that_lives()
  local p = tend.pool{ size = 3, routing = "broadcast", factory = function()
    return function(m, ctx)
      if ctx.self:name() == "1" then ctx:sleep(1) error("first fails") end
      ctx:sleep(2)
      ctx:reply(ctx.self:name())
    end
  end }
  local t0 = tend.now()
  lu.assertEquals(tend.ask(p, "who", 5), "2") -- member 1 failed at 1 s
  lu.assertEquals(tend.now() - t0, 2)
  lu.assertEquals(tend.children(p)[1].restarts, 1)
  H.stop_all(p)
end

-- A restart with 100,000 messages queued: each request the actor had
-- taken fails, each still queued (however deep) is answered by the new
-- instance, in order, after every message ahead of it. (That telling taken
-- from queued does not walk the mailbox is `bench.lua restart_queued`.)
function TestAskFail:test_a_restart_with_a_deep_mailbox_fails_the_taken_asks_and_answers_the_queued()
  local seen = 0 -- (outlives restarts)
  local w = tend.spawn(function()
    return function(m, ctx)
      if m == "nap" then ctx:sleep(1)
      elseif type(m) == "number" then seen = seen + 1
      elseif m ~= "hold" then ctx:reply(m .. " after " .. seen) end -- (a hold is kept, never answered)
    end
  end, { name = "w" })
  local results = {}
  local function asker(msg)
    local a = tend.spawn(function()
      return function(_, ctx)
        local ok, r = pcall(ctx.ask, ctx, w, msg, 5)
        results[#results + 1] = ok and r or msg .. ": " .. r.kind .. " " .. tostring(r.cause.kind)
      end
    end)
    a:send("go")
    H.settle()
    return a
  end
  local askers = { asker("hold"), asker("hold"), asker("hold") }
  w:send("nap") -- busy while the rest queues
  for j = 1, 10 do
    for i = 1, 10000 do w:send(i) end
    askers[#askers + 1] = asker("q" .. j)
  end
  lu.assertEquals(results, {})
  local t0 = tend.now()
  tend.chaos.crash(w, "Crash")
  H.settle()
  lu.assertEquals(tend.now(), t0)
  local want = { "hold: AskFailed Crash", "hold: AskFailed Crash", "hold: AskFailed Crash" }
  for j = 1, 10 do want[#want + 1] = "q" .. j .. " after " .. j * 10000 end
  lu.assertEquals(results, want)
  lu.assertEquals(seen, 100000)
  H.stop_all(w, table.unpack(askers))
end

-- ------------------------------------------------------------ chaos

-- tend.chaos link rules apply to ask traffic: the request (asker -> target)
-- and the reply (target -> asker), as to any other message between them.
TestAskChaos = {}

function TestAskChaos:tearDown()
  tend.chaos.heal()
  H.assert_clean()
end

local function echo() return function(msg, ctx) ctx:reply(msg) end end

function TestAskChaos:test_delay_applies_to_the_request()
  local e = tend.spawn(echo, { name = "e" })
  tend.chaos.delay(tend.self(), e, 0.25)
  local t0 = tend.now()
  lu.assertEquals(tend.ask(e, "hi", 1), "hi")
  lu.assertEquals(tend.now() - t0, 0.25)
  H.stop_all(e)
end

function TestAskChaos:test_delay_applies_to_the_reply()
  local e = tend.spawn(echo, { name = "e" })
  tend.chaos.delay(e, "/user/main", 0.5)
  local t0 = tend.now()
  lu.assertEquals(tend.ask(e, "hi", 1), "hi")
  lu.assertEquals(tend.now() - t0, 0.5)
  H.stop_all(e)
end

function TestAskChaos:test_both_ways_add_up_and_a_late_reply_times_out()
  local e = tend.spawn(echo, { name = "e" })
  tend.chaos.delay("*", e, 0.5)
  tend.chaos.delay(e, "*", 0.75)
  local t0 = tend.now()
  lu.assertEquals(tend.ask(e, "hi", 2), "hi")
  lu.assertEquals(tend.now() - t0, 1.25)
  local d0 = tend.stats().dead_letters
  local ok, err = pcall(tend.ask, e, "slow", 1)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  tend.sleep(1) -- the reply arrives after the asker gave up
  lu.assertEquals(tend.stats().dead_letters - d0, 1)
  H.stop_all(e)
end

function TestAskChaos:test_a_dropped_request_times_out()
  local got = 0
  local e = tend.spawn(function() return function(msg, ctx) got = got + 1 ctx:reply(msg) end end)
  tend.chaos.drop(tend.self(), e, 1)
  local t0 = tend.now()
  local ok, err = pcall(tend.ask, e, "hi", 1)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertEquals(tend.now() - t0, 1)
  lu.assertEquals(got, 0)
  H.stop_all(e)
end

function TestAskChaos:test_a_dropped_reply_times_out_and_is_a_dead_letter()
  local got = 0
  local e = tend.spawn(function() return function(msg, ctx) got = got + 1 ctx:reply(msg) end end)
  tend.chaos.drop(e, tend.self(), 1)
  local d0 = tend.stats().dead_letters
  local ok, err = pcall(tend.ask, e, "hi", 1)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "Timeout")
  lu.assertEquals(got, 1)
  lu.assertEquals(tend.stats().dead_letters - d0, 1)
  H.stop_all(e)
end

function TestAskChaos:test_rules_between_other_actors_leave_the_ask_alone()
  local e = tend.spawn(echo, { name = "e" })
  local other = tend.spawn(echo, { name = "other" })
  tend.chaos.drop(other, e, 1)
  tend.chaos.drop(e, other, 1)
  lu.assertEquals(tend.ask(e, "hi", 1), "hi")
  H.stop_all(e, other)
end

-- An ask made inside an actor: its own path is the asker's end.
function TestAskChaos:test_an_actor_asking_is_matched_by_its_path()
  local e = tend.spawn(echo, { name = "e" })
  local asker = tend.spawn(function()
    return function(msg, ctx)
      local t0 = tend.now()
      ctx:ask(e, msg, 5)
      ctx:reply(tend.now() - t0)
    end
  end, { name = "asker" })
  tend.chaos.delay("/user/asker", "/user/e", 1)
  tend.chaos.delay("/user/e", "/user/asker", 2)
  lu.assertEquals(tend.ask(asker, "x", 5), 3)
  H.stop_all(e, asker)
end
