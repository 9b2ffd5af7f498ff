-- Stash for any actor (Akka's Stash): the spawn option `stash = n` gives
-- an actor a stash; ctx:stash keeps the message and its sender,
-- ctx:unstash_all puts them back in front of the mailbox in order; one
-- more than n fails the actor with StashOverflow; a restart drops the
-- stash to dead letters (unless pre_restart unstashes).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestStash = {}

function TestStash:tearDown() H.assert_clean() end

-- Stashes everything until "open", then handles messages; "close" stashes
-- again.
local function gate(log)
  return function(ctx)
    local open = false
    return function(m, c)
      if m == "open" then
        open = true
        log[#log + 1] = "unstashed " .. c:unstash_all()
      elseif m == "close" then
        open = false
      elseif m == "crash" then
        error("boom")
      elseif not open then
        c:stash()
      else
        log[#log + 1] = m
        if m == "q" then c:reply("re " .. m) end
      end
    end
  end
end

function TestStash:test_unstash_all_puts_them_in_front_in_order()
  local log = {}
  local a = tend.spawn(gate(log), { stash = 10 })
  a:send("a") a:send("b") a:send("c")
  H.settle()
  a:send("open") a:send("d")
  H.settle()
  lu.assertEquals(log, { "unstashed 3", "a", "b", "c", "d" })
  H.stop_all(a)
end

function TestStash:test_the_sender_is_kept()
  local log = {}
  local a = tend.spawn(gate(log), { stash = 10 })
  local reply
  tend.after(0, function() reply = tend.ask(a, "q", 5) end)
  H.settle()
  lu.assertNil(reply)
  a:send("open")
  H.settle()
  lu.assertEquals(reply, "re q")
  H.stop_all(a)
end

function TestStash:test_overflow_is_a_StashOverflow_failure()
  local kinds = {}
  local log = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(gate(log), { name = "g", stash = 2 })
    return function() end
  end, { supervisor = tend.one_for_one{
    decider = function(err) kinds[#kinds + 1] = err.kind return "resume" end } })
  H.settle()
  local g = tend.children(sup)[1].ref
  g:send(1) g:send(2) g:send(3)
  H.settle()
  lu.assertEquals(kinds, { "StashOverflow" })
  g:send("open")
  H.settle()
  lu.assertEquals(log, { "unstashed 2", 1, 2 }) -- 3 was not kept
  H.stop_all(sup)
end

function TestStash:test_a_restart_drops_the_stash_to_dead_letters()
  local log = {}
  local a = tend.spawn(gate(log), { stash = 10 })
  a:send(1) a:send(2)
  H.settle()
  local d0 = tend.stats().dead_letters
  a:send("crash")
  H.settle()
  lu.assertEquals(tend.stats().dead_letters - d0, 2)
  a:send("open")
  H.settle()
  lu.assertEquals(log, { "unstashed 0" })
  H.stop_all(a)
end

function TestStash:test_pre_restart_may_unstash_to_keep_them()
  local log = {}
  local a = tend.spawn(function(ctx)
    local b = gate(log)(ctx)
    return {
      receive = function(_, m, c) return b(m, c) end,
      pre_restart = function(_, err, msg, c) c:unstash_all() end,
    }
  end, { stash = 10 })
  a:send(1) a:send(2) a:send("crash")
  H.settle()
  a:send("open")
  H.settle()
  lu.assertEquals(log, { "unstashed 2", 1, 2 })
  H.stop_all(a)
end

function TestStash:test_death_drops_the_stash_to_dead_letters()
  local a = tend.spawn(gate({}), { stash = 10 })
  a:send(1) a:send(2) a:send(3)
  H.settle()
  local d0 = tend.stats().dead_letters
  H.stop_all(a)
  lu.assertEquals(tend.stats().dead_letters - d0, 3)
end

function TestStash:test_misuse()
  local errs = {}
  local seen
  local a = tend.spawn(function(ctx)
    seen = ctx
    return {
      pre_start = function(_, c) errs[#errs + 1] = select(2, pcall(c.stash, c)) end,
      receive = function(_, m, c)
        c:stash()
        errs[#errs + 1] = select(2, pcall(c.stash, c))
        errs[#errs + 1] = c:stashed()
      end,
    }
  end, { stash = 5 })
  a:send("x")
  H.settle()
  lu.assertStrContains(errs[1], "ctx:stash: only while the actor handles a message")
  lu.assertStrContains(errs[2], "ctx:stash: this message is in the stash already")
  lu.assertEquals(errs[3], 1)
  lu.assertErrorMsgContains("ctx:unstash_all called outside its actor", seen.unstash_all, seen)
  lu.assertErrorMsgContains("tend.spawn: option 'stash': expected an integer >= 1",
    tend.spawn, gate({}), { stash = 0 })
  H.stop_all(a)
end

function TestStash:test_an_actor_without_the_option_has_no_stash()
  local err
  local a = tend.spawn(function()
    return function(_, c) err = select(2, pcall(c.stash, c)) end
  end)
  a:send("x")
  H.settle()
  lu.assertStrContains(err, "ctx:stash: this actor has no stash: spawn it with the option stash = n")
  H.stop_all(a)
end
