-- OS processes in the supervision tree: real programs in real time, with
-- short delays. Run with the real clock: `tend --real-time test
-- spec/realtime/process_spec.lua` (scripts/test and scripts/check do; under
-- the virtual clock this file defines no test: spec/process_sim_spec.lua
-- is the simulated one).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

if tend.virtual_time() then return end

TestProcess = {}

local function line(text)
  return function(m) return type(m) == "table" and m.line == text end
end

-- Is pid alive? (kill -0 through tend.process.run)
local function alive(pid)
  return tend.process.run({ "kill", "-0", tostring(pid) }, { stderr = "null" }).status == 0
end

-- Waits (up to 5 s) until pred() holds.
local function eventually(pred)
  for _ = 1, 500 do
    if pred() then return true end
    tend.sleep(0.01)
  end
  return pred()
end

function TestProcess:tearDown()
  -- a process actor stops once its program is gone: that takes real time;
  -- what a failed test left is stopped, so the next one starts clean
  local ended = eventually(function() return tend.stats().actors == 1 end)
  if not ended then
    H.stop_user()
    eventually(function() return tend.stats().actors == 1 end)
  end
  lu.assertTrue(ended, "actors left behind")
  H.assert_clean()
end

-- ------------------------------------------------------------ run

function TestProcess:test_run_returns_status_and_output()
  local r = tend.process.run({ "sh", "-c", "echo out; echo err >&2; exit 3" })
  lu.assertEquals({ r.status, r.signal, r.stdout, r.stderr, r.timed_out },
    { 3, nil, "out\n", "err\n", false })
  r = tend.process.run("echo $FOO-$BAR", { env = { FOO = "x" }, inherit_env = false })
  lu.assertEquals(r.stdout, "x-\n")
  r = tend.process.run({ "pwd" }, { cwd = "/tmp" })
  lu.assertEquals(r.stdout, "/tmp\n")
  r = tend.process.run({ "cat" }, { input = "a\nb" })
  lu.assertEquals(r.stdout, "a\nb")
  r = tend.process.run({ "sh", "-c", "kill -KILL $$" })
  lu.assertEquals({ r.status, r.signal }, { nil, "KILL" })
end

function TestProcess:test_run_times_out_with_the_kill_sequence()
  local t0 = tend.now()
  local r = tend.process.run({ "sh", "-c", "trap '' TERM; sleep 5" }, { timeout = 0.1, shutdown = 0.2 })
  lu.assertTrue(r.timed_out)
  lu.assertEquals(r.signal, "KILL")
  lu.assertTrue(tend.now() - t0 >= 0.3)
  r = tend.process.run({ "sleep", "5" }, { timeout = 0.1 })
  lu.assertEquals({ r.signal, r.timed_out }, { "TERM", true })
end

function TestProcess:test_run_does_not_block_other_actors()
  local ticks = 0
  local ticker = tend.spawn(function(ctx)
    ctx:every(0.01, "tick")
    return function() ticks = ticks + 1 end
  end)
  local r = tend.process.run({ "sleep", "0.3" })
  lu.assertEquals(r.status, 0)
  lu.assertTrue(ticks >= 10, "ticks while run waited: " .. ticks)
  H.stop_all(ticker)
end

-- ------------------------------------------------------------ bad input

local function spawn_error(opts)
  local ok, err = pcall(function() local f = tend.process(opts) return f end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "process_spec.lua:") -- the caller's line
  return err
end

