-- The doc entries of the group "nodes": nodes on NATS, remote spawn,
-- global names, simulated nodes (the format: lua/tend/doc.lua). An example
-- whose first line is "-- run: tend FLAGS" runs with those flags; the
-- others run with none (those need nats-server in PATH).
return {
  ---------------------------------------------------------------- a node
  { name = "tend.node.start",
    sig = "tend.node.start{name, nats, timeout, retry, limit} -> name",
    summary = "Makes this process node `name` on the NATS server at `nats` (as --node NAME --nats URL).",
    text = [[
nats is "nats://host:port", or "local": a nats-server child under /system
on a loopback port it picks, with JetStream in a private directory
($TMPDIR/tend-nats-XXXXXX) removed at exit, and GOMAXPROCS=1. Once a node,
refs carry their node (Ref(/user/kv@b)) and messages, asks, replies and
DeathWatch work across nodes: messages travel as msgpack (functions,
coroutines, userdata and cycles raise NotSerializable at the sender; over
limit MessageTooLarge), in order between two actors; while a node is down
messages to it are dropped and counted (tend.node.stats().dropped), each a
node trace event "drop: node down". An ask fails at once (AskFailed) when
the remote actor dies or its node is lost, or is not connected (cause
"noconnection"); a remote actor's restart does not fail the asks it took
(they time out). DeathWatch of a remote actor gets its reason, or
"noconnection" when its node is lost; once that node is up again (the same
incarnation) the same refs deliver and can be watched again.

Each node publishes a heartbeat every timeout/4 seconds; a node is up from
its first heartbeat and down after timeout seconds without one, or at once
when this node loses NATS (local work goes on; the nodes are up again at
their first heartbeat once the server is back, their refs working again).
A restarted node is a new incarnation: refs to the old one are dead. Log
lines name their node. A malformed message from a peer is logged and
dropped, never a crash; /system/node restarts in place after a failure of
its own (the other nodes never see this node down for it). Not under
--virtual-time: simulate the nodes with tend.sim.nodes.]],
    params = { { "opts", "tend.NodeStartOpts", "the name and the server" } },
    returns = { { "string", "the node's name" } },
    errors = { "NatsError when the server cannot be reached (unless retry), or nats-server is not in PATH "
                 .. "(with nats = \"local\"), or it does not start within 10 s",
               "NodeError when the name is taken by a live node, when this process is a node already, "
                 .. "or under --virtual-time",
               "an error naming a bad option (name not letters, digits, '_' or '-'; nats not a nats:// URL "
                 .. "or \"local\"; timeout not > 0; limit not an integer >= 64; an unknown key)" },
    example = [[
local tend = require "tend"
print(tend.node.start { name = "main", nats = "local", timeout = 1 })   --> main
tend.shutdown(0)   -- the local nats-server stops with it]],
  },
  { class = "tend.NodeStartOpts",
    summary = "The options of tend.node.start (any other key is an error).",
    fields = {
      { "name", "string", "the node's name: letters, digits, '_' or '-'" },
      { "nats", "string", "\"nats://host:port\", or \"local\" (a nats-server child)" },
      { "timeout", "number?", "seconds without a heartbeat before a node is down (default 15; "
        .. "as --node-timeout)" },
      { "retry", "boolean?", "retry an unreachable server with backoff, 0.25 s doubling to 5 s "
        .. "(as --nats-retry); default: NatsError at once" },
      { "limit", "integer?", "the largest message in bytes (default 1 MiB, NATS's max_payload)" },
    },
  },
  { name = "tend.node.peer",
    sig = "tend.node.peer(name [, {script, args, code, timeout, wait, process_name, log_level}]) -> process ref",
    summary = "Starts another node of this program on this node's NATS server (OTP's peer:start).",
    text = [[
It runs `tend --node name --nats URL script args` (or `-e code`, default
an empty chunk) as an OS process actor under /user (restart "temporary",
stdout and stderr inherited) and returns once that node is up. Stopping
the process actor stops the node; tend.chaos.signal(ref, "KILL") kills it.]],
    params = { { "name", "string", "the new node's name: letters, digits, '_' or '-'" },
               { "opts", "tend.NodePeerOpts?", "what it runs" } },
    returns = { { "tend.Ref", "the OS process actor running the node" } },
    errors = { "NodeError when this process is no node, or the node is not up within opts.wait seconds",
               "an error when name is not letters, digits, '_' or '-'" },
    example = [[
local tend = require "tend"
tend.node.start { name = "main", nats = "local", timeout = 1 }
tend.node.peer("b", { code = "print('b is up')" })   --> b is up
print(table.concat(tend.node.list(), " "))          --> b
tend.shutdown(0)]],
  },
  { class = "tend.NodePeerOpts",
    summary = "The options of tend.node.peer.",
    fields = {
      { "script", "string?", "the script the node runs (else code)" },
      { "args", "string[]?", "the script's arguments" },
      { "code", "string?", "a chunk it runs with -e instead of a script (default \"\")" },
      { "timeout", "number?", "its node timeout (default this node's)" },
      { "wait", "number?", "seconds to wait until it is up (default 10)" },
      { "process_name", "string?", "the name of the process actor (/user/<process_name>)" },
      { "log_level", "string?", "its --log-level (default \"warn\")" },
    },
  },
  { name = "tend.node.name",
    sig = "tend.node.name() -> name | nil",
    summary = "This node's name, or nil when this process is no node.",
    text = "",
    params = {},
    returns = { { "string?", "the name" } },
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
print(tend.node.name())   --> nil
tend.sim.nodes({ a = { code = "" } }, { join = "ctl" })
print(tend.node.name())   --> ctl
tend.sim.stop()]],
  },
  { name = "tend.node.list",
    sig = "tend.node.list() -> {names}",
    summary = "The other nodes seen up, sorted (Erlang's nodes()).",
    text = "",
    params = {},
    returns = { { "string[]", "their names" } },
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" }, b = { code = "" } }, { join = "ctl" })
tend.sleep(1)
print(table.concat(tend.node.list(), " "))   --> a b
tend.sim.stop()]],
  },
  { name = "tend.node.monitor",
    sig = "tend.node.monitor(name [, false])",
    summary = "The calling actor gets {tend = \"nodeup\" | \"nodedown\", node = name} at each change of that node.",
    text = [[
A nodedown comes at once when the node is not up now (Erlang's
monitor_node). monitor(name, false) stops it.]],
    params = { { "name", "string", "the node" }, { "on", "boolean?", "false: stop monitoring" } },
    returns = {},
    errors = { "NodeError when this process is no node", "an error outside an actor or when name is not a string" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl", timeout = 2 })
tend.sleep(1)
tend.node.monitor("a")
tend.chaos.crash_node("a")
local m = tend.receive(10)
print(m.tend, m.node, tend.now())   --> nodedown  a  3.0 (within the node timeout)
tend.sim.stop()]],
  },
  { class = "tend.NodeEvent",
    summary = "What tend.node.monitor delivers.",
    fields = { { "tend", "\"nodeup\"|\"nodedown\"", "the change" }, { "node", "string", "the node's name" } },
  },
  { name = "tend.node.stats",
    sig = "tend.node.stats() -> {sent, received, dropped, proxies}",
    summary = "Counters of this node's traffic with the others.",
    text = "",
    params = {},
    returns = { { "tend.NodeStats", "the counters (all 0 when this process is no node)" } },
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = [=[
  local tend = require "tend"
  local echo = tend.spawn(function() return function(msg, ctx) ctx:reply(msg) end end, { name = "echo" })
  tend.global.register("echo", echo)
]=] } }, { join = "ctl" })
tend.sleep(1)
print(tend.ask(tend.global.whereis("echo"), "ping"))   --> ping
local s = tend.node.stats()
print(s.sent, s.received, s.dropped, s.proxies)   --> 1  1  0  2 (the echo actor and a's node actor)
tend.sim.stop()]],
  },
  { class = "tend.NodeStats",
    summary = "What tend.node.stats returns.",
    fields = {
      { "sent", "integer", "messages sent to other nodes" },
      { "received", "integer", "messages received from other nodes" },
      { "dropped", "integer", "messages dropped because their node was down" },
      { "proxies", "integer", "refs to other nodes' actors held now" },
    },
  },
  { name = "tend.node.tree",
    sig = "tend.node.tree([name]) -> text",
    summary = "The supervision tree of node name (this node's by default), as text.",
    text = "At the REPL, tree(\"b\") prints it.",
    params = { { "name", "string?", "the node (default this one)" } },
    returns = { { "string", "the tree, one actor a line" } },
    errors = { "NodeDown when that node is not connected", "NodeError when this process is no node" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "require('tend').spawn(function() return function() end end, { name = 'kv' })" } },
  { join = "ctl" })
