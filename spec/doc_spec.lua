-- The reference's one source (tend.doc) against the live API: every public
-- name has an entry, every entry names something live, every entry is of
-- the format, and the examples run.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local doc = require "tend.doc"
local names = require "api_names"

TestDoc = {}

function TestDoc:tearDown() H.assert_clean() end

local function sorted(set)
  local list = {}
  for k in pairs(set) do list[#list + 1] = k end
  table.sort(list)
  return list
end

function TestDoc:test_every_public_name_has_an_entry()
  local missing = {}
  for name in pairs(names.live(true)) do
    if names.present(name) and not doc.by_name[name] then missing[name] = true end
  end
  lu.assertEquals(sorted(missing), {}, "public names with no entry in lua/tend/doc/")
end

function TestDoc:test_every_entry_names_something_live()
  local live, stale = names.live(true), {}
  for name in pairs(doc.by_name) do
    if not live[name] then stale[name] = true end
  end
  lu.assertEquals(sorted(stale), {}, "entries of names that do not exist")
end

function TestDoc:test_the_groups_of_this_branch_are_there()
  for _, g in ipairs { "core", "supervision", "toolbox", "repl" } do lu.assertTrue(doc.present[g], g) end
end

function TestDoc:test_a_bad_entry_is_refused_with_its_name()
  local e = { name = "tend.x", sig = "tend.x()", summary = "", text = "", params = {}, returns = {},
    errors = {}, example = "", sumary = "" }
  local ok, err = pcall(doc.check, e, "core", 3)
  lu.assertFalse(ok)
  lu.assertEquals(err, "tend.doc.core: entry 3 (tend.x): unknown field sumary")
  e.sumary, e.params = nil, { { "a" } }
  ok, err = pcall(doc.check, e, "core", 3)
  lu.assertEquals(err, "tend.doc.core: entry 3 (tend.x): a row is not {name, type, what}")
  e.params, e.name, e.sig = {}, "thing:m", "thing:m()"
  ok, err = pcall(doc.check, e, "core", 3)
  lu.assertEquals(err, "tend.doc.core: entry 3 (thing:m): no class for the receiver thing")
  ok, err = pcall(doc.check, { class = "tend.X", summary = "" }, "core", 1)
  lu.assertEquals(err, "tend.doc.core: entry 1 (tend.X): no fields")
end

function TestDoc:test_the_types_and_classes_named_are_declared()
  local known = { any = true, string = true, integer = true, number = true, boolean = true,
    table = true, ["function"] = true, userdata = true, ["nil"] = true, self = true }
  for _, c in ipairs(doc.classes) do known[c.class] = true end
  for _, class in pairs(doc.receivers) do known[class] = true end
  local unknown = {}
  local function look(t, where)
    -- the words of a type that are names (not fun, not string literals)
    local bare = t:gsub('"[^"]*"', ""):gsub("fun%(", "(")
    for word in bare:gmatch("[%a_][%w_.]*") do
      if not known[word] and not bare:find(word .. ":", 1, true) then -- (a fun's parameter)
        unknown[where .. ": " .. word] = true
      end
    end
  end
  for _, e in ipairs(doc.entries) do
    for _, p in ipairs(e.params) do look(p[2], e.name) end
    for _, r in ipairs(e.returns) do look(r[1], e.name) end
  end
  for _, c in ipairs(doc.classes) do
    for _, f in ipairs(c.fields or {}) do look(f[2], c.class) end
    if c.type then look(c.type, c.class) end
  end
  lu.assertEquals(sorted(unknown), {})
end

local AS_PROCESSES = { scenario = true, process = true, net = true, nodes = true, streams = true }

-- Each example runs in a task of its own (as a main chunk), under the virtual clock; what it
-- leaves (actors, names) is stopped after it; tend.shutdown does nothing.
function TestDoc:test_every_example_runs()
  local failed = {}
  local old = print
  print = function() end -- luacheck: ignore
  for _, e in ipairs(doc.entries) do
    -- (the REPL's are prompt lines; those of the groups below run each as a process of its own,
    -- with the flags their first line names, in spec/doc_entry_examples_spec.lua and
    -- spec/realtime/doc_entry_examples_spec.lua)
    if e.example ~= "" and names.present(e.name) and e.group ~= "repl"
        and not AS_PROCESSES[e.group] then
      local t = setmetatable({ shutdown = function() end }, { __index = tend }) -- (not the runner's end)
      local env = setmetatable({ tend = t }, { __index = _G })
      local fn, err = load(e.example, "=" .. e.name, "t", env)
      local ok = fn ~= nil
      if fn then
        local me = tend.self()
        tend.after(0, function() me:send({ "example", pcall(fn) }) end) -- a task, as a main chunk
        local r
        repeat r = tend.receive(30) until r == nil or (type(r) == "table" and r[1] == "example")
        ok, err = r and r[2], r and r[3] or "no end in 30 s"
      end
      if not ok then failed[#failed + 1] = e.name .. ": " .. tostring(err) end
      tend.sleep(0.2)
      for _, row in ipairs(tend.ps()) do
        if row.depth == 1 and row.path:match("^/user/") and row.path ~= "/user/main" then
          tend.stop(row.ref)
        end
      end
      for _, n in ipairs(tend.registered()) do tend.unregister(n) end
      H.settle()
    end
  end
  print = old -- luacheck: ignore
  -- (tend.guardian_strategy's example set /user's strategy: the specs run
  -- after this one in the same process see the default again)
  tend.guardian_strategy(tend.default_strategy)
  lu.assertEquals(failed, {})
end

-- help.lua's pending texts are for the groups not written yet: once a
-- group's file is there, its texts there go (help prints the entries).
function TestDoc:test_no_pending_help_text_has_an_entry()
  local twice = {}
  for name in pairs(require("tend.help").pending) do
    if doc.by_name[name] then twice[name] = true end
  end
  lu.assertEquals(sorted(twice), {}, "delete these from help.lua's pending: they have entries")
end
