-- The doc entries of the group "scenario": traces and chaos (the format:
-- lua/tend/doc.lua). An example whose first line is "-- run: tend FLAGS"
-- runs with those flags; the others run with none.
return {
  ---------------------------------------------------------------- traces
  { name = "tend.trace",
    sig = "tend.trace(fn | true | false | { internal = bool })",
    summary = "Listens to the lifecycle events: fn(event) gets each one, true writes them to stderr.",
    text = [[
fn is called between turns with one table per event (a tend.TraceEvent);
several listeners may be added, and each stays for the rest of the run.
true writes the events as JSON lines on stderr too; false removes every
listener and stops the stderr lines (a --trace file keeps being written).
{ internal = true } also shows tend's own short-lived tasks (each transfer
of the simulated network, a chaos delay or freeze, the REPL's watch()), as
--trace-internal does; hiding them takes lines out and changes nothing
else (the anonymous $N numbers of later actors still count them). Under
--virtual-time --seed N the events of a run are the same, byte for byte,
run after run. At the REPL, trace(true) prints them as the scenario
timeline does.]],
    params = { { "listener", "fun(event: tend.TraceEvent)|boolean|tend.TraceOpts",
                 "a listener, true/false for stderr, or the options" } },
    returns = {},
    errors = { "an error when the argument is none of these, or an option other than internal" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.trace(function(e)
  if e.ev == "fail" or e.ev == "restart" then print(e.t, e.ev, e.path) end
end)
local w = tend.spawn(function() return function() error("boom") end end, { name = "w" })
w:send("go")
tend.sleep(0.1)
--> 0.0  fail     /user/w
--> 0.0  restart  /user/w]],
  },
  { name = "tend.trace_file",
    sig = "tend.trace_file(path) -> true | nil, message",
    summary = "Writes the lifecycle events to path as JSON lines from now on (as --trace).",
    text = [[
One JSON object per line, keys always in the same order, times and delays
in seconds with six decimals (a --trace file begins with a "trace" event
naming the seed). A file already being written is closed first. The file
is written in whole lines: when a write fails (a full disk) tend says so
once on stderr, cuts the file back to its last whole line, stops writing
it (the actors go on), and the run ends with status 1 instead of 0. `tend
timeline FILE` draws it as an SVG.]],
    params = { { "path", "string", "the file (created or truncated)" } },
    returns = { { "boolean?", "true, or nil when the file cannot be opened" },
                { "string?", "why: \"path: <the OS's text>\"" } },
    errors = { "an error when path is not a string" },
    example = [[
-- run: tend --virtual-time --seed 1
local tend = require "tend"
local path = os.tmpname()
assert(tend.trace_file(path))
tend.spawn(function() return function() end end, { name = "idle" })
tend.sleep(1)
tend.trace_file("/dev/null")   -- closes the first file (its lines are all there)
local f = io.open(path)
print(f:read("l"))   --> {"t":0.000000,"ev":"spawn","path":"/user/idle"}
print(f:read("l"))   --> {"t":0.000000,"ev":"start","path":"/user/idle","incarnation":1}
f:close()
os.remove(path)]],
  },
  { class = "tend.TraceOpts",
    summary = "The option table of tend.trace.",
    fields = { { "internal", "boolean", "show tend's own tasks' events too (as --trace-internal)" } },
  },
  { class = "tend.TraceEvent",
    summary = "One lifecycle event, as tend.trace's listeners get it and a --trace file holds it.",
    fields = {
      { "t", "number", "the host clock's time, in seconds" },
      { "ev", "\"trace\"|\"spawn\"|\"start\"|\"fail\"|\"directive\"|\"restart\"|\"backoff\"|"
        .. "\"reset\"|\"give_up\"|\"stop\"|\"terminated\"|\"escalate\"|\"dead_letter\"|\"stash_drop\"|"
        .. "\"chaos\"|\"node\"|\"spawn_os\"|\"ready\"|\"exit\"", "the event" },
      { "path", "string?", "the actor's path (/net/<host> or /node/<name> for a chaos event on them)" },
      { "node", "string?", "the simulated node the event happened on" },
      { "incarnation", "number?", "start, restart: the instance's number (1 for the first)" },
      { "kind", "string?", "fail: the error kind" },
      { "message", "string?", "fail: the error message" },
      { "directive", "string?", "directive: resume, restart, stop or escalate (and what a limit made of it)" },
      { "clause", "string?", "directive: the decider clause that matched (a kind, *, default, function, "
        .. "backoff, permanent)" },
      { "window", "table?", "directive: the restart window's use {used, allowed, within}" },
      { "count", "number?", "directive, restart, backoff: the restart count" },
      { "delay", "number?", "backoff: the delay in seconds" },
      { "draw", "number?", "backoff: the random draw of the jitter" },
      { "algorithm", "string?", "backoff: the delay formula" },
      { "reason", "string?", "stop, terminated: why (normal, shutdown, an error kind...)" },
      { "detail", "string?", "chaos, node: what was done; reset: its cause; trace: \"seed N\"" },
      { "to", "string?", "chaos: the other end of a link (a path)" },
      { "pid", "integer?", "spawn_os, exit: the OS process id" },
      { "argv0", "string?", "spawn_os: the program" },
      { "status", "integer?", "exit: the exit status" },
      { "signal", "string?", "exit: the signal that killed it, by name" },
    },
  },

  ---------------------------------------------------------------- chaos: actors
  { name = "tend.chaos.crash",
    sig = "tend.chaos.crash(ref [, err])",
    summary = "Fails ref now, as if its behavior had raised err.",
    text = [[
err is an error kind or a tend.error value (default kind ChaosCrash). The
actor's supervisor decides as for any failure. A chaos trace event.]],
    params = { { "ref", "tend.Ref", "the actor" },
               { "err", "string|table?", "an error kind or a tend.error value (default \"ChaosCrash\")" } },
    returns = {},
    errors = { "an error when ref is not an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local w = tend.spawn(function(ctx)
  print("start")
  return function() end
end, { name = "w" })
tend.chaos.crash(w, "DiskFull")
tend.sleep(0.1)           --> start (twice: the restart)]],
  },
  { name = "tend.chaos.kill",
    sig = "tend.chaos.kill(ref)",
    summary = "Fails ref with Killed now, wherever it is (tend.kill queues a Kill behind its mail instead).",
    text = [[
On an OS process actor (real or simulated) its program is then stopped by
the kill sequence. A chaos trace event.]],
    params = { { "ref", "tend.Ref", "the actor" } },
    returns = {},
    errors = { "an error when ref is not an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local w = tend.spawn(function() return function() end end, { restart = "temporary" })
tend.watch(w)
tend.chaos.kill(w)
print(tend.receive(1).reason.kind)   --> Killed]],
  },
  { name = "tend.chaos.signal",
    sig = "tend.chaos.signal(ref, name)",
    summary = "Sends a signal to ref's OS process (its process group), real or simulated.",
    text = [[
name is a signal name such as "TERM", "HUP" or "SEGV" ("SIG" may lead). A
simulated process (tend.process{ sim = ... }) gets it as a real one would:
its p:on_signal handler, else TERM, HUP, INT, SEGV... end it and CHLD,
WINCH, URG are ignored. A dead actor: nothing. A chaos trace event.]],
    params = { { "ref", "tend.Ref", "a process actor (tend.process)" },
               { "name", "string", "the signal's name" } },
    returns = {},
    errors = { "an error when name is no signal, or ref runs no OS process" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local p = tend.spawn(tend.process { sim = function(p) p:sleep(60) end }, { restart = "temporary" })
tend.watch(p)
tend.sleep(1)
tend.chaos.signal(p, "SEGV")
local m = tend.receive(1)
print(m.reason.kind, m.reason.signal)   --> ProcessSignal  SEGV]],
  },
  { name = "tend.chaos.flaky",
    sig = "tend.chaos.flaky(fn [, { p = 0.5, error = \"ChaosError\" }]) -> function",
    summary = "Wraps fn so that each call raises an error with probability p, else calls fn.",
    text = [[
The draws come from the seeded generator, so a seed replays which calls
fail. Each injected failure is a chaos event ("flaky") and raises a
structured error of kind `error` (default ChaosError) with the message
"injected by tend.chaos.flaky".]],
    params = { { "fn", "function", "the function to wrap" },
               { "opts", "tend.FlakyOpts?", "p and error" } },
    returns = { { "function", "the wrapper: same arguments and results as fn" } },
    errors = { "an error when fn is not a function, or p is not in [0, 1]" },
    example = [[
-- run: tend --virtual-time --seed 3
local tend = require "tend"
local get = tend.chaos.flaky(function(k) return k .. "!" end, { p = 0.5 })
local ok, failed = 0, 0
for i = 1, 100 do
  if pcall(get, "k") then ok = ok + 1 else failed = failed + 1 end
end
print(ok + failed, ok > 20, failed > 20)   --> 100  true  true]],
  },
  { class = "tend.FlakyOpts",
    summary = "The options of tend.chaos.flaky.",
    fields = { { "p", "number?", "the probability that a call fails, in [0, 1] (default 0.5)" },
               { "error", "string?", "the error kind raised (default \"ChaosError\")" } },
  },
  { name = "tend.chaos.crash_on",
    sig = "tend.chaos.crash_on(ref_or_path, pred [, { nth = N } | { p = P, error = kind }])",
    summary = "The actor fails on every Nth message pred accepts, or on each with probability P.",
    text = [[
The rule holds for the actor at that path (a ref, a path such as
"/user/db", or "*" for every actor), across its restarts, until
tend.chaos.heal(). pred(msg) picks the messages counted. Without options
every matching message fails it (nth = 1). The failure is a structured
error of kind `error` (default ChaosCrash), "injected by
tend.chaos.crash_on", raised before the behavior sees the message; a chaos
event "crash_on".]],
    params = { { "ref_or_path", "tend.Ref|string", "the actor, its path, or \"*\"" },
               { "pred", "fun(msg: any): boolean", "which messages count" },
               { "opts", "tend.CrashOnOpts?", "nth, or p; error" } },
    returns = {},
    errors = { "an error when pred is not a function, nth is not an integer >= 1, or p is not in [0, 1]" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local w = tend.spawn(function(ctx)
  return function(msg) print("handled", msg) end
end, { name = "w" })
tend.chaos.crash_on("/user/w", function(msg) return msg == "poison" end)
for _, m in ipairs { "a", "poison", "b" } do w:send(m) end
tend.sleep(0.1)   --> handled a, then handled b (the poison failed it; it restarted)]],
  },
  { class = "tend.CrashOnOpts",
    summary = "The options of tend.chaos.crash_on.",
    fields = { { "nth", "integer?", "every Nth matching message fails the actor (default 1)" },
               { "p", "number?", "instead of nth: each matching message fails it with this probability" },
               { "error", "string?", "the error kind (default \"ChaosCrash\")" } },
  },
  { name = "tend.chaos.delay",
    sig = "tend.chaos.delay(from, to, seconds)",
    summary = "Messages from `from` to `to` arrive seconds later.",
    text = [[
from and to are refs, paths or "*" (any). Ask traffic is included: an
ask's request goes from the asker to the target and its reply from the
target to the asker, so a rule between the two delays them like any other
message (a late reply makes the asker time out; one that comes after that
is a dead letter). Each delayed message is a chaos event. Until
tend.chaos.heal().]],
    params = { { "from", "tend.Ref|string", "the sender, its path, or \"*\"" },
               { "to", "tend.Ref|string", "the recipient, its path, or \"*\"" },
               { "seconds", "number", "the delay, >= 0" } },
    returns = {},
    errors = { "an error when seconds is not a number >= 0 (<= 1e9)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local echo = tend.spawn(function() return function(msg, ctx) ctx:reply(msg) end end)
tend.chaos.delay(tend.self(), echo, 2)
local t0 = tend.now()
print(tend.ask(echo, "hi", 5), tend.now() - t0)   --> hi  2.0]],
  },
  { name = "tend.chaos.drop",
    sig = "tend.chaos.drop(from, to, p)",
    summary = "Each message from `from` to `to` is lost with probability p (a dead letter).",
    text = [[
from and to are refs, paths or "*"; ask traffic included (a dropped
request or reply makes the asker time out). The draws come from the seeded
generator. Each drop is a chaos event. Until tend.chaos.heal().]],
    params = { { "from", "tend.Ref|string", "the sender, its path, or \"*\"" },
               { "to", "tend.Ref|string", "the recipient, its path, or \"*\"" },
               { "p", "number", "the probability, in [0, 1]" } },
    returns = {},
    errors = { "an error when p is not a number in [0, 1]" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local n = 0
local counter = tend.spawn(function() return function() n = n + 1 end end)
tend.chaos.drop("*", counter, 1)
for i = 1, 10 do counter:send(i) end
tend.sleep(0.1)
print(n, tend.stats().dead_letters)   --> 0  10]],
  },
  { name = "tend.chaos.freeze",
    sig = "tend.chaos.freeze(ref, seconds)",
    summary = "ref processes nothing for seconds (its mailbox fills), then goes on.",
    text = [[
seconds may be math.huge: frozen until tend.chaos.heal(). Chaos events
"freeze" and "thaw"; the timeline draws the freeze as a blue bar.]],
    params = { { "ref", "tend.Ref", "the actor" },
               { "seconds", "number", "how long, > 0 (<= 1e9, or math.huge)" } },
    returns = {},
    errors = { "an error when seconds is not a number > 0, or ref is not an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local echo = tend.spawn(function() return function(msg, ctx) ctx:reply(msg) end end)
tend.chaos.freeze(echo, 3)
local t0 = tend.now()
print(tend.ask(echo, "hi", 5), tend.now() - t0)   --> hi  3.0]],
  },
  { name = "tend.chaos.heal",
    sig = "tend.chaos.heal()",
    summary = "Undoes every chaos rule: crash_on, delay and drop rules go, frozen actors thaw, links heal.",
    text = [[
Also clears every partition, hold and latency of the simulated network and
of the simulated nodes' bus. A chaos event "heal".]],
    params = {},
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local n = 0
local counter = tend.spawn(function() return function() n = n + 1 end end)
tend.chaos.drop("*", counter, 1)
counter:send(1)
tend.chaos.heal()
counter:send(2)
tend.sleep(0.1)
print(n)   --> 1]],
  },

  ---------------------------------------------------------------- chaos: the network
  { name = "tend.chaos.partition",
    sig = "tend.chaos.partition(a, b)",
    summary = "Under --virtual-time: nothing crosses between hosts a and b until tend.chaos.repair(a, b).",
    text = [[
a and b are simulated host names, or actor refs (the hosts they live on:
tend.simnet.place). Bytes already written and written meanwhile wait (TCP
would retransmit them) and go, in order, at the repair; a connect or an
HTTP call waits for the repair until its timeout, then fails with "timed
out" at exactly its timeout. On two simulated nodes (tend.sim.nodes) it
cuts the bus between them instead: what crosses is dropped (each a node
trace event "drop: partitioned"), heartbeats stop and each side sees the
other down after the node timeout. A chaos event on /net/<host> (or
/node/<name>).]],
    params = { { "a", "string|tend.Ref", "a host name (or node name), or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock (only on the simulated network)",
               "an error when a or b is neither a host name nor an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", port = 80, handler = function() return { body = "ok" } end }
tend.chaos.partition("localhost", "api")
local ok, e = pcall(tend.http.get, "http://api/", { timeout = 2 })
print(e.reason, tend.now())           --> timed out  2.0
tend.chaos.repair("localhost", "api")
print(tend.http.get("http://api/").body)   --> ok]],
  },
  { name = "tend.chaos.repair",
    sig = "tend.chaos.repair(a, b)",
    summary = "Ends a partition between a and b: what waited goes, in order.",
    text = [[
On two simulated nodes: the bus between them carries again (what was
dropped stays lost); they see each other up at the next heartbeat.]],
    params = { { "a", "string|tend.Ref", "a host name (or node name), or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock (only on the simulated network)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function() return { body = "ok" } end }
tend.chaos.partition("localhost", "api")
tend.after(3, function() tend.chaos.repair("localhost", "api") end)
print(tend.http.get("http://api/", { timeout = 10 }).body, tend.now())   --> ok  3.0]],
  },
  { name = "tend.chaos.hold",
    sig = "tend.chaos.hold(a, b)",
    summary = "Under --virtual-time: holds everything between hosts a and b until tend.chaos.release(a, b).",
    text = [[
turmoil's hold: the same stall as a partition, named for a delay that is
meant to end (for datagrams turmoil's partition drops and hold keeps; TCP
keeps both). Simulated network hosts only (not nodes' buses).]],
    params = { { "a", "string|tend.Ref", "a host name, or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock (only on the simulated network)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function() return { body = "ok" } end }
tend.chaos.hold("localhost", "api")
tend.after(1.5, function() tend.chaos.release("localhost", "api") end)
print(tend.http.get("http://api/").body, tend.now())   --> ok  1.5]],
  },
  { name = "tend.chaos.release",
    sig = "tend.chaos.release(a, b)",
    summary = "Ends a hold between a and b: what was held goes, in order.",
    text = "",
    params = { { "a", "string|tend.Ref", "a host name, or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock (only on the simulated network)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function() return { body = "ok" } end }
tend.chaos.hold("api", "localhost")
tend.after(2, function() tend.chaos.release("api", "localhost") end)
print(tend.http.get("http://api/").body, tend.now())   --> ok  2.0]],
  },
  { name = "tend.chaos.latency",
    sig = "tend.chaos.latency(a, b, seconds [, jitter])",
    summary = "Under --virtual-time: each transfer between hosts a and b takes seconds, plus a seeded 0..jitter.",
    text = [[
Applies each way; a connection keeps its order (a later write never
overtakes an earlier one). A connect and an HTTP call take a round trip.
On two simulated nodes: the bus link between them. tend.chaos.heal()
clears it.]],
    params = { { "a", "string|tend.Ref", "a host name (or node name), or an actor ref" },
               { "b", "string|tend.Ref", "the other end" },
               { "seconds", "number", "the one-way delay, >= 0" },
               { "jitter", "number?", "up to this much more, drawn uniformly from the seed (default 0)" } },
    returns = {},
    errors = { "an error under the real clock, or when seconds or jitter is not a number >= 0" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function() return { body = "ok" } end }
tend.chaos.latency("localhost", "api", 0.05)
local t0 = tend.now()
tend.http.get("http://api/")
print(tend.now() - t0)   --> 0.1 (a round trip)]],
  },
  { name = "tend.chaos.reset",
    sig = "tend.chaos.reset(conn)",
    summary = "Ends a TCP connection (real or simulated) abruptly: both ends get closed with reason \"reset\".",
    text = [[
conn is a client's connection ref (tend.tcp.connect) or a handler's
ctx.self. A real socket sends an RST.]],
    params = { { "conn", "tend.Ref", "a live connection's ref" } },
    returns = {},
    errors = { "an error when conn is no live connection" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.tcp.listen { port = 7000, handler = function() return function() end end }
local conn = tend.tcp.connect { host = "localhost", port = 7000 }
tend.chaos.reset(conn)
print(tend.receive(1).reason)   --> reset]],
  },

  ---------------------------------------------------------------- chaos: simulated nodes
  { name = "tend.chaos.crash_node",
    sig = "tend.chaos.crash_node(name)",
    summary = "A simulated node (tend.sim.nodes) dies at once, as with kill -9.",
    text = [[
Its host closes: nothing runs there any more (no post_stop runs); the
other nodes see it down after the node timeout. A chaos event on
/node/<name>. tend.chaos.restart_node starts it again.]],
    params = { { "name", "string", "the node's name" } },
    returns = {},
    errors = { "an error when name is no simulated node, or is the world's own node (join)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" }, b = { code = "" } }, { timeout = 2 })
