-- The reference's entries for the REPL's helpers: globals of the prompt
-- only (`tend -i`), not of scripts (format: lua/tend/doc.lua). Their
-- examples are lines typed at the prompt.
local EXAMPLES = {
  help = [[help(tend.spawn)]], tree = [[tree()]], nodes = [[nodes()]], ps = [[ps()]], stats = [[stats()]],
  describe = [[describe(tend.one_for_one { max_retries = 3, within = 10 })]], flush = [[flush()]],
  watch = [[w = tend.spawn(function() return function() end end)
watch(w)]], kill = [[kill(w)]], trace = [[trace(true)]], inspect = [[inspect(w)]], reload = [[reload("counter")]],
  observe = [[observe { port = 0 }]],
}

local function helper(name, sig, summary, text, params, returns)
  return { name = name, sig = sig, summary = summary, text = text or "", params = params or {},
    returns = returns or {}, errors = {}, example = EXAMPLES[name] }
end

return {
  helper("help", "help([fn])", "Help on the REPL, or on one function: help(tend.spawn).",
    [[help("tend.ask") works too; a Lua function of yours gives its parameters and where it is defined.]],
    { { "fn", "function|string?", "the function or its name" } }),
  helper("tree", "tree([node]) -> text", "Prints the supervision tree (of another node with a name) and returns it.", "",
    { { "node", "string?", "another node's name" } }, { { "string", "the tree" } }),
  helper("nodes", "nodes() -> {names}", "Prints this node's name and the nodes up; returns tend.node.list().", "",
    {}, { { "string[]", "the nodes up" } }),
  helper("ps", "ps() -> rows", "Prints the actors, one a line, and returns the rows of tend.ps().", "",
    {}, { { "table[]", "tend.ps()'s rows" } }),
  helper("stats", "stats() -> table", "Prints the counters and returns tend.stats().", "",
    {}, { { "table<string, integer>", "the counters" } }),
  helper("describe", "describe(x)", "Prints tend.describe(x).", "",
    { { "x", "tend.Strategy|tend.BackoffSpec|tend.TypedAction", "what to describe" } }),
  helper("flush", "flush()", "Prints and drops the messages waiting for the REPL.", ""),
  helper("watch", "watch(ref)", "Prints a line when ref dies.",
    [[The watcher is a task of tend's own: out of trace(true) and tree().]],
    { { "ref", "tend.Ref", "the actor" } }),
  helper("kill", "kill(ref)", "tend.kill(ref): the actor fails with Killed when it reaches it.", "",
    { { "ref", "tend.Ref", "the actor" } }),
  helper("trace", "trace(true | false | { internal = bool })",
    "Prints each lifecycle event as the scenario timeline does, or stops.",
    [[Lines as "[trace] t=0.000 /user/pool/w directive restart (PoisonError) window 1/3 per 10.0 s"; { internal = true } shows tend's own tasks too.]],
    { { "on", "boolean|table", "true, false or { internal = bool }" } }),
  helper("observe", "observe([opts]) -> { url, token, port }",
    "Starts the browser observer (tend.observe) and prints its URL, with the token.", "",
    { { "opts", "tend.ObserveOpts?", "port (default 8642; 0: a free one) and host" } },
    { { "table", "url, token, port" } }),
  helper("inspect", "inspect(ref) -> state",
    "An actor's state without stopping it; prints it and returns it (tend.inspect).",
    [[Its behavior's upvalues (or its hook table's fields), mailbox length, current message, restarts, timers, watchers.]],
    { { "ref", "tend.Ref", "the actor" } }, { { "table", "its state" } }),
  helper("reload", "reload(\"mod\")",
    "Loads module mod again from disk; every live actor whose factory came from it moves to the new code at its next message boundary.",
    [[Prints which actors move and which cannot, then each move as it happens.]],
    { { "mod", "string", "the module" } }, { { "table", "tend.reload's result" } }),
}
