-- Watching an actor (ctx:watch, tend.watch): one Terminated notice per
-- watch, in the order the watchers watched, before later mail, none for a
-- restart, and what a watch of a dead actor gets. Several cases keep the
-- names they have in Akka's DeathWatchSpec.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestWatch = {}

function TestWatch:tearDown() H.assert_clean() end

local tk = tend.testkit

-- DeathWatchSpec "discard Terminated when unwatched between sysmsg and
-- processing": the watcher is busy when its target dies; an unwatch sent
-- after the death but before the watcher gets to the notice drops it.
function TestWatch:test_discard_Terminated_when_unwatched_between_sysmsg_and_processing()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function()
    return function(m, ctx)
      if type(m) == "table" and m.tend == "terminated" then got[#got + 1] = "terminated"
      elseif m == "watch" then ctx:watch(target)
      elseif m == "unwatch" then ctx:unwatch(target)
      elseif m == "block" then ctx:sleep(1)
      else got[#got + 1] = m end
    end
  end)
  w:send("watch")
  w:send("block")
  tend.sleep(0.5)
  tend.stop(target) -- dies while w is blocked
  tend.sleep(0.1)
  w:send("unwatch")
  w:send("identify")
  w:send("identify")
  tend.sleep(2)
  lu.assertEquals(got, { "identify", "identify" })
  lu.assertTrue(tend.alive(w)) -- no DeathPact
  H.stop_all(w)
end

-- A notice that arrives while the watcher is idle comes at once, before
-- what is sent to the watcher afterwards.
function TestWatch:test_a_notice_to_an_idle_watcher_comes_before_later_mail()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    return function(m)
      got[#got + 1] = type(m) == "table" and m.tend or m
    end
  end)
  H.settle()
  tend.stop(target)
  H.settle()
  w:send("later")
  H.settle()
  lu.assertEquals(got, { "terminated", "later" })
  H.stop_all(w)
end

-- Watching a dead target again before its notice is handled gives no
-- second notice.
function TestWatch:test_watching_again_before_the_notice_is_handled_gives_one_notice()
  local n = 0
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    return function(m, ctx)
      if m == "block" then ctx:sleep(1) ctx:watch(target) ctx:watch(target) end
      if type(m) == "table" and m.tend == "terminated" then n = n + 1 end
    end
  end)
  w:send("block")
  tend.sleep(0.5)
  tend.stop(target)
  tend.sleep(2)
  lu.assertEquals(n, 1)
  H.stop_all(w)
end

-- DeathWatchSpec "notify with a Terminated message once when an Actor is
-- stopped but not when restarted": two kills are queued; each is a
-- failure handled in turn (restart, restart), the third reaches the limit.
function TestWatch:test_notify_with_one_Terminated_when_stopped_but_not_when_restarted()
  local sup = tend.spawn(function()
    return function(m, ctx)
      ctx:reply(ctx:spawn(function() return function(x, c) c:reply(x) end end))
    end
  end, { supervisor = tend.one_for_one { max_retries = 2, within = 10, decider = { ["*"] = "restart" } } })
  local terminal = tend.ask(sup, "child", 1)
  local r0 = tend.stats().restarts
  local p = tk.probe()
  p:watch(terminal)
  tend.kill(terminal)
  tend.kill(terminal)
  lu.assertEquals(tend.ask(terminal, "foo", 1), "foo")
  lu.assertEquals(tend.stats().restarts - r0, 2)
  tend.kill(terminal)
  lu.assertEquals(p:expect_terminated(terminal, 1).reason.kind, "Killed")
  p:expect_no_msg(1)
  lu.assertFalse(tend.alive(terminal))
  H.stop_all(sup, p.ref)
end