tend.sleep(1)
tend.chaos.crash_node("a")
for _, n in ipairs(tend.sim.list()) do print(n.name, n.state) end   --> a crashed, b up
tend.sim.stop()]],
  },
  { name = "tend.chaos.restart_node",
    sig = "tend.chaos.restart_node(name)",
    summary = "A simulated node that crashed or ended runs its script again, as a new incarnation.",
    text = [[
Refs to the old incarnation stay dead. A chaos event on /node/<name>.]],
    params = { { "name", "string", "the node's name" } },
    returns = {},
    errors = { "an error when name is no simulated node, is the world's own node, or is up" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" } }, { timeout = 2 })
tend.sleep(1)
tend.chaos.crash_node("a")
tend.chaos.restart_node("a")
local a = tend.sim.list()[1]
print(a.name, a.state, a.inc)   --> a  up  2
tend.sim.stop()]],
  },
  { name = "tend.chaos.lift",
    sig = "tend.chaos.lift(rule)",
    summary = "The rule that tend.chaos.crash_on, delay or drop returned goes; the others stay.",
    text = [[
A rule already gone is no error. tend.chaos.heal() lifts every rule at once.]],
    params = { { "rule", "table", "what crash_on, delay or drop returned" } },
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local echo = tend.spawn(function() return function(msg, ctx) ctx:reply(msg) end end)
local rule = tend.chaos.delay(tend.self(), echo, 2)
local t0 = tend.now()
tend.ask(echo, "slow")
print(tend.now() - t0)         --> 2.0
tend.chaos.lift(rule)
t0 = tend.now()
tend.ask(echo, "fast")
print(tend.now() - t0)         --> 0.0]],
  },
  { name = "tend.chaos.thaw",
    sig = "tend.chaos.thaw(ref)",
    summary = "A frozen actor takes messages again now (what it queued meanwhile first).",
    text = [[
A chaos event "thaw". An actor that is not frozen: nothing happens.]],
    params = { { "ref", "tend.Ref", "the actor" } },
    returns = {},
    errors = { "an error when ref is not an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local echo = tend.spawn(function() return function(msg, ctx) ctx:reply(msg) end end)
tend.chaos.freeze(echo, math.huge)
tend.after(1.5, function() tend.chaos.thaw(echo) end)
local t0 = tend.now()
print(tend.ask(echo, "hi", 5), tend.now() - t0)   --> hi  1.5]],
  },
  { class = "tend.NemesisOpts",
    summary = "The options of tend.chaos.nemesis; any other key is an error naming it.",
    fields = {
      { "faults", "string[]", "what it may inject: crash, kill, stop, freeze, delay, drop, flaky, signal, partition, latency, reset, crash_node, restart_node, partition_nodes" },
      { "targets", "string[]", "actor paths, path patterns (\"/user/workers/*\": one segment), host names, node names" },
      { "every", "number[]?", "{min, max}: seconds between injections, drawn in that range (default {1, 5})" },
      { "heal_after", "number[]?", "{min, max}: a fault it can undo is undone that much later (default: never)" },
      { "from", "number?", "virtual time of the first draw (default: now)" },
      { "to", "number?", "no injection after this virtual time (default: never)" },
      { "delay", "number[]?", "the range of a delay fault's seconds (default {0.05, 1})" },
      { "p", "number[]?", "the range of a drop or flaky fault's probability (default {0.5, 1})" },
      { "latency", "number[]?", "the range of a latency fault's latency (default {0.05, 0.5})" },
      { "jitter", "number[]?", "the range of a latency fault's jitter (default {0, 0.05})" },
      { "signals", "string[]?", "the signals a signal fault draws from (default {\"TERM\", \"KILL\"})" },
    } },
  { name = "tend.chaos.nemesis",
    sig = "tend.chaos.nemesis{faults, targets, every, heal_after, from, to, ...} -> ref",
    summary = "Starts /system/nemesis: faults drawn from a generator of its own, on targets drawn from targets, healed later.",
    text = [[
At each time drawn in every it draws a fault, a target the fault can act on
(a live actor a pattern matches, two of them, two hosts or nodes, a node)
and the fault's parameters, injects it through the tend.chaos verbs, and
undoes it heal_after later when the fault can be undone. Its generator
(splitmix64) is seeded from the run's seed and is the nemesis's alone, so
replacing it by its schedule (--chaos-schedule, tend explore --shrink)
leaves every other random choice of the run as it was. Each injection and
each heal is one "chaos" trace event with by = "nemesis" and what replays
it (fault, target or a and b, parameters, heal_after). Under `tend scenario
--chaos-schedule LIST.lua` it runs that list instead.]],
    params = { { "opts", "tend.NemesisOpts", "what, where, when" } },
    returns = { { "tend.Ref", "/system/nemesis" } },
    errors = { "an error naming the option, what was expected and what was given" },
    example = [[
-- run: tend --virtual-time --seed 1
local tend = require "tend"
tend.trace(function(e)
  if e.ev == "chaos" and e.by == "nemesis" and not e.heal then print(e.t, e.fault, e.target) end
end)
tend.spawn(function() return function() end end, { name = "w" })
tend.chaos.nemesis { faults = { "crash" }, targets = { "/user/w" }, every = { 1, 2 }, to = 5 }
tend.sleep(6)]],
  },
  { name = "tend.chaos.schedule",
    sig = "tend.chaos.schedule(list) -> ref",
    summary = "Starts /system/schedule: each entry injected at its virtual time t, healed heal_after later.",
    text = [[
An entry is a nemesis's injection event without ev, path and by:
{ t = 12.5, fault = "partition", a = "n1", b = "n2", heal_after = 3 },
{ t = 4, fault = "crash", target = "/user/w" }. Its events carry
by = "schedule". A minimal scenario that tend explore --shrink writes is
the scenario with its nemesis replaced by such a list.]],
    params = { { "list", "table[]", "the injections: {t, fault, target | a, b, parameters, heal_after}" } },
    returns = { { "tend.Ref", "/system/schedule" } },
    errors = { "an error naming the entry and the field that is wrong" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local w = tend.spawn(function() return function(msg, ctx) ctx:reply(msg) end end, { name = "w" })
tend.chaos.schedule { { t = 1, fault = "freeze", target = "/user/w", heal_after = 2 } }
tend.sleep(1.5)
local t0 = tend.now()
print(tend.ask(w, "hi", 5), tend.now() - t0)   --> hi  1.5]],
  },
  { name = "tend.invariant",
    sig = "tend.invariant(name, fn)",
    summary = "fn() must hold after every scheduler pass in which the virtual time moved, and at the end.",
    text = [[
fn returns true; false, nil or an error fails the run with InvariantFailed
naming the invariant, the time and fn's message (tend scenario prints
`failure: InvariantFailed "name" at t=...`). Checked under the virtual
clock; keep fn cheap (it runs often: docs/costs.md gives its price).]],
    params = { { "name", "string", "what it says, for the failure" },
               { "fn", "fun(): boolean, string?", "true while the property holds" } },
    returns = {},
    errors = { "an error when name is not a string or fn not a function" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local total = 100
tend.invariant("the total is 100", function() return total == 100 end)
tend.sleep(1)
print("holds at", tend.now())   --> holds at  1.0]],
  },
  { name = "tend.eventually",
    sig = "tend.eventually(name, fn, within [, opts])",
    summary = "fn() must return true within `within` seconds, else the run fails with EventuallyFailed.",
    text = [[
Counted from the call, or with opts.after_heal = true from the last heal of
a nemesis or schedule (each heal restarts the wait). Checked after every
pass in which the virtual time moved.]],
    params = { { "name", "string", "what it says, for the failure" },
               { "fn", "fun(): boolean", "true once the property holds" },
               { "within", "number", "seconds > 0" },
               { "opts", "table?", "{after_heal = true}" } },
    returns = {},
    errors = { "an error naming the argument that is wrong" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local up = false
tend.after(2, function() up = true end)
tend.eventually("it comes up", function() return up end, 5)
tend.sleep(3)
print("up:", up)   --> up:  true]],
  },
  { name = "tend.observe", sig = "tend.observe([opts]) -> { url, token, port }",
    summary = "Serves the browser observer of this host: the live tree, an actor's page with actions, the timeline, the counters.",
    text = [[
The observer's actor is /system/observer (left out of the page's tree).
It listens on 127.0.0.1 unless opts.host names another interface, and
every request needs the token of the URL it returns (403 without it).
The page refreshes the tree every 200 ms: each actor's path, state,
mailbox length, restarts, pid or socket; the counters and their rates;
the timeline of the last 5000 events. An actor's page shows tend.inspect
and its last failures and restarts, and acts on it: send a message typed
as a Lua literal (read as data, nothing runs), stop, kill, crash, suspend
and resume; each action is a "chaos" trace event. A second call returns
the first's handle. `tend --observe [HOST:]PORT SCRIPT` starts it before
the script; observe() at the REPL prints the URL.
Each node of tend.sim.list() and tend.node.list() is a tree of its own
under /@NAME (asked over the node protocol); a simulated node can be
partitioned, repaired, crashed and restarted from the page. Under
--virtual-time the run can be paused (the clock held: actors at its
instant still run, the page still answers) and stepped, one jump of the
clock to its next timer a step; each is a trace event on /clock.]],
    params = { { "opts", "tend.ObserveOpts?", "where to listen" } },
    returns = { { "table", "url (with the token), token, port" } },
    errors = { "BadArg naming port, host or paused (paused on the real clock), or an unknown option; an error when the port cannot be bound" },
    example = [[local tend = require "tend"
local obs = tend.observe { port = 0 } -- a free port on 127.0.0.1
print(obs.url)                        --> http://127.0.0.1:PORT/?token=...
tend.shutdown()]] },
  { class = "tend.ObserveOpts", summary = "Where tend.observe listens.",
    fields = { { "port", "integer?", "the port (default 8642; 0: a free one)" },
      { "host", "string?", "the interface (default 127.0.0.1; another only when named)" },
      { "paused", "boolean?", "under --virtual-time: the clock held from now, until the page resumes or steps it (tend --observe starts so)" } } },
}