tend.sleep(1)
print(tend.node.tree("a"))   --> /user [running] ... kv [running] ... (node a's tree)
tend.sim.stop()]],
  },
  { name = "tend.spawn_on",
    sig = "tend.spawn_on(node, \"module.factory\" [, opts]) -> ref",
    summary = "Loads module on node (require there) and spawns its factory there, under /system/remote/<this node>.",
    text = [[
The module must be on the other node's package.path (a simulated node's is
the world's; a real node's is its own process's: run it from the same
directory, or set LUA_PATH). opts are spawn options (args included: they
travel as messages do), plus timeout, the wait (default 5 s). The caller
waits like an ask. The remote actor stays when its origin node goes down.
On this node's own name it is a local tend.spawn.]],
    params = { { "node", "string", "the node's name" },
               { "factory", "string", "\"module.factory\": module is required, its field factory spawned" },
               { "opts", "tend.SpawnOnOpts?", "spawn options, and timeout" } },
    returns = { { "tend.Ref", "the remote actor's ref (Ref(/system/remote/<this node>/<name>@node))" } },
    errors = { "SpawnError when the module or the factory is not there",
               "NodeDown when the node is not connected; NodeError when this process is no node",
               "Timeout when the node does not answer within timeout",
               "an error when factory is not \"module.factory\"" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir " .. dir)
local f = assert(io.open(dir .. "/greeter.lua", "w"))
f:write("local tend = require 'tend'\n",
  "return { hello = function(ctx) return function(msg, ctx) ctx:reply('hello from ' .. tend.node.name()) end end }\n")
f:close()
package.path = dir .. "/?.lua;" .. package.path   -- the nodes' path is the world's
tend.sim.nodes({ a = { code = "" } }, { join = "main" })
tend.sleep(1)
local g = tend.spawn_on("a", "greeter.hello", { name = "greeter" })
print(g)                    --> Ref(/system/remote/main/greeter@a)
print(tend.ask(g, "hi"))    --> hello from a
tend.sim.stop()
os.remove(dir .. "/greeter.lua")
os.remove(dir)]],
  },
  { class = "tend.SpawnOnOpts",
    summary = "The options of tend.spawn_on: tend.spawn's options, and timeout.",
    parent = "tend.SpawnOpts",
    fields = { { "timeout", "number?", "seconds to wait for the other node's answer (default 5)" } },
  },

  ---------------------------------------------------------------- global names
  { name = "tend.global.register",
    sig = "tend.global.register(name, ref) -> true | false, holder",
    summary = "A name every node sees (NATS JetStream key-value, bucket tend_global); the older registration wins.",
    text = [[
A later registration of a name a live actor holds returns false and the
holder's ref. The name goes when its actor dies. Each name is a lease (2 x
the node timeout, at least 3 s) renewed by its node every lease/3 s, so a
dead node's names expire. A name whose holder this node sees dead is taken
over only when nobody renewed it for lease/2 s (the call waits that long):
a holder alive behind a partition keeps it, and no second holder rises.
Each lost claim is a node trace event on /global/<name>. On simulated
nodes it runs on a simulated key-value store with the same leases.]],
    params = { { "name", "string", "letters, digits, '_' or '-'" },
               { "ref", "tend.Ref", "a live actor (of any node)" } },
    returns = { { "boolean", "true when the name is now ref's" },
                { "tend.Ref?", "with false: the holder" } },
    errors = { "NodeError when this process is no node on NATS (or simulated)",
               "NatsError when the server cannot answer",
               "an error when name is not letters, digits, '_' or '-', or ref is no live actor" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl" })
tend.sleep(1)
local one = tend.spawn(function() return function() end end, { name = "one" })
local two = tend.spawn(function() return function() end end, { name = "two" })
print(tend.global.register("leader", one))   --> true
print(tend.global.register("leader", two))   --> false  Ref(/user/one)
tend.sim.stop()]],
  },
  { name = "tend.global.whereis",
    sig = "tend.global.whereis(name) -> ref | nil",
    summary = "The actor registered as name on any node, or nil.",
    text = "The answer is cached until its actor or its node is gone, then read again.",
    params = { { "name", "string", "the name" } },
    returns = { { "tend.Ref?", "the holder" } },
    errors = { "NodeError when this process is no node", "an error when name is not letters, digits, '_' or '-'" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = [=[
  local tend = require "tend"
  tend.global.register("db", tend.spawn(function() return function() end end, { name = "db" }))
]=] } }, { join = "ctl" })
tend.sleep(1)
print(tend.global.whereis("db"), tend.global.whereis("nobody"))   --> Ref(/user/db@a)  nil
tend.sim.stop()]],
  },
  { name = "tend.global.unregister",
    sig = "tend.global.unregister(name)",
    summary = "Drops name, when this node holds it (else only the local cache).",
    text = "",
    params = { { "name", "string", "the name" } },
    returns = {},
    errors = { "NodeError when this process is no node", "an error when name is not letters, digits, '_' or '-'" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl" })
tend.sleep(1)
tend.global.register("leader", tend.self())
tend.global.unregister("leader")
print(tend.global.whereis("leader"))   --> nil
tend.sim.stop()]],
  },
  { name = "tend.global.registered",
    sig = "tend.global.registered() -> {names}",
    summary = "The global names with a live holder, sorted.",
    text = "",
    params = {},
    returns = { { "string[]", "the names" } },
    errors = { "NodeError when this process is no node" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl" })
tend.sleep(1)
tend.global.register("web", tend.self())
tend.global.register("api", tend.spawn(function() return function() end end))
print(table.concat(tend.global.registered(), " "))   --> api web
tend.sim.stop()]],
  },
  { name = "tend.global.stop",
    sig = "tend.global.stop()",
    summary = "This node stops renewing its global names (they expire with their leases); tend.sim.stop calls it.",
    text = [[
The keeper (/system/global) stops. A later tend.global call starts it
again. Not needed by a program: a node that ends stops it.]],
    params = {},
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl" })
tend.sleep(1)
tend.global.register("web", tend.self())
tend.global.stop()
tend.sim.stop()]],
  },

  ---------------------------------------------------------------- simulated nodes
  { name = "tend.sim.nodes",
    sig = "tend.sim.nodes({name = script | {script, code, args}} [, opts]) -> {names}",
    summary = "Under --virtual-time: several nodes in this process, each a host of its own, over a simulated bus.",
    text = [[
Each node (started in name order) has its own Lua state, tree, names and
loaded modules, and runs its script (a file, or code, a chunk) as its
/user/main once it is a node; the node API is unchanged (refs with their
node, send, ask, DeathWatch, tend.node.*, tend.spawn_on, tend.global,
tend.pg across nodes). The world steps every node on one virtual clock and
draws every random choice from its seed, so a cluster's failure story
replays byte for byte. A node's package.path is the world's. A node runs
no real I/O (no NATS, no OS processes). Each node's events go to the
world's trace with a "node" field; log lines name their node (/user/x@b);
the timeline draws one band per node.

With join = "name" the world takes part as a node of that name, so its
actors can ask, watch and spawn on the others. tend.chaos.partition,
repair and latency on two node names act on the bus (what crosses a
partition is dropped, as NATS keeps nothing for a subscriber it cannot
reach); crash_node and restart_node kill and restart a node. A world
started from the main chunk ends when that chunk returns; else call
tend.sim.stop(). The bus is one store-and-forward server, like one
nats-server: a partition cuts two nodes apart, not a node from the store
(every node still reaches tend.global).]],
    params = { { "nodes", "table<string, string|tend.SimNodeSpec>", "node name -> its script's path, or a spec" },
               { "opts", "tend.SimNodesOpts?", "timeout, latency, jitter, join, limit" } },
    returns = { { "string[]", "the node names, sorted" } },
    errors = { "an error under the real clock", "an error naming a bad node name, spec or option "
                 .. "(a spec with both or neither of script and code, a timeout not > 0...)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local code = [=[
  local tend = require "tend"
  print(tend.node.name() .. " runs at " .. tend.now())
]=]
print(table.concat(tend.sim.nodes({ a = { code = code }, b = { code = code } }), " "))   --> a b
tend.sleep(1)   --> a runs at 0.0, b runs at 0.0
tend.sim.stop()   -- (the main chunk's return would stop it too)]],
  },
  { class = "tend.SimNodeSpec",
    summary = "What a simulated node runs (tend.sim.nodes): script or code, not both.",
    fields = {
      { "script", "string?", "the path of its script" },
      { "code", "string?", "a chunk instead of a file" },
      { "args", "table?", "its arguments (arg and ...)" },
    },
  },
  { class = "tend.SimNodesOpts",
    summary = "The options of tend.sim.nodes (any other key is an error).",
    fields = {
      { "timeout", "number?", "the node timeout, seconds without a heartbeat before a node is down (default 15)" },
      { "latency", "number?", "seconds on every link of the bus (default 0)" },
      { "jitter", "number?", "up to this much more per transfer, from the seed (default 0)" },
      { "join", "string?", "the world takes part as a node of this name" },
      { "limit", "integer?", "the largest message in bytes (default 1 MiB)" },
    },
  },
  { name = "tend.sim.list",
    sig = "tend.sim.list() -> {{name, state, inc}, ...}",
    summary = "The simulated nodes: \"up\", \"crashed\" or \"ended\", and their incarnation.",
    text = "",
    params = {},
    returns = { { "tend.SimNodeState[]",
                  "one row a node (the world's own first when it joined, then the nodes in name order)" } },
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" }, b = { code = "" } })
tend.sleep(1)
tend.chaos.crash_node("b")
for _, n in ipairs(tend.sim.list()) do print(n.name, n.state, n.inc) end   --> a up 1, b crashed 1
tend.sim.stop()]],
  },
  { class = "tend.SimNodeState",
    summary = "A row of tend.sim.list.",
    fields = {
      { "name", "string", "the node's name" },
      { "state", "\"up\"|\"crashed\"|\"ended\"", "its state" },
      { "inc", "integer", "its incarnation (1, then one more at each restart_node)" },
    },
  },
  { name = "tend.sim.stop",
    sig = "tend.sim.stop()",
    summary = "Every simulated node stops (as tend.shutdown there); the world leaves and the bus is healed.",
    text = [[
The nodes' heartbeats would otherwise keep the virtual clock going for
ever. A world started from the main chunk is stopped when that chunk
returns, so a script need not call it.]],
    params = {},
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl" })
tend.sleep(1)
print(#tend.node.list())   --> 1
tend.sim.stop()
tend.sleep(0)
for _, n in ipairs(tend.sim.list()) do print(n.name, n.state) end   --> ctl ended, a ended
print(#tend.node.list(), tend.node.name())   --> 0  nil (the world left)]],
  },
}