-- Watching an actor that is already dead: the notice's ref is the very ref
-- the watcher gave (its path, and a key of the watcher's tables).
function TestWatch:test_watching_a_dead_actor_gives_back_its_own_ref()
  local d = tend.spawn(function() return function() end end, { name = "gone" })
  tend.stop(d)
  H.settle()
  local got
  local w = tend.spawn(function()
    return function(m, ctx)
      if m == "watch" then ctx:watch(d) else got = m end
    end
  end)
  w:send("watch")
  H.settle()
  lu.assertTrue(rawequal(got.ref, d))
  lu.assertEquals(got.ref:path(), "/user/gone")
  lu.assertEquals(({ [d] = "A" })[got.ref], "A")
  lu.assertFalse(got.existence_confirmed)
  H.stop_all(w)
end

function TestWatch:test_watching_the_same_target_twice_delivers_one_terminated()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target)
    ctx:watch(target)
    return function(msg) got[#got + 1] = msg end
  end)
  H.settle()
  tend.stop(target)
  H.settle()
  tend.sleep(1)
  lu.assertEquals(#got, 1)
  lu.assertEquals(got[1].tend, "terminated")
  lu.assertTrue(got[1].ref == target)
  -- twice with messages: one delivery, the last message
  got = {}
  local t2 = tend.spawn(function() return function() end end)
  local w2 = tend.spawn(function(ctx)
    ctx:watch(t2, "first")
    ctx:watch(t2, "second")
    return function(msg) got[#got + 1] = msg end
  end)
  H.settle()
  tend.stop(t2)
  H.settle()
  tend.sleep(1)
  lu.assertEquals(got, { "second" })
  H.stop_all(w, w2)
end

function TestWatch:test_watchers_are_told_in_the_order_they_watched()
  local log = {}
  local target = tend.spawn(function() return function() end end)
  local function watcher(name)
    return tend.spawn(function(ctx)
      return function(msg, ctx)
        if msg == "watch" then ctx:watch(target) else log[#log + 1] = name end
      end
    end)
  end
  local w1, w2, w3 = watcher("w1"), watcher("w2"), watcher("w3")
  w2:send("watch") H.settle()
  w3:send("watch") H.settle()
  w1:send("watch") H.settle()
  tend.stop(target)
  H.settle()
  lu.assertEquals(log, { "w2", "w3", "w1" })
  H.stop_all(w1, w2, w3)
end

-- Only an unhandled `terminated` is a DeathPact; a custom watch message
-- left unhandled is just unhandled.
function TestWatch:test_an_unhandled_custom_watch_message_is_no_death_pact()
  local got = {}
  local target = tend.spawn(function() return function() end end)
  local w = tend.spawn(function(ctx)
    ctx:watch(target, "gone")
    return function(msg) got[#got + 1] = msg return tend.unhandled end
  end)
  H.settle()
  tend.stop(target)
  H.settle()
  lu.assertEquals(got, { "gone" })
  lu.assertTrue(tend.alive(w))
  H.stop_all(w)
end

function TestWatch:test_watching_a_dead_ref_gives_reason_unknown()
  local p = tk.probe()
  local a = tend.spawn(function() return function() end end)
  H.stop_all(a)
  p:watch(a)
  local t = p:expect_terminated(a, 1)
  lu.assertEquals(t.reason, "unknown")
  lu.assertFalse(t.existence_confirmed)
  H.stop_all(p.ref)
end

-- A watch is found between a watcher holding many watches and a target
-- watched by many (DeathWatch walks the two lists in step): an unwatch in
-- the middle of either drops that watch only, a second watch with a
-- message replaces the first one's, and every other notice comes once.
function TestWatch:test_many_watches_each_found()
  local targets = {}
  for i = 1, 60 do targets[i] = tend.spawn(function() return function() end end) end
  local many = tend.spawn(function() return function() end end)
  local watchers, seen = {}, {}
  for i = 1, 40 do
    watchers[i] = tend.spawn(function(ctx)
      ctx:watch(many)
      return function(m, ctx)
        if m == "unwatch" then ctx:unwatch(many)
        elseif type(m) == "table" and m.tend == "terminated" then seen[i] = (seen[i] or 0) + 1 end
      end
    end)
  end
  for _, t in ipairs(targets) do tend.watch(t) end
  tend.watch(targets[10], "ten")  -- replaces the watch's message
  tend.unwatch(targets[30])       -- one in the middle of 60
  watchers[20]:send("unwatch")    -- one in the middle of 40
  tend.sleep(0.1)
  for _, t in ipairs(targets) do tend.stop(t) end
  tend.stop(many)
  local got = {}
  for _ = 1, 59 do
    local m = tend.receive(1)
    got[#got + 1] = m == "ten" and "ten" or m.ref
  end
  lu.assertEquals(select("#", tend.receive(0.1)), 0) -- nothing from targets[30]
  lu.assertEquals(got[10], "ten")
  for i = 1, 59 do
    if i ~= 10 then lu.assertEquals(got[i], targets[i < 30 and i or i + 1]) end
  end
  tend.sleep(0.1)
  for i = 1, 40 do lu.assertEquals(seen[i], i ~= 20 and 1 or nil, "watcher " .. i) end
  for _, w in ipairs(watchers) do tend.stop(w) end
end
