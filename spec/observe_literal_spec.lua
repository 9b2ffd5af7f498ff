-- The observer's "send" action reads its message as a Lua literal, as
-- data: nothing runs (tend.observe.literal); tend.observe's options are
-- checked before anything is served.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local literal = require "tend.observe.literal"

TestObserveLiteral = {}

function TestObserveLiteral:tearDown() H.assert_clean() end

function TestObserveLiteral:test_literals_are_read_as_data()
  local cases = {
    { "42", 42 }, { "-3.5e2", -350 }, { "0x1F", 31 }, { "true", true }, { "false", false },
    { '"a\\n\\"b\\65\\x42\\u{48}"', 'a\n"bABH' }, { "'it''s'", nil }, { "[[long\nstring]]", "long\nstring" },
    { "[==[a]]b]==]", "a]]b" }, { "{}", {} }, { "{ 1, 2; 3 }", { 1, 2, 3 } },
    { '{ op = "get", key = { 1, [2] = "x", ["k y"] = false }, }', { op = "get", key = { 1, "x", ["k y"] = false } } },
    { "  -- a comment\n 7 --[[ and another ]]", 7 },
  }
  for _, c in ipairs(cases) do
    local v, why = literal.parse(c[1])
    if c[1] == "'it''s'" then
      lu.assertNil(v)
      lu.assertStrContains(why, "unexpected text after the value")
    else
      lu.assertNil(why, c[1])
      lu.assertEquals(v, c[2], c[1])
    end
  end
  local v, why = literal.parse("nil")
  lu.assertNil(v)
  lu.assertNil(why) -- nil is a value
end

function TestObserveLiteral:test_code_is_refused_saying_where()
  local ran = false
  _G.observe_literal_probe = function() ran = true end
  local bad = {
    { "observe_literal_probe()", "at character 1: 'observe_literal_probe' is a name: only literals are read, nothing runs" },
    { "os.exit(1)", "at character 1: 'os' is a name" },
    { "{ x = os.getenv('HOME') }", "at character 7: 'os' is a name" },
    { "1 + 1", "at character 3: unexpected text after the value" },
    { "{ 1, 2", "at character 7: expected , or } in a table" },
    { '"open', "unfinished string" },
    { "[[open", "unfinished long string" },
    { "{ [nil] = 1 }", "a table key cannot be nil or NaN" },
    { "", "expected a value, got the end" },
    { "function() end", "'function' is a name" },
    { string.rep("{", 40) .. string.rep("}", 40), "tables nested deeper than 32" },
    { '"\\q"', "bad escape \\q" },
  }
  for _, c in ipairs(bad) do
    local v, why = literal.parse(c[1])
    lu.assertNil(v, c[1])
    lu.assertStrContains(why or "", c[2], false, c[1])
  end
  lu.assertFalse(ran)
  _G.observe_literal_probe = nil
end

function TestObserveLiteral:test_bad_options_are_refused_naming_them()
  local function err(opts)
    local ok, e = pcall(tend.observe, opts)
    lu.assertFalse(ok)
    return tostring(e)
  end
  lu.assertStrContains(err({ port = "80" }), "tend.observe: port: expected an integer 0-65535, got 80")
  lu.assertStrContains(err({ port = 70000 }), "tend.observe: port: expected an integer 0-65535, got 70000")
  lu.assertStrContains(err({ host = "" }), "tend.observe: host: expected a host name or address")
  lu.assertStrContains(err({ prot = 1 }), "prot")
  lu.assertStrContains(err("8642"), "tend.observe: options: expected a table { port, host }, got string")
end
