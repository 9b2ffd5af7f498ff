-- Messages: order, become, stop and post_stop, dead letters, stale refs,
-- sender and reply, children, mailbox bounds.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestMessages = {}

function TestMessages:tearDown() H.assert_clean() end

function TestMessages:test_order_per_sender_is_preserved()
  local log = {}
  local r = H.recorder(log)
  for i = 1, 200 do r:send(i) end
  H.settle()
  lu.assertEquals(#log, 200)
  for i = 1, 200 do lu.assertEquals(log[i], i) end
  H.stop_all(r)
end

-- More messages in flight than the fast value store holds (1024 slots,
-- runtime/value.c): the rest wait in its table (slots past 32768 too), in
-- order, unchanged; then all the slots are free again.
function TestMessages:test_a_burst_past_the_fast_store_keeps_order_and_values()
  local log = {}
  local r = H.recorder(log)
  local n = 40000
  for i = 1, n do r:send(i % 2 == 0 and { i } or ("s" .. i)) end
  H.settle()
  lu.assertEquals(#log, n)
  for i = 1, n do
    local want = i % 2 == 0 and { i } or ("s" .. i)
    if i % 2 == 0 then lu.assertEquals(log[i][1], i) else lu.assertEquals(log[i], want) end
  end
  for i = 1, n do r:send("again") end -- the slots came back
  tend.stop(r) -- the rest become dead letters: their slots are dropped
  H.settle()
  lu.assertTrue(#log <= 2 * n)
end

-- A message its receiver took is not kept by tend past the scheduler's
-- pass (the store clears the slot then, if no other message reused it).
function TestMessages:test_a_taken_message_can_be_collected()
  local weak = setmetatable({}, { __mode = "k" })
  local sink = tend.spawn(function() return function() end end)
  for _ = 1, 3 do
    local m = {}
    weak[m] = true
    sink:send(m)
  end
  H.settle()
  collectgarbage()
  collectgarbage()
  lu.assertNil(next(weak))
  H.stop_all(sink)
end

function TestMessages:test_order_from_two_senders_is_kept_per_sender()
  local log = {}
  local r = H.recorder(log)
  local function sender(ctx, tag)
    return function(n)
      for i = 1, n do r:send(tag .. i) end
    end
  end
  local a = tend.spawn(sender, { args = { "a" } })
  local b = tend.spawn(sender, { args = { "b" } })
  a:send(50)
  b:send(50)
  H.settle()
  lu.assertEquals(#log, 100)
  local next_a, next_b = 1, 1
  for _, m in ipairs(log) do
    if m:sub(1, 1) == "a" then
      lu.assertEquals(m, "a" .. next_a); next_a = next_a + 1
    else
      lu.assertEquals(m, "b" .. next_b); next_b = next_b + 1
    end
  end
  H.stop_all(r, a, b)
end

function TestMessages:test_messages_are_passed_by_reference()
  local got
  local r = tend.spawn(function() return function(m) got = m end end)
  local t = { 1, 2, 3 }
  r:send(t)
  H.settle()
  lu.assertIs(got, t)
  H.stop_all(r)
end

function TestMessages:test_become_by_return_value()
  local function counting(n)
    return function(msg, ctx)
      if msg == "get" then ctx:reply(n) return end
      return counting(n + msg)
    end
  end
  local c = tend.spawn(function() return counting(0) end)
  c:send(5)
  c:send(7)
  lu.assertEquals(tend.ask(c, "get", 1), 12)
  H.stop_all(c)
end

function TestMessages:test_become_a_hook_table()
  local second = { receive = function(self, msg, ctx) ctx:reply("second:" .. msg) end }
  local a = tend.spawn(function()
    return function(msg, ctx)
      ctx:reply("first:" .. msg)
      return second
    end
  end)
  lu.assertEquals(tend.ask(a, "x", 1), "first:x")
  lu.assertEquals(tend.ask(a, "y", 1), "second:y")
  H.stop_all(a)
end

function TestMessages:test_hook_table_pre_start_receive_post_stop()
  local events = {}
  local a = tend.spawn(function(ctx, tag)
    return {
      pre_start = function(self, ctx) events[#events + 1] = tag .. ":pre_start" end,
      receive = function(self, msg, ctx) events[#events + 1] = tag .. ":" .. msg end,
      post_stop = function(self, ctx) events[#events + 1] = tag .. ":post_stop" end,
    }
  end, { args = { "A" } })
  a:send("hello")
  H.settle()
  tend.stop(a)
  H.settle()
  lu.assertEquals(events, { "A:pre_start", "A:hello", "A:post_stop" })
  lu.assertFalse(tend.alive(a))
end

function TestMessages:test_returning_stopped_stops_and_runs_post_stop()
  local stopped = 0
  local a = tend.spawn(function()
    return {
      receive = function(self, msg) if msg == "bye" then return tend.stopped end end,
      post_stop = function() stopped = stopped + 1 end,
    }
  end)
  a:send("hi")
  a:send("bye")
  a:send("after")
  local before = tend.stats().dead_letters
  H.settle()
  lu.assertFalse(tend.alive(a))
  lu.assertEquals(stopped, 1)
  lu.assertEquals(tend.stats().dead_letters - before, 1) -- "after"
end

function TestMessages:test_post_stop_may_sleep()
  local done_at
  local a = tend.spawn(function()
    return {
      receive = function() end,
      post_stop = function(self, ctx) ctx:sleep(2) done_at = tend.now() end,
    }
  end)
  local t0 = tend.now()
  tend.stop(a)
  tend.sleep(3)
  lu.assertEquals(done_at - t0, 2)
  lu.assertFalse(tend.alive(a))
end

function TestMessages:test_post_stop_overrunning_shutdown_is_killed()
  local finished = false
  local a = tend.spawn(function()
    return {
      receive = function() end,
      post_stop = function(self, ctx) ctx:sleep(10) finished = true end,
    }
  end, { shutdown = 1 })
  local t0 = tend.now()
  tend.stop(a)
  while tend.alive(a) do tend.sleep(0.25) end
  lu.assertEquals(tend.now() - t0, 1)
  tend.sleep(20)
  lu.assertFalse(finished)
end

function TestMessages:test_dead_letters_are_counted()
  local a = tend.spawn(function() return function() end end)
  H.stop_all(a)
  local before = tend.stats().dead_letters
  a:send(1)
  tend.send(a, 2)
  a:tell(3, nil)
  lu.assertEquals(tend.stats().dead_letters - before, 3)
end

function TestMessages:test_stale_ref_never_reaches_a_new_actor()
  local got = {}
  local old = tend.spawn(function() return function(m) got[#got + 1] = "old:" .. m end end)
  H.stop_all(old)
  -- the freed slot is reused by the next spawn
  local new = tend.spawn(function() return function(m) got[#got + 1] = "new:" .. m end end)
  old:send("x")
  new:send("y")
  H.settle()
  lu.assertEquals(got, { "new:y" })
  lu.assertFalse(tend.alive(old))
  lu.assertTrue(tend.alive(new))
  lu.assertFalse(old == new)
  lu.assertEquals(old:path(), "/user/$" .. old:name():sub(2))
  H.stop_all(new)
end

function TestMessages:test_refs_compare_and_key_tables()
  local a = tend.spawn(function() return function(msg, ctx) ctx:reply(ctx.self) end end,
    { name = "keyed" })
  local self_ref = tend.ask(a, "who", 1)
  lu.assertTrue(self_ref == a)
  local t = { [a] = "found" }
  lu.assertEquals(t[self_ref], "found")
  lu.assertEquals(tostring(a), "Ref(/user/keyed)")
  lu.assertEquals(a:name(), "keyed")
  lu.assertEquals(a:path(), "/user/keyed")
  H.stop_all(a)
  lu.assertEquals(a:path(), "/user/keyed") -- a dead ref remembers its path
end

-- An anonymous actor that dies before anyone asked its path gets it made
-- when first asked (its death makes no string): from its ref, its ref's
-- tostring and name, a watcher's terminated message and its saved ctx.
function TestMessages:test_a_dead_anonymous_actors_path_is_made_when_asked()
  local kids, ctxs, seen = {}, {}, {}
  local parent = tend.spawn(function()
    return function(msg, ctx)
      for i = 1, 4 do
        kids[i] = ctx:spawn(function(c)
          ctxs[i] = c
          return function() end
        end)
      end
    end
  end)
  parent:send("spawn")
  H.settle()
  local first, fourth = kids[1]:path(), kids[4]:path() -- asked while alive
  local base, n = first:match("^(/user/%$%d+/%$)(%d+)$")
  n = tonumber(n)
  lu.assertEquals(fourth, base .. (n + 3))
  local watcher = tend.spawn(function(ctx)
    ctx:watch(kids[2])
    return function(msg)
      if type(msg) == "table" and msg.tend == "terminated" then seen[#seen + 1] = msg.ref:path() end
    end
  end)
  H.settle()
  tend.stop(kids[2])
  tend.stop(kids[3])
  H.settle()
  lu.assertFalse(tend.alive(kids[2]))
  lu.assertEquals(seen, { base .. (n + 1) }) -- the watcher asked first
  lu.assertEquals(kids[2]:path(), base .. (n + 1))
  lu.assertEquals(tostring(kids[3]), "Ref(" .. base .. (n + 2) .. ")") -- first ask: tostring
  lu.assertEquals(kids[3]:path(), base .. (n + 2)) -- made once, then kept
  lu.assertEquals(kids[3]:name(), "$" .. (n + 2))
  local ok, err = pcall(ctxs[2].after, ctxs[2], 1, "x")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "called outside its actor (" .. base .. (n + 1) .. ")")
  H.stop_all(parent, watcher)
end

function TestMessages:test_sender_and_reply_and_tell()
  local echo = tend.spawn(function() return function(msg, ctx) ctx:reply(msg) end end)
  local log = {}
  local sink = H.recorder(log)
  echo:tell("to-sink", sink)
  H.settle()
  lu.assertEquals(log, { "to-sink" })
  -- inside an actor, send carries the actor as sender (implicit sender)
  local relay = tend.spawn(function()
    return function(msg, ctx)
      if msg == "go" then echo:send("ping") else log[#log + 1] = "relay got " .. msg end
    end
  end)
  relay:send("go")
  H.settle()
  lu.assertEquals(log, { "to-sink", "relay got ping" })
  H.stop_all(echo, sink, relay)
end

function TestMessages:test_reply_without_sender_is_a_dead_letter()
  local a = tend.spawn(function() return function(msg, ctx) ctx:reply("nobody") end end)
  local before = tend.stats().dead_letters
  a:tell("x", nil)
  H.settle()
  lu.assertEquals(tend.stats().dead_letters - before, 1)
  H.stop_all(a)
end

function TestMessages:test_children_stop_with_their_parent_youngest_first()
  local order = {}
  local function child(ctx, name)
    return { receive = function() end,
             post_stop = function() order[#order + 1] = name end }
  end
  local parent = tend.spawn(function(ctx)
    ctx:spawn(child, { name = "c1", args = { "c1" } })
    ctx:spawn(child, { name = "c2", args = { "c2" } })
    ctx:spawn(child, { name = "c3", args = { "c3" } })
    return {
      receive = function(self, msg, ctx)
        local names = {}
        for i, c in ipairs(ctx:children()) do names[i] = c:path() end
        ctx:reply(names)
      end,
      post_stop = function() order[#order + 1] = "parent" end,
    }
  end, { name = "parent" })
  lu.assertEquals(tend.ask(parent, "children", 1),
    { "/user/parent/c1", "/user/parent/c2", "/user/parent/c3" })
  tend.stop(parent)
  H.settle()
  lu.assertEquals(order, { "c3", "c2", "c1", "parent" })
end

function TestMessages:test_ctx_parent_and_names_unique_among_siblings()
  local a = tend.spawn(function(ctx)
    return function(msg, ctx)
      if msg == "spawn" then
        local c = ctx:spawn(function(cctx)
          return function(m, cctx) cctx:reply(cctx.parent) end
        end, { name = "kid" })
        ctx:reply(c)
      else
        ctx:reply(pcall(ctx.spawn, ctx, function() return function() end end,
          { name = "kid" }))
      end
    end
  end, { name = "dad" })
  local kid = tend.ask(a, "spawn", 1)
  lu.assertTrue(tend.ask(kid, "parent?", 1) == a)
  local ok, err = tend.ask(a, "again", 1)
  lu.assertFalse(ok)
  H.stop_all(a)
end

function TestMessages:test_mailbox_drop_new()
  local log = {}
  local gate = tend.spawn(function()
    return function(msg, ctx)
      if msg == "block" then ctx:sleep(1) else log[#log + 1] = msg end
    end
  end, { mailbox = { capacity = 2, overflow = "drop_new" } })
  gate:send("block")
  H.settle() -- now asleep
  local before = tend.stats().dead_letters
  for i = 1, 4 do gate:send(i) end
  tend.sleep(2)
  lu.assertEquals(log, { 1, 2 })
  lu.assertEquals(tend.stats().dead_letters - before, 2)
  H.stop_all(gate)
end

function TestMessages:test_mailbox_drop_old()
  local log = {}
  local gate = tend.spawn(function()
    return function(msg, ctx)
      if msg == "block" then ctx:sleep(1) else log[#log + 1] = msg end
    end
  end, { mailbox = { capacity = 2, overflow = "drop_old" } })
  gate:send("block")
  H.settle()
  for i = 1, 4 do gate:send(i) end
  tend.sleep(2)
  lu.assertEquals(log, { 3, 4 })
  H.stop_all(gate)
end

function TestMessages:test_mailbox_fail_fails_the_actor()
  local gate = tend.spawn(function()
    return function(msg, ctx) if msg == "block" then ctx:sleep(1) end end
  end, { mailbox = { capacity = 1, overflow = "fail" } })
  gate:send("block")
  H.settle()
  local failures = tend.stats().failures
  gate:send(1)
  gate:send(2)
  tend.sleep(2)
  lu.assertEquals(tend.stats().failures - failures, 1)
  H.stop_all(gate)
end

function TestMessages:test_nothing_left_behind()
  H.settle()
  lu.assertEquals(H.live(), 0)
  lu.assertEquals(tend.stats().timers, 0)
end

-- Messages keep their values and types: integers, floats, booleans,
-- strings, tables by reference.
function TestMessages:test_messages_keep_their_values_and_types()
  local got = {}
  local r = tend.spawn(function()
    return function(msg) got[#got + 1] = { math.type(msg) or type(msg), msg } end
  end)
  local t = {}
  for _, v in ipairs { 1, 1.0, 2.5, -7, math.huge, math.mininteger, true, false, "s", t } do r:send(v) end
  H.settle()
  lu.assertEquals(got, { { "integer", 1 }, { "float", 1.0 }, { "float", 2.5 }, { "integer", -7 },
    { "float", math.huge }, { "integer", math.mininteger }, { "boolean", true }, { "boolean", false },
    { "string", "s" }, { "table", t } })
  lu.assertIs(got[10][2], t)
  H.stop_all(r)
end

function TestMessages:test_sending_to_a_guardian_is_a_dead_letter()
  local a = tend.spawn(function() return function(msg, ctx) ctx:reply(ctx.parent) end end)
  local user = tend.ask(a, "?", 1)
  lu.assertEquals(user:path(), "/user")
  local dead = tend.stats().dead_letters
  user:send("hello")
  H.settle()
  lu.assertEquals(tend.stats().dead_letters - dead, 1)
  H.stop_all(a)
end
