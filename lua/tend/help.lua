-- tend.help: help on one function at the REPL (`help(tend.spawn)`, as
-- iex's h/1), and "did you mean" for a mistyped global, field or method.
local M = {}

-- One entry a function: its call and what it does.
M.docs = {
  ["tend.spawn"] = [=[tend.spawn(factory [, opts]) -> ref
  Starts an actor under /user. factory(ctx, args...) returns its behavior
  (a function (msg, ctx) or a hook table); it runs again at each restart.
  opts: name, args, mailbox = {capacity, overflow}, shutdown, children
  (the strategy for its children; supervisor is the old name), restart
  ("permanent"|"transient"|"temporary"), max_message_time, stash.]=],
  ["tend.send"] = [=[tend.send(ref, msg)
  Sends msg to ref (also ref:send(msg)); inside an actor it is the sender.]=],
  ["tend.ask"] = [=[tend.ask(ref, msg [, timeout]) -> reply
  Sends msg and waits for the reply (ctx:reply); raises Timeout after
  timeout seconds (default 5). Other actors run meanwhile.]=],
  ["tend.receive"] = [=[tend.receive([timeout]) -> msg, sender
  In a task (the main chunk, the REPL, tend.after): the next message sent
  to it; nothing after timeout seconds (default: wait as long as it takes).]=],
  ["tend.stop"] = [=[tend.stop(ref)
  Stops an actor (children first, post_stop runs).]=],
  ["tend.poison"] = [=[tend.poison(ref)
  Queues a PoisonPill (Akka's): the actor processes the messages sent before
  it, then stops normally (post_stop runs, watchers see reason "normal"), as
  if its behavior had returned tend.stopped there; later messages are dead
  letters. A task stops at once. A dead actor: nothing.]=],
  ["tend.kill"] = [=[tend.kill(ref)
  Queues a Kill: the actor fails with Killed when it reaches it.]=],
  ["tend.alive"] = [=[tend.alive(ref) -> boolean
  Whether the actor ref names still lives.]=],
  ["tend.self"] = [=[tend.self() -> ref
  The running actor's ref (the REPL is /user/repl).]=],
  ["tend.sleep"] = [=[tend.sleep(seconds)
  Suspends the running actor; others run. Virtual seconds under
  --virtual-time.]=],
  ["tend.after"] = [=[tend.after(seconds, fn) -> timer
  Runs fn later as a short-lived task under /system (it may sleep, ask
  and receive).]=],
  ["tend.now"] = [=[tend.now() -> seconds
  The host clock (virtual under --virtual-time).]=],
  ["tend.random"] = [=[tend.random([m [, n]]) -> number
  The seeded generator, as math.random.]=],
  ["tend.seed"] = [=[tend.seed() -> integer
  The seed of every random choice (--seed N).]=],
  ["tend.error"] = [=[tend.error(kind [, message [, data]]) -> error value
  A structured error: .kind .message .data (raise it with error()).]=],
  ["tend.raise"] = [=[tend.raise(kind [, message [, data]])
  Raises a structured error whose .where is the caller's position.]=],
  ["tend.stats"] = [=[tend.stats() -> table
  Counters: spawned messages dead_letters failures restarts actors timers
  runnable lua_bytes c_bytes.]=],
  ["tend.shutdown"] = [=[tend.shutdown([code])
  Stops the tree (children first, post_stop hooks run), then exits with
  code (0..255, default 0).]=],
  ["tend.tree"] = [=[tend.tree() -> text
  The supervision tree, one actor a line. tree() at the REPL prints it.]=],
  ["tend.ps"] = [=[tend.ps() -> {{path, state, restarts, mailbox, depth, ref}, ...}
  The actors as rows, in tree order. ps() at the REPL prints them.]=],
  ["tend.watch"] = [=[tend.watch(ref [, msg]) -> ref
  DeathWatch: the running actor gets {tend = "terminated", ref = ref,
  reason = ..., existence_confirmed = ...} (or msg) when ref dies.
  ctx:watch(ref [, msg]) inside an actor.]=],
  ["tend.unwatch"] = [=[tend.unwatch(ref) -> ref
  Stops watching ref; a notice not yet read is dropped.]=],
  ["tend.describe"] = [=[tend.describe(strategy_or_backoff) -> text
  What a strategy, a backoff spec or a typed action (restart_with_backoff,
  ...) will do, in words.]=],
  ["tend.log"] = [=[tend.log(level, fmt, ...)
  "[time] level /path: text" on stderr (error|warn|info|debug).]=],
  ["tend.trace"] = [=[tend.trace(fn | true | false | { internal = bool })
  fn(event) gets every lifecycle event; true writes JSON lines to stderr.
  { internal = true } shows tend's own tasks too (as --trace-internal).
  At the REPL, trace(true) prints them as the scenario timeline does.]=],
  ["tend.trace_file"] = [=[tend.trace_file(path)
  Writes lifecycle events to path as JSON lines (as --trace).]=],
  ["tend.one_for_one"] = [=[tend.one_for_one{max_retries, within, decider} -> strategy
  Restarts only the failed child (OTP one_for_one).]=],
  ["tend.all_for_one"] = [=[tend.all_for_one{max_retries, within, decider} -> strategy
  A failure restarts every child (OTP one_for_all).]=],
  ["tend.rest_for_one"] = [=[tend.rest_for_one{max_retries, within, decider} -> strategy
  A failure restarts the child and those started after it.]=],
  ["tend.decider"] = [=[tend.decider{Kind = "resume"|"restart"|"stop"|"escalate", ["*"] = ...}
  A decider table for a strategy: error kind -> directive.]=],
  ["tend.guardian_strategy"] = [=[tend.guardian_strategy(strategy)
  Sets the strategy of the /user guardian.]=],
  ["tend.supervise"] = [=[tend.supervise(factory):on_failure(kind, action) -> factory
  Typed supervision: the actor handles its own failures by kind
  (tend.restart, tend.resume, tend.stop_on_failure, restart_with_limit,
  restart_with_backoff).]=],
  ["tend.restart_with_limit"] = [=[tend.restart_with_limit(n, within) -> action
  Typed: restart at most n times within seconds, then stop.]=],
  ["tend.restart_with_backoff"] = [=[tend.restart_with_backoff(min, max, random_factor) -> action
  Typed: restart after an exponential backoff.]=],
  ["tend.retry"] = [=[tend.retry(fn, opts) -> fn's result
  Calls fn until it returns, waiting a backoff between tries.]=],
  ["tend.backoff.on_failure"] = [=[tend.backoff.on_failure(factory, opts) -> backoff spec
  A backoff supervisor restarting its child after a failure, with delays
  from min_backoff to max_backoff (random_factor jitter).]=],
  ["tend.backoff.on_stop"] = [=[tend.backoff.on_stop(factory, opts) -> backoff spec
  A backoff supervisor restarting its child after any stop.]=],
  ["tend.backoff.delays"] = [=[tend.backoff.delays(opts, n) -> {delay, ...}
  The first n delays a backoff config would use.]=],
  ["tend.virtual_time"] = [=[tend.virtual_time() -> boolean
  Whether the clock is virtual.]=],
  ["tend.copy_messages"] = [=[tend.copy_messages() -> boolean
  Whether messages are deep-copied at their send (--copy-messages).]=],
  ["tend.inspect"] = [=[tend.inspect(ref) -> state | nil
  An actor's state (OTP sys:get_state) without disturbing it: vars (its
  behavior's upvalues, or a hook table's fields), mailbox, busy, doing,
  current (the message it is in), state, restarts, timers, watchers,
  watching, factory. nil when it is dead.]=],
  ["tend.reload"] = [=[tend.reload(mod) -> {module, file, moving, failed}
  Loads module mod again from disk; every live actor whose factory came
  from it moves to the new code at its next message boundary (code_change
  (self, old_state) carries state over, else a CodeChange restart).]=],
  ["tend.backoff.retry"] = [=[tend.backoff.retry(fn, opts) -> fn's results
  Calls fn; on an error waits the next backoff delay (only the caller
  waits) and calls again, up to max_restarts retries, then raises
  RetriesExhausted (.last, .attempts). Also tend.retry.]=],
  ["tend.backoff.child"] = [=[tend.backoff.child(sup) -> ref or nil
  The backoff supervisor's current child (Akka's GetCurrentChild).]=],
  ["tend.backoff.restart_count"] = [=[tend.backoff.restart_count(sup) -> n
  Restarts since the last reset (Akka's GetRestartCount).]=],
  ["tend.backoff.reset"] = [=[tend.backoff.reset(sup)
  The delays start over from the first (Akka's Reset).]=],
  ["tend.register"] = [=[tend.register(name, ref)
  Gives ref a name (one per actor; a taken name is an error); tend.send,
  tend.ask and tend.whereis take it. It goes when the actor dies.]=],
  ["tend.unregister"] = [=[tend.unregister(name) -> boolean
  Takes the name away; false when nothing had it.]=],
  ["tend.whereis"] = [=[tend.whereis(name_or_path) -> ref or nil
  The live actor registered as name, or at a path like /user/app/api.]=],
  ["tend.registered"] = [=[tend.registered() -> {name, ...}
  The names registered now, sorted.]=],
  ["tend.children"] = [=[tend.children(ref) -> {{path, ref, name, state, restart, restarts, mailbox, supervisor}, ...}
  ref's children in start order (OTP's which_children).]=],
  ["tend.count_children"] = [=[tend.count_children(ref) -> {specs, active, supervisors, workers}
  Counts of ref's children (OTP's count_children).]=],
  ["tend.start_child"] = [=[tend.start_child(sup, factory [, opts]) -> ref
  Spawns a child of sup from outside it (OTP's start_child).]=],
  ["tend.stop_child"] = [=[tend.stop_child(sup, ref)
  Stops sup's child ref ("shutdown", final: OTP's terminate_child).]=],
  ["tend.pool"] = [=[tend.pool{size, factory, args, strategy, routing, name, under} -> ref
  A supervised pool of size members behind one ref; routing is
  "round_robin", "random", "smallest_mailbox" or "broadcast".]=],
  ["tend.pg.join"] = [=[tend.pg.join(group, ref_or_refs)
  ref (an actor of this node) joins group (OTP's pg); it leaves when it
  dies. Every node up is told.]=],
  ["tend.pg.leave"] = [=[tend.pg.leave(group, ref_or_refs) -> true or false
  ref leaves group; true when one of them was a member.]=],
  ["tend.pg.members"] = [=[tend.pg.members(group) -> {ref, ...}
  The live members of group on every node up, by node name, then in
  join order on their node.]=],
  ["tend.pg.local_members"] = [=[tend.pg.local_members(group) -> {ref, ...}
  This node's live members of group, in join order.]=],
  ["tend.pg.monitor"] = [=[tend.pg.monitor(group [, false]) -> {ref, ...}
  The members now; then the calling actor gets {tend = "pg_join" or
  "pg_leave", group, refs} at each change, on any node (OTP's pg:monitor).]=],
  ["tend.pg.send"] = [=[tend.pg.send(group, msg) -> n
  Sends msg to every member of group, on every node; returns how many.]=],
  ["tend.pg.which_groups"] = [=[tend.pg.which_groups() -> {group, ...}
  The groups with a live member on any node up.]=],
  ["tend.process"] = [=[tend.process{cmd, env, inherit_env, cwd, stdin, stdout, stderr, to, kill_signal, shutdown, process_group, ready, ready_timeout, shell, sim} -> factory
  A factory for an OS process actor: spawn it like any factory. Exit 0
  is a normal stop, else ProcessExit (.status) or ProcessSignal (.signal).
  Its output goes to `to` as lines; without `to`, to tend's stdout/stderr.]=],
  ["tend.process.run"] = [=[tend.process.run(cmd, opts) -> {status, signal, core_dump, stdout, stderr, timed_out, pid}
  Runs cmd and waits by yielding (other actors run): os.execute and
  io.popen for actors. opts: timeout, input, env, cwd, stdout, stderr...]=],
  ["tend.process.is_sim"] = [=[tend.process.is_sim(factory) -> boolean
  Whether a tend.process factory runs a simulated process (sim).]=],
  ["tend.tcp.listen"] = [=[tend.tcp.listen{host, port, handler, framing, max_connections, backlog, max_line} [, spawn opts] -> listener ref
  Listens (a taken port raises ListenError here) and spawns the listener
  as a child of the caller. Each connection is a temporary child running
  handler(ctx, peer): it gets {tend="data", data=...} per line or frame,
  then {tend="closed", reason=...}, and stops (after reason "eof", the
  peer's end of input, it can still write while it handles it).
  tend.ask(l, "port" | "connections" | "refused").]=],
  ["tend.tcp.server"] = [=[tend.tcp.server{host, port, handler, framing, ...} -> factory
  The listener as a factory (for tend.spawn, ctx:spawn, children);
  a taken port is then an InitError of the listener.]=],
  ["tend.tcp.connect"] = [=[tend.tcp.connect{host, port, framing, timeout, max_line, to} -> connection ref
  Connects (the caller waits; others run). Data and closed go to the
  caller, or to `to`. Raises ConnectError (.reason: "connection refused",
  "timed out", "host not found", ...).]=],
  ["tend.tcp.write"] = [=[tend.tcp.write(conn, data) -> true | false, "closed"
  Sends data, framed (line: data.."\n"; length: a 4-byte prefix). Waits
  while over 1 MiB is queued; false, "closed" once the connection ended.
  In a handler: ctx:write(data).]=],
  ["tend.tcp.close"] = [=[tend.tcp.close(conn)
  Sends what is queued, then closes; the reader gets closed, reason
  "closed". In a handler: ctx:close().]=],
  ["tend.tcp.peer"] = [=[tend.tcp.peer(conn) -> "address:port"
  The other end of a connection.]=],
  ["tend.tcp.socket_of"] = [=[tend.tcp.socket_of(conn) -> socket or nil
  The socket behind a connection ref (its transport's object; for chaos).]=],
  ["tend.http.request"] = [=[tend.http.request{method, url, headers, body, timeout, max_body} -> {status, headers, body}
  An HTTP(S) call through libcurl; the caller waits (others run). A 404
  or 500 is a response; no response (refused, timed out, TLS, bounds)
  raises HttpError (.reason: curl's text). Header names lowercased.
  timeout 30 s, max_body 16 MiB. Under --virtual-time: simulated servers.]=],
  ["tend.http.get"] = [=[tend.http.get(url [, opts]) -> {status, headers, body}
  tend.http.request with method GET; opts: headers, timeout, max_body.]=],
  ["tend.http.serve"] = [=[tend.http.serve{host, port, handler, name, max_connections, max_body, timeout, debug} -> ref
  An HTTP/1.1 and HTTP/2 server (H2O), bound in the caller (ListenError),
  a child of it. handler(req, ctx) runs in an actor per request; req:
  method, path, query, headers, body, peer, version. It returns a string
  (200 text/plain), {status, headers, body} or nil, status. A raise: 500;
  past timeout (30 s): 503. tend.ask(ref, "port"), "refused". Under
  --virtual-time: a simulated server on host (same handler).]=],
  ["tend.http.server"] = [=[tend.http.server{...} -> factory
  tend.http.serve's server as a factory for a supervisor (a restart
  listens again on the same port). Real clock only.]=],
  ["tend.http.router"] = [=[tend.http.router{ {method, "/path/:param", fn}, ... } -> handler
  Routes requests: req.params holds the :params; no path matches: 404;
  the path matches other methods only: 405 with Allow.]=],
  ["tend.http.in_flight"] = [=[tend.http.in_flight() -> n
  How many real HTTP requests are in flight now.]=],
  ["tend.chaos.partition"] = [=[tend.chaos.partition(a, b)
  Under --virtual-time: nothing crosses between hosts a and b (names, or
  actor refs: their hosts) until repair(a, b); bytes written meanwhile
  wait, connects and HTTP calls time out. A trace event. On two simulated
  nodes (tend.sim.nodes): the bus between them drops what crosses.]=],
  ["tend.chaos.crash_node"] = [=[tend.chaos.crash_node(name)
  A simulated node (tend.sim.nodes) dies at once, as with kill -9: nothing
  runs there any more; the others see it down after the node timeout.]=],
  ["tend.chaos.restart_node"] = [=[tend.chaos.restart_node(name)
  A simulated node that crashed or ended runs its script again, as a new
  incarnation (refs to the old one stay dead).]=],
  ["tend.sim.nodes"] = [=[tend.sim.nodes({name = script | {script, code, args}}, opts) -> {names}
  Under --virtual-time: several nodes in this process, each a host of its
  own running its script, over a simulated bus on one virtual clock (the
  node API unchanged). opts: timeout (node timeout, default 15), latency,
  jitter, join = "name" (this world takes part as a node).]=],
  ["tend.sim.list"] = [=[tend.sim.list() -> {{name, state, inc}, ...}
  The simulated nodes: "up", "crashed" or "ended", and their incarnation.]=],
  ["tend.sim.stop"] = [=[tend.sim.stop()
  Every simulated node stops (as tend.shutdown there); the world leaves
  the cluster and the bus is healed.]=],
  ["tend.chaos.repair"] = [=[tend.chaos.repair(a, b)
  Ends a partition: what waited goes, in order.]=],
  ["tend.chaos.hold"] = [=[tend.chaos.hold(a, b)
  Under --virtual-time: holds everything between a and b until release.]=],
  ["tend.chaos.release"] = [=[tend.chaos.release(a, b)
  Ends a hold: what was held goes, in order.]=],
  ["tend.chaos.latency"] = [=[tend.chaos.latency(a, b, seconds [, jitter])
  Under --virtual-time: bytes between hosts a and b take seconds (plus a
  seeded 0..jitter) each way; a connection keeps its order.]=],
  ["tend.chaos.reset"] = [=[tend.chaos.reset(conn)
  Ends a connection (real or simulated) abruptly: both ends get closed
  with reason "reset".]=],
  ["tend.simnet.place"] = [=[tend.simnet.place(ref, host)
  Under --virtual-time: ref and its subtree live on the simulated host
  (connects go from there; partitions and latencies apply to it).]=],
  ["tend.node.start"] = [=[tend.node.start{name, nats, timeout, retry, limit} -> name
  Makes this process node `name` on the NATS server at `nats`
  ("nats://host:port", or "local": a nats-server child). Same as the
  command line's --node NAME --nats URL. Raises NatsError when the server
  cannot be reached (unless retry), NodeError when the name is taken.]=],
  ["tend.node.peer"] = [=[tend.node.peer(name [, {script, args, code, timeout, wait}]) -> process ref
  Starts another node of this program on this node's NATS server (OTP's
  peer:start): `tend --node name --nats URL script args` (or -e code) as
  an OS process under /user; returns once the node is up.]=],
  ["tend.node.name"] = [=[tend.node.name() -> name or nil
  This node's name (nil when this process is no node).]=],
  ["tend.node.list"] = [=[tend.node.list() -> {names}
  The other nodes seen alive, sorted (Erlang's nodes()).]=],
  ["tend.node.monitor"] = [=[tend.node.monitor(name [, false])
  The calling actor gets {tend = "nodeup" | "nodedown", node = name} at
  each change; a nodedown at once when name is not up now. false stops.]=],
  ["tend.node.stats"] = [=[tend.node.stats() -> {sent, received, dropped, proxies}
  Messages sent to and received from other nodes, dropped while their
  node was down, and refs to other nodes' actors held now.]=],
  ["tend.node.tree"] = [=[tend.node.tree([name]) -> text
  The supervision tree of node name (this node's by default).]=],
  ["tend.spawn_on"] = [=[tend.spawn_on(node, "module.factory", opts) -> ref
  Loads module on node (require there) and spawns its factory there,
  under /system/remote/<this node>; opts are spawn options, plus timeout
  (the wait, default 5 s). Raises SpawnError (no module, no factory) or
  NodeDown.]=],
  ["tend.global.register"] = [=[tend.global.register(name, ref) -> true | false, holder
  A name every node sees (NATS JetStream key-value). The older
  registration wins: a later one gets false and the holder's ref. The name
  goes when its actor dies; a dead node's names expire with its lease.]=],
  ["tend.global.whereis"] = [=[tend.global.whereis(name) -> ref or nil
  The actor registered as name on any node (cached until it or its node
  is gone).]=],
  ["tend.global.unregister"] = [=[tend.global.unregister(name)
  Drops name, when this node holds it.]=],
  ["tend.global.registered"] = [=[tend.global.registered() -> {names}
  The global names with a live holder, sorted.]=],
  -- the REPL's own helpers
  help = [=[help([fn])
  Help on the REPL, or on one function: help(tend.spawn).]=],
  tree = [=[tree([node]) -> text
  Prints the supervision tree (of another node with a name) and returns it.]=],
  nodes = [=[nodes() -> {names}
  Prints this node's name and the nodes up; returns tend.node.list().]=],
  ps = [=[ps() -> rows
  Prints the actors, one a line, and returns the rows of tend.ps().]=],
  stats = [=[stats() -> table
  Prints the counters and returns tend.stats().]=],
  flush = [=[flush()
  Prints and drops the messages waiting for the REPL.]=],
  watch = [=[watch(ref)
  Prints a line when ref dies.]=],
  inspect = [=[inspect(ref) -> state
  An actor's state without stopping it: its behavior's upvalues (or its
  hook table's fields), mailbox length, current message, restarts,
  timers, watchers. Prints it and returns it.]=],
  reload = [=[reload("mod")
  Loads module mod again from disk; every live actor whose factory came
  from it moves to the new code at its next message boundary.]=],
}

-- The name a function is known by: "tend.x", "tend.backoff.x" (and the
-- other modules') or a REPL helper; nil when none.
local function name_of(fn, helpers)
  local tend = require "tend"
  for k, v in pairs(helpers or {}) do
    if rawequal(v, fn) and M.docs[k] then return k end
  end
  for k, v in pairs(tend) do
    if rawequal(v, fn) then return "tend." .. k end
  end
  for _, m in ipairs({ "backoff", "pg", "process", "tcp", "http", "node" }) do
    for k, v in pairs(tend[m]) do
      if rawequal(v, fn) then return "tend." .. m .. "." .. k end
    end
  end
  for _, m in ipairs({ "chaos", "simnet", "global" }) do -- loaded on first use: only when they are
    for k, v in pairs(package.loaded["tend." .. m] or {}) do
      if rawequal(v, fn) and M.docs["tend." .. m .. "." .. k] then return "tend." .. m .. "." .. k end
    end
  end
  return nil
end

-- The help text for v (a function, or its name as a string).
function M.text(v, helpers)
  local name = type(v) == "string" and v or name_of(v, helpers)
  if name and M.docs[name] then return M.docs[name] end
  if name and M.docs["tend." .. name] then return M.docs["tend." .. name] end
  if type(v) == "string" then -- "tend.chaos.freeze": the function at that path
    local f, first = nil, true
    for part in v:gmatch("[^.]+") do
      if first then
        f = part == "tend" and require "tend" or nil
        first = false
      elseif type(f) == "table" then
        local ok, x = pcall(function() return f[part] end)
        f = ok and x or nil
      else
        f = nil
      end
    end
    if type(f) == "function" then v = f end
  end
  if type(v) == "function" then
    local info = debug.getinfo(v, "Su")
    if info.what == "C" then
      return (name or "this function") .. ": a builtin function with no help text"
    end
    local params = {}
    for i = 1, info.nparams do params[i] = debug.getlocal(v, i) end
    if info.isvararg then params[#params + 1] = "..." end
    return string.format("%s(%s)\n  defined at %s:%d", name or "function", table.concat(params, ", "),
      info.short_src, info.linedefined)
  end
  return "help: expected a function or its name (help(tend.spawn), help(\"tend.spawn\")), got " ..
    (type(v) == "string" and ("'" .. v .. "'") or type(v))
end

-------------------------------------------------------------- did you mean
-- Edits (insert, delete, change, swap two neighbours) from a to b; 3 for
-- anything farther than 2.
local function distance(a, b)
  if math.abs(#a - #b) > 2 then return 3 end
  local d = {}
  for i = 0, #a do d[i] = { [0] = i } end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

local function add_keys(t, out)
  if type(t) ~= "table" then return end
  for k in pairs(t) do
    if type(k) == "string" then out[k] = true end
  end
end

-- The names that could be meant where a nil `what` ("global", "field",
-- "method", "upvalue", "local") named `name` was used.
local function candidates(what)
  local out = {}
  if what == "global" then
    add_keys(_G, out)
    return out
  end
  -- a method: the methods of refs, timers, ... (metatables with an
  -- __index table) and of strings
  local reg = debug.getregistry()
  for k, mt in pairs(reg) do
    if type(k) == "string" and type(mt) == "table" and type(mt.__index) == "table" then
      add_keys(mt.__index, out)
    end
  end
  add_keys(string, out)
  if what == "method" then return out end
  -- a field: also the fields of every global table and of tend
  for _, v in pairs(_G) do add_keys(v, out) end
  local tend = package.loaded.tend
  if type(tend) == "table" then
    add_keys(tend, out)
    add_keys(rawget(tend, "backoff"), out)
  end
  return out
end

-- The closest name to `name` among the candidates (at most 2 edits, 1 for
-- names of 3 letters or fewer), or nil.
function M.closest(name, names)
  local best, best_d
  local limit = #name <= 3 and 1 or 2
  local sorted = {}
  for k in pairs(names) do sorted[#sorted + 1] = k end
  table.sort(sorted)
  for _, k in ipairs(sorted) do
    if k ~= name then
      local d = distance(name, k)
      if d <= limit and (best_d == nil or d < best_d) then best, best_d = k, d end
    end
  end
  return best
end

-- An error message with " (did you mean 'x'?)" added when it is about a
-- nil global, field or method with a close name; else the message as is.
function M.suggest(msg)
  if type(msg) ~= "string" then return msg end
  local what, name = msg:match("a nil value %((%a+) '([%w_]+)'%)")
  if not what or what == "local" or what == "upvalue" then return msg end
  local guess = M.closest(name, candidates(what))
  if not guess then return msg end
  return (msg:gsub("(a nil value %(%a+ '[%w_]+'%))", "%1 (did you mean '" .. guess .. "'?)", 1))
end

return M
