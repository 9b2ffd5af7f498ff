-- The scenario command line (design §2): tend.shutdown(code) at the
-- end of a file, --help on every subcommand, arguments after --, the
-- --only and --path filters, and --seeds with each failing seed's reason.
local lu = require "luaunit"
local H = require "helper"

TestScenarioCli = {}

-- A scenario with failures in two subtrees (the actors are found by tree).
local two_trees = [[
local tend = require "tend"
local function boom() return function(m) if m == "boom" then tend.raise("Boom", "x") end end end
local refs = {}
local sup = tend.spawn(function(ctx)
  refs.a = ctx:spawn(boom, { name = "a" })
  return function() end
end, { name = "sup" })
local other = tend.spawn(boom, { name = "other" })
tend.sleep(0.1)
refs.a:send("boom")
tend.sleep(0.1)
other:send("boom")
tend.sleep(0.1)
]]

-- tend.shutdown(0) ends the scenario as a success: no "scenario failed"
-- line, and the output (as the trace) replays byte for byte.
function TestScenarioCli:test_shutdown_at_the_end_still_prints_timeline_and_summary()
  local path = H.script(two_trees .. "\ntend.shutdown(0)\nerror('not reached')\n")
  local runs = {}
  for i = 1, 2 do
    local trace = os.tmpname()
    local out, err, code = H.run({ "scenario", path, "--seed", "2", "--trace", trace })
    lu.assertEquals(code, 0, err)
    local f = io.open(trace, "rb")
    runs[i] = { out = out, trace = f:read("a") }
    f:close()
    os.remove(trace)
  end
  local out = runs[1].out
  lu.assertStrContains(out, "/user/sup/a                      fail       (Boom: x)")
  lu.assertStrContains(out, "-- summary")
  lu.assertStrContains(out, "result: ok,")
  lu.assertNotStrContains(out, "not reached")
  lu.assertNotStrContains(out, "scenario failed")
  lu.assertStrContains(runs[1].trace, '"ev":"fail","path":"/user/other"')
  lu.assertEquals(runs[2].out, out)
  lu.assertEquals(runs[2].trace, runs[1].trace)
  os.remove(path)
end

function TestScenarioCli:test_shutdown_with_a_code_exits_with_it_and_says_so()
  local path = H.script(two_trees .. "\ntend.shutdown(3)\n")
  local out, _, code = H.run({ "scenario", path, "--seed", "2" })
  lu.assertEquals(code, 3)
  lu.assertStrContains(out, "scenario failed: tend.shutdown(3)")
  lu.assertStrContains(out, "result: FAILED,")
  os.remove(path)
end

function TestScenarioCli:test_a_bad_shutdown_code_is_an_error_naming_it()
  local path = H.script("require('tend').shutdown(300)\n")
  local out, _, code = H.run({ "scenario", path })
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, "tend.shutdown: code: expected an integer in 0..255, got 300")
  os.remove(path)
end

function TestScenarioCli:test_help_on_every_subcommand()
  for _, sub in ipairs { "scenario", "timeline", "test" } do
    local out, err, code = H.run({ sub, "--help" })
    lu.assertEquals(code, 0, err)
    lu.assertStrContains(out, "usage: tend ")
    lu.assertStrContains(out, sub)
  end
  local out = H.run({ "scenario", "x.lua", "--seed", "1", "-h" })
  lu.assertStrContains(out, "--only EV,...")
  local tl = H.run({ "timeline", "--help" })
  lu.assertStrContains(tl, "reads the\ntrace from stdin")
end

function TestScenarioCli:test_arguments_after_double_dash_go_to_arg()
  local path = H.script([[
print("arg", arg[0] ~= nil, arg[1], arg[2], select("#", ...), ...)
]])
  local out, err, code = H.run({ "scenario", path, "--seed", "1", "--", "--seed", "x y" })
  lu.assertEquals(code, 0, err)
  lu.assertStrContains(out, "arg\ttrue\t--seed\tx y\t2\t--seed\tx y\n")
  os.remove(path)
end

