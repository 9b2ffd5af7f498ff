-- nats = "local" and `tend cluster`: the nats-server tend starts itself,
-- with real tend processes, a real nats-server and real signals. Run with
-- the real clock: `tend --real-time test spec/realtime/local_nats_spec.lua`
-- (scripts/test and scripts/check do). Each run gets its own TMPDIR, so that what a run
-- leaves behind is seen (and nothing of another program's is).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() or H.skip("local_nats_spec", H.no_nats()) then return end

local exe = require("tend.internal").executable()

local function run(argv, opts)
  return tend.process.run(argv, opts)
end

-- A fresh empty directory.
local function mkdir()
  local r = run { "mktemp", "-d" }
  return (r.stdout:gsub("\n$", ""))
end

-- The names in dir, sorted, one string ("" when empty).
local function ls(dir)
  return (run { "ls", "-A", dir }).stdout
end

local function rmdir(dir) run { "rm", "-rf", dir } end

-- Writes an executable shell script named name into dir.
local function script(dir, name, text)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
  run { "chmod", "+x", dir .. "/" .. name }
end

TestLocalNats = {}

function TestLocalNats:tearDown() H.assert_clean() end

function TestLocalNats:test_the_server_keeps_its_store_and_output_in_a_private_directory_removed_at_exit()
  local tmp = mkdir()
  local code = [[
local tend = require "tend"
local dir = tend.process.run({ "ls", "-A", os.getenv("TMPDIR") }).stdout
io.write(dir, tend.process.run({ "ls", "-A", os.getenv("TMPDIR") .. "/" .. dir:gsub("\n", "") }).stdout)
tend.shutdown(0)]]
  local r = run({ exe, "--node", "a", "--nats", "local", "-e", code }, { env = { TMPDIR = tmp }, timeout = 30 })
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, "tend%-nats%-%w%w%w%w%w%w\njetstream\nserver%.log\n")
  lu.assertEquals(ls(tmp), "") -- gone with tend
  rmdir(tmp)
end

function TestLocalNats:test_sigterm_and_os_exit_leave_nothing_behind()
  local tmp = mkdir()
  -- SIGTERM: the tree stops (the server with it), then the directory goes
  local p = tend.spawn(tend.process {
    cmd = { exe, "--node", "a", "--nats", "local", "-e", "print('up') io.stdout:flush() require('tend').sleep(60)" },
    env = { TMPDIR = tmp }, ready = { line = "^up$" }, ready_timeout = 30, stdout = "lines", to = tend.self(),
  }, { restart = "temporary" })
  lu.assertTrue(H.eventually(function() return tend.inspect(p).state == "running" end, 30))
  lu.assertStrMatches(ls(tmp), "tend%-nats%-%w+\n")
  tend.watch(p)
  p:send { signal = "TERM" }
  local m
  repeat m = tend.receive(20) until m.tend == "terminated"
  lu.assertEquals(m.reason.status, 143)
  lu.assertEquals(ls(tmp), "")
  -- os.exit (no close): no actor's post_stop runs, the directory still goes
  local r = run({ exe, "--node", "b", "--nats", "local", "-e", "os.exit(3)" }, { env = { TMPDIR = tmp }, timeout = 30 })
  lu.assertEquals(r.status, 3, r.stderr)
  lu.assertEquals(ls(tmp), "")
  rmdir(tmp)
end

function TestLocalNats:test_a_missing_nats_server_is_one_line()
  local tmp, bin = mkdir(), mkdir()
  local line = "tend: NatsError: nats-server not found in PATH (scripts/deps installs it)\n"
  local r = run({ exe, "--node", "a", "--nats", "local", "-e", "print('never')" },
    { env = { TMPDIR = tmp, PATH = bin }, timeout = 30 })
  lu.assertEquals({ r.status, r.stdout, r.stderr }, { 1, "", line })
  local app = tmp .. "/app.lua"
  script(tmp, "app.lua", "print('never')\n")
  r = run({ exe, "cluster", "2", app }, { env = { TMPDIR = tmp, PATH = bin }, timeout = 30 })
  lu.assertEquals({ r.status, r.stdout, r.stderr }, { 1, "", line })
  lu.assertEquals(ls(tmp), "app.lua\n")
  rmdir(tmp)
  rmdir(bin)
end

