-- The reference's entries for the toolbox: timers, names, pools, process
-- groups, the stash and receive timeouts, retry, the backoff queries, the
-- test kit, inspect and reload (format: lua/tend/doc.lua).
local probe = [[local probe = tend.testkit.probe("p")
]]

return {
  { class = "tend.PoolOpts", summary = "The options of tend.pool.",
    fields = {
      { "size", "integer", "the members, 1..size" },
      { "factory", "fun(ctx: tend.Ctx, ...): any|string", "each member's factory (a \"module.factory\" string with spread)" },
      { "args", "any[]?", "the members' factory arguments" },
      { "strategy", "tend.Strategy?", "the members' strategy (default tend.default_strategy)" },
      { "routing", "\"round_robin\"|\"random\"|\"smallest_mailbox\"|\"broadcast\"?", "how a message picks a member (default round_robin)" },
      { "name", "string?", "the pool's name" },
      { "under", "tend.Ref|string?", "its parent (as tend.start_child); default /user" },
      { "spread", "boolean?", "members on every scheduler in turn (member i on scheduler (i-1) % n, --schedulers); the factory is then \"module.factory\"" },
    } },
  { class = "tend.RetryOpts", summary = "The options of tend.retry.",
    fields = {
      { "min_backoff", "number", "the first delay, seconds" },
      { "max_backoff", "number", "the largest base delay" },
      { "random_factor", "number?", "the jitter" },
      { "max_restarts", "integer?", "retries before RetriesExhausted (default 10)" },
      { "jitter", "string?", "as tend.BackoffOpts's" },
      { "algorithm", "string?", "as tend.BackoffOpts's" },
      { "slot_time", "number?", "as tend.BackoffOpts's" },
      { "ceiling", "integer?", "as tend.BackoffOpts's" },
      { "stay_at_ceiling", "boolean?", "as tend.BackoffOpts's" },
    } },
  { class = "tend.Timer", summary = "A timer of ctx:after, ctx:every or tend.after.", fields = {} },
  { class = "tend.Probe", summary = "A test probe (tend.testkit.probe): an actor whose messages a test awaits.",
    fields = {
      { "ref", "tend.Ref", "the probe's actor" },
      { "last_sender", "tend.Ref?", "the sender of the last message taken" },
    } },

  { class = "tend.State", summary = "An actor's state as tend.inspect sees it.",
    fields = {
      { "path", "string", "its path" }, { "state", "string", "as in tend.ps()" },
      { "behavior", "\"function\"|\"hooks\"|\"none\"", "what its behavior is" },
      { "vars", "table", "its behavior's upvalues, or its hook table's fields" },
      { "mailbox", "integer", "messages queued" }, { "busy", "boolean", "whether it is in a message" },
      { "doing", "string?", "what it waits on while busy (receive, sleep, ask, ...)" },
      { "current", "any", "the message it is in, when found" },
      { "restarts", "integer", "its restarts" }, { "timers", "integer", "its pending timers" },
      { "watchers", "tend.Ref[]", "who watches it" }, { "watching", "tend.Ref[]", "whom it watches" },
      { "factory", "function", "its factory" },
    } },
  { class = "tend.Reload", summary = "tend.reload's result.",
    fields = {
      { "module", "string", "the module" }, { "file", "string", "its file" },
      { "moving", "string[]", "the paths of the actors that move at their next message" },
      { "failed", "table[]", "{path, reason} of those that cannot" },
    } },

  -- timers
  { name = "tend.after", sig = "tend.after(seconds, fn) -> timer",
    summary = "Runs fn later as a short-lived task under /system.",
    text = [[The task may sleep, ask and receive. The host does not end by itself while the timer is pending.]],
    params = { { "seconds", "number", "the delay" }, { "fn", "fun()", "what to run" } },
    returns = { { "tend.Timer", "cancel it with :cancel()" } }, errors = {},
    example = [[tend.after(1, function() print("a second later") end)]] },
  { name = "ctx:after", sig = "ctx:after(seconds, msg) -> timer",
    summary = "Sends msg to the running actor after seconds.",
    text = [[The actor's timers are cancelled at its restart and its death.]],
    params = { { "seconds", "number", "the delay" }, { "msg", "any", "the message" } },
    returns = { { "tend.Timer", "cancel it with :cancel()" } }, errors = {},
    example = [[tend.spawn(function(ctx) ctx:after(1, "tick") return function(m) print(m) end end)]] },
  { name = "ctx:every", sig = "ctx:every(seconds, msg) -> timer",
    summary = "Sends msg to the running actor every seconds, until cancelled.",
    text = [[While it is set the host does not end by itself.]],
    params = { { "seconds", "number", "the period" }, { "msg", "any", "the message" } },
    returns = { { "tend.Timer", "cancel it with :cancel()" } }, errors = {},
    example = [[tend.spawn(function(ctx)
  local t = ctx:every(1, "tick")
  return function(m) t:cancel() end
end)]] },
  { name = "timer:cancel", sig = "timer:cancel() -> boolean",
    summary = "Cancels the timer; true when it was still pending.", text = "",
    params = {}, returns = { { "boolean", "whether it was pending" } }, errors = {},
    example = [[local t = tend.after(5, function() end)
t:cancel()]] },
  { name = "timer:active", sig = "timer:active() -> boolean",
    summary = "Whether the timer is still pending (an every stays so until cancelled).", text = "",
    params = {}, returns = { { "boolean", "whether it is pending" } }, errors = {},
    example = [[local t = tend.after(5, function() end)
print(t:active()) t:cancel()]] },

  -- names
  { name = "tend.register", sig = "tend.register(name, ref) -> ref",
    summary = "Gives a live actor a name (one per actor); tend.send, tend.ask and tend.whereis take it.",
    text = [[The name goes when the actor dies. The same name again is no change.]],
    params = { { "name", "string", "the name" }, { "ref", "tend.Ref", "the actor" } },
    returns = { { "tend.Ref", "ref" } }, errors = { "a name taken by another live actor (the message names both)" },
    example = [[local db = tend.spawn(function() return function(q, ctx) ctx:reply("rows") end end)
tend.register("db", db)
print(tend.ask("db", "q"))]] },
  { name = "tend.unregister", sig = "tend.unregister(name) -> boolean",
    summary = "Takes the name away; false when it named no live actor.", text = "",
    params = { { "name", "string", "the name" } }, returns = { { "boolean", "whether it named a live actor" } }, errors = {},
    example = [[print(tend.unregister("nobody")) --> false]] },
  { name = "tend.whereis", sig = "tend.whereis(name_or_path) -> ref or nil",
    summary = "The live actor registered as name, or at a path like /user/app/api.", text = "",
    params = { { "name_or_path", "string", "a name, or a path starting with /" } },
    returns = { { "tend.Ref?", "the actor, or nil" } }, errors = {},
    example = [[print(tend.whereis("/user/main"))]] },
  { name = "tend.registered", sig = "tend.registered() -> {name, ...}",
    summary = "The names registered now, sorted.", text = "",
    params = {}, returns = { { "string[]", "the names" } }, errors = {},
    example = [[print(#tend.registered())]] },

  -- pools and groups
  { name = "tend.pool", sig = "tend.pool{size, factory, args, strategy, routing, name, under, spread} -> ref",
    summary = "A supervised pool of size members behind one ref.",
    text = [[Every message goes to one member (its sender kept, so a member's ctx:reply answers the asker). routing: "round_robin" (default), "random" (the seeded generator), "smallest_mailbox" (the fewest queued, then not busy, then the earliest started), "broadcast" (every member). It watches its members and stops when none is left; a member restarted keeps its place. The members exist once the caller has yielded. With spread = true (several schedulers) member i goes on scheduler (i-1) % n and the factory is named as "module.factory"; the members away from the pool's scheduler are its children through stand-ins, supervised as the others (smallest_mailbox then sees the stand-ins' mailboxes, which forward at once).]],
    params = { { "opts", "tend.PoolOpts", "size, factory, args, strategy, routing, name, under, spread" } },
    returns = { { "tend.Ref", "the pool" } }, errors = { "an option that is wrong or unknown" },
    example = [[local pool = tend.pool { size = 3, name = "workers",
  factory = function() return function(job, ctx) ctx:reply(ctx.self:name() .. " did " .. job) end end }
print(tend.ask(pool, "a")) --> 1 did a]] },
  { name = "tend.pg.join", sig = "tend.pg.join(group, ref_or_refs)",
    summary = "Actors of this node join group (OTP's pg); they leave when they die.",
    text = [[A group is any value but nil or NaN; joining twice is one membership. On a node, every node up is told.]],
    params = { { "group", "any", "the group" }, { "refs", "tend.Ref|tend.Ref[]", "the actors" } },
    returns = {}, errors = { "a ref of another node's actor" },
    example = [[local a = tend.spawn(function() return function(m) print("a got " .. m) end end)
tend.pg.join("news", a)]] },
  { name = "tend.pg.leave", sig = "tend.pg.leave(group, ref_or_refs) -> boolean",
    summary = "Actors leave group; true when one of them was a member.", text = "",
    params = { { "group", "any", "the group" }, { "refs", "tend.Ref|tend.Ref[]", "the actors" } },
    returns = { { "boolean", "whether one was a member" } }, errors = {},
    example = [[print(tend.pg.leave("news", tend.self())) --> false]] },
  { name = "tend.pg.members", sig = "tend.pg.members(group) -> {ref, ...}",
    summary = "The live members of group on every node up, by node name, then in join order.",
    text = [[With several schedulers (--schedulers) a group that is a string, a number or a boolean spans them: every scheduler's members, scheduler by scheduler, each in join order.]],
    params = { { "group", "any", "the group" } }, returns = { { "tend.Ref[]", "the members" } }, errors = {},
    example = [[print(#tend.pg.members("news"))]] },
  { name = "tend.pg.local_members", sig = "tend.pg.local_members(group) -> {ref, ...}",
    summary = "This node's live members of group, in join order.", text = "",
    params = { { "group", "any", "the group" } }, returns = { { "tend.Ref[]", "the members" } }, errors = {},
    example = [[print(#tend.pg.local_members("news"))]] },
  { name = "tend.pg.monitor", sig = "tend.pg.monitor(group [, false]) -> {ref, ...}",
    summary = "The members now; then the calling actor is told of each change (OTP's pg:monitor).",
    text = [[The message is {tend = "pg_join" or "pg_leave", group = group, refs = {ref, ...}}, on any node; false stops it, as does the actor's death.]],
    params = { { "group", "any", "the group" }, { "on", "boolean?", "false stops monitoring" } },
    returns = { { "tend.Ref[]", "the members now" } }, errors = {},
    example = [[tend.spawn(function() tend.pg.monitor("news") return function(m) print(m.tend) end end)]] },
  { name = "tend.pg.send", sig = "tend.pg.send(group, msg) -> n",
    summary = "Sends msg to every live member of group, on every node; returns how many.", text = "",
    params = { { "group", "any", "the group" }, { "msg", "any", "the message" } },
    returns = { { "integer", "the members sent to" } }, errors = {},
    example = [[print(tend.pg.send("news", "hello"))]] },
  { name = "tend.pg.which_groups", sig = "tend.pg.which_groups() -> {group, ...}",
    summary = "The groups with a live member on any node up.", text = "",
    params = {}, returns = { { "any[]", "the groups" } }, errors = {},
    example = [[print(#tend.pg.which_groups())]] },

  -- stash and receive timeout
  { name = "ctx:stash", sig = "ctx:stash()",
    summary = "Keeps the message being received, and its sender, for ctx:unstash_all.",
    text = [[Only in an actor spawned with the option stash = n, in its behavior or receive hook; one more than n fails the actor with StashOverflow. What is stashed goes to dead letters at a restart (a pre_restart that calls ctx:unstash_all keeps it).]],
    params = {}, returns = {}, errors = { "this actor has no stash", "StashOverflow", "a second stash of one message" },
    example = [[local door = tend.spawn(function()
  local open = false
  return function(m, ctx)
    if m == "open" then open = true ctx:unstash_all()
    elseif not open then ctx:stash() else print("in: " .. m) end
  end
end, { stash = 100 })
door:send("first") door:send("open")]] },
  { name = "ctx:unstash_all", sig = "ctx:unstash_all() -> n",
    summary = "Puts every stashed message back in front of the mailbox, oldest first; returns how many.", text = "",
    params = {}, returns = { { "integer", "the messages put back" } }, errors = {},
    example = [[tend.spawn(function() return function(m, ctx) ctx:unstash_all() end end, { stash = 10 })]] },
  { name = "ctx:stashed", sig = "ctx:stashed() -> n",
    summary = "How many messages the stash holds.", text = "",
    params = {}, returns = { { "integer", "the count" } }, errors = {},
    example = [[tend.spawn(function() return function(m, ctx) print(ctx:stashed()) end end, { stash = 10 }):send(1)]] },
  { name = "ctx:set_receive_timeout", sig = "ctx:set_receive_timeout(seconds [, msg])",
    summary = "After seconds without a message, msg comes through the mailbox, and again after each idle period.",
    text = [[msg defaults to the string "receive_timeout"; nil seconds clears it. Any message starts the countdown again; it does not fire while the actor is in a message, suspended or restarting, or has mail queued. Kept across restarts. While set it is a pending timer: the host does not end by itself.]],
    params = { { "seconds", "number?", "the idle time; nil clears" }, { "msg", "any?", "the message (default \"receive_timeout\")" } },
    returns = {}, errors = { "in a task (it has tend.receive(timeout))" },
    example = [[tend.spawn(function(ctx)
  ctx:set_receive_timeout(5, "quiet")
  return function(m) if m == "quiet" then return tend.stopped end end
end)]] },
  { name = "ctx:receive_timeout", sig = "ctx:receive_timeout() -> seconds or nil",
    summary = "The receive timeout set now in seconds, or nil.", text = "",
    params = {}, returns = { { "number?", "the seconds" } }, errors = {},
    example = [[tend.spawn(function(ctx) ctx:set_receive_timeout(5) print(ctx:receive_timeout()) return function() end end)]] },

  -- retry and the backoff queries
  { name = "tend.backoff.retry", sig = "tend.backoff.retry(fn, opts) -> fn's results",
    summary = "Calls fn; on an error waits the next backoff delay (only the caller waits) and calls again.",
    text = [[Up to max_restarts retries, then raises RetriesExhausted (.last: the last error, .attempts). Also tend.retry.]],
    alias = { "tend.retry" },
    params = { { "fn", "fun(): any", "the call to try" }, { "opts", "tend.RetryOpts", "the delays and max_restarts" } },
    returns = { { "any", "fn's results" } }, errors = { "RetriesExhausted", "an option that is wrong or unknown" },
    example = [[local n = 0
print(tend.retry(function() n = n + 1 if n < 3 then error("flaky") end return n end,
  { min_backoff = 0.01, max_backoff = 1, max_restarts = 5 })) --> 3]] },
  { name = "tend.backoff.child", sig = "tend.backoff.child(sup) -> ref or nil",
    summary = "The backoff supervisor's current child, nil from the moment it starts stopping until its next start (Akka's GetCurrentChild names it until Terminated).", text = "",
    params = { { "sup", "tend.Ref|string", "the backoff supervisor or its name" } },
    returns = { { "tend.Ref?", "the child" } }, errors = { "a live actor that is not a backoff supervisor" },
    example = [[local sup = tend.spawn(tend.backoff.on_failure(function() return function() end end, { min_backoff = 1, max_backoff = 5 }))
tend.sleep(0) print(tend.backoff.child(sup))]] },
  { name = "tend.backoff.restart_count", sig = "tend.backoff.restart_count(sup) -> n",
    summary = "Restarts since the last reset (Akka's GetRestartCount).", text = "",
    params = { { "sup", "tend.Ref|string", "the backoff supervisor or its name" } },
    returns = { { "integer?", "the count (nil, message for a dead one)" } }, errors = { "a live actor that is not a backoff supervisor" },
    example = [[local sup = tend.spawn(tend.backoff.on_failure(function() return function() end end, { min_backoff = 1, max_backoff = 5 }))
print(tend.backoff.restart_count(sup)) --> 0]] },
  { name = "tend.backoff.reset", sig = "tend.backoff.reset(sup) -> true",
    summary = "The delays start over from the first and the count from 0 (Akka's Reset), under any reset mode.", text = "",
    params = { { "sup", "tend.Ref|string", "the backoff supervisor or its name" } },
    returns = { { "boolean?", "true (nil, message for a dead one)" } }, errors = { "a live actor that is not a backoff supervisor" },
    example = [[local sup = tend.spawn(tend.backoff.on_failure(function() return function() end end, { min_backoff = 1, max_backoff = 5 }))
tend.backoff.reset(sup)]] },

  -- the test kit
  { name = "tend.testkit.probe", sig = "tend.testkit.probe([name]) -> probe",
    summary = "A probe: an actor that queues what it receives for the test to expect.",
    text = [[Waits are on the host clock, so under --virtual-time a 30 s timeout costs nothing. The default timeout is 3 s, as Akka's TestKit.]],
    params = { { "name", "string?", "the probe actor's name" } },
    returns = { { "tend.Probe", "the probe (.ref is its actor)" } }, errors = {},
    example = probe .. [[probe.ref:send("hi")
probe:expect_msg("hi")]] },
  { name = "probe:receive", sig = "probe:receive([timeout]) -> {msg, sender} or nil",
    summary = "The next message, waiting up to timeout.", text = "",
    params = { { "timeout", "number?", "seconds (default 3)" } },
    returns = { { "table?", "{msg, sender}, or nil after the timeout" } }, errors = {},
    example = probe .. [[print(probe:receive(0.1))]] },
  { name = "probe:send_to", sig = "probe:send_to(ref, msg)",
    summary = "Sends msg to ref with the probe as its sender (replies come to the probe).", text = "",
    params = { { "ref", "tend.Ref", "the target" }, { "msg", "any", "the message" } }, returns = {}, errors = {},
    example = probe .. [[local echo = tend.spawn(function() return function(m, ctx) ctx:reply(m) end end)
probe:send_to(echo, "x") probe:expect_msg("x")]] },
  { name = "probe:expect_msg", sig = "probe:expect_msg(value_or_predicate [, timeout]) -> msg",
    summary = "The next message, which must equal value (deeply) or satisfy the predicate.", text = "",
    params = { { "expected", "any", "the value, or a function(msg) -> boolean" }, { "timeout", "number?", "seconds (default 3)" } },
    returns = { { "any", "the message" } }, errors = { "no message in time, or another one (the error shows it)" },
    example = probe .. [[probe.ref:send({ n = 1 })
probe:expect_msg({ n = 1 })]] },
  { name = "probe:expect_no_msg", sig = "probe:expect_no_msg(seconds)",
    summary = "Nothing arrives for seconds.", text = "",
    params = { { "seconds", "number", "how long" } }, returns = {}, errors = { "a message came" },
    example = probe .. [[probe:expect_no_msg(0.5)]] },
  { name = "probe:expect_terminated", sig = "probe:expect_terminated(ref [, timeout]) -> msg",
    summary = "The terminated message of a watched ref.", text = "",
    params = { { "ref", "tend.Ref", "the watched actor" }, { "timeout", "number?", "seconds (default 3)" } },
    returns = { { "tend.Terminated", "the notice" } }, errors = { "none in time" },
    example = probe .. [[local w = tend.spawn(function() return function() end end)
probe:watch(w) tend.stop(w)
print(probe:expect_terminated(w).reason) --> normal]] },
  { name = "probe:watch", sig = "probe:watch(ref)",
    summary = "The probe watches ref: it gets ref's terminated message.", text = "",
    params = { { "ref", "tend.Ref", "the actor" } }, returns = {}, errors = {},
    example = probe .. [[probe:watch(tend.self())]] },
  { name = "probe:unwatch", sig = "probe:unwatch(ref)",
    summary = "The probe stops watching ref.", text = "",
    params = { { "ref", "tend.Ref", "the actor" } }, returns = {}, errors = {},
    example = probe .. [[probe:watch(tend.self()) probe:unwatch(tend.self())]] },
  { name = "probe:receive_while", sig = "probe:receive_while(pred [, timeout]) -> {msg, ...}",
    summary = "The messages received, in order, while pred(msg) held; the first that fails stays for the next expect.", text = "",
    params = { { "pred", "fun(msg: any): boolean", "the test" }, { "timeout", "number?", "seconds" } },
    returns = { { "any[]", "the messages" } }, errors = {},
    example = probe .. [[probe.ref:send(1) probe.ref:send(2) probe.ref:send("end")
print(#probe:receive_while(function(m) return type(m) == "number" end, 0.1)) --> 2]] },
  { name = "probe:fish_for", sig = "probe:fish_for(pred [, timeout]) -> msg",
    summary = "The first message for which pred holds; the others are dropped.", text = "",
    params = { { "pred", "fun(msg: any): boolean", "the test" }, { "timeout", "number?", "seconds" } },
    returns = { { "any", "the message" } }, errors = { "none in time" },
    example = probe .. [[probe.ref:send(1) probe.ref:send("x")
print(probe:fish_for(function(m) return m == "x" end)) --> x]] },
  { name = "probe:stop", sig = "probe:stop()",
    summary = "Stops the probe's actor.", text = "",
    params = {}, returns = {}, errors = {},
    example = probe .. [[probe:stop()]] },
  { name = "tend.testkit.within", sig = "tend.testkit.within(min, max, fn) -> fn's results",
    summary = "Runs fn; fails unless it took between min and max seconds of host time (exact under the virtual clock).", text = "",
    params = { { "min", "number", "seconds" }, { "max", "number", "seconds" }, { "fn", "fun(): any", "the code" } },
    returns = { { "any", "fn's results" } }, errors = { "it took less than min or more than max" },
    example = [[tend.testkit.within(1, 1.5, function() tend.sleep(1) end)]] },

  -- looking inside, changing code
  { name = "tend.inspect", sig = "tend.inspect(ref) -> state | nil",
    summary = "An actor's state (OTP sys:get_state) without disturbing it; nil when it is dead.",
    text = [[Fields: vars (its behavior's upvalues, or a hook table's fields), mailbox, busy, doing, current (the message it is in), state, restarts, timers, watchers, watching, factory.]],
    params = { { "ref", "tend.Ref|string", "the actor" } },
    returns = { { "tend.State?", "its state" } }, errors = {},
    example = [[local c = tend.spawn(function(ctx, start) local n = start return function() n = n + 1 end end, { args = { 10 } })
c:send("x") tend.sleep(0)
print(tend.inspect(c).vars.n) --> 11]] },
  { name = "tend.reload", sig = "tend.reload(mod) -> {module, file, moving, failed}",
    summary = "Loads module mod again from disk; every live actor whose factory came from it moves to the new code at its next message.",
    text = [[A hook table with code_change(self, old_state) carries state over; otherwise the actor fails with CodeChange and its supervisor restarts it with the new factory, its mailbox kept. A file that does not load changes nothing (the error says why).]],
    params = { { "mod", "string", "the module name, as require takes it" } },
    returns = { { "tend.Reload", "what moves and what cannot" } }, errors = { "the module does not load" },
    example = [[-- with counter.lua on package.path:
-- tend.reload("counter")]] },
}