function TestScenarioCli:test_only_filters_the_timeline_by_event()
  local path = H.script(two_trees)
  local out, err, code = H.run({ "scenario", path, "--seed", "1", "--only", "fail,restart" })
  lu.assertEquals(code, 0, err)
  local evs = {}
  for ev in out:gmatch("t=[%d.]+%s+%S+%s+(%S+)") do evs[#evs + 1] = ev end
  lu.assertEquals(evs, { "fail", "restart", "fail", "restart" })
  lu.assertStrContains(out, "failures  Boom                                     2") -- the summary counts all
  os.remove(path)
end

function TestScenarioCli:test_path_filters_the_timeline_by_subtree()
  local path = H.script(two_trees)
  local out, err, code = H.run({ "scenario", path, "--seed", "1", "--path", "/user/sup" })
  lu.assertEquals(code, 0, err)
  local paths = {}
  for p in out:gmatch("t=[%d.]+%s+(%S+)") do paths[p] = true end
  lu.assertEquals(paths, { ["/user/sup/a"] = true })
  local only = H.run({ "scenario", path, "--seed", "1", "--path", "/user/other", "--only", "fail" })
  local lines = {}
  for l in only:gmatch("t=[^\n]+") do lines[#lines + 1] = l end
  lu.assertEquals(#lines, 1)
  lu.assertStrContains(lines[1], "/user/other")
  os.remove(path)
end

function TestScenarioCli:test_bad_filters_say_what_was_expected()
  local path = H.script("")
  local _, err, code = H.run({ "scenario", path, "--only", "fail,bogus" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "--only: expected event names separated by commas")
  lu.assertStrContains(err, "got 'bogus'")
  _, err, code = H.run({ "scenario", path, "--path", "user" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "--path: expected an actor path such as /user/x, got 'user'")
  _, err, code = H.run({ "scenario", path, "--only" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "--only: expected a value, got nothing")
  os.remove(path)
end

function TestScenarioCli:test_seeds_print_each_failing_seed_reason_in_one_line()
  local path = H.script([[
local tend = require "tend"
local function check(ok, msg) assert(ok, msg) end
check(tend.seed() % 3 ~= 0, "seed " .. tend.seed() .. " is divisible by 3")
if tend.seed() == 5 then tend.shutdown(4) end
]])
  local out, _, code = H.run({ "scenario", path, "--seeds", "1..6" })
  lu.assertEquals(code, 1)
  lu.assertStrContains(out, "seed 3: FAILED: " .. path .. ":2: seed 3 is divisible by 3\n")
  lu.assertStrContains(out, "seed 6: FAILED: " .. path .. ":2: seed 6 is divisible by 3\n")
  lu.assertStrContains(out, "seed 5: FAILED: tend.shutdown(4)\n")
  lu.assertStrMatches(out, ".*seed 4: ok, %d+ events.*")
  lu.assertNotStrContains(out, "traceback")
  lu.assertNotStrContains(out, "tend/scenario")
  lu.assertStrContains(out, "failed seeds: 3 5 6")
  os.remove(path)
end

function TestScenarioCli:test_a_failure_shows_the_files_frames_not_the_runners()
  local path = H.script([[
local function deeper() error("deep trouble") end
deeper()
]])
  local out, _, code = H.run({ "scenario", path })
  lu.assertEquals(code, 1)
  lu.assertStrMatches(out, ".*scenario failed: [^\n]*:1: deep trouble\nstack traceback:\n.*")
  lu.assertStrContains(out, "in ")
  lu.assertNotStrContains(out, "xpcall")
  lu.assertNotStrContains(out, "tend/scenario")
  os.remove(path)
end

-- Bad command lines name what is wrong and show the scenario's own usage.
function TestScenarioCli:test_bad_command_lines_name_the_argument()
  local path = H.script("local tend = require 'tend'\n")
  local _, err, code = H.run({ "scenario", path, "stray" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "tend scenario: unexpected argument 'stray' (the scenario's own arguments go after --)")
  _, err, code = H.run({ "scenario", path, "--sed", "3" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "tend scenario: unknown option '--sed' (expected --seed, --seeds,")
  _, err, code = H.run({ "scenario" })
  lu.assertEquals(code, 2)
  lu.assertStrContains(err, "tend: scenario: expected a FILE, got nothing\nusage: tend scenario FILE")
  os.remove(path)
end
