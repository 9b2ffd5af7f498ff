-- Preemption: max_message_time bounds a message's run (BudgetExceeded),
-- in a factory, a hook, a decider and a coroutine the actor made; an actor
-- stuck where no hook runs ends the host with 70.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestPreempt = {}

function TestPreempt:tearDown() H.assert_clean() end

local function idle() return function() end end

-- Signals while an actor spins where the watchdog cannot preempt it (a
-- gsub callback, a sort comparator, a __gc metamethod): the loop never
-- runs, so the signal is kept by the watchdog (one signal: exit after a
-- grace of 1 s) or the handler (a second signal: at once), with 128 + sig.
local SPIN = {
  gsub = 'string.gsub("x", "x", function() while true do end end)',
  sort = 'table.sort({3, 2, 1}, function(a, b) while true do end end)',
  gc = 'setmetatable({}, { __gc = function() while true do end end }); collectgarbage()',
}

-- An actor with a max_message_time stuck where no hook runs (a __gc
-- metamethod): the watchdog ends the host after max(10 x 0.1 s, 10 s), with
-- status 70 (an OS supervisor restarts it) and the actor's name; the trace
-- keeps what it held.
function TestPreempt:test_a_budgeted_actor_stuck_in_gc_ends_the_host_with_70()
  local script = H.script([[
local tend = require "tend"
tend.spawn(function()
  return function() ]] .. SPIN.gc .. [[ end
end, { name = "stuck", max_message_time = 0.1 }):send(1)
]])
  local trace = os.tmpname()
  local t0 = require("tend.internal").wall_clock()
  local _, err, code = H.run({ "--trace", trace, script })
  local took = require("tend.internal").wall_clock() - t0
  lu.assertEquals(code, 70, err)
  lu.assertStrMatches(err, "tend: /user/stuck: stuck for 10%.%d s where it cannot be preempted " ..
    "%(a __gc metamethod or a long C call%), past 10 x its max_message_time %(0%.1 s%) " ..
    "and at least 10 s: exiting with status 70\n")
  lu.assertTrue(took >= 10 and took < 60, took)
  local f = io.open(trace, "rb")
  lu.assertStrContains(f:read("a"), '"ev":"start","path":"/user/stuck","incarnation":1}\n')
  f:close()
  os.remove(trace)
  os.remove(script)
end

-- Lua's hooks belong to one coroutine: the watchdog armed only the actor's
-- own, so a loop in a coroutine the actor made (wrap or resume) reached no
-- hook and ended the host with 70 at 10 s. It is bounded by the budget as
-- the actor's own code: BudgetExceeded, the actor restarts, the host lives.
function TestPreempt:test_a_loop_in_a_coroutine_the_actor_made_is_bounded_by_its_budget()
  local script = H.script([[
local tend = require "tend"
local clock = require("tend.internal").wall_clock
local t0 = clock()
local function spin() while true do end end
local a = tend.spawn(function() return {
  receive = function(self, msg, ctx)
    if msg == "wrap" then coroutine.wrap(spin)()
    elseif msg == "resume" then coroutine.resume(coroutine.create(spin)) print("resume returned")
    else ctx:reply(string.format("%.1f", clock() - t0)) end
  end,
  pre_restart = function(self, err, msg) print(msg, err.kind) end } end, { max_message_time = 0.2 })
a:send("wrap")
a:send("resume")
print("pong after", tend.ask(a, "ping"))
]])
  local t0 = require("tend.internal").wall_clock()
  local out, code = H.run_bounded(30, { script })
  local took = require("tend.internal").wall_clock() - t0
  lu.assertEquals(code, 0, out)
  lu.assertStrMatches(out, ".*\nwrap\tBudgetExceeded\n.*\nresume\tBudgetExceeded\n.*")
  lu.assertStrContains(out, "warn  /user/$4: BudgetExceeded: the message ran longer than " ..
    "max_message_time (0.2 s); restart (restarts 1)\n")
  -- two budgets of 0.2 s and the restart between them: 0.4 s, 0.5 s when
  -- the machine is loaded (the suites run in parallel); the watchdog's
  -- bound, had the loops escaped the budget, is 10 s
  lu.assertStrMatches(out, ".*\npong after\t0%.[45]\n.*")
  lu.assertNotStrContains(out, "resume returned") -- the actor's own code fails too
  lu.assertTrue(took < 5, took)
  os.remove(script)
end

-- max_message_time covers the factory and the hooks, not only messages;
-- a decider has a budget too (its supervisor's max_message_time, else 1 s).
function TestPreempt:test_budget_stops_a_looping_factory_hook_and_decider()
  local seen, looped = {}, {}
  local function once(what) -- loops forever the first time only
    if not looped[what] then looped[what] = true while true do end end
  end
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function() once("factory") return idle() end, { max_message_time = 0.05, name = "factory" })
    ctx:spawn(function()
      return { receive = function() error("once") end,
               pre_restart = function() once("hook") end }
    end, { max_message_time = 0.05, name = "hook" })
    ctx:spawn(function() return function() error("decide me") end end, { name = "decided" })
    return function(msg, ctx) ctx:reply(ctx:children()) end
  end, { max_message_time = 0.05, supervisor = tend.one_for_one { decider = function(err, child)
    seen[#seen + 1] = child:name() .. " " .. err.kind .. (err.cause and ("<" .. err.cause.kind) or "")
    if child:name() == "decided" then once("decider") end
    return child:name() == "hook" and "restart" or "stop"
  end } })
  H.settle()
  local kids = tend.ask(sup, "children")
  lu.assertEquals(#kids, 2) -- the factory was stopped
  local function restarts()
    local r = {}
    for _, row in ipairs(tend.ps()) do r[row.path:match("[^/]+$")] = row.restarts end
    return r
  end
  kids[1]:send("fail")
  H.settle()
  lu.assertEquals(restarts().hook, 1) -- its pre_restart was cut short; it restarted
  kids[2]:send("fail")
  H.settle()
  lu.assertEquals(seen, { "factory InitError<BudgetExceeded", "hook Error", "decided Error" })
  lu.assertEquals(looped, { factory = true, hook = true, decider = true })
  lu.assertEquals(restarts()[sup:name()], 1) -- the decider's failure escalated
  H.stop_all(sup)
end
