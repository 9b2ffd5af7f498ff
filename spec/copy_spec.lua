-- --copy-messages (design §8.1): every message deep-copied where it
-- is sent, so the sender's later changes and a shared table's races show
-- up; functions and coroutines refused with a named error. Each test runs
-- tend as a subprocess with the flag.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestCopyMessages = {}

function TestCopyMessages:tearDown() H.assert_clean() end

local PRELUDE = [[
local tend = require "tend"
local function settle() repeat tend.sleep(0) until tend.stats().runnable == 0 end
]]

-- Runs code with --copy-messages (or without, copy == false); returns
-- stdout, after checking the exit status and that stderr is empty.
local function run(code, copy)
  local args = { "--virtual-time", "-e", PRELUDE .. code }
  if copy ~= false then table.insert(args, 1, "--copy-messages") end
  local out, err, status = H.run(args)
  lu.assertEquals(status, 0, err)
  lu.assertEquals(err, "")
  return out
end

local SENDER_CHANGES = [[
local got
local r = tend.spawn(function() return function(m) got = m end end)
local t = { n = 1 }
r:send(t)
t.n = 2                       -- the sender changes it after the send
settle()
print(tend.copy_messages(), got == t, got.n)
]]

function TestCopyMessages:test_the_senders_later_change_is_not_seen()
  lu.assertEquals(run(SENDER_CHANGES), "true\tfalse\t1\n")
end

function TestCopyMessages:test_without_the_flag_the_table_is_shared()
  lu.assertEquals(run(SENDER_CHANGES, false), "false\ttrue\t2\n")
end