function TestProcess:test_bad_input_is_a_named_error_at_the_callers_line()
  local before = tend.stats().spawned
  lu.assertStrContains(spawn_error { cmd = { "no-such-program-xyz" } },
    "tend.process: option 'cmd': cannot run 'no-such-program-xyz': No such file or directory (ENOENT)")
  local plain = os.tmpname() -- a file without execute permission
  lu.assertStrContains(spawn_error { cmd = { plain } }, "Permission denied (EACCES)")
  os.remove(plain)
  lu.assertStrContains(spawn_error { cmd = { "ls", 42 } },
    "option 'cmd': element 2: expected a string, got an integer")
  lu.assertStrContains(spawn_error { cmd = { "true" }, kill_signal = "NOPE" },
    "option 'kill_signal': expected a signal name such as \"TERM\", got NOPE")
  lu.assertStrContains(spawn_error { cmd = { "true" }, cwd = "/no/such/dir" },
    "option 'cwd': '/no/such/dir' is not a directory")
  lu.assertStrContains(spawn_error { cmd = { "true" }, env = { A = 1 } },
    "option 'env': value of A: expected a string, got an integer")
  lu.assertStrContains(spawn_error { cmd = { "true" }, stdout = "lnes" },
    "option 'stdout': expected \"lines\", \"chunks\", \"log\", \"inherit\", \"null\" or a file path")
  lu.assertStrContains(spawn_error { cmd = { "true" }, ready = { line = 1, tcp = 2 } },
    "option 'ready.line': expected a Lua pattern")
  lu.assertStrContains(spawn_error { cmd = { "true" }, colour = "red" }, "colour")
  -- a ready line on a stdout tend never reads would never be seen
  lu.assertStrContains(spawn_error { cmd = { "true" }, ready = { line = "up" }, stdout = "inherit" },
    "tend.process: option 'ready.line': expected stdout read by tend (\"lines\", \"chunks\", \"log\" or none), " ..
    "got stdout = \"inherit\"")
  lu.assertStrContains(spawn_error { cmd = { "true" }, ready = { line = "up" }, stdout = "null" }, "option 'ready.line'")
  lu.assertStrContains(spawn_error { cmd = "ls -l" }, "tend.process: option 'cmd': expected a list of " ..
    "strings {program, args...}, or a string with shell = true, got ls -l (string)")
  local ok, err = pcall(function() local r = tend.process.run({ "true" }, { timeout = -1 }) return r end)
  lu.assertStrContains(err, "tend.process.run: option 'timeout': expected a number of seconds > 0")
  lu.assertEquals(tend.stats().spawned, before) -- nothing spawned
end

-- A C string ends at its first NUL byte: the OS would run with, set or
-- enter only the part before it, so each is refused.
function TestProcess:test_a_NUL_byte_in_what_starts_a_process_is_a_named_error()
  local before = tend.stats().spawned
  local function run_error(cmd, opts)
    local ok, err = pcall(function() local r = tend.process.run(cmd, opts) return r end)
    lu.assertFalse(ok)
    return err
  end
  lu.assertStrContains(run_error { "printf", "%s", "a\0b" },
    "tend.process.run: option 'cmd': element 3: expected a string without NUL bytes, got \"a\\0b\"")
  lu.assertStrContains(run_error("echo a\0b"),
    "tend.process.run: option 'cmd': expected a string without NUL bytes, got \"echo a\\0b\"")
  lu.assertStrContains(run_error({ "env" }, { env = { X = "a\0b" } }),
    "tend.process.run: option 'env': value of X: expected a string without NUL bytes, got \"a\\0b\"")
  lu.assertStrContains(run_error({ "env" }, { env = { ["X\0Y"] = "1" } }),
    "option 'env': a key: expected a string without NUL bytes, got \"X\\0Y\"")
  lu.assertStrContains(run_error({ "pwd" }, { cwd = "/tmp\0/nonexistent" }),
    "tend.process.run: option 'cwd': expected a string without NUL bytes, got \"/tmp\\0/nonexistent\"")
  lu.assertStrContains(run_error({ "true" }, { stdout = "/tmp/x\0y" }),
    "option 'stdout': expected a string without NUL bytes, got \"/tmp/x\\0y\"")
  lu.assertStrContains(run_error({ "printf", "a\0001" }), "got \"a\\0001\"") -- \0 then a digit
  lu.assertStrContains(spawn_error { cmd = { "true" }, ready = { line = "a\0b" } },
    "tend.process: option 'ready.line': expected a string without NUL bytes, got \"a\\0b\"")
  lu.assertEquals(tend.stats().spawned, before) -- nothing spawned
  -- what has no NUL byte still runs as given
  lu.assertEquals(tend.process.run({ "printf", "%s", "a b" }).stdout, "a b")
