-- tend.http's benchmark (make bench): GET requests per second over
-- loopback from C callers (actors, each waiting for its answer before the
-- next request) to a keep-alive HTTP/1.1 server on tend.tcp.listen (raw
-- framing) in the same process; curl reuses its connections.
-- Usage: tend bench/http.lua N C
local tend = require "tend"
local clock = require("tend.internal").wall_clock

local n = math.tointeger(tonumber(arg[1])) or 20000
local c = math.tointeger(tonumber(arg[2])) or 10

local RESPONSE = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"

-- Answers every request of a connection (requests without a body).
local function handler(ctx)
  local buf = ""
  return function(msg, ctx)
    if msg.tend ~= "data" then return end
    buf = buf .. msg.data
    local replies = {}
    while true do
      local e = buf:find("\r\n\r\n", 1, true)
      if e == nil then break end
      buf = buf:sub(e + 4)
      replies[#replies + 1] = RESPONSE
    end
    if #replies > 0 then ctx:write(table.concat(replies)) end
  end
end

local server = tend.tcp.listen({ port = 0, framing = "raw", handler = handler })
local url = "http://127.0.0.1:" .. tend.ask(server, "port") .. "/"

local main = tend.self()
local per = n // c
local t0 = clock()
for _ = 1, c do
  tend.spawn(function(ctx)
    ctx.self:send("go")
    return function(msg, ctx)
      for _ = 1, per do
        local r = tend.http.get(url)
        assert(r.status == 200 and r.body == "ok")
      end
      tend.send(main, "done")
      return tend.stopped
    end
  end)
end
for _ = 1, c do assert(tend.receive(60) == "done", "a caller did not finish") end
local secs = clock() - t0
print(string.format("bench=http_get impl=tend count=%d secs=%.4f rate=%d", per * c, secs,
  math.floor(per * c / secs + 0.5)))
tend.shutdown(0)