function TestLocalNats:test_a_server_that_fails_to_start_shows_what_it_wrote()
  local tmp, bin = mkdir(), mkdir()
  script(bin, "nats-server", "#!/bin/sh\necho \"nats-server: cannot listen: $*\" >&2\nexit 1\n")
  local r = run({ exe, "--node", "a", "--nats", "local", "-e", "print('never')" },
    { env = { TMPDIR = tmp, PATH = bin .. ":" .. os.getenv("PATH") }, timeout = 30 })
  lu.assertEquals(r.status, 1)
  lu.assertEquals(r.stdout, "")
  lu.assertStrMatches(r.stderr, ".*tend: NatsError: nats%-server did not start; it wrote:\n"
    .. "  nats%-server: cannot listen: %-a 127%.0%.0%.1 %-p %-1 %-js %-sd " .. tmp:gsub("%p", "%%%0")
    .. "/tend%-nats%-%w+\n")
  lu.assertEquals(ls(tmp), "")
  rmdir(tmp)
  rmdir(bin)
end

function TestLocalNats:test_log_lines_of_a_real_node_carry_its_name()
  local tmp = mkdir()
  local code = [[
local tend = require "tend"
tend.spawn(function(ctx)
  ctx:log("warn", "hello from %s", "x")
  return function() end
end, { name = "x" })
tend.sleep(0.1)
tend.shutdown(0)]]
  local r = run({ exe, "--node", "b", "--nats", "local", "-e", code }, { env = { TMPDIR = tmp }, timeout = 30 })
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stderr, "%[%d+%.%d+%] warn  /user/x@b: hello from x\n")
  r = run({ exe, "--node", "c", "--nats", "local", "-e", (code:gsub("ctx:log%(", "tend.log(")) }, { env = { TMPDIR = tmp }, timeout = 30 })
  lu.assertStrMatches(r.stderr, "%[%d+%.%d+%] warn  /user/x@c: hello from x\n")
  rmdir(tmp)
end

function TestLocalNats:test_cluster_restarts_a_crashing_node_with_backoff_then_leaves_it_down()
  local tmp = mkdir()
  script(tmp, "bad.lua", "error('boom')\n")
  local t0 = tend.now()
  local r = run({ exe, "cluster", "1", tmp .. "/bad.lua" }, { env = { TMPDIR = tmp }, timeout = 60 })
  lu.assertFalse(r.timed_out) -- (it restarted without end before)
  lu.assertEquals(r.status, 1)
  local times, booms = {}, 0
  for line in r.stderr:gmatch("[^\n]+") do
    local t = line:match("^%[(%d+%.%d+)%] warn  /user/cluster/n1/n1: ProcessExit: .* exited with status 1; ")
    if t then times[#times + 1] = tonumber(t) end
    if line:find("bad.lua:1: boom", 1, true) then booms = booms + 1 end
  end
  lu.assertEquals(#times, 5, r.stderr) -- the first start and 4 restarts
  lu.assertEquals(booms, 5)
  -- each wait is the delay (0.5, 1, 2, 4 s, + at most 20 %) and a node's start
  local gaps = H.gaps(times)
  for k, d in ipairs { 0.5, 1, 2, 4 } do
    lu.assertTrue(gaps[k] >= d and gaps[k] <= d * 1.2 + 5, string.format("gap %d: %g s", k, gaps[k]))
  end
  lu.assertStrContains(r.stderr, "error /user/cluster: node n1 failed 5 times in a row (the last: '"
    .. exe .. "' exited with status 1); no more restarts\n")
  lu.assertTrue(tend.now() - t0 < 45)
  lu.assertEquals(ls(tmp), "bad.lua\n")
  rmdir(tmp)
end

function TestLocalNats:test_a_node_stopped_while_it_starts_ends_at_once()
  -- a server of this spec's own, on the port it picked
  local server = tend.spawn(tend.process {
    cmd = { "nats-server", "-a", "127.0.0.1", "-p", "-1" }, stderr = "lines", to = tend.self(),
  }, { restart = "temporary" })
  local port
  repeat
    local m = tend.receive(10)
    port = m.line and m.line:match("Listening for client connections on [%d.]+:(%d+)")
  until port
  -- SIGTERM at several moments of the start (connected, then checking
  -- that the name is free): each node ends within 3 s (one stayed up for
  -- ever: its connection, still open, kept the loop running)
  for i, delay in ipairs { 0.1, 0.2, 0.3, 0.4 } do
    local p = tend.spawn(tend.process {
      cmd = { exe, "--node", "s" .. i, "--nats", "nats://127.0.0.1:" .. port, "-e", "" },
      stderr = "null", kill_signal = "KILL",
    }, { restart = "temporary" })
    tend.watch(p)
    tend.sleep(delay)
    p:send { signal = "TERM" }
    local m
    repeat m = tend.receive(3) until m == nil or m.tend == "terminated"
    if not m then H.stop_all(p, server) end
    lu.assertNotNil(m, "node s" .. i .. " still running 3 s after SIGTERM (sent after " .. delay .. " s)")
  end
  H.stop_all(server)
  while select("#", tend.receive(0.2)) > 0 do end -- its last lines
end
