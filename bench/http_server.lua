-- tend.http.serve's benchmark (make bench): hello-world requests per
-- second and p99 latency, keep-alive, 100 connections, with wrk (Debian's)
-- as the load generator, run by this program itself (tend.process.run:
-- the server keeps serving on the same loop while it waits); and the
-- memory per idle keep-alive connection (bench/http_idle.py).
-- Usage: tend bench/http_server.lua SECONDS [hello|ask|idle [N]]
--   hello: the handler returns a string; ask: it first asks another actor;
--   idle: N connections (default 2000) held after one request each.
-- cpu_us: the server's CPU time (user + system) per request, in us;
-- user_us: its user-space part (what tend's own code costs; the kernel's
-- share, loopback TCP and the system calls, is the rest).
-- Env: WRK_CPU (default 1): the core wrk runs on (taskset; scripts/bench
-- runs tend itself on core 0), "" for anywhere.
local tend = require "tend"

local secs = tonumber(arg[1]) or 5
local mode = arg[2] or "hello"

local echo = tend.spawn(function()
  return function(msg, ctx) ctx:reply(msg) end
end)
local handler = function() return "hello, world\n" end
if mode == "ask" then
  handler = function() return tend.ask(echo, "hello, world\n") end
end
local server = tend.http.serve({ handler = handler, max_connections = 100000 })
local port = tend.ask(server, "port")

local function fail(what, r)
  io.stderr:write("bench/http_server.lua: ", what, " failed: ", r.stdout, r.stderr, "\n")
  os.exit(1)
end

if mode == "idle" then
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("a"):match("^(%d+)")
  f:close()
  local r = tend.process.run({ "python3", "bench/http_idle.py", pid, tostring(port),
    arg[3] or "2000" })
  local line = r.stdout:match("bench=http_idle [^\n]*")
  if r.status ~= 0 or line == nil then fail("bench/http_idle.py", r) end
  print(line .. " impl=tend")
  tend.shutdown()
  return
end

local cpu = os.getenv("WRK_CPU") or "1"
local cmd = { "wrk", "-t1", "-c100", "-d" .. secs .. "s", "--latency",
  "http://127.0.0.1:" .. port .. "/" }
if cpu ~= "" then
  table.insert(cmd, 1, "taskset")
  table.insert(cmd, 2, "-c")
  table.insert(cmd, 3, cpu)
end
local function cpu_ticks() -- this process's user + system time, and user time, in clock ticks
  local f = assert(io.open("/proc/self/stat"))
  local stat = f:read("a"):gsub("^.*%) ", "") -- the fields after the command's name
  f:close()
  local fields = {}
  for v in stat:gmatch("%S+") do fields[#fields + 1] = v end
  return tonumber(fields[12]) + tonumber(fields[13]), tonumber(fields[12]) -- utime, stime (fields 14, 15)
end
local t0, u0 = cpu_ticks()
local r = tend.process.run(cmd)
local t1, u1 = cpu_ticks()
local ticks, uticks = t1 - t0, u1 - u0
local rate = r.stdout:match("Requests/sec:%s*([%d%.]+)")
if r.status ~= 0 or rate == nil then fail("wrk", r) end
local p99 = r.stdout:match("\n%s*99%%%s*([%d%.]+%a+)")
local errors = r.stdout:match("Non%-2xx or 3xx responses: (%d+)") or "0"
local n = tonumber(r.stdout:match("(%d+) requests in")) or 0
-- the server's CPU time per request (user + system, clock ticks of 10 ms):
-- steadier than the rate on a shared machine
local cpu_us = n > 0 and ticks * 1e4 / n or 0
local user_us = n > 0 and uticks * 1e4 / n or 0
print(string.format("bench=http_serve_%s impl=tend secs=%d rate=%d p99=%s non2xx=%s cpu_us=%.1f user_us=%.1f",
  mode, secs, math.floor(tonumber(rate)), p99 or "?", errors, cpu_us, user_us))
tend.shutdown()
