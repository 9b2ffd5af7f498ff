-- Simulated OS processes (tend.process{ sim = ... }) under the virtual
-- clock: the supervision of processes, deterministic to the microsecond.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestProcessSim = {}

function TestProcessSim:tearDown()
  tend.chaos.heal()
  H.assert_clean()
end

local function line(text)
  return function(m) return type(m) == "table" and m.line == text end
end

function TestProcessSim:test_a_real_command_is_refused_under_the_virtual_clock()
  local ok, err = pcall(function() local f = tend.process { cmd = { "true" } } return f end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "process_sim_spec.lua:")
  lu.assertStrContains(err, "tend.process: a real command cannot run under the virtual clock")
  lu.assertStrContains(err, "sim = function(p)")
  ok, err = pcall(tend.process.run, { "true" })
  lu.assertStrContains(err, "tend.process.run: a real command cannot run under the virtual clock")
  ok, err = pcall(tend.process, { sim = 42 })
  lu.assertStrContains(err, "option 'sim': expected a function(p), got 42")
end

function TestProcessSim:test_a_crash_loop_backs_off_with_the_expected_delays()
  local p = tk.probe()
  local spec = tend.backoff.on_failure(tend.process { to = p.ref, sim = function(proc)
    proc:print("up")
    proc:sleep(0.5)
    proc:exit(3)
  end }, { min_backoff = 1, max_backoff = 8, random_factor = 0 })
  local sup = tend.spawn(spec, { name = "svc" })
  local starts = {}
  for _ = 1, 6 do
    p:expect_msg(line("up"), 100)
    starts[#starts + 1] = tend.now()
  end
  -- each run lasts 0.5 s, then the backoff waits 1, 2, 4, 8, 8 s
  lu.assertEquals(H.gaps(starts), { 1.5, 2.5, 4.5, 8.5, 8.5 })
  H.stop_all(sup, p.ref)
end

function TestProcessSim:test_exit_status_and_signals_become_stops_and_failures()
  local p = tk.probe()
  local t0 = tend.now()
  local clean = tend.spawn(tend.process { sim = function(proc) proc:sleep(1) end })
  local failed = tend.spawn(tend.process { sim = function(proc) proc:exit(7) end },
    { restart = "temporary" })
  local crashed = tend.spawn(tend.process { sim = function(proc) proc:sleep(2) proc:die("SEGV") end },
    { restart = "temporary" })
  for _, r in ipairs { clean, failed, crashed } do p:watch(r) end
  lu.assertEquals(p:expect_terminated(failed, 5).reason.status, 7)
  lu.assertEquals(p:expect_terminated(clean, 5).reason, "normal")
  lu.assertEquals(tend.now() - t0, 1)
  local err = p:expect_terminated(crashed, 5).reason
  lu.assertEquals(err.kind, "ProcessSignal")
  lu.assertEquals(err.signal, "SEGV")
  lu.assertEquals(err.core_dump, false)
  lu.assertEquals(tend.now() - t0, 2)
  H.stop_all(p.ref)
end

function TestProcessSim:test_permanent_restarts_after_a_clean_exit_transient_does_not()
  local p = tk.probe()
  local t0 = tend.now()
  local n = 0
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.process { to = p.ref, sim = function(proc)
      n = n + 1
      proc:print("run " .. n)
      proc:sleep(1)
    end }, { restart = "permanent" })
    return function() end
  end)
  p:expect_msg(line("run 1"), 5)
  p:expect_msg(line("run 2"), 5)
  lu.assertEquals(tend.now() - t0, 1)
  H.stop_all(sup)
  local trans = tend.spawn(tend.process { sim = function(proc) proc:sleep(1) end })
  p:watch(trans)
  lu.assertEquals(p:fish_for(function(m) return m.tend == "terminated" end, 5).reason, "normal")
  H.stop_all(p.ref)
end

function TestProcessSim:test_signals_handlers_and_the_kill_sequence()
  local p = tk.probe()
  local w = tend.spawn(tend.process { to = p.ref, sim = function(proc)
    proc:on_signal(function(s)
      proc:print("got " .. s)
      if s == "TERM" then proc:exit(0) end
    end)
    while true do proc:sleep(10) end
  end })
  p:watch(w)
  tend.chaos.signal(w, "HUP")
  p:expect_msg(line("got HUP"), 1)
  w:send { signal = "USR1" }
  p:expect_msg(line("got USR1"), 1)
  tend.stop(w)
  p:expect_msg(line("got TERM"), 1)
  lu.assertEquals(p:expect_terminated(w, 1).reason, "normal") -- stopped by another actor
  -- one that ignores TERM is killed `shutdown` seconds later
  local deaf = tend.spawn(tend.process { shutdown = 2, sim = function(proc)
    proc:on_signal(function() end)
    proc:sleep(100)
  end })
  p:watch(deaf)
  tend.sleep(1)
  local t0 = tend.now()
  tend.stop(deaf)
  p:expect_terminated(deaf, 5)
  lu.assertEquals(tend.now() - t0, 2)
  -- a signal without a handler kills it
  local plain = tend.spawn(tend.process { sim = function(proc) proc:sleep(100) end },
    { restart = "temporary" })
  p:watch(plain)
  tend.chaos.signal(plain, "SEGV")
  local err = p:expect_terminated(plain, 1).reason
  lu.assertEquals(err.kind, "ProcessSignal")
  lu.assertEquals(err.signal, "SEGV")
  local ok, e = pcall(tend.chaos.signal, plain, "NOPE")
  lu.assertStrContains(e, "tend.chaos.signal: signal: expected a signal name such as \"SEGV\", got NOPE")
  H.stop_all(p.ref)
