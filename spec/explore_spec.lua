-- tend explore (README "Exploring failures"): seeds run in parallel
-- batches, the failing ones listed in seed order with their reason, a
-- summary grouped by failure signature, the exit status, bad options
-- named; the shrinker's parts (ddmin, earlier times, the schedule as Lua,
-- the nemesis call rewritten).
local lu = require "luaunit"
local H = require "helper"
local seeds = require "tend.seeds"
local shrink = require "tend.shrink"

TestExplore = {}

-- Fails for the seeds whose first draw is 3 or 7, at two lines.
local drawn = [[
local tend = require "tend"
local r = tend.random(1, 10)
tend.sleep(r)
if r == 3 then error("drew three") end
if r == 7 then error("drew seven") end
]]

-- The seed lines and the summary of a run (its wall time is on stderr).
function TestExplore:test_failing_seeds_in_seed_order_and_grouped_by_signature()
  local path = H.script(drawn)
  local out, err, code = H.run({ "explore", path, "--seeds", "1..20", "--jobs", "2" })
  lu.assertEquals(code, 1, err)
  local lines = {}
  for seed, why in out:gmatch("seed (%d+): ([^\n]*)") do lines[#lines + 1] = { tonumber(seed), why } end
  lu.assertTrue(#lines >= 2, out)
  for i, l in ipairs(lines) do
    if i > 1 then lu.assertTrue(l[1] > lines[i - 1][1], out) end
    -- each line says what `tend scenario FILE --seed N` says
    local r = seeds.run_blocking(seeds.argv(path, l[1]))
    lu.assertFalse(r.ok)
    lu.assertEquals(l[2], r.failure)
  end
  lu.assertStrContains(out, "-- summary: 20 of 20 seeds run (1..20), " .. #lines .. " failed")
  lu.assertStrContains(out, 'seed 7: Error "' .. path .. ':4: drew three" at t=3.000')
  lu.assertStrContains(out, "Error at " .. path .. ":4  seeds 7 13 ")
  lu.assertStrContains(out, "Error at " .. path .. ":5  seeds ")
  lu.assertStrContains(err, "seeds/s with 2 jobs")
  -- the jobs change nothing but the time
  local out1, _, code1 = H.run({ "explore", path, "--seeds", "1..20", "--jobs", "1" })
  lu.assertEquals(code1, 1)
  lu.assertEquals(out1, out)
end

-- (the arguments after -- reach every run)
function TestExplore:test_all_seeds_passing_exit_0()
  local path = H.script("local tend = require 'tend'\nassert(... == 'x' and arg[2] == 'y')\n" ..
    "tend.sleep(tend.random(1, 5))\n")
  local out, err, code = H.run({ "explore", path, "--runs", "12", "--jobs", "3", "--", "x", "y" })
  lu.assertEquals(code, 0, err)
  lu.assertStrContains(out, "-- summary: 12 of 12 seeds run (1..12), 0 failed")
  lu.assertStrContains(out, "all 12 seeds passed")
end

-- A batch's records say the same as runs of their own, byte for byte (the
-- wall time aside, which the batch's child writes into the same pipe).
function TestExplore:test_fork_seeds_batch_runs_each_seed_as_its_own_run()
  local path = H.script(drawn)
  local out, err, code = H.run({ "scenario", path, "--fork-seeds", "5..9/30" })
  lu.assertEquals(code, 0, err)
  local runs = seeds.batch(out, 30)
  lu.assertEquals(#runs, 5)
  for i, run in ipairs(runs) do
    lu.assertEquals(run.seed, 4 + i)
    local alone, _, c = H.run({ "scenario", path, "--seed", tostring(run.seed) })
    lu.assertEquals(run.out:gsub("wall time [^\n]*\n", ""), alone)
    lu.assertEquals(run.outcome.ok, c == 0)
  end
end

-- A seed past its limit is killed (SIGALRM) and the batch goes on (8 s:
-- the others' start under valgrind on a busy machine took over 1 s).
function TestExplore:test_fork_seeds_limit_kills_a_stuck_seed()
  local path = H.script("local tend = require 'tend'\nif tend.seed() == 2 then while true do end end\n")
  local out, err, code = H.run({ "scenario", path, "--fork-seeds", "1..3/8" })
  lu.assertEquals(code, 0, err)
  local runs = seeds.batch(out, 1)
  lu.assertEquals(#runs, 3)
  lu.assertTrue(runs[1].outcome.ok)
  lu.assertEquals(runs[2].outcome.signature, "Timeout")
  lu.assertTrue(runs[3].outcome.ok)
end

function TestExplore:test_bad_options_are_named()
  local path = H.script(drawn)
  for _, case in ipairs {
    { { "--jobs", "0" }, "--jobs: expected a positive integer, got '0'" },
    { { "--runs", "x" }, "--runs: expected a positive integer, got 'x'" },
    { { "--seeds", "9..2" }, "--seeds: expected A..B with integers A <= B, got '9..2'" },
    { { "--seeds", "1..2", "--runs", "3" }, "expected --seeds A..B or --runs N, got both" },
    { { "--max-time", "-1" }, "--max-time: expected a positive number of seconds, got '-1'" },
    { { "--jobs" }, "--jobs: expected a value, got nothing" },
    { { "--bogus" }, "unknown option '--bogus'" },
  } do
    local args = { "explore", path }
    table.move(case[1], 1, #case[1], 3, args)
    local _, err, code = H.run(args)
    lu.assertEquals(code, 2, err)
    lu.assertStrContains(err, "tend explore: " .. case[2])
  end
  local _, err, code = H.run({ "explore", "/nonexistent/x.lua" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "tend explore: cannot open /nonexistent/x.lua")
end

-- The failure line gives the signature: the invariant's name, or the kind
-- and where.
function TestExplore:test_signature_of_a_failure_line()
  local r = seeds.outcome(false, 'x\nfailure: InvariantFailed "one leader" at t=31.250\n', "")
  lu.assertEquals(r.signature, 'InvariantFailed "one leader"')
  lu.assertEquals(r.t, 31.25)
  r = seeds.outcome(false, 'failure: Error "bank.lua:40: boom" at t=2.000\n', "")
  lu.assertEquals(r.signature, "Error at bank.lua:40")
  r = seeds.outcome(false, 'failure: Crash "/user/bank/a: gone" at t=2.000\n', "")
  lu.assertEquals(r.signature, "Crash at /user/bank/a")
end

------------------------------------------------------------ the shrinker
-- ddmin keeps a smallest failing sublist, whatever the batch size.
function TestExplore:test_ddmin_finds_the_two_needed_items()
  local items = {}
  for i = 1, 10 do items[i] = i end
  local function fails(l)
    local has = {}
    for _, x in ipairs(l) do has[x] = true end
    return has[3] and has[7]
  end
  local tried = 0
  local function first(lists)
    for i, l in ipairs(lists) do
      tried = tried + 1
      if fails(l) then return i end
    end
  end
  lu.assertEquals(shrink.ddmin(items, first), { 3, 7 })
  lu.assertTrue(tried < 40, tried)
  -- a run that fails with no injection at all shrinks to none
  lu.assertEquals(shrink.ddmin(items, function() return 1 end), {})
end

-- Each injection moves as early as it still fails (to the millisecond,
-- not before the one before it), each heal as soon.
function TestExplore:test_tighten_moves_injections_earlier_and_heals_sooner()
  local list = { { t = 10, fault = "crash", target = "/user/a" },
    { t = 30.5, fault = "partition", a = "n1", b = "n2", heal_after = 8 } }
  local out = shrink.tighten(list, function(l)
    return l[2].t >= 12.25 and l[2].heal_after >= 3
  end)
  lu.assertEquals(out[1].t, 0)
  lu.assertTrue(out[2].t >= 12.25 and out[2].t < 12.25 + 18.5 / 64 + 0.001, tostring(out[2].t))
  lu.assertTrue(out[2].heal_after >= 3 and out[2].heal_after < 3.2, tostring(out[2].heal_after))
  lu.assertEquals(list[2].t, 30.5) -- the list given is left as it was
end

function TestExplore:test_schedule_source_reads_back_the_same_values()
  local x = { t = 12.5, fault = "partition", a = "n1", b = "n2", heal_after = 3.0, p = 0.1,
    latency = { 1, 2.5 }, signal = "TERM" }
  local src = shrink.entry_source(x)
  lu.assertEquals(src, '{ t = 12.5, fault = "partition", a = "n1", b = "n2", latency = { 1, 2.5 }, ' ..
    'p = 0.1, signal = "TERM", heal_after = 3.0 }')
  local back = load("return " .. src)()
  lu.assertEquals(back, x)
  lu.assertEquals(math.type(back.heal_after), "float")
  local third = 1 / 3
  lu.assertEquals(load("return " .. shrink.entry_source({ t = third }))().t, third)
end

-- Every nemesis call becomes a schedule of the list; strings and comments
-- with braces inside the call do not end it.
function TestExplore:test_rewrite_replaces_the_nemesis_call()
  local src = 'local tend = require "tend"\n  tend.chaos.nemesis{ faults = { "crash" }, -- a } here\n' ..
    '    targets = { "/user/w/*" }, note = "}" }\nprint("after")\n'
  local out, n = shrink.rewrite(src, { { t = 1.5, fault = "crash", target = "/user/w/2" } })
  lu.assertEquals(n, 1)
  lu.assertEquals(out, 'local tend = require "tend"\n  tend.chaos.schedule({ ' ..
    '{ t = 1.5, fault = "crash", target = "/user/w/2" } })\n\nprint("after")\n')
  out = shrink.rewrite("tend.chaos.nemesis{\n  a = 1,\n  b = 2,\n}\n", { { t = 1.5 } })
  lu.assertEquals(out, "tend.chaos.schedule({\n  { t = 1.5 },\n})\n\n")
  -- a longer list than the call's lines goes on one line, a shorter one is
  -- followed by blank lines: the lines after the call keep their numbers
  local two = { { t = 1, fault = "crash", target = "/a" }, { t = 2, fault = "kill", target = "/b" } }
  out = shrink.rewrite("x.nemesis{}\nerror()\n", two)
  lu.assertEquals(out, 'x.schedule({ { t = 1, fault = "crash", target = "/a" }, ' ..
    '{ t = 2, fault = "kill", target = "/b" } })\nerror()\n')
  out = shrink.rewrite("x.nemesis{\n\n\n\n}\nerror()\n", two)
  lu.assertEquals(select(2, out:gsub("\n", "")), 6)
  lu.assertStrContains(out, "},\n})\n\nerror()\n")
  local _, none = shrink.rewrite("print(1)\n", {})
  lu.assertEquals(none, 0)
end

-- Two accounts whose balances live only in their actors: a crash of one
-- loses its balance, a freeze of the idle actor changes nothing.
local lossy = [[
local tend = require "tend"
local balances = {}
local function account(ctx, name)
  balances[name] = 100
  return function(msg) balances[name] = balances[name] + msg end
end
local a = tend.spawn(account, { name = "a", args = { "a" } })
local b = tend.spawn(account, { name = "b", args = { "b" } })
tend.spawn(function() return function() end end, { name = "idle" })
tend.invariant("the total is 200", function() return balances.a + balances.b == 200 end)
tend.chaos.nemesis{ faults = { "freeze", "crash" }, targets = { "/user/*" },
  every = { 1, 4 }, heal_after = { 1, 3 }, from = 0, to = 50 }
for _ = 1, 30 do
  tend.sleep(2)
  a:send(-10)
  b:send(10)
end
]]

-- The minimal scenario's text loads the rewritten source under the
-- original's name, in a long string its text cannot close.
function TestExplore:test_scenario_text_keeps_the_chunk_name()
  local text = shrink.scenario_text("-- h\n", "dir/x.lua", "error('a]]b')\n")
  lu.assertEquals(text, "-- h\nreturn assert(load([=[\nerror('a]]b')\n]=], \"@dir/x.lua\"))(...)\n")
  local chunk = assert(load(text))
  local ok, err = pcall(chunk)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "dir/x.lua:1: a]]b")
end

-- The shrunk file: the nemesis replaced by the one crash that matters, as
-- early as it still fails; replayed, it fails the same way, byte for
-- byte, every time; its trace and timeline are beside it.
function TestExplore:test_shrink_writes_a_minimal_scenario_that_replays()
  local path = H.script(lossy)
  local dir = os.tmpname()
  os.remove(dir)
  local out, err, code = H.run({ "explore", path, "--seeds", "1..1", "--jobs", "2", "--shrink",
    "--out", dir })
  lu.assertEquals(code, 1, err)
  lu.assertStrContains(out, 'seed 1: InvariantFailed "the total is 200" at t=4.146')
  local name = path:match("([^/]+)%.lua$") .. ".seed1.min"
  local min = dir .. "/" .. name .. ".lua"
  lu.assertStrContains(out, 'shrink seed 1: InvariantFailed "the total is 200": 1 of 2 ' ..
    "injections removed (")
  lu.assertStrContains(out, "-> " .. min)
  local f = assert(io.open(min, "r"))
  local text = f:read("a")
  f:close()
  lu.assertStrContains(text, "-- it fails with InvariantFailed \"the total is 200\".\n" ..
    "-- 1 of the nemesis's 2 injections removed (the seed failed at t=4.146 with all\n")
  lu.assertStrContains(text, "Replay: tend scenario " .. min .. " --seed 1\n")
  -- the call took two lines: the schedule takes two, on one line
  lu.assertStrContains(text, 'tend.chaos.schedule({ { t = 2.008, fault = "crash", ' ..
    'target = "/user/a" } })\n\nfor _ = 1, 30 do\n')
  lu.assertStrContains(text, 'return assert(load([[\nlocal tend = require "tend"\n')
  lu.assertStrContains(text, ']], "@' .. path .. '"))(...)\n')
  lu.assertNil(text:find("nemesis{", 1, true))
  local runs = {}
  for i = 1, 2 do
    local o, e, c = H.run({ "scenario", min, "--seed", "1" })
    lu.assertEquals(c, 1, e)
    runs[i] = o
  end
  lu.assertEquals(runs[2], runs[1])
  lu.assertStrContains(runs[1], 'failure: InvariantFailed "the total is 200" at t=2.008\n')
  for _, ext in ipairs { ".jsonl", ".svg" } do
    local g = io.open(dir .. "/" .. name .. ext, "r")
    lu.assertNotNil(g, ext)
    lu.assertTrue(#g:read("a") > 0)
    g:close()
    os.remove(dir .. "/" .. name .. ext)
  end
  os.remove(min)
  os.remove(dir)
end

-- A nemesis in a file the scenario loads cannot be rewritten: the minimal
-- list is written alone, replayable with --chaos-schedule.
function TestExplore:test_shrink_writes_the_list_when_the_nemesis_is_elsewhere()
  local inner = H.script(lossy)
  local path = H.script(string.format("return assert(loadfile(%q))()\n", inner))
  local dir = os.tmpname()
  os.remove(dir)
  local out, err, code = H.run({ "explore", path, "--seeds", "1..1", "--shrink", "--out", dir })
  lu.assertEquals(code, 1, err)
  local list = dir .. "/" .. path:match("([^/]+)%.lua$") .. ".seed1.schedule.lua"
  lu.assertStrContains(out, "1 of 2 injections removed (")
  lu.assertStrContains(out, "replay with tend scenario " .. path .. " --seed 1 --chaos-schedule " .. list)
  lu.assertEquals(dofile(list), { { t = 2.008, fault = "crash", target = "/user/a" } })
  local o = H.run({ "scenario", path, "--seed", "1", "--chaos-schedule", list })
  lu.assertStrContains(o, 'failure: InvariantFailed "the total is 200" at t=2.008\n')
  os.remove(list)
  os.remove(dir)
end
