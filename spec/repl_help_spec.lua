-- help on one function, "did you mean" and trace(true)'s details. The
-- prompt's side is in spec/c/test_repl.c.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local help = require "tend.help"
local repl = require "tend.repl"

TestReplHelp = {}

function TestReplHelp:tearDown() H.assert_clean() end

function TestReplHelp:test_help_on_one_function()
  lu.assertStrContains(help.text(tend.spawn), "tend.spawn(factory [, opts]) -> ref\n")
  lu.assertStrContains(help.text(tend.backoff.on_failure), "tend.backoff.on_failure(factory, opts)")
  lu.assertEquals(help.text("tend.ask"), help.text(tend.ask))
  lu.assertEquals(help.text("ask"), help.text(tend.ask))
  lu.assertStrContains(help.text(repl.helpers.flush, repl.helpers), "flush()\n")
  lu.assertStrContains(help.text(tend.tcp.connect), "tend.tcp.connect{host, port")
  lu.assertStrContains(help.text(tend.http.get), "tend.http.get(")
  lu.assertStrContains(help.text(tend.chaos.partition), "tend.chaos.partition(a, b)")
  lu.assertStrContains(help.text(tend.self().send), "ref:send(msg)\n") -- a method
  lu.assertStrContains(help.text("tend.SpawnOpts"), "tend.SpawnOpts\n") -- an option table
  lu.assertStrContains(help.text("tend.SpawnOpts"), "\n  - mailbox (tend.MailboxOpts?): ")
end

