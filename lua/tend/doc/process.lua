-- The doc entries of the group "process": OS processes as actors (the
-- format: lua/tend/doc.lua). An example whose first line is
-- "-- run: tend FLAGS" runs with those flags; the others run with none.
return {
  { name = "tend.process",
    sig = "tend.process{cmd, env, inherit_env, cwd, stdin, stdout, stderr, to, kill_signal, shutdown, "
      .. "process_group, ready, ready_timeout, shell, sim} -> factory",
    summary = "A factory for an OS process actor: spawn it like any factory.",
    text = [[
Use the factory with tend.spawn, ctx:spawn, children,
tend.backoff.on_failure or on_stop, tend.supervise and pools. The actor is
`starting` (tend.ps) until the program is ready (opts.ready). Exit status
0 is a normal stop (so "permanent" restarts it and "transient" does not);
a non-zero status is a failure of kind ProcessExit (err.status), death by
a signal ProcessSignal (err.signal by name, err.core_dump). A program that
cannot start (ENOENT, EACCES), one that exits before it is ready, and a
ready timeout (ReadyTimeout, after the kill sequence) are an InitError
whose cause names it. Stopping the actor sends kill_signal, waits up to
shutdown seconds, then sends SIGKILL (logged at warn); what is left of the
program's process group is killed when it exits.

Its output goes to `to` as messages (tend.ProcessOutput; "lines" by
default when `to` is given), or, without `to` nor stdout/stderr, passes
through to tend's own stdout and stderr, whole lines at a time. Lines end
at "\n" (not included); a line over 64 KiB comes in 64 KiB pieces marked
partial = true. Back-pressure: when the `to` actor's mailbox holds 1000
messages or more tend stops reading the pipes until it is down to 500.

Messages to the actor (tend.ProcessMessage): { write = data }, {
close_stdin = true } (with stdin = "pipe"), { signal = "HUP" }, and
tend.ask(ref, "pid"); a bad one is logged at warn and unhandled (the actor
does not fail). tend.ps() rows have its pid; tree() shows pid=N. Trace
events: spawn_os (pid, argv0), ready, exit (status or signal).

No program outlives tend: each runs in its own process group with
PR_SET_PDEATHSIG(SIGKILL), and one watcher process per host kills the
groups when tend dies, however it dies. Under --virtual-time a real cmd is
refused: give sim = function(p) ... end (tend.SimProcess), a simulated
program whose supervision is the real one, deterministic for a seed.]],
    params = { { "opts", "tend.ProcessOpts", "the program and how to run it" } },
    returns = { { "fun(ctx: tend.Ctx, ...): any", "the factory" } },
    errors = { "an error naming the option, what was expected and what was given (an unknown option, "
        .. "a program not found or not executable, a cwd that is no directory, a non-string env value, "
        .. "a NUL byte in a string, a bad signal name, a ready.line with stdout \"inherit\", \"null\" or "
        .. "a file), at the caller's line; nothing is spawned",
      "under --virtual-time: an error for a real cmd without sim",
      "the actor fails with InitError when `to` is missing with stdout or stderr \"lines\"/\"chunks\" "
        .. "under tend.spawn (the /user guardian takes no messages)" },
    example = [[
local tend = require "tend"
local me = tend.self()
local p = tend.spawn(tend.process {
  cmd = { "sh", "-c", "echo ready; read x; echo got $x" },
  stdin = "pipe", to = me, ready = { line = "^ready" },
}, { name = "sh" })
print(tend.receive(5).line)        --> ready
p:send { write = "hello\n" }
print(tend.receive(5).line)        --> got hello
tend.shutdown(0)]],
  },
  { class = "tend.ProcessOpts",
    summary = "The options of tend.process{...} (any other key is an error).",
    fields = {
      { "cmd", "string[]|string?", "argv {program, args...} (program looked up in PATH when it has no /); "
        .. "with shell = true a string run by /bin/sh -c. Needed unless sim runs under --virtual-time" },
      { "shell", "boolean?", "cmd is a shell command line (default false)" },
      { "env", "table<string, string>?", "variables added to tend's environment" },
      { "inherit_env", "boolean?", "false: env is the whole environment (default true)" },
      { "cwd", "string?", "the working directory (must exist)" },
      { "stdin", "\"null\"|\"pipe\"?", "default \"null\"; \"pipe\" lets {write = ...} and {close_stdin = true} work" },
      { "stdout", "string?", "\"lines\", \"chunks\", \"log\" (info lines), \"inherit\", \"null\", or a file "
        .. "path with a / (appended). Default: \"lines\" with `to`, else passed through to tend's stdout" },
      { "stderr", "string?", "as stdout (\"log\" writes warn lines); passed through to tend's stderr by default" },
      { "to", "tend.Ref?", "the actor that gets the output as messages (default: the parent; needed under tend.spawn)" },
      { "kill_signal", "string?", "the stop signal's name (default \"TERM\")" },
      { "shutdown", "number?", "seconds between kill_signal and SIGKILL (default 5, as OTP's shutdown); "
        .. "the actor's own shutdown is raised to cover it" },
      { "process_group", "boolean?", "default true: signals go to the whole group (sh -c's children too); "
        .. "false: to the pid only" },
      { "ready", "tend.ProcessReady?", "when the program is ready (default: once spawned)" },
      { "ready_timeout", "number?", "seconds to wait for ready (default 30), then ReadyTimeout" },
      { "sim", "fun(p: tend.SimProcess)?", "the simulated program, used under --virtual-time" },
    },
  },
  { class = "tend.ProcessReady",
    summary = "When a process actor is ready (tend.process's ready option): one of the three.",
    fields = {
      { "line", "string?", "a Lua pattern a stdout line matches" },
      { "tcp", "integer?", "a port a connect to 127.0.0.1 succeeds on" },
      { "after", "number?", "seconds after the spawn" },
    },
  },
  { class = "tend.ProcessMessage",
    summary = "A message to a process actor (or tend.ask(ref, \"pid\") -> its pid).",
    fields = {
      { "write", "string?", "bytes for its stdin (stdin = \"pipe\")" },
      { "close_stdin", "boolean?", "true: close its stdin (the program reads end of file)" },
      { "signal", "string?", "a signal name such as \"HUP\", sent to the program (its group)" },
    },
  },
  { class = "tend.ProcessOutput",
    summary = "A message from a process actor to `to`; its sender is the process actor.",
    fields = {
      { "tend", "\"stdout\"|\"stderr\"", "which stream" },
      { "line", "string?", "a line without its \"\\n\" (stdout/stderr = \"lines\")" },
      { "chunk", "string?", "what one read gave (\"chunks\")" },
      { "partial", "boolean?", "true on each 64 KiB piece of a longer line" },
    },
  },
  { name = "tend.process.run",
    sig = "tend.process.run(cmd [, opts]) -> {status, signal, core_dump, stdout, stderr, timed_out, pid}",
    summary = "Runs cmd and waits for it by yielding (other actors run): os.execute and io.popen for actors.",
    text = [[
cmd is a list {program, args...}, or a string run by /bin/sh -c. stdout
and stderr are collected whole unless opts say "inherit", "null", "log" or
a file. With timeout, the program gets the kill sequence when it is up
(kill_signal, then SIGKILL after shutdown seconds) and timed_out is true.
Real programs only: under --virtual-time it is an error (spawn a
tend.process{ sim = ... } instead).]],
    params = { { "cmd", "string[]|string", "argv, or a shell command line" },
               { "opts", "tend.ProcessRunOpts?", "timeout, input, env, cwd..." } },
    returns = { { "tend.ProcessResult", "how it ended and what it wrote" } },
    errors = { "an error naming the option (as tend.process's), at the caller's line; nothing is spawned",
               "an error under --virtual-time" },
    example = [[
local tend = require "tend"
local r = tend.process.run({ "tr", "a-z", "A-Z" }, { input = "shout\n", timeout = 5 })
print(r.status, r.stdout)       --> 0  SHOUT\n (stdout whole, its newline kept)
r = tend.process.run("exit 3")
print(r.status, r.timed_out)    --> 3  false
tend.shutdown(0)]],
  },
  { class = "tend.ProcessRunOpts",
    summary = "The options of tend.process.run (any other key is an error).",
    fields = {
      { "timeout", "number?", "seconds before the kill sequence (default none)" },
      { "input", "string?", "written to stdin, which is then closed" },
      { "shell", "boolean?", "cmd is a shell command line (a string cmd implies it)" },
      { "env", "table<string, string>?", "variables added to tend's environment" },
      { "inherit_env", "boolean?", "false: env is the whole environment (default true)" },
      { "cwd", "string?", "the working directory" },
      { "stdout", "string?", "\"collect\" (default: into the result), \"log\", \"inherit\", \"null\" or a "
        .. "file path with a /" },
      { "stderr", "string?", "as stdout" },
      { "kill_signal", "string?", "the timeout's signal (default \"TERM\")" },
      { "shutdown", "number?", "seconds between kill_signal and SIGKILL (default 5)" },
      { "process_group", "boolean?", "signals go to its whole group (default true)" },
    },
  },
  { class = "tend.ProcessResult",
    summary = "What tend.process.run returns.",
    fields = {
      { "status", "integer?", "the exit status (nil when a signal killed it)" },
      { "signal", "string?", "the signal that killed it, by name" },
      { "core_dump", "boolean?", "whether it dumped core" },
      { "stdout", "string?", "what it wrote on stdout (when collected)" },
      { "stderr", "string?", "what it wrote on stderr (when collected)" },
      { "timed_out", "boolean", "whether the timeout stopped it" },
      { "pid", "integer", "its process id" },
    },
  },
  { name = "tend.process.is_sim",
    sig = "tend.process.is_sim(ref) -> boolean",
    summary = "Whether ref is an actor running a simulated process (tend.process{ sim = ... }).",
    text = "",
    params = { { "ref", "tend.Ref", "an actor" } },
    returns = { { "boolean", "true for a live or past simulated process actor" } },
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local p = tend.spawn(tend.process { sim = function(p) p:sleep(10) end })
local other = tend.spawn(function() return function() end end)
tend.sleep(0)   -- (their factories run)
print(tend.process.is_sim(p), tend.process.is_sim(other))   --> true  false]],
  },

  ---------------------------------------------------------------- the simulated program
  { class = "tend.SimProcess",
    summary = "The simulated program `p` a sim function gets (under --virtual-time), with the methods p:print... .",
    fields = { { "pid", "integer", "its pid: made up, deterministic" } },
  },
  { name = "p:print",
    class = "tend.SimProcess",
    sig = "p:print(...)",
    summary = "Writes one stdout line (the arguments joined with tabs).",
    text = [[
It goes where the process's stdout goes (to `to`, the log, or through to
tend's stdout), and it can make the process ready (ready.line).]],
    params = {},
    vararg = "any",
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.spawn(tend.process { sim = function(p) p:print("listening on", 8080) end })
tend.sleep(1)   --> listening on	8080]],
  },
  { name = "p:eprint",
    class = "tend.SimProcess",
    sig = "p:eprint(...)",
    summary = "Writes one stderr line (the arguments joined with tabs).",
    text = "",
    params = {},
    vararg = "any",
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.spawn(tend.process { sim = function(p) p:eprint("oops") end, stderr = "null" })
tend.sleep(1)   -- (nothing shows: stderr = "null")]],
  },
  { name = "p:sleep",
    class = "tend.SimProcess",
    sig = "p:sleep(seconds)",
    summary = "The simulated program waits, in virtual seconds.",
    text = "Only in the sim function itself, not in a signal handler.",
    params = { { "seconds", "number", "how long, >= 0" } },
    returns = {},
    errors = { "an error in a signal handler, or when seconds is not a number >= 0" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.spawn(tend.process { sim = function(p) p:sleep(2) p:print("awake at", tend.now()) end })
tend.sleep(3)   --> awake at	2.0]],
  },
  { name = "p:read",
    class = "tend.SimProcess",
    sig = "p:read() -> string | nil",
    summary = "The next { write = data } sent to the process; nil after { close_stdin = true }.",
    text = "Only in the sim function itself; it waits for the write.",
    params = {},
    returns = { { "string?", "the data written, or nil at end of input" } },
    errors = { "an error in a signal handler" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local me = tend.self()
local cat = tend.spawn(tend.process { to = me, stdin = "pipe", sim = function(p)
  for data in p.read, p do p:print(data:upper()) end
end })
cat:send { write = "hi" }
cat:send { close_stdin = true }
print(tend.receive(1).line)   --> HI]],
  },
  { name = "p:exit",
    class = "tend.SimProcess",
    sig = "p:exit([status])",
    summary = "The simulated program exits with status (default 0); returning from sim is exit 0.",
    text = "",
    params = { { "status", "integer?", "0-255 (default 0)" } },
    returns = {},
    errors = { "an error when status is not an integer 0-255" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local p = tend.spawn(tend.process { sim = function(p) p:exit(2) end }, { restart = "temporary" })
tend.watch(p)
print(tend.receive(1).reason.status)   --> 2]],
  },
  { name = "p:die",
    class = "tend.SimProcess",
    sig = "p:die(signal)",
    summary = "The simulated program is killed by a signal (a ProcessSignal failure).",
    text = "",
    params = { { "signal", "string", "a signal name such as \"SEGV\"" } },
    returns = {},
    errors = { "an error when signal is no signal name" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local p = tend.spawn(tend.process { sim = function(p) p:die("SEGV") end }, { restart = "temporary" })
tend.watch(p)
print(tend.receive(1).reason.kind)   --> ProcessSignal]],
  },
  { name = "p:on_signal",
    class = "tend.SimProcess",
    sig = "p:on_signal(fn)",
    summary = "fn(name) handles every signal sent to the simulated program but KILL and STOP.",
    text = [[
Without a handler TERM, HUP, INT, SEGV... kill it and CHLD, WINCH, URG are
ignored. A handler runs at once and cannot sleep or read; it may call
p:exit. While the actor stops, the program does not advance: its handler
decides, else SIGKILL after shutdown seconds.]],
    params = { { "fn", "fun(name: string)", "the handler" } },
    returns = {},
    errors = { "an error when fn is not a function" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local p = tend.spawn(tend.process { sim = function(p)
  p:on_signal(function(sig) p:print("got " .. sig) if sig == "TERM" then p:exit(0) end end)
  p:sleep(100)
end })
tend.sleep(1)
p:send { signal = "HUP" }
tend.sleep(1)
tend.stop(p)   --> got HUP, got TERM]],
  },
}
