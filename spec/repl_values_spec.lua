-- Values printed as values: tend.pretty as the REPL
-- prints results, and tree(), ps(), stats() print and return their value.
-- The prompt's side is in spec/c/test_repl.c.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local pretty = require "tend.pretty"
local repl = require "tend.repl"

TestReplValues = {}

function TestReplValues:tearDown() H.assert_clean() end

function TestReplValues:test_scalars()
  lu.assertEquals(pretty.format("a\"b\n"), '"a\\"b\\n"')
  lu.assertEquals(pretty.format(42), "42")
  lu.assertEquals(pretty.format(1.5), "1.5")
  lu.assertEquals(pretty.format(true), "true")
  lu.assertEquals(pretty.format(nil), "nil")
  lu.assertEquals(pretty.format(print), "function<builtin>")
  lu.assertStrMatches(pretty.format(function() end), "function<.*repl_values_spec%.lua:%d+>")
  lu.assertEquals(pretty.format_all(1, "x", nil), '1\t"x"\tnil')
end

function TestReplValues:test_tables_sorted_list_first_then_numbers_then_names()
  local t = { "a", "b", z = 1, y = 2, [10] = true, ["two words"] = 3 }
  lu.assertEquals(pretty.format(t), '{"a", "b", [10] = true, ["two words"] = 3, y = 2, z = 1}')
  lu.assertEquals(pretty.format({}), "{}")
  lu.assertEquals(pretty.format({ a = { b = { 1, 2 } } }), "{a = {b = {1, 2}}}")
end

function TestReplValues:test_refs_and_errors_as_values()
  local r = tend.spawn(function() return function() end end, { name = "pp" })
  lu.assertEquals(pretty.format({ who = r }), "{who = Ref(/user/pp)}")
  lu.assertEquals(pretty.format(tend.error("Boom", "it broke")), "Error(Boom: it broke)")
  H.stop_all(r)
end

function TestReplValues:test_cycles_are_marked_shared_tables_are_not()
  local t = { name = "loop" }
  t.self = t
  lu.assertEquals(pretty.format(t), '{name = "loop", self = <cycle>}')
  local shared = { 1 }
  lu.assertEquals(pretty.format({ shared, shared }), "{{1}, {1}}")
end

function TestReplValues:test_depth_and_width_are_limited()
  local deep = { 1 }
  for _ = 1, 10 do deep = { deep } end
  lu.assertEquals(pretty.format(deep), "{{{{{{{...}}}}}}}")
  local wide = {}
  for i = 1, 100 do wide[i] = i end
  local text = pretty.format(wide)
  lu.assertStrContains(text, "39, 40,\n  ... (60 more)\n}")
  lu.assertNil(text:find("41"))
end

function TestReplValues:test_long_tables_are_broken_one_named_field_a_line()
  local text = pretty.format({ alpha = string.rep("a", 30), beta = string.rep("b", 30), 1, 2 })
  lu.assertEquals(text, '{\n  1, 2,\n  alpha = "' .. string.rep("a", 30) .. '",\n  beta = "'
    .. string.rep("b", 30) .. '"\n}')
  local nested = pretty.format({ inner = { x = string.rep("x", 70), y = 1 } })
  lu.assertEquals(nested, '{\n  inner = {\n    x = "' .. string.rep("x", 70) .. '",\n    y = 1\n  }\n}')
end

-- Runs f with print captured; returns the printed text and f's results.
local function capture(f)
  local lines, old = {}, print
  print = function(...) lines[#lines + 1] = table.concat({ ... }, "\t") end -- luacheck: ignore
  local ok, res = pcall(f)
  print = old -- luacheck: ignore
  assert(ok, res)
  return table.concat(lines, "\n"), res
end

function TestReplValues:test_ps_prints_and_returns_the_rows()
  local r = tend.spawn(function() return function() end end, { name = "row" })
  H.settle()
  local text, rows = capture(repl.helpers.ps)
  lu.assertStrContains(text, "/user/row")
  lu.assertEquals(type(rows), "table")
  local found
  for _, row in ipairs(rows) do if row.path == "/user/row" then found = row end end
  lu.assertEquals(found.state, "running")
  lu.assertEquals(found.restarts, 0)
  lu.assertTrue(found.ref == r)
  H.stop_all(r)
end

function TestReplValues:test_tree_and_stats_print_and_return_their_value()
  local r = tend.spawn(function() return function() end end, { name = "leaf" })
  H.settle()
  local text, tree = capture(repl.helpers.tree)
  lu.assertEquals(tree, tend.tree())
  lu.assertStrContains(text, "leaf [running]")
  local stext, s = capture(repl.helpers.stats)
  lu.assertEquals(s.actors, tend.stats().actors)
  lu.assertStrMatches(stext, ".*actors%s+%d+.*")
  H.stop_all(r)
end
