-- The simulated network (tend.simnet) under the virtual clock: tend.tcp and
-- tend.http on simulated hosts, latency, partitions, holds, resets; times
-- exact. Run by `tend test spec` (virtual clock).
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

TestSimnet = {}

-- The next message for the running task, within t virtual seconds.
local function next_msg(t) return (tend.receive(t or 5)) end

-- Lets the watcher tasks of closed connections end.
local function settle() tend.sleep(0) H.settle() end

function TestSimnet:setUp() while select("#", tend.receive(0)) > 0 do end end
function TestSimnet:tearDown()
  H.stop_user() -- the HTTP servers
  tend.chaos.heal()
  tend.sleep(30) -- what is still in flight arrives
  settle()
  H.assert_clean()
end

local port_seq = 1000
local function echo_server(host, opts)
  port_seq = port_seq + 1
  opts = opts or {}
  opts.host, opts.port = host, port_seq
  opts.handler = opts.handler or function()
    return function(msg, ctx) if msg.tend == "data" then ctx:write(msg.data) end end
  end
  return tend.tcp.listen(opts), port_seq
end

function TestSimnet:test_bytes_take_the_links_latency_each_way_in_order()
  local l, port = echo_server("db")
  tend.chaos.latency("web", "db", 0.25)
  local t0 = tend.now()
  local c = tend.tcp.connect({ host = "db", port = port, from = "web" })
  lu.assertEquals(tend.now() - t0, 0.5) -- one round trip
  lu.assertEquals(tend.tcp.peer(c), "db:" .. port)
  tend.tcp.write(c, "one\ntwo")
  tend.tcp.write(c, "three")
  local got = {}
  for _ = 1, 3 do
    local m = next_msg()
    got[#got + 1] = string.format("%s@%.2f", m.data, tend.now() - t0)
  end
  lu.assertEquals(got, { "one@1.00", "two@1.00", "three@1.00" })
  tend.tcp.close(c)
  lu.assertEquals(next_msg().reason, "closed")
  H.stop_all(l)
end

function TestSimnet:test_jitter_never_reorders_a_connection()
  local l, port = echo_server("db")
  tend.chaos.latency("web", "db", 0.01, 0.5)
  local c = tend.tcp.connect({ host = "db", port = port, from = "web" })
  for i = 1, 50 do tend.tcp.write(c, tostring(i)) end
  for i = 1, 50 do lu.assertEquals(next_msg().data, tostring(i)) end
  tend.chaos.latency("web", "db", 0)
  H.stop_all(c, l)
end

function TestSimnet:test_length_framing_and_frame_too_long()
  local seen = {}
  local l, port = echo_server("db", { framing = "length", max_line = 8, handler = function()
    return function(msg, ctx)
      if msg.tend == "data" then ctx:write(msg.data) else seen[#seen + 1] = msg.reason end
    end
  end })
  local c = tend.tcp.connect({ host = "db", port = port, framing = "length" })
  tend.tcp.write(c, "a\nb")
  tend.tcp.write(c, "")
  lu.assertEquals(next_msg().data, "a\nb")
  lu.assertEquals(next_msg().data, "")
  tend.tcp.write(c, "far too long")
  local m = next_msg()
  lu.assertEquals({ m.tend, m.reason }, { "closed", "eof" })
  settle()
  lu.assertEquals(seen, { "frame_too_long" })
  lu.assertEquals({ tend.tcp.write(c, "late") }, { false, "closed" })
  H.stop_all(l)
end

-- A partition stalls the bytes (TCP retransmits) and new connects; the
-- repair lets them through in order; a connect that outlasts its timeout
-- fails with "timed out" at exactly its timeout.
function TestSimnet:test_a_partition_stalls_until_the_repair()
  local l, port = echo_server("db")
  local c = tend.tcp.connect({ host = "db", port = port, from = "web" })
  tend.chaos.partition("web", "db")
  tend.tcp.write(c, "during")
  lu.assertEquals(select("#", tend.receive(10)), 0)
  local t0 = tend.now()
  local ok, err = pcall(tend.tcp.connect, { host = "db", port = port, from = "web", timeout = 2 })
  lu.assertFalse(ok)
  lu.assertEquals({ err.kind, err.reason }, { "ConnectError", "timed out" })
  lu.assertEquals(tend.now() - t0, 2)
  -- another pair of hosts is not affected
  local other = tend.tcp.connect({ host = "db", port = port, from = "cache" })
  tend.tcp.write(other, "x")
  lu.assertEquals(next_msg().data, "x")
  tend.after(1, function() tend.chaos.repair("web", "db") end)
  t0 = tend.now()
  local late = tend.tcp.connect({ host = "db", port = port, from = "web", timeout = 5 })
  lu.assertEquals(tend.now() - t0, 1) -- it got through at the repair
  lu.assertEquals(next_msg().data, "during")
  H.stop_all(c, other, late, l)
end

-- As on real sockets: the peer's end (its EOF) delivers its last line
-- without a newline, then closed "eof"; the handler can still write while
-- it handles them, until it stops (then the connection closes).
function TestSimnet:test_input_ended_leaves_the_handler_able_to_write()
  local seen = {}
  local l, port = echo_server("db", { handler = function()
    return function(msg, ctx)
      if msg.tend == "data" then
        seen[#seen + 1] = "data " .. msg.data
      else
        seen[#seen + 1] = "closed " .. msg.reason
      end
      seen[#seen + 1] = "write " .. tostring(ctx:write("answer")) .. string.format("@%.2f", tend.now())
    end
  end })
  tend.chaos.latency("web", "db", 0.25)
  local c = tend.tcp.connect({ host = "db", port = port, from = "web", framing = "raw" })
  local t0 = tend.now()
  tend.tcp.write(c, "GET x") -- no newline
  tend.tcp.close(c)
  lu.assertEquals(next_msg().reason, "closed")
  tend.sleep(1)
  local at = string.format("@%.2f", t0 + 0.25)
  lu.assertEquals(seen, { "data GET x", "write true" .. at, "closed eof", "write true" .. at })
  lu.assertEquals(tend.ask(l, "connections"), 0)
  H.stop_all(l)
end

function TestSimnet:test_hold_keeps_everything_until_release()
  local l, port = echo_server("db")
  local c = tend.tcp.connect({ host = "db", port = port, from = "web" })
  tend.chaos.hold("web", "db")
  tend.tcp.write(c, "1") tend.tcp.write(c, "2")
  lu.assertEquals(select("#", tend.receive(3)), 0)
  tend.chaos.release("web", "db")
  lu.assertEquals(next_msg().data, "1")
  lu.assertEquals(next_msg().data, "2")
  H.stop_all(c, l)
end

function TestSimnet:test_reset_ends_both_sides_with_reset()
  local reasons = {}
  local l, port = echo_server("db", { handler = function()
    return function(msg) if msg.tend == "closed" then reasons[#reasons + 1] = msg.reason end end
  end })
  local c = tend.tcp.connect({ host = "db", port = port })
  tend.sleep(0)
  tend.chaos.reset(c)
  local m = next_msg()
  lu.assertEquals({ m.tend, m.reason }, { "closed", "reset" })
  settle()
  lu.assertEquals(reasons, { "reset" })
  H.stop_all(l)
end

function TestSimnet:test_refused_in_use_and_max_connections()
  local l, port = echo_server("db", { max_connections = 1 })
  local ok, err = pcall(tend.tcp.connect, { host = "db", port = port + 500 })
  lu.assertEquals({ err.kind, err.reason }, { "ConnectError", "connection refused" })
  ok, err = pcall(tend.tcp.listen, { host = "db", port = port, handler = function() end })
  lu.assertFalse(ok)
  lu.assertEquals({ err.kind, err.reason }, { "ListenError", "address already in use" })
  local a = tend.tcp.connect({ host = "db", port = port })
  local b = tend.tcp.connect({ host = "db", port = port })
  local m = next_msg()
  lu.assertEquals({ m.tend, m.reason }, { "closed", "eof" }) -- b, refused
  lu.assertEquals(tend.ask(l, "refused"), 1)
  lu.assertEquals(tend.ask(l, "connections"), 1)
  local p0 = tend.tcp.listen({ host = "db", port = 0, handler = function() end })
  lu.assertTrue(tend.ask(p0, "port") >= 49152)
  H.stop_all(a, b, l, p0)
end

-- Runs body() with a pause in the running task where tend.tcp looks up
-- its transport (between its spawn of a listener and its bind): at each
-- lookup, on_pause() runs, then the task sleeps 10 ms so others run.
-- Returns body's pcall results and the number of pauses.
local function with_pause_before_bind(on_pause, body)
  local simnet = require "tend.simnet"
  local tcp, pauses, me = simnet.tcp, 0, tend.self()
  simnet.tcp = nil
  setmetatable(simnet, { __index = function(_, k)
    if k == "tcp" and tend.self() == me then
      pauses = pauses + 1
      on_pause()
      tend.sleep(0.01)
    end
    return k == "tcp" and tcp or nil
  end })
  local ok, a, b = pcall(body)
  setmetatable(simnet, nil)
  simnet.tcp = tcp
  return pauses, ok, a, b
end

-- tend.tcp.listen spawns the listener, then binds; its caller can be
-- preempted between the two, so the listener may start first. It must not
-- bind a port of its own then (it did: port 0 gave it one, and the
-- caller's bind of that same port failed with "address already in use");
-- and when the caller's bind fails, nothing is left listening.
function TestSimnet:test_a_listener_that_starts_before_its_callers_bind()
  local pauses, ok, l, taken = with_pause_before_bind(function() end, function()
    local l = tend.tcp.listen({ host = "db", port = 0, handler = function()
      return function(msg, ctx) if msg.tend == "data" then ctx:write(msg.data) end end
    end })
    local _, err = pcall(tend.tcp.listen, { host = "db", port = tend.ask(l, "port"),
      handler = function() end })
    return l, err
  end)
  lu.assertTrue(ok, tostring(type(l) == "table" and l.message or l))
  lu.assertEquals(pauses, 2)
  lu.assertEquals({ taken.kind, taken.reason }, { "ListenError", "address already in use" })
  local port = tend.ask(l, "port")
  lu.assertEquals(tend.ask(l, "refused"), 0)
  lu.assertEquals(#tend.children("/user"), 2) -- the runner and l: none stray
  local c = tend.tcp.connect({ host = "db", port = port })
  tend.tcp.write(c, "hi")
  lu.assertEquals(next_msg().data, "hi")
  H.stop_all(c, l)
  -- the port is free again: nothing else bound it
  local again = tend.tcp.listen({ host = "db", port = port, handler = function() end })
  H.stop_all(again)
end

-- The listener stopped while its caller was still binding: the caller
-- closes what it bound, so the port is free.
function TestSimnet:test_a_listener_stopped_before_its_callers_bind()
  local me = tend.self()
  local _, ok, l = with_pause_before_bind(function()
    for _, row in ipairs(tend.children("/user")) do
      if row.ref ~= me then tend.stop(row.ref) end
    end
  end, function()
    return tend.tcp.listen({ host = "db", port = 7000, handler = function() end })
  end)
  lu.assertTrue(ok, tostring(type(l) == "table" and l.message or l))
  lu.assertFalse(tend.alive(l))
  local again = tend.tcp.listen({ host = "db", port = 7000, handler = function() end })
  H.stop_all(again)
end

function TestSimnet:test_an_owners_death_closes_its_connection()
  local seen = {}
  local l, port = echo_server("db", { handler = function()
    return function(msg) if msg.tend == "closed" then seen[#seen + 1] = msg.reason end end
  end })
  local owner = tend.spawn(function()
    tend.tcp.connect({ host = "db", port = port, from = "web" })
    return function() end
  end)
  tend.sleep(1)
  H.stop_all(owner)
  tend.sleep(1)
  lu.assertEquals(seen, { "eof" })
  H.stop_all(l)
end

function TestSimnet:test_network_faults_are_trace_events()
  local seen = {}
  tend.trace(function(e)
    if e.ev == "chaos" then seen[#seen + 1] = e.path .. " " .. e.detail .. " " .. tostring(e.to) end
  end)
  tend.chaos.partition("a", "b")
  tend.chaos.repair("a", "b")
  tend.chaos.latency("a", "b", 0.5, 0.1)
  tend.chaos.latency("a", "b", 0)
  tend.chaos.hold("b", "c")
  tend.chaos.release("b", "c")
  tend.sleep(0)
  tend.trace(false)
  lu.assertEquals(seen, { "/net/a partition /net/b", "/net/a repair /net/b",
    "/net/a latency 0.5 s +0-0.1 s /net/b", "/net/a latency 0 s /net/b",
    "/net/b hold /net/c", "/net/b release /net/c" })
end

function TestSimnet:test_chaos_verbs_check_their_arguments()
  local ok, err = pcall(tend.chaos.partition, "a", 42)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tend.chaos.partition: b: expected a host name or an actor ref, got number")
  ok, err = pcall(tend.chaos.latency, "a", "b", -1)
  lu.assertStrContains(err, "tend.chaos.latency: seconds: expected a number >= 0, got -1")
  ok, err = pcall(tend.chaos.latency, "a", "b", 1e300) -- bounded as every duration
  lu.assertStrContains(err, "tend.chaos.latency: seconds: expected a number of seconds <= 1e9, got 1e+300")
  ok, err = pcall(tend.chaos.latency, "a", "b", math.huge)
  lu.assertStrContains(err, "tend.chaos.latency: seconds: expected a number of seconds <= 1e9, got inf")
  ok, err = pcall(tend.chaos.latency, "a", "b", 0.1, 1e300)
  lu.assertStrContains(err, "tend.chaos.latency: jitter: expected a number of seconds <= 1e9, got 1e+300")
  ok, err = pcall(tend.chaos.reset, tend.self())
  lu.assertStrContains(err, "tend.chaos.reset: conn: expected a live connection ref")
end

function TestSimnet:test_simulated_http_servers()
  tend.http.serve({ host = "api", handler = function(req)
    if req.path == "/boom" then error("handler failed") end
    return { status = 200, headers = { ["X-Seen"] = req.method }, body = "hello " .. req.body }
  end })
  tend.chaos.latency("localhost", "api", 0.1)
  local t0 = tend.now()
  local r = tend.http.request({ method = "POST", url = "http://api/x", body = "you" })
  lu.assertEquals({ r.status, r.body, r.headers["x-seen"] }, { 200, "hello you", "POST" })
  lu.assertAlmostEquals(tend.now() - t0, 0.2, 1e-6)
  lu.assertEquals(tend.http.get("http://api/boom").status, 500)
  tend.chaos.partition("localhost", "api")
  t0 = tend.now()
  local ok, err = pcall(tend.http.get, "http://api/x", { timeout = 3 })
  lu.assertFalse(ok)
  lu.assertEquals({ err.kind, err.reason }, { "HttpError", "timed out" })
  lu.assertEquals(tend.now() - t0, 3)
  tend.chaos.repair("localhost", "api")
  tend.chaos.latency("localhost", "api", 0)
  ok, err = pcall(tend.http.get, "http://elsewhere.example/")
  lu.assertEquals(err.reason, "no simulated server")
end

-- The simulated twin takes the real server's requests and answers
-- (spec/realtime/http_server_spec.lua): query decoded, a string, nil and a
-- status, the router, max_body, a raise without its text.
function TestSimnet:test_simulated_http_servers_answer_as_the_real_one()
  local seen
  tend.http.serve({ host = "twin", max_body = 4, handler = tend.http.router({
    { "GET", "/items/:id", function(req)
      seen = req
      return "item " .. req.params.id
    end },
    { "GET", "/gone", function() return nil, 404 end },
    { "GET", "/boom", function() error("secret") end },
    { "POST", "/items", function(req) return { status = 201, body = req.body } end },
  }) })
  local r = tend.http.get("http://twin/items/7?a=1&b=x%20y", { headers = { ["X-K"] = "v" } })
  lu.assertEquals({ r.status, r.body, r.headers["content-type"] },
    { 200, "item 7", "text/plain; charset=utf-8" })
  lu.assertEquals({ seen.path, seen.query, seen.headers["x-k"], seen.version },
    { "/items/7", { a = "1", b = "x y" }, "v", "1.1" })
  lu.assertEquals(tend.http.get("http://twin/gone").status, 404)
  lu.assertEquals(tend.http.get("http://twin/nowhere").status, 404)
  r = tend.http.get("http://twin/boom")
  lu.assertEquals({ r.status, r.body }, { 500, "Internal Server Error\n" })
  r = tend.http.request({ method = "PUT", url = "http://twin/items/7" })
  lu.assertEquals({ r.status, r.headers.allow }, { 405, "GET, HEAD" })
  r = tend.http.request({ method = "POST", url = "http://twin/items", body = "four" })
  lu.assertEquals({ r.status, r.body }, { 201, "four" })
  r = tend.http.request({ method = "POST", url = "http://twin/items", body = "fives" })
  lu.assertEquals(r.status, 413)
end

-- The partition scenario replays byte for byte: its trace and its output.
-- Each simulated transfer is a task of tend's own: out of the output, the
-- trace and the timeline, unless --trace-internal (which replays too).
local function partition_run(extra)
  local runs = {}
  for i = 1, 2 do
    local trace = os.tmpname()
    local svg = os.tmpname()
    local args = { "scenario", "examples/scenarios/partition.lua", "--seed", "7",
      "--trace", trace, "--svg", svg }
    if extra then args[#args + 1] = extra end
    local out, err, code = H.run(args)
    local g = io.open(svg, "rb")
    local drawn = g:read("a")
    g:close()
    os.remove(svg)
    lu.assertStrContains(drawn, "/net/app1") -- the network's lane, its two marks
    lu.assertStrContains(drawn, "chaos partition")
    lu.assertStrContains(drawn, "chaos repair")
    lu.assertEquals(code, 0, err)
    local f = io.open(trace, "rb")
    runs[i] = { out = out, trace = f:read("a"), svg = drawn }
    f:close()
    os.remove(trace)
  end
  lu.assertStrContains(runs[1].out, "app2: 0 failures")
  lu.assertStrContains(runs[1].trace, '"detail":"partition"')
  lu.assertEquals(runs[2].trace, runs[1].trace)
  lu.assertEquals(runs[2].out, runs[1].out)
  return runs[1]
end

function TestSimnet:test_the_partition_scenario_replays_byte_for_byte()
  local run = partition_run()
  for _, text in ipairs { run.out, run.trace, run.svg } do lu.assertNotStrContains(text, "/system/") end
  local shown = partition_run("--trace-internal")
  lu.assertStrContains(shown.out, "/system/$")
  lu.assertStrMatches(shown.trace, '.*{"t":[%d.]+,"ev":"spawn","path":"/system/%$%d+"}\n.*')
  lu.assertStrContains(shown.svg, 'data-path="/system/$')
  -- the same run: hiding takes lines out and changes nothing else
  local kept = {}
  for line in shown.trace:gmatch("[^\n]*\n") do
    if not line:find('"path":"/system/', 1, true) then kept[#kept + 1] = line end
  end
  lu.assertEquals(table.concat(kept), run.trace)
end

-- A connect in a partition times out on the nanosecond of its deadline,
-- also from a time where start + timeout (a float) is an ulp past where
-- the waits of 0.01 s land: at 1.000000003 s it spun there for ever.
function TestSimnet:test_a_connect_in_a_partition_times_out_on_its_nanosecond()
  local script = H.script([[
    local tend = require "tend"
    tend.tcp.listen({ host = "db", port = 5432, handler = function() return function() end end })
    local function ns() return math.floor(tend.now() * 1e9 + 0.5) end
    tend.chaos.partition("localhost", "db")
    for _, start in ipairs({ 1000000003, 3000000000, 5000000001 }) do
      tend.sleep(start / 1e9 - tend.now())
      local t0 = ns()
      local ok, err = pcall(tend.tcp.connect, { host = "db", port = 5432, timeout = 1 })
      print(t0, ok, err.reason, ns() - t0)
    end]])
  local out, code = H.run_bounded(20, { "--virtual-time", script })
  os.remove(script)
  lu.assertEquals({ out, code }, { "1000000003\tfalse\ttimed out\t1000000000\n" ..
    "3000000000\tfalse\ttimed out\t1000000000\n5000000001\tfalse\ttimed out\t1000000000\n", 0 })
end

-- The partition scenario ends for every seed (seeds 1 and 2 spun at
-- 16.122 s), and also run as a plain script (it ends with tend.shutdown:
-- its clients' ticks would keep the virtual clock going for ever).
function TestSimnet:test_the_partition_scenario_ends_for_seeds_1_to_20_and_as_a_script()
  local out, code = H.run_bounded(60, { "scenario", "examples/scenarios/partition.lua", "--seeds", "1..20" })
  lu.assertEquals(code, 0, out)
  lu.assertStrContains(out, "all 20 seeds passed")
  local _, n = out:gsub("seed %d+: ok, ", "")
  lu.assertEquals(n, 20)
  out, code = H.run_bounded(30, { "--virtual-time", "--seed", "1", "examples/scenarios/partition.lua" })
  lu.assertEquals(code, 0, out)
  lu.assertStrContains(out, "app1: 11 failures during the partition, served 9 times before, 0 during, 19 after\n" ..
    "app2: 0 failures, served 49 times\n")
end
