-- Typed supervision (tend.supervise): the first matching clause wins,
-- reset_after, and an actor backing off takes no mail.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestTyped = {}

function TestTyped:tearDown() H.assert_clean() end

local function crasher(starts)
  return function(ctx)
    starts[#starts + 1] = tend.now()
    return function(msg, ctx)
      if msg == "crash" then error("boom") end
    end
  end
end

local gaps = H.gaps

function TestTyped:test_typed_reset_after_defaults_to_min_backoff()
  local starts = {}
  local a = tend.spawn(tend.supervise(crasher(starts))
    :on_failure("*", tend.restart_with_backoff(1, 10, 0)))
  a:send("crash") tend.sleep(1.5) -- delay 1
  a:send("crash") tend.sleep(3.5) -- ran 0.5 s: delay 2; then 1.5 s: reset
  a:send("crash") tend.sleep(1.5) -- delay 1 again (4 without the reset)
  lu.assertEquals(gaps(starts), { 1.0, 2.5, 2.5 })
  H.stop_all(a)
end

function TestTyped:test_typed_first_matching_clause_wins()
  local function counter()
    local n = 0
    return function(msg, ctx)
      if msg == "get" then ctx:reply(n) return end
      n = n + 1
      if msg == "bad" then tend.raise("Recoverable", "x") end
    end
  end
  local a = tend.spawn(tend.supervise(counter)
    :on_failure("Recoverable", tend.resume):on_failure("*", tend.restart))
  local b = tend.spawn(tend.supervise(counter)
    :on_failure("*", tend.resume):on_failure("Recoverable", tend.restart))
  for _, r in ipairs { a, b } do
    r:send("ok")
    r:send("bad")
  end
  lu.assertEquals(tend.ask(a, "get", 1), 2)
  lu.assertEquals(tend.ask(b, "get", 1), 2)
  H.stop_all(a, b)
end

-- A typed actor waiting for its backoff restart takes no mail: it waits
-- (bounded by with_stash) for the new instance.
function TestTyped:test_a_typed_actor_takes_no_mail_while_it_backs_off()
  local got = {}
  local a = tend.spawn(tend.supervise(function()
    return function(msg) if msg == "crash" then error("boom") end got[#got + 1] = msg end
  end):on_failure("*", tend.restart_with_backoff(1, 10, 0):with_stash(2)))
  a:send("crash")
  H.settle()
  for i = 1, 3 do a:send(i) end
  tend.sleep(0.5)
  lu.assertEquals(got, {})
  tend.sleep(1)
  lu.assertEquals(got, { 2, 3 })
  H.stop_all(a)
end

-- A typed actor restarted by its parent (a group restart) while it waited
-- for its own backoff restart stayed "waiting" for good: its clauses were
-- skipped from then on. The parent's restart ends the wait.
function TestTyped:test_a_typed_actor_restarted_by_its_parent_while_backing_off()
  local decided = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.supervise(function()
      return function(msg) if msg == "fail" then tend.raise("Flaky", "x") end end
    end):on_failure("Flaky", tend.restart_with_backoff(10, 10)), { name = "typed" })
    ctx:spawn(function() return function() error("sibling") end end, { name = "sibling" })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { supervisor = tend.all_for_one { decider = function(err, child)
    decided[#decided + 1] = child:name() .. " " .. err.kind
    return "restart"
  end } })
  local kids = tend.ask(sup, "children")
  kids[1]:send("fail") -- typed: backs off for 10 s
  H.settle()
  kids[2]:send("boom") -- the group restarts, typed included
  H.settle()
  kids[1]:send("fail") -- its own clause handles it again: not its parent
  H.settle()
  lu.assertEquals(decided, { "sibling Error" })
  H.stop_all(sup)
end
