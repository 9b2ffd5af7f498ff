-- The log lines of dead letters and unhandled messages (Akka's
-- DeadLetterListener): the message (shortened), its sender and its
-- recipient, at info; the first 10 of an interval of 10 s, then one line
-- with the count of the suppressed ones. Run as subprocesses under the
-- virtual clock, so times and counts are exact.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestLogs = {}

function TestLogs:tearDown() H.assert_clean() end

-- Runs the script text at --log-level level (default info); returns the
-- stderr lines that come from /deadLetters, and the whole stderr.
local function dead_letter_lines(text, level)
  local path = H.script(text)
  local out, err, code = H.run { "--virtual-time", "--seed", "1", "--log-level", level or "info", path }
  os.remove(path)
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "")
  local lines = {}
  for line in err:gmatch("[^\n]+") do
    if line:find("/deadLetters:", 1, true) then lines[#lines + 1] = line end
  end
  return lines, err
end

local PRELUDE = [[
local tend = require "tend"
local function sink() return function() end end
]]

function TestLogs:test_a_dead_letter_shows_the_message_its_sender_and_its_recipient()
  local lines = dead_letter_lines(PRELUDE .. [[
local gone = tend.spawn(sink, { name = "gone" })
tend.stop(gone)
tend.sleep(1)
gone:send("hello")
local sender = tend.spawn(function()
  return function(msg, ctx) gone:send({ job = 7 }) end
end, { name = "sender" })
sender:send("go")
tend.sleep(1)
tend.stop(sender)
]])
  lu.assertEquals(lines, {
    '[1.000] info  /deadLetters: dead letter: "hello" from /user/main to /user/gone (its recipient is gone) [1]',
    '[1.000] info  /deadLetters: dead letter: {job=7} from /user/sender to /user/gone (its recipient is gone) [2]',
  })
end

function TestLogs:test_an_unhandled_message_is_logged_with_sender_and_recipient()
  local lines = dead_letter_lines(PRELUDE .. [[
local picky = tend.spawn(function()
  return function(msg) if msg ~= "mine" then return tend.unhandled end end
end, { name = "picky" })
picky:send("mine")
picky:tell({ 1, 2, kind = "other" }, nil)
tend.sleep(0.5)
assert(tend.stats().unhandled == 1, tend.stats().unhandled)
assert(tend.stats().dead_letters == 0)
tend.stop(picky)
]])
  lu.assertEquals(lines, {
    '[0.000] info  /deadLetters: unhandled: {1, 2, kind="other"} from nobody to /user/picky [1]',
  })
end

function TestLogs:test_more_reasons_each_named()
  local lines = dead_letter_lines(PRELUDE .. [[
local full = tend.spawn(sink, { name = "full", mailbox = { capacity = 1 } })
tend.chaos.freeze(full, 1)
full:send(1)
full:send(2)                      -- mailbox full
local replier = tend.spawn(function()
  return function(msg, ctx) ctx:reply(msg * 2) end
end, { name = "replier" })
replier:tell(21, nil)             -- a reply with no sender
local slow = tend.spawn(function()
  return function(msg, ctx) ctx:sleep(2) ctx:reply("late") end
end, { name = "slow" })
pcall(tend.ask, slow, "q", 1)     -- the reply comes after the ask timed out
tend.sleep(2)
local busy = tend.spawn(function()
  return function(msg, ctx) ctx:sleep(5) end
end, { name = "busy" })
busy:send("first")
busy:send("second")
tend.sleep(1)
tend.stop(busy)                   -- "second" is still in its mailbox
tend.sleep(1)
tend.stop(full) tend.stop(replier) tend.stop(slow)
]])
  lu.assertEquals(lines, {
    '[0.000] info  /deadLetters: dead letter: 2 from /user/main to /user/full (mailbox full) [1]',
    '[0.000] info  /deadLetters: dead letter: 42 from /user/replier to nobody (a reply, but the message had no sender) [2]',
    '[2.000] info  /deadLetters: dead letter: "late" from /user/slow to a dead actor or an ask that is over (its recipient is gone) [3]',
    '[4.000] info  /deadLetters: dead letter: "second" from /user/main to /user/busy (its recipient stopped) [4]',
  })
end

function TestLogs:test_messages_are_shortened_to_60_characters()
  local lines = dead_letter_lines(PRELUDE .. [[
local gone = tend.spawn(sink, { name = "gone" })
tend.stop(gone)
tend.sleep(0)
gone:send(string.rep("abcdefghij", 10))
gone:send({ z = 1, a = { deep = true }, m = gone, 10, "x\n" })
local letters = {}
for c in ("ponmlkjihgfedcba"):gmatch(".") do letters[c] = 1 end
gone:send(letters)
gone:send(setmetatable({}, { __tostring = function() error("never called") end,
                             __index = function() error("never called") end,
                             __pairs = function() error("never called") end }))
]])
  lu.assertEquals(#lines, 4)
  local shown = lines[1]:match("dead letter: (.-) from ")
  lu.assertEquals(shown, '"' .. ("abcdefghij"):rep(6):sub(1, 59) .. "...")
  lu.assertEquals(#shown, 63)
  lu.assertStrContains(lines[2], 'dead letter: {10, "x\\n", a={...}, m=Ref(/user/gone), z=1} from')
  lu.assertStrContains(lines[3], "dead letter: {a=1, b=1, c=1, d=1, e=1, f=1, g=1, h=1, i=1, j=1, k=1, l=1... from")
  lu.assertStrContains(lines[4], "dead letter: {} from")
end

-- The first 10 of an interval are logged; the rest are counted and said in
-- one line when the next interval begins (or the host starts to stop).
function TestLogs:test_the_first_10_then_a_count_per_10_s_interval()
  local lines = dead_letter_lines(PRELUDE .. [[
local gone = tend.spawn(sink, { name = "gone" })
tend.stop(gone)
tend.sleep(0)
for i = 1, 25 do gone:send(i) end
tend.sleep(4)
gone:send("still in the first interval")
tend.sleep(6)
gone:send("at 10 s: a new interval")
for i = 1, 12 do gone:send(i) end
tend.sleep(3)
]])
  lu.assertEquals(#lines, 10 + 1 + 10 + 1)
  lu.assertStrContains(lines[1], "[0.000] info  /deadLetters: dead letter: 1 from /user/main to /user/gone")
  lu.assertStrContains(lines[10], "dead letter: 10 from /user/main to /user/gone (its recipient is gone) [10]; no more are logged until 10.000 s")
  lu.assertEquals(lines[11], "[10.000] info  /deadLetters: 16 dead letters suppressed from 0.000 s to 10.000 s")
  lu.assertStrContains(lines[12], '[10.000] info  /deadLetters: dead letter: "at 10 s: a new interval" from')
  lu.assertStrContains(lines[12], "[1]")
  lu.assertStrContains(lines[21], "dead letter: 9 from /user/main to /user/gone (its recipient is gone) [10]; no more are logged until 20.000 s")
  lu.assertEquals(lines[22], "[13.000] info  /deadLetters: 3 dead letters suppressed from 10.000 s to 13.000 s")
end

function TestLogs:test_unhandled_messages_share_the_budget()
  local lines = dead_letter_lines(PRELUDE .. [[
local deaf = tend.spawn(function() return function() return tend.unhandled end end, { name = "deaf" })
for i = 1, 15 do deaf:send(i) end
tend.sleep(1)
tend.stop(deaf)
]])
  lu.assertEquals(#lines, 11)
  lu.assertStrContains(lines[1], "unhandled: 1 from /user/main to /user/deaf [1]")
  lu.assertEquals(lines[11], "[1.000] info  /deadLetters: 5 dead letters suppressed from 0.000 s to 1.000 s")
end

function TestLogs:test_nothing_at_the_default_level_nor_while_shutting_down()
  local script = PRELUDE .. [[
local gone = tend.spawn(sink, { name = "gone" })
tend.stop(gone)
tend.sleep(0)
gone:send("x")
]]
  local lines = dead_letter_lines(script, "warn")
  lu.assertEquals(lines, {})
  -- messages left in mailboxes when the host stops are not logged (Akka's
  -- log-dead-letters-during-shutdown = off), though counted
  lines = dead_letter_lines(PRELUDE .. [[
local busy = tend.spawn(function() return function(m, ctx) ctx:sleep(100) end end)
for i = 1, 5 do busy:send(i) end
tend.sleep(1)
tend.shutdown(0)
]])
  lu.assertEquals(lines, {})
end

-- ------------------------------------------------------------ children =

-- The spawn option that sets the strategy of an actor's children is named
-- `children` (`supervisor` stays as an alias); an actor given one that has
-- no child for its whole first second gets a warning, once.
TestChildrenOption = {}

function TestChildrenOption:tearDown() H.assert_clean() end

local function failing_child_under(opts)
  local sup = tend.spawn(function(ctx)
    local c = ctx:spawn(function() return function(m) error("boom") end end, { name = "c" })
    return function(m, ctx) ctx:reply(c) end
  end, opts)
  local c = tend.ask(sup, "?", 1)
  c:send("fail")
  H.settle()
  local alive = tend.alive(c)
  H.stop_all(sup)
  return alive
end

function TestChildrenOption:test_children_sets_the_strategy_of_the_children()
  lu.assertTrue(failing_child_under(nil))                              -- default: restart
  lu.assertFalse(failing_child_under({ children = tend.stopping }))   -- stopped
  lu.assertFalse(failing_child_under({ supervisor = tend.stopping })) -- the alias
end

function TestChildrenOption:test_bad_values_name_the_option_given()
  local idle = function() return function() end end
  local before = tend.stats().spawned
  lu.assertErrorMsgContains(
    "tend.spawn: option 'children': expected a strategy for the actor's children (tend.one_for_one{...}, tend.stopping, ...), got strict (string)",
    tend.spawn, idle, { children = "strict" })
  lu.assertErrorMsgContains("option 'supervisor': expected a strategy for the actor's children",
    tend.spawn, idle, { supervisor = {} })
  lu.assertErrorMsgContains("options 'children' and 'supervisor' are the same option",
    tend.spawn, idle, { children = tend.stopping, supervisor = tend.stopping })
  lu.assertEquals(tend.stats().spawned, before)
end

local WARNING = "spawned with a strategy for its children (option 'children', alias 'supervisor') " ..
  "but had no child in its first second: a strategy supervises the actor's children, not the " ..
  "actor itself; to supervise this actor, give the strategy to its parent"

local function warnings(text)
  local path = H.script("local tend = require 'tend'\nlocal function idle() return function() end end\n" .. text)
  local out, err, code = H.run { "--virtual-time", path }
  os.remove(path)
  lu.assertEquals(code, 0, err)
  local lines = {}
  for line in err:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

function TestChildrenOption:test_a_leaf_with_a_strategy_is_warned_about_once()
  lu.assertEquals(warnings [[
local leaf = tend.spawn(function() return function() end end,
  { name = "leaf", children = tend.one_for_one { max_retries = 3 } })
tend.sleep(0.5)
leaf:send("early: nothing to say yet")
tend.sleep(1)
leaf:send("after its first second")
leaf:send("once only")
tend.sleep(1)
tend.stop(leaf)
]], { "[1.500] warn  /user/leaf: " .. WARNING })
end

function TestChildrenOption:test_a_supervisor_with_children_is_not_warned_about()
  lu.assertEquals(warnings [[
local sup = tend.spawn(function(ctx)
  ctx:spawn(idle)
  return function() end
end, { name = "sup", supervisor = tend.stopping })
local soon = tend.spawn(function()
  return function(m, ctx) ctx:spawn(idle) end
end, { name = "soon", children = tend.stopping })
tend.sleep(0.9)
soon:send("spawn a child within the first second")
tend.sleep(1)
sup:send("x") soon:send("x")
local brief = tend.spawn(idle, { name = "brief", children = tend.stopping })
tend.sleep(0.5)
tend.stop(brief) -- gone before its first second was over
tend.sleep(2)
tend.stop(sup) tend.stop(soon)
]], {})
end

function TestChildrenOption:test_a_late_first_child_or_a_childless_death_is_warned_about()
  lu.assertEquals(warnings [[
local late = tend.spawn(function()
  return function(m, ctx) ctx:spawn(idle) end
end, { name = "late", children = tend.stopping })
local quiet = tend.spawn(idle, { name = "quiet", children = tend.stopping })
tend.sleep(2)
late:send("a first child, after 2 s")
tend.sleep(1)
tend.stop(quiet) -- never got a message: said when it dies
tend.sleep(1)
tend.stop(late)
]], { "[2.000] warn  /user/late: " .. WARNING, "[3.000] warn  /user/quiet: " .. WARNING })
end

-- tend.log and ctx:log: `[time] level path: text` on stderr, formatted as
-- string.format does, for the level given and those above it only; the
-- path is the running actor's. A level that is none is an error naming it.
function TestLogs:test_tend_log_and_ctx_log_write_lines_at_their_level()
  local path = H.script([[
local tend = require "tend"
tend.log("info", "x %d %s", 3, "y")
tend.log("debug", "hidden")
local a = tend.spawn(function(ctx) ctx:log("warn", "from %s", "a") return function() end end, { name = "a" })
tend.sleep(1.5)
tend.stop(a)
tend.log("error", 42)
local ok, err = pcall(tend.log, "loud", "x")
print(ok, err)
]])
  local out, err, code = H.run { "--virtual-time", "--seed", "1", "--log-level", "info", path }
  os.remove(path)
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "false\ttend.log: level: expected error, warn, info or debug, got loud\n")
  local lines = {}
  for line in err:gmatch("[^\n]+") do
    if not line:find(" debug ", 1, true) then lines[#lines + 1] = line end
  end
  lu.assertEquals(lines, {
    "[0.000] info  /user/main: x 3 y",
    "[0.000] warn  /user/a: from a",
    "[1.500] error /user/main: 42",
  })
end

-- A child that echoes, reports its lifecycle to `log` and fails on
-- {raise = kind}.
local function worker(ctx, name, log)
  log = log or {}
  return {
    pre_start = function() log[#log + 1] = name .. ":start" end,
    post_stop = function() log[#log + 1] = name .. ":stop" end,
    receive = function(self, msg, ctx)
      if type(msg) == "table" and msg.raise then tend.raise(msg.raise, "boom") end
      if type(msg) == "table" and msg.nap then ctx:sleep(msg.nap) return end
      ctx:reply(msg)
    end,
  }
end

-- A supervisor with `strategy` whose children (names) start in order;
-- asked "children" it replies with them, {stop = ref} stops one.
local function supervisor(strategy, names, log)
  return tend.spawn(function(ctx)
    for _, name in ipairs(names) do ctx:spawn(worker, { name = name, args = { name, log } }) end
    return function(msg, ctx)
      if msg == "children" then ctx:reply(ctx:children()) end
      if type(msg) == "table" and msg.stop then ctx:stop(msg.stop) end
      if type(msg) == "table" and msg.tend_stop then tend.stop(msg.tend_stop) end
    end
  end, { supervisor = strategy })
end

-- Backoff restarts count in stats().restarts and in the child's restarts;
-- each failure is one warn line with its cause and what was done.
function TestLogs:test_backoff_restarts_are_counted_and_logged()
  local path = H.script([[
local tend = require "tend"
local b = tend.spawn(tend.backoff.on_failure(function() return function() error("y") end end,
  { name = "c", min_backoff = 1, max_backoff = 1, random_factor = 0 }), { name = "b" })
b:send(1)
tend.sleep(1.5)
b:send(1)
tend.sleep(1.5)
print(tend.stats().restarts, tend.ps()[4].path, tend.ps()[4].restarts)
tend.stop(b)
]])
  local out, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "2\t/user/b/c\t2\n")
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/b/c: Error: F:2: y; restart after a backoff (restarts 1)\n"
    .. "[1.500] warn  /user/b/c: Error: F:2: y; restart after a backoff (restarts 2)\n")
end

-- A temporary child is stopped, and the log says so.
function TestLogs:test_a_temporary_childs_failure_logs_stop()
  local path = H.script([[
local tend = require "tend"
local sup = tend.spawn(function(ctx)
  ctx:spawn(function() return function() error("x") end end, { name = "t", restart = "temporary" })
  return function(m, c) c:reply(c:children()[1]) end
end, { name = "sup" })
tend.ask(sup, "?"):send(1)
tend.sleep(1)
tend.stop(sup)
]])
  local _, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/sup/t: Error: F:3: x; stop (temporary: never restarted) (restarts 0)\n")
end

-- A failure handled by an actor's own clauses (tend.supervise) is one warn
-- line too, with the cause and the action taken.
function TestLogs:test_a_typed_actors_failure_is_logged()
  local path = H.script([[
local tend = require "tend"
local a = tend.spawn(tend.supervise(function() return function(m) error("x") end end)
  :on_failure("*", tend.restart_with_backoff(1, 2, 0)), { name = "a" })
a:send(1)
tend.sleep(1.5)
tend.stop(a)
]])
  local _, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/a: Error: F:2: x; restart_with_backoff (restarts 1)\n")
end

-- The warn line says what was done: a typed limit reached stops, a backoff
-- supervisor at max_retries stops.
function TestLogs:test_a_limit_reached_is_logged_as_a_stop()
  local path = H.script([[
local tend = require "tend"
local a = tend.spawn(tend.supervise(function() return function() error("x") end end)
  :on_failure("*", tend.restart_with_limit(1, 10)), { name = "t" })
a:send(1) tend.sleep(0.1) a:send(2) tend.sleep(0.1)
tend.spawn(tend.backoff.on_failure(function() return function() error("y") end end,
  { name = "c", min_backoff = 1, max_backoff = 1, random_factor = 0, reset_after = 100 }):with_max_retries(1), { name = "b" })
tend.sleep(0.1)
tend.send("/user/b", 1) tend.sleep(2)
tend.send("/user/b", 1) tend.sleep(2)
]])
  local _, err, code = H.run({ "--virtual-time", path })
  os.remove(path)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/t: Error: F:2: x; restart_with_limit (restarts 1)\n"
    .. "[0.100] warn  /user/t: Error: F:2: x; restart_with_limit: limit reached; stop (restarts 1)\n"
    .. "[0.300] warn  /user/b/c: Error: F:5: y; restart after a backoff (restarts 1)\n"
    .. "[2.300] warn  /user/b/c: Error: F:5: y; max_retries reached; the supervisor stops (restarts 1)\n")
end

-- Lifecycle events log at debug, even when they are made for a trace;
-- backoff, reset, give_up, stash_drop and chaos at info; each handled
-- failure at warn.
function TestLogs:test_lifecycle_events_log_at_debug_backoff_events_at_info()
  local path = H.script([[
local tend = require "tend"
local a = tend.spawn(function() return function() error("x") end end, { name = "a" })
a:send(1)
tend.sleep(1)
local b = tend.spawn(tend.backoff.on_failure(function() return function() error("y") end end,
  { name = "c", min_backoff = 1, max_backoff = 1, random_factor = 0 }), { name = "b" })
b:send(1)
tend.sleep(2)
tend.stop(a)
tend.stop(b)
]])
  local trace = os.tmpname() -- traced, every event is made; still only these log at info
  local _, err, code = H.run({ "--virtual-time", "--log-level", "info", "--trace", trace, path })
  os.remove(trace)
  lu.assertEquals(code, 0)
  lu.assertEquals(err:gsub("/tmp/[^:]*:", "F:"),
    "[0.000] warn  /user/a: Error: F:2: x; restart (restarts 1)\n"
    .. "[1.000] warn  /user/b/c: Error: F:5: y; restart after a backoff (restarts 1)\n"
    .. "[1.000] info  /user/b: backoff #1 in 1.000 s\n"
    .. "[3.000] info  /user/b: reset\n")
  os.remove(path)
end