end

function TestProcess:test_a_spawn_error_at_start_is_an_InitError_naming_the_os_error()
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("#!/bin/sh\nexit 0\n")
  f:close()
  tend.process.run({ "chmod", "+x", path })
  local factory = tend.process { cmd = { path } }
  os.remove(path) -- gone by the time it starts
  local seen
  local sup = tend.spawn(function(ctx)
    ctx:spawn(factory)
    return function() end
  end, { supervisor = tend.one_for_one { decider = function(err) seen = err return "stop" end } })
  lu.assertTrue(eventually(function() return seen ~= nil end))
  lu.assertEquals(seen.kind, "InitError")
  lu.assertEquals(seen.cause.kind, "SpawnError")
  lu.assertStrContains(seen.cause.message, "ENOENT")
  H.stop_all(sup)
end

-- ------------------------------------------------------------ life

function TestProcess:test_output_lines_go_to_the_owner_and_exit_codes_decide()
  local p = tk.probe()
  local ok = tend.spawn(tend.process { cmd = { "sh", "-c", "echo one; echo two >&2; echo three" }, to = p.ref })
  p:watch(ok)
  local got = p:receive_while(function(m) return m.tend ~= "terminated" end, 5)
  table.sort(got, function(a, b) return a.line < b.line end)
  lu.assertEquals(got, { { tend = "stdout", line = "one" }, { tend = "stdout", line = "three" },
    { tend = "stderr", line = "two" } })
  lu.assertEquals(p:expect_terminated(ok, 5).reason, "normal")
  local bad = tend.spawn(tend.process { cmd = { "sh", "-c", "exit 4" } }, { restart = "temporary" })
  p:watch(bad)
  local err = p:expect_terminated(bad, 5).reason
  lu.assertEquals({ err.kind, err.status }, { "ProcessExit", 4 })
  lu.assertStrContains(err.message, "'sh' exited with status 4")
  local seg = tend.spawn(tend.process { cmd = { "sh", "-c", "kill -SEGV $$" } }, { restart = "temporary" })
  p:watch(seg)
  err = p:expect_terminated(seg, 5).reason
  lu.assertEquals({ err.kind, err.signal, type(err.core_dump) }, { "ProcessSignal", "SEGV", "boolean" })
  H.stop_all(p.ref)
end

function TestProcess:test_permanent_restarts_a_clean_exit_and_the_supervisor_limit_applies()
  local p = tk.probe()
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.process { cmd = { "echo", "hello" }, to = p.ref }, { restart = "permanent" })
    return function() end
  end, { supervisor = tend.one_for_one { max_retries = 2, within = 60 } })
  for _ = 1, 3 do p:fish_for(line("hello"), 5) end
  H.stop_all(sup, p.ref)
end

function TestProcess:test_messages_write_close_stdin_signal_and_pid()
  local p = tk.probe()
  local cat = tend.spawn(tend.process { cmd = { "cat" }, stdin = "pipe", to = p.ref })
  p:watch(cat)
  cat:send { write = "hello\nwor" }
  cat:send { write = "ld\n" }
  p:expect_msg(line("hello"), 5)
  p:expect_msg(line("world"), 5)
  cat:send { close_stdin = true }
  lu.assertEquals(p:expect_terminated(cat, 5).reason, "normal")
  local sh = tend.spawn(tend.process { to = p.ref,
    cmd = { "sh", "-c", "trap 'echo got hup' HUP; echo pid $$; while true; do sleep 0.02; done" } })
  local first = p:expect_msg(function(m) return m.line and m.line:match("^pid ") end, 5)
  local pid = tend.ask(sh, "pid", 1)
  lu.assertEquals(first.line, "pid " .. pid)
  sh:send { signal = "HUP" }
  p:fish_for(line("got hup"), 5)
  lu.assertStrContains(tend.tree(), "pid=" .. pid)
  local row
  for _, r in ipairs(tend.ps()) do if r.ref == sh then row = r end end
  lu.assertEquals(row.pid, pid)
  H.stop_all(sh)
  lu.assertTrue(eventually(function() return not alive(pid) end))
  H.stop_all(p.ref)