function TestReplHelp:test_every_tend_function_has_help()
  local missing = {}
  for prefix, t in pairs { ["tend."] = tend, ["tend.backoff."] = tend.backoff, ["tend.pg."] = tend.pg,
    ["tend.process."] = tend.process, ["tend.tcp."] = tend.tcp, ["tend.http."] = tend.http,
    ["tend.sim."] = tend.sim } do
    for name, v in pairs(t) do
      local text = type(v) == "function" and help.text(v)
      if text and (text:find("\n  defined at ", 1, true) or text:find("with no help text", 1, true)) then
        missing[#missing + 1] = prefix .. name
      end
    end
  end
  table.sort(missing)
  lu.assertEquals(missing, {})
end

function TestReplHelp:test_help_by_name_reaches_every_module_function()
  lu.assertStrMatches(help.text("tend.chaos.freeze"), "tend%.chaos%.freeze%(ref, seconds%)\n  ref processes nothing.*")
  lu.assertStrMatches(help.text("tend.testkit.probe"), "tend%.testkit%.probe%(%[name%]%) %-> probe\n.*")
end

function TestReplHelp:test_help_on_a_lua_function_gives_its_parameters_and_place()
  local function area(width, height, ...) return width * height end
  lu.assertStrMatches(help.text(area), "function%(width, height, %.%.%.%)\n  defined at .*repl_help_spec%.lua:%d+")
end

function TestReplHelp:test_help_on_something_else_says_what_it_expected()
  lu.assertEquals(help.text(nil), 'help: expected a function or its name (help(tend.spawn), help("tend.spawn")), got nil')
  lu.assertEquals(help.text("nope"), "help: expected a function or its name (help(tend.spawn), help(\"tend.spawn\")), got 'nope'")
end

function TestReplHelp:test_did_you_mean_a_global_field_or_method()
  lu.assertEquals(help.suggest("stdin:1: attempt to call a nil value (global 'pirnt')"),
    "stdin:1: attempt to call a nil value (global 'pirnt') (did you mean 'print'?)")
  lu.assertEquals(help.suggest("stdin:1: attempt to call a nil value (field 'spwan')"),
    "stdin:1: attempt to call a nil value (field 'spwan') (did you mean 'spawn'?)")
  lu.assertEquals(help.suggest("stdin:1: attempt to call a nil value (method 'sned')"),
    "stdin:1: attempt to call a nil value (method 'sned') (did you mean 'send'?)")
  local had = rawget(_G, "tend")
  rawset(_G, "tend", tend) -- as the REPL has it
  lu.assertEquals(help.suggest("stdin:1: attempt to index a nil value (global 'tnd')"),
    "stdin:1: attempt to index a nil value (global 'tnd') (did you mean 'tend'?)")
  rawset(_G, "tend", had)
end

function TestReplHelp:test_no_guess_when_nothing_is_close()
  local m = "stdin:1: attempt to call a nil value (global 'qqqqqqqq')"
  lu.assertEquals(help.suggest(m), m)
  lu.assertEquals(help.suggest("stdin:1: boom"), "stdin:1: boom")
  lu.assertEquals(help.suggest(42), 42)
  local l = "stdin:1: attempt to index a nil value (local 'pirnt')"
  lu.assertEquals(help.suggest(l), l) -- a local is what the code named
end

function TestReplHelp:test_closest_prefers_fewer_edits_then_the_name_order()
  lu.assertEquals(help.closest("spwan", { spawn = true, span = true, swan = true }), "span")
  lu.assertEquals(help.closest("ab", { ac = true, ad = true }), "ac")
  lu.assertNil(help.closest("ab", { xy = true }))
end

-- trace(true) at the REPL prints what the scenario timeline prints.
function TestReplHelp:test_trace_shows_directive_clause_window_restart_count_and_delay()
  local lines, old = {}, print
  print = function(s) lines[#lines + 1] = s end -- luacheck: ignore
  local refs = {}
  local ok, err = pcall(function()
    repl.helpers.trace(true)
    refs[1] = tend.spawn(function() return function() tend.raise("Boom", "x") end end, { name = "tr" })
    refs[2] = tend.spawn(function(ctx)
      ctx:spawn(function() return function() tend.raise("Boom", "y") end end, { name = "c" }):send(1)
      return function() end
    end, { name = "ts", supervisor = tend.one_for_one { max_retries = 3, within = 10 } })
    refs[3] = tend.spawn(tend.backoff.on_failure(function() return function() error("down") end end,
      { name = "w", min_backoff = 2, max_backoff = 4, random_factor = 0 }), { name = "tb" })
    refs[1]:send(1)
    tend.sleep(0.1)
    for _, r in ipairs(tend.ps()) do
      if r.path == "/user/tb/w" then r.ref:send(1) end
    end
    tend.sleep(0.1)
  end)
  repl.helpers.trace(false)
  print = old -- luacheck: ignore
  H.stop_all(table.unpack(refs))
  assert(ok, err)
  local text = table.concat(lines, "\n")
  local t = "t=%d+%.%d%d%d"
  lu.assertStrMatches(text, ".*%[trace%] " .. t .. " /user/tr fail %(Boom: x%)\n.*")
  lu.assertStrMatches(text, ".*%[trace%] " .. t .. " /user/tr directive restart %(default%)\n.*")
  lu.assertStrMatches(text, ".*%[trace%] " .. t .. " /user/tr restart #1\n.*")
  lu.assertStrMatches(text, ".*%[trace%] " .. t ..
    " /user/ts/c directive restart %(default%) window 1/3 per 10%.0 s\n.*")
  lu.assertStrMatches(text, ".*%[trace%] " .. t .. " /user/tb backoff #1 after 2%.000 s.*")
end

-- watch() is a task of tend's own: trace(true) and tree() show the watched
-- actor, not the watcher; trace{ internal = true } shows the watcher too.
local function watch_run(opts)
  local lines, old = {}, print
  print = function(s) lines[#lines + 1] = s end -- luacheck: ignore
  local tree
  local ok, err = pcall(function()
    repl.helpers.trace(opts)
    local a = tend.spawn(function() return function() end end, { name = "wa" })
    repl.helpers.watch(a)
    tend.sleep(1)
    tree = tend.tree()
    tend.stop(a)
    tend.sleep(1)
  end)
  repl.helpers.trace(false)
  tend.trace { internal = false }
  print = old -- luacheck: ignore
  assert(ok, err)
  return lines, tree
end

function TestReplHelp:test_watch_stays_out_of_trace_and_tree_unless_internal_is_asked()
  local t0, t1 = string.format("t=%.3f", tend.now()), string.format("t=%.3f", tend.now() + 1)
  local lines, tree = watch_run(true)
  lu.assertEquals(lines, {
    "[trace] " .. t0 .. " /user/wa spawn",
    "[trace] " .. t0 .. " /user/wa start",
    "Ref(/user/wa) died: normal", -- (the trace lines come between turns)
    "[trace] " .. t1 .. " /user/wa stop normal",
    "[trace] " .. t1 .. " /user/wa terminated normal",
  })
  lu.assertNotStrContains(tree, "$")
  lines, tree = watch_run({ internal = true })
  local text = table.concat(lines, "\n")
  lu.assertStrMatches(text, ".*%[trace%] t=[%d.]+ /system/%$%d+ spawn\n.*")
  lu.assertStrMatches(text, ".*%[trace%] t=[%d.]+ /system/%$%d+ terminated normal.*")
  lu.assertStrContains(text, "Ref(/user/wa) died: normal")
  lu.assertStrMatches(tree, ".*\n  %$%d+ %[.*")
  local ok, err = pcall(tend.trace, { internal = 1 })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "tend.trace: internal: expected a boolean, got an integer")
  ok, err = pcall(tend.trace, { intern = true })
  lu.assertStrContains(tostring(err), "tend.trace: expected the option internal, got intern")
end
