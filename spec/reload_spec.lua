-- tend.reload(mod): the module is loaded again from
-- disk; every live actor whose factory came from its file moves to the
-- new code at its next message boundary: with a code_change(self,
-- old_state) hook its state carries over, else its supervisor restarts it
-- (CodeChange) with its mailbox kept. The prompt's reload() is in
-- spec/c/test_repl.c.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local code = require "tend.code"

TestReload = {}

local dir, saved_path

function TestReload:setUp()
  dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir " .. dir)
  saved_path = package.path
  package.path = dir .. "/?.lua;" .. package.path
  code.moves = {}
end

function TestReload:tearDown()
  package.path = saved_path
  for _, m in ipairs { "rl_counter", "rl_bad" } do package.loaded[m] = nil end
  os.execute("rm -rf " .. dir)
  H.assert_clean()
end

local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name .. ".lua", "w"))
  f:write(text)
  f:close()
end

-- version 1: a counter whose state is a local; "slow" sleeps mid-message
local v1 = [[
local tend = require "tend"
local M = {}
function M.counter(ctx, start)
  local n = start
  return function(msg, ctx)
    if msg == "slow" then tend.sleep(5) end
    if msg == "get" then ctx:reply("v1:" .. n) else n = n + 1 end
  end
end
function M.other() return function() end end
return M
]]

-- version 2 with code_change: a hook table, the count carried over
local v2_change = [[
local M = {}
function M.counter(ctx, start)
  return {
    n = start,
    receive = function(self, msg, ctx)
      if msg == "get" then ctx:reply("v2:" .. self.n) else self.n = self.n + 10 end
    end,
    code_change = function(self, old) self.n = old.n end,
  }
end
function M.other() return function() end end
return M
]]

-- version 2 without code_change: the actor restarts from its args
local v2_plain = [[
local M = {}
function M.counter(ctx, start)
  local n = start
  return function(msg, ctx)
    if msg == "get" then ctx:reply("v2:" .. n) else n = n + 100 end
  end
end
function M.other() return function() end end
return M
]]

local function spawn_counter(name)
  local m = require "rl_counter"
  local c = tend.spawn(m.counter, { name = name, args = { 5 } })
  c:send("inc")
  c:send("inc")
  lu.assertEquals(tend.ask(c, "get"), "v1:7")
  return c
end

function TestReload:test_code_change_carries_the_state_over()
  write("rl_counter", v1)
  local c = spawn_counter("c1")
  write("rl_counter", v2_change)
  local r = tend.reload("rl_counter")
  lu.assertEquals(r.moving, { "/user/c1" })
  lu.assertEquals(r.failed, {})
  c:send("inc")
  lu.assertEquals(tend.ask(c, "get"), "v2:17") -- 7 carried over, +10 by the new code
  lu.assertEquals(code.moves, { { path = "/user/c1", how = "code_change" } })
  lu.assertEquals(tend.inspect(c).restarts, 0)
  lu.assertEquals(tend.inspect(c).behavior, "hooks")
  H.stop_all(c)
end

function TestReload:test_without_code_change_it_restarts_with_its_mailbox_kept()
  write("rl_counter", v1)
  local c = spawn_counter("c2")
  write("rl_counter", v2_plain)
  local r = tend.reload("rl_counter")
  lu.assertEquals(r.moving, { "/user/c2" })
  c:send("inc") -- the move happens here: this message is kept
  c:send("inc")
  lu.assertEquals(tend.ask(c, "get"), "v2:205") -- restarted from 5, both messages kept
  lu.assertEquals(code.moves, { { path = "/user/c2", how = "restart", reason = "no code_change hook" } })
  lu.assertEquals(tend.inspect(c).restarts, 1)
  H.stop_all(c)
end

function TestReload:test_a_busy_actor_finishes_its_message_with_the_old_code()
  write("rl_counter", v1)
  local c = spawn_counter("c3")
  c:send("slow") -- in the middle of this one for 5 s
  H.settle()
  lu.assertTrue(tend.inspect(c).busy)
  write("rl_counter", v2_change)
  lu.assertEquals(tend.reload("rl_counter").moving, { "/user/c3" })
  lu.assertEquals(code.moves, {}) -- not yet: the message is not over
  lu.assertEquals(tend.ask(c, "get", 10), "v2:8") -- slow counted by v1 (8), then moved
  lu.assertEquals(#code.moves, 1)
  H.stop_all(c)
end

function TestReload:test_the_order_of_the_mailbox_is_kept()
  write("rl_counter", [[
local M = {}
function M.log(ctx, seen) return function(msg) seen[#seen + 1] = "v1 " .. msg end end
return M
]])
  local seen = {}
  local a = tend.spawn(require("rl_counter").log, { name = "log", args = { seen } })
  H.settle()
  write("rl_counter", [[
local M = {}
function M.log(ctx, seen)
  return { receive = function(self, msg) seen[#seen + 1] = "v2 " .. msg end, code_change = function() end }
end
return M
]])
  tend.reload("rl_counter")
  for i = 1, 3 do a:send(i) end
  H.settle()
  lu.assertEquals(seen, { "v2 1", "v2 2", "v2 3" })
  H.stop_all(a)
end

function TestReload:test_only_the_modules_actors_move_and_failures_are_named()
  write("rl_counter", v1)
  local m = require "rl_counter"
  local c = spawn_counter("c4")
  local unrelated = tend.spawn(function() return function() end end, { name = "unrelated" })
  -- a factory from the file that the module does not export
  local hidden = tend.spawn(m.other, { name = "o" })
  write("rl_counter", (v2_change:gsub("function M.other%(%) return function%(%) end end\n", "")))
  local r = tend.reload("rl_counter")
  lu.assertEquals(r.moving, { "/user/c4" })
  lu.assertEquals(r.failed, { { path = "/user/o", reason = "its factory is not a field of the module rl_counter" } })
  H.settle()
  lu.assertEquals(tend.inspect(unrelated).restarts, 0)
  H.stop_all(c, unrelated, hidden)
end

function TestReload:test_a_code_change_that_raises_restarts_it()
  write("rl_counter", v1)
  local c = spawn_counter("c5")
  write("rl_counter", (v2_change:gsub("self.n = old.n", "error('cannot convert')")))
  tend.reload("rl_counter")
  c:send("inc")
  lu.assertEquals(tend.ask(c, "get"), "v2:15") -- restarted from 5, the inc kept
  lu.assertEquals(code.moves[1].how, "restart")
  lu.assertStrContains(code.moves[1].reason, "code_change raised: ")
  lu.assertStrContains(code.moves[1].reason, "cannot convert")
  H.stop_all(c)
end

function TestReload:test_bad_modules_raise_and_change_nothing()
  write("rl_counter", v1)
  local c = spawn_counter("c6")
  local before = package.loaded.rl_counter
  write("rl_counter", "local M = {\n")
  local ok, err = pcall(tend.reload, "rl_counter")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tend.reload: ")
  lu.assertStrContains(err, "rl_counter.lua:")
  lu.assertIs(package.loaded.rl_counter, before)
  write("rl_counter", "error('at load')")
  ok, err = pcall(tend.reload, "rl_counter")
  lu.assertStrContains(err, "tend.reload: rl_counter raised: ")
  ok, err = pcall(tend.reload, "no_such_module_here")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tend.reload: module 'no_such_module_here' not found:")
  ok, err = pcall(tend.reload, 42)
  lu.assertStrContains(err, "tend.reload: mod: expected a module name (a string), got number")
  lu.assertEquals(tend.ask(c, "get"), "v1:7") -- untouched
  H.stop_all(c)
end