end

function TestProcess:test_ready_line_tcp_and_after()
  local p = tk.probe()
  local r = tend.spawn(tend.process { to = p.ref, ready = { line = "^listening" },
    cmd = { "sh", "-c", "sleep 0.2; echo listening; sleep 5" } })
  local state
  for _, row in ipairs(tend.ps()) do if row.ref == r then state = row.state end end
  tend.sleep(0.05)
  for _, row in ipairs(tend.ps()) do if row.ref == r then state = row.state end end
  lu.assertEquals(state, "starting")
  p:expect_msg(line("listening"), 5)
  lu.assertTrue(eventually(function()
    for _, row in ipairs(tend.ps()) do if row.ref == r then return row.state == "running" end end
  end))
  H.stop_all(r)
  local seen = {}
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.process { cmd = { "sleep", "5" }, ready = { tcp = 1 }, ready_timeout = 0.2 })
    ctx:spawn(tend.process { cmd = { "sh", "-c", "exit 1" }, ready = { after = 0.5 } })
    return function() end
  end, { supervisor = tend.one_for_one { decider = function(err) seen[#seen + 1] = err return "stop" end } })
  lu.assertTrue(eventually(function() return #seen == 2 end))
  table.sort(seen, function(a, b) return a.cause.kind < b.cause.kind end)
  lu.assertEquals({ seen[1].kind, seen[1].cause.kind, seen[1].cause.status }, { "InitError", "ProcessExit", 1 })
  lu.assertStrContains(seen[1].cause.message, "before it was ready")
  lu.assertEquals(seen[2].cause.kind, "ReadyTimeout")
  lu.assertStrContains(seen[2].cause.message, "was not ready within 0.2 s (ready.tcp 1)")
  H.stop_all(sup, p.ref)
end

-- ready = { after = s } waits out its time: the program's exit after that
-- is the actor's end as for any program (the wait that timed out is not
-- the one told of the exit).
function TestProcess:test_an_exit_after_ready_after_ends_the_actor()
  local p = tk.probe()
  local r = tend.spawn(tend.process { cmd = { "sh", "-c", "sleep 0.3; exit 3" }, ready = { after = 0.1 } },
    { restart = "temporary" })
  p:watch(r)
  local err = p:expect_terminated(r, 5).reason
  lu.assertEquals({ err.kind, err.status }, { "ProcessExit", 3 })
  H.stop_all(p.ref)
end

function TestProcess:test_a_process_ignoring_TERM_is_killed_after_shutdown()
  local p = tk.probe()
  local deaf = tend.spawn(tend.process { to = p.ref, shutdown = 0.3,
    cmd = { "sh", "-c", "trap '' TERM; echo up; sleep 30" } })
  p:expect_msg(line("up"), 5)
  local pid = tend.ask(deaf, "pid", 1)
  p:watch(deaf)
  local t0 = tend.now()
  tend.stop(deaf)
  p:expect_terminated(deaf, 5)
  local took = tend.now() - t0
  lu.assertTrue(took >= 0.3 and took < 4, "stopped after " .. took .. " s")
  lu.assertFalse(alive(pid))
  -- the group went with it: no `sleep 30` left
  lu.assertEquals(tend.process.run({ "sh", "-c", "ps -o pid= -g " .. pid .. " || true" }).stdout, "")
  H.stop_all(p.ref)
end

function TestProcess:test_chaos_signal_and_kill_act_on_a_real_process()
  local p = tk.probe()
  local r = tend.spawn(tend.process { cmd = { "sleep", "30" } }, { restart = "temporary" })
  p:watch(r)
  tend.sleep(0.05)
  tend.chaos.signal(r, "SEGV")
  local err = p:expect_terminated(r, 5).reason
  lu.assertEquals({ err.kind, err.signal }, { "ProcessSignal", "SEGV" })
  local k = tend.spawn(tend.process { cmd = { "sleep", "30" } })
  p:watch(k)
  tend.sleep(0.05)
  local pid = tend.ask(k, "pid", 1)
  tend.chaos.kill(k)
  lu.assertEquals(p:expect_terminated(k, 5).reason.kind, "Killed")
  lu.assertFalse(alive(pid))
  local plain = tend.spawn(function() return function() end end)
  local ok, e = pcall(tend.chaos.signal, plain, "HUP")
  lu.assertStrContains(e, "runs no OS process")
  H.stop_all(plain, p.ref)
end

-- ------------------------------------------------------------ output

function TestProcess:test_a_long_line_is_cut_and_memory_stays_bounded()
  local p = tk.probe()
  local r = tend.spawn(tend.process { to = p.ref,
    cmd = { "sh", "-c", "head -c 150000 /dev/zero | tr '\\0' a; echo; echo end" } })
  p:watch(r)
  local got = p:receive_while(function(m) return m.tend ~= "terminated" end, 5)
  local sizes = {}
  for _, m in ipairs(got) do sizes[#sizes + 1] = #m.line .. (m.partial and "+" or "") end
  lu.assertEquals(sizes, { "65536+", "65536+", "18928", "3" })
  H.stop_all(p.ref)
end

function TestProcess:test_back_pressure_stops_reading_while_the_owner_lags()
  local p = tk.probe()
  local slow = tend.spawn(function(ctx)
    -- (asleep for the whole check, however slow the machine: the stop
    -- below ends the nap at once)
    return function(msg, c) if msg == "nap" then c:sleep(30) end end
  end)
  slow:send("nap")
  local yes = tend.spawn(tend.process { cmd = { "yes" }, to = slow })
  local function mailbox()
    for _, row in ipairs(tend.ps()) do if row.ref == slow then return row.mailbox end end
  end
  -- (a loaded machine may take a while to start yes)
  lu.assertTrue(eventually(function() return mailbox() >= 1000 end))
  tend.sleep(0.1)
  local a = mailbox()
  tend.sleep(0.1)
  local b = mailbox()
  lu.assertEquals(a, b)          -- not growing: reads stopped
  lu.assertTrue(a >= 1000 and a < 1000 + 32768, "mailbox " .. a)
  H.stop_all(yes, slow, p.ref)
end

-- The reader pauses at the high-water mark (1000 lines queued) and
-- resumes once its target has taken the queue down to the low-water mark
-- (500): the target here waits, on its first line, until the reader has
-- paused, then takes every line; all 20,000 come, in order, and the
-- program ends.
function TestProcess:test_a_paused_reader_resumes_when_the_owner_drains()
  local p = tk.probe()
  local count, peak, wrong = 0, 0, nil
  local to = tend.spawn(function()
    return function(m, c)
      if m.tend ~= "stdout" then return end
      if count == 0 then
        for _ = 1, 1000 do -- until the reader pauses (10 s at most)
          for _, row in ipairs(tend.ps()) do if row.ref == c.self then peak = row.mailbox end end
          if peak >= 1000 then break end
          c:sleep(0.01)
        end
      end
      count = count + 1
      if m.line ~= tostring(count) then wrong = wrong or (count .. ": " .. m.line) end
      if count == 20000 then p.ref:send({ count = count, peak = peak, wrong = wrong }) end
    end
  end)
  local seq = tend.spawn(tend.process { cmd = { "seq", "1", "20000" }, to = to })
  p:watch(seq)
  local got, ended -- (seq may end before its lines are all taken)
  for _ = 1, 2 do
    local e = p:receive(30)
    if e == nil then break end
    if e.msg.tend == "terminated" then ended = e.msg else got = e.msg end
  end
  lu.assertNotNil(got, "lines taken: " .. count .. " (the mailbox peaked at " .. peak .. ")")
  lu.assertEquals({ got.count, got.wrong }, { 20000, nil })
  lu.assertTrue(got.peak >= 1000 and got.peak < 1000 + 32768, "mailbox peak " .. got.peak)
  lu.assertNotNil(ended, "seq did not end")
  lu.assertEquals({ ended.ref, ended.reason }, { seq, "normal" })
  H.stop_all(to, p.ref)
end

function TestProcess:test_output_to_the_log_and_to_a_file()
  local path = os.tmpname()
  local script = H.script(string.format([[
    local tend = require "tend"
    tend.spawn(tend.process { cmd = { "sh", "-c", "echo to-log; echo to-file >&2" },
      stdout = "log", stderr = %q }, { name = "svc" })
  ]], path))
  local r = tend.process.run({ require("tend.internal").executable(), "--log-level", "info", script })
  local err = r.stderr
  lu.assertEquals(r.status, 0)
  lu.assertStrMatches(err, ".*info  /user/svc: to%-log\n.*")
  local f = io.open(path)
  lu.assertEquals(f:read("a"), "to-file\n")
  f:close()
  os.remove(path)
  os.remove(script)
end

-- ------------------------------------------------------------ no orphans

-- Runs a tend script in the background, sends it `signal` `delay` seconds
-- after it printed its 3 process groups (or ended; at most 5 s: a slow
-- build on a loaded machine starts late); returns the process groups it
-- printed and what is left of them.
local function orphans(body, signal, delay)
  local script = H.script(body)
  local out = os.tmpname()
  local tendbin = require("tend.internal").executable()
  local r = tend.process.run(string.format(
    "%s %s > %s 2>/dev/null & t=$!; i=0; " ..
    "while [ $i -lt 100 ] && kill -0 $t 2>/dev/null && [ $(wc -l < %s) -lt 3 ]; do sleep 0.05; i=$((i+1)); done; " ..
    "sleep %s; kill -%s $t; wait $t; echo status $?; sleep 0.3; " ..
    "for g in $(cat %s); do ps -o pid=,comm= -g $g; done; true",
    tendbin, script, out, out, delay, signal, out), { timeout = 15 })
  os.remove(script)
  local groups = io.open(out):read("a")
  os.remove(out)
  return groups, r.stdout
end

local body = [[
  local tend = require "tend"
  local function show(ref)
    io.stdout:write(tend.ask(ref, "pid", 2), "\n") io.stdout:flush()
  end
  local a = tend.spawn(tend.process { cmd = { "sh", "-c", "sleep 30 & sleep 30" } })
  local b = tend.spawn(tend.process { cmd = { "sleep", "30" }, process_group = false })
  local c = tend.spawn(tend.process { cmd = { "sh", "-c", "trap '' TERM; sleep 30 & sleep 30" }, shutdown = 0.2 })
  tend.sleep(0.1)
  show(a) show(b) show(c)
  tend.sleep(30)
]]

function TestProcess:test_sigkill_of_tend_leaves_no_child()
  local groups, out = orphans(body, "KILL", 0.2)
  lu.assertEquals(select(2, groups:gsub("\n", "")), 3)
  lu.assertEquals(out, "status 137\n") -- nothing left in any group
end

function TestProcess:test_sigterm_and_sighup_stop_the_tree_and_every_process()
  local groups, out = orphans(body, "TERM", 0.2)
  lu.assertEquals(select(2, groups:gsub("\n", "")), 3)
  lu.assertEquals(out, "status 143\n")
  groups, out = orphans(body, "HUP", 0.2)
  lu.assertEquals(select(2, groups:gsub("\n", "")), 3)
  lu.assertEquals(out, "status 129\n")
  groups, out = orphans(body:gsub("tend.sleep%(30%)", "tend.sleep(0.2) error('boom')"), "CONT", 1)
  lu.assertEquals(out, "status 1\n") -- an error that ends the host
end

function TestProcess:test_a_closed_stdout_does_not_kill_tend_with_SIGPIPE()
  for _, body in ipairs {
    [[ -- a print of an actor
    local tend = require "tend"
    tend.spawn(function(ctx)
      ctx:spawn(tend.process { cmd = { "yes" }, to = ctx.self })
      return function(msg) if msg.line then print(msg.line) end end
    end)
  ]], [[ -- a program's output passed through
    local tend = require "tend"
    tend.spawn(tend.process { cmd = { "yes" } })
  ]] } do
    local script = H.script(body)
    local r = tend.process.run(string.format("(%s %s; echo status $? >&2) | head -1",
      require("tend.internal").executable(), script), { timeout = 30 })
    os.remove(script)
    lu.assertFalse(r.timed_out, "no line within 30 s; stderr: " .. r.stderr)
    lu.assertEquals(r.stdout, "y\n", "stderr: " .. r.stderr)
    lu.assertStrContains(r.stderr, "status 141") -- 128 + SIGPIPE, after a graceful stop
  end
end

-- ------------------------------------------------------------ pass-through

-- Runs a tend script; returns its stdout, stderr and status.
local function run_script(body, ...)
  local script = H.script(body)
  local r = tend.process.run({ require("tend.internal").executable(), ..., script }, { timeout = 10 })
  os.remove(script)
  lu.assertFalse(r.timed_out)
  return r.stdout, r.stderr, r.status
end

-- With no `to` and no stdout/stderr option, a program's output is not
-- lost (it was a dead letter to /user): it goes to tend's own stdout and
-- stderr, in order with tend's prints, as a shell would pass it.
function TestProcess:test_without_to_the_output_passes_through_to_tends_stdout_and_stderr()
  local out, err, status = run_script([[
    local tend = require "tend"
    print("before")
    local p = tend.testkit.probe()
    local ls = tend.spawn(tend.process { cmd = { "sh", "-c", "echo one; echo two >&2; echo three; printf tail" } })
    p:watch(ls)
    p:expect_terminated(ls, 5)
    local ready = tend.spawn(tend.process { cmd = { "sh", "-c", "echo boot; echo up; exec sleep 5" },
      ready = { line = "^up$" } })
    for _ = 1, 500 do
      if tend.inspect(ready).state == "running" then break end
      tend.sleep(0.01)
    end
    print("state " .. tend.inspect(ready).state)
    print("dead letters " .. tend.stats().dead_letters)
    tend.shutdown(0)
  ]], "--real-time", "--log-level", "error")
  lu.assertEquals(out, "before\none\nthree\ntailboot\nup\nstate running\ndead letters 0\n")
  lu.assertEquals(err, "two\n")
  lu.assertEquals(status, 0)
end

-- A simulated process without `to` passes its lines through the same way.
function TestProcess:test_a_simulated_process_without_to_passes_its_output_through()
  local out, err, status = run_script([[
    local tend = require "tend"
    local p = tend.testkit.probe()
    local s = tend.spawn(tend.process { sim = function(proc)
      proc:print("one", 2) proc:eprint("oops") proc:sleep(1) proc:print("three")
    end })
    p:watch(s)
    p:expect_terminated(s, 5)
    print("at " .. tend.now())
  ]], "--virtual-time", "--log-level", "error")
  lu.assertEquals(out, "one\t2\nthree\nat 1.0\n")
  lu.assertEquals(err, "oops\n")
  lu.assertEquals(status, 0)
end

-- "lines" with no `to` under tend.spawn would go to the /user guardian,
-- which takes no messages: the program never starts (an InitError naming
-- option 'to'), so its output is not lost.
function TestProcess:test_lines_without_to_under_user_never_start_the_program()
  local p = tk.probe()
  local dir = os.tmpname()
  os.remove(dir)
  local r = tend.spawn(tend.process { cmd = { "sh", "-c", "echo x; touch " .. dir }, stdout = "lines" },
    { restart = "temporary" })
  p:watch(r)
  local why = p:expect_terminated(r, 5).reason
  lu.assertEquals(why.kind, "InitError")
  lu.assertStrContains(tostring(why.cause.message), "tend.process: option 'to': needed with stdout = \"lines\" when")
  tend.sleep(0.2)
  lu.assertNil(io.open(dir)) -- it never ran
  H.stop_all(p.ref)
end