end

function TestProcessSim:test_ready_line_keeps_it_starting_and_times_out()
  local p = tk.probe()
  local t0 = tend.now()
  local slow = tend.spawn(tend.process { to = p.ref, ready = { line = "^listening" }, sim = function(proc)
    proc:print("loading")
    proc:sleep(3)
    proc:print("listening on 8080")
    proc:sleep(100)
  end })
  tend.sleep(1)
  local state
  for _, row in ipairs(tend.ps()) do if row.ref == slow then state = row.state end end
  lu.assertEquals(state, "starting")
  p:expect_msg(line("loading"), 5)
  p:expect_msg(line("listening on 8080"), 5)
  lu.assertEquals(tend.now() - t0, 3)
  lu.assertEquals(tend.ask(slow, "pid", 1) > 0, true)
  H.stop_all(slow)
  local seen
  local sup = tend.spawn(function(ctx)
    ctx:spawn(tend.process { ready = { line = "never" }, ready_timeout = 2, sim = function(proc)
      proc:sleep(100)
    end })
    return function() end
  end, { supervisor = tend.one_for_one { decider = function(err)
    seen = err
    return "stop"
  end } })
  tend.sleep(5)
  lu.assertEquals(seen.kind, "InitError")
  lu.assertEquals(seen.cause.kind, "ReadyTimeout")
  lu.assertStrContains(seen.cause.message, "was not ready within 2 s")
  H.stop_all(sup, p.ref)
end

function TestProcessSim:test_stdin_is_read_by_the_sim()
  local p = tk.probe()
  local cat = tend.spawn(tend.process { to = p.ref, sim = function(proc)
    while true do
      local data = proc:read()
      if data == nil then break end
      proc:print("echo " .. data)
    end
    proc:exit(0)
  end })
  p:watch(cat)
  cat:send { write = "a" }
  cat:send { write = "b" }
  p:expect_msg(line("echo a"), 1)
  p:expect_msg(line("echo b"), 1)
  cat:send { close_stdin = true }
  lu.assertEquals(p:expect_terminated(cat, 1).reason, "normal")
  H.stop_all(p.ref)
end

function TestProcessSim:test_trace_events_spawn_os_ready_exit()
  local events = {}
  local path
  tend.trace(function(e)
    if e.path == path and e.ev == "spawn_os" or e.ev == "ready" or e.ev == "exit" then
      events[#events + 1] = string.format("%s %s %s", e.ev, e.argv0 or e.status or e.signal or "",
        e.pid and "pid" or "-")
    end
  end)
  local p = tk.probe()
  local r = tend.spawn(tend.process { cmd = { "mydaemon", "-f" }, sim = function(proc)
    proc:sleep(1)
    proc:exit(2)
  end }, { restart = "temporary" })
  path = r:path()
  p:watch(r)
  p:expect_terminated(r, 5)
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(events, { "spawn_os mydaemon pid", "ready  -", "exit 2 pid" })
  H.stop_all(p.ref)
end

function TestProcessSim:test_the_timeline_draws_process_runs_and_exits()
  local timeline = require "tend.timeline"
  local svg = timeline.render({
    { t = 0, ev = "spawn", path = "/user/svc" },
    { t = 0, ev = "spawn_os", path = "/user/svc", pid = 10001, argv0 = "svc" },
    { t = 2, ev = "exit", path = "/user/svc", pid = 10001, status = 1 },
    { t = 3, ev = "spawn_os", path = "/user/svc", pid = 10002, argv0 = "svc" },
    { t = 5, ev = "exit", path = "/user/svc", pid = 10002, signal = "SEGV" },
  })
  lu.assertStrContains(svg, "svc (OS process)")
  local _, runs = svg:gsub('class="process%-run"', "")
  local _, exits = svg:gsub('class="exit"', "")
  lu.assertEquals({ runs, exits }, { 2, 2 })
  lu.assertStrContains(svg, "exit signal SEGV")
end

-- "lines" or "chunks" with no `to` go to the parent; under tend.spawn that
-- is the /user guardian, which takes no messages: the program does not
-- start (an InitError naming option 'to') rather than lose its output.
function TestProcessSim:test_lines_without_to_under_user_are_refused()
  local p = tk.probe()
  local ran = 0
  local function sim(proc) ran = ran + 1 proc:print("hello") proc:sleep(1) end
  local lines = tend.spawn(tend.process { stdout = "lines", sim = sim }, { restart = "temporary" })
  local chunks = tend.spawn(tend.process { stderr = "chunks", sim = sim }, { restart = "temporary" })
  p:watch(lines)
  p:watch(chunks)
  local why = p:expect_terminated(lines, 1).reason
  lu.assertEquals(why.kind, "InitError")
  lu.assertEquals(tostring(why.cause.message or why.cause), "tend.process: option 'to': needed with "
    .. "stdout = \"lines\" when the program is spawned with tend.spawn (its parent, the /user "
    .. "guardian, takes no messages); give to = tend.self() or another ref, or leave stdout out "
    .. "to pass the output through")
  lu.assertStrContains(tostring(p:expect_terminated(chunks, 1).reason.cause.message),
    "needed with stderr = \"chunks\" when")
  lu.assertEquals(ran, 0)
  -- under an actor of the user's the parent gets the lines, as before
  local parent = tend.spawn(function(ctx)
    ctx:spawn(tend.process { stdout = "lines", sim = function(proc) proc:print("hi") proc:sleep(5) end })
    return function(msg) if msg.line then p.ref:send(msg.line) end end
  end)
  lu.assertEquals(p:expect_msg("hi", 1), "hi")
  H.stop_all(parent, p.ref)
end
