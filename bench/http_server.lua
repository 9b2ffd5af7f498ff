-- tend.http.serve's benchmark (make bench): hello-world requests per
-- second, keep-alive, 100 connections, with wrk (Debian's) as the load
-- generator, run by this program itself (tend.process.run: the server
-- keeps serving on the same loop while it waits).
-- Usage: tend bench/http_server.lua SECONDS [hello|ask]
--   hello: the handler returns a string; ask: it first asks another actor.
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
local server = tend.http.serve({ handler = handler })
local url = "http://127.0.0.1:" .. tend.ask(server, "port") .. "/"
local r = tend.process.run({ "wrk", "-t1", "-c100", "-d" .. secs .. "s", "--latency", url })
local rate = r.stdout:match("Requests/sec:%s*([%d%.]+)")
local p99 = r.stdout:match("\n%s*99%%%s*([%d%.]+%a+)")
if r.status ~= 0 or rate == nil then
  io.stderr:write("bench/http_server.lua: wrk failed: ", r.stdout, r.stderr, "\n")
  os.exit(1)
end
local errors = r.stdout:match("Non%-2xx or 3xx responses: (%d+)") or "0"
print(string.format("bench=http_serve_%s impl=tend secs=%d rate=%d p99=%s non2xx=%s",
  mode, secs, math.floor(tonumber(rate)), p99 or "?", errors))
tend.shutdown()