function TestCopyMessages:test_cycles_shared_tables_and_metatables_are_kept()
  local out = run([[
local got
local r = tend.spawn(function() return function(m) got = m end end)
local shared = { 1, 2 }
local mt = { __index = { hello = function() return "hi" end } }
local t = setmetatable({ a = shared, b = shared, s = "x", [shared] = "as key" }, mt)
t.self = t
r:send(t)
settle()
print(got ~= t, got.a ~= shared, got.a == got.b, got.self == got,
      got[got.a], getmetatable(got) == mt, got.hello(), got.s, #got.a)
]])
  lu.assertEquals(out, "true\ttrue\ttrue\ttrue\tas key\ttrue\thi\tx\t2\n")
end

function TestCopyMessages:test_refs_error_values_and_sentinels_go_as_they_are()
  local out = run([[
local got
local r = tend.spawn(function() return function(m) got = m end end)
local e = tend.error("Boom", "kept")
r:send({ ref = r, err = e, stop = tend.stopped, un = tend.unhandled })
settle()
print(got.ref == r, rawequal(got.err, e), rawequal(got.stop, tend.stopped),
      rawequal(got.un, tend.unhandled))
]])
  lu.assertEquals(out, "true\ttrue\ttrue\ttrue\n")
end

function TestCopyMessages:test_asks_and_replies_are_copied_both_ways()
  local out = run([[
local kept
local r = tend.spawn(function()
  return function(m, ctx) kept = { seen = m } ctx:reply(kept) kept.later = true end
end)
local q = { x = {} }
local a = tend.ask(r, q, 1)
print(kept.seen ~= q, kept.seen.x ~= q.x, a ~= kept, a.later)
]])
  lu.assertEquals(out, "true\ttrue\ttrue\tnil\n")
end

function TestCopyMessages:test_after_copies_when_armed_and_every_tick_is_fresh()
  local out = run([[
local log = {}
local r = tend.spawn(function(ctx)
  local t = { n = 1 }
  ctx:after(1, t)
  t.n = 99                     -- changed after arming: not seen
  ctx:every(2, { ticks = 0 })
  return function(m)
    if m.n then log[#log + 1] = "after " .. m.n
    else m.ticks = m.ticks + 1 log[#log + 1] = "tick " .. m.ticks end
  end
end)
tend.sleep(6.5)
tend.stop(r)
print(table.concat(log, ", "))
]])
  lu.assertEquals(out, "after 1, tick 1, tick 1, tick 1\n")
end

function TestCopyMessages:test_functions_and_coroutines_are_refused_and_nothing_is_sent()
  local out = run([[
local got = 0
local r = tend.spawn(function() return function() got = got + 1 end end)
for _, m in ipairs {
  print,
  { a = { b = { 1, 2, print } } },
  { ["a b"] = coroutine.create(print) },
  { [print] = true },
  { io.stdout },
} do
  local ok, err = pcall(r.send, r, m)
  print(ok, err.kind, err.message)
end
settle()
print(got, tend.stats().dead_letters)
]])
  local tail = " (a copied message holds nil, booleans, numbers, strings, tables, refs and error values)\n"
  lu.assertEquals(out,
    "false\tNotCopyable\t--copy-messages: cannot copy a function at message" .. tail ..
    "false\tNotCopyable\t--copy-messages: cannot copy a function at message.a.b[3]" .. tail ..
    "false\tNotCopyable\t--copy-messages: cannot copy a coroutine at message[\"a b\"]" .. tail ..
    "false\tNotCopyable\t--copy-messages: cannot copy a function at message (a key)" .. tail ..
    "false\tNotCopyable\t--copy-messages: cannot copy a userdata at message[1]" .. tail ..
    "0\t0\n")
end

function TestCopyMessages:test_an_actor_sending_a_function_fails_with_NotCopyable()
  local out = run([[
local me = tend.self()
local sup = tend.spawn(function(ctx)
  ctx:spawn(function() return function() me:send({ callback = print }) end end, { name = "w" }):send("go")
  return function() end
end, { supervisor = tend.one_for_one { log = false, decider = function(err)
  me:send(err.kind .. ": " .. err.message) return "stop" end } })
print(tend.receive(1))
tend.stop(sup)
]])
  lu.assertStrContains(out, "NotCopyable: --copy-messages: cannot copy a function at message.callback")
end

function TestCopyMessages:test_reply_while_stopped_must_be_copyable()
  local out = run([[
local ok, err = pcall(tend.spawn, tend.backoff.on_failure(function() return function() end end,
  { min_backoff = 1, max_backoff = 2 }):with_reply_while_stopped({ f = print }))
print(ok, err.kind, err.message)
print(tend.stats().actors)
]])
  lu.assertEquals(out, "false\tNotCopyable\ttend.spawn: option 'reply_while_stopped': --copy-messages: cannot copy a function at message.f (a copied message holds nil, booleans, numbers, strings, tables, refs and error values)\n1\n")
end

function TestCopyMessages:test_deep_messages_copy_without_recursion()
  local out = run([[
local got
local r = tend.spawn(function() return function(m) got = m end end)
local head = {}
local t = head
for i = 1, 100000 do t.next = { i = i } t = t.next end
r:send(head)
settle()
local n, x = 0, got
while x.next do n = n + 1 x = x.next end
print(n, x.i, got ~= head)
t.f = print                   -- now 100000 levels down: too deep to name
local ok, err = pcall(r.send, r, head)
print(ok, err.message:match("at message[^(]*%(deeper than 64 levels%)") ~= nil)
]])
  lu.assertEquals(out, "100000\t100000\ttrue\nfalse\ttrue\n")
end

-- A server's request actor takes its record from the server's table, not
-- from the message (a copy here): a streamed body's pull, kept in that
-- record, is found for every chunk.
function TestCopyMessages:test_a_streamed_http_answer_is_whole()
  local out = run([[
local n = 0
tend.http.serve({ host = "api", handler = function(req)
  return { headers = { ["content-type"] = "text/plain" }, body = function()
    n = n + 1
    if n <= 3 then return req.query.p .. n .. ";" end
  end }
end })
local r = tend.http.get("http://api/x?p=c")
print(r.status, r.body, tend.http.get("http://api/").status)
]])
  lu.assertEquals(out, "200\tc1;c2;c3;\t200\n")
end

function TestCopyMessages:test_the_flag_is_in_the_help()
  local out, _, status = H.run({ "--help" })
  lu.assertEquals(status, 0)
  lu.assertStrContains(out, "--copy-messages")
  lu.assertFalse(tend.copy_messages()) -- `tend test` runs without it
end
