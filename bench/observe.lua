-- The observer's cost (it must cost nothing when off, at most 5 % of
-- pingpong's rate when on): bench/bench.lua's pingpong int (reply) run
-- with the observer off, on (serving, no page open) or watched (a client
-- following its /api/events stream, curl -N, as an open page does).
-- Usage: tend bench/observe.lua off|on|watched N
local tend = require "tend"

local mode, n = arg[1], math.tointeger(tonumber(arg[2])) or 1000000
local pidfile
if mode == "on" or mode == "watched" then
  local obs = tend.observe { port = 0 }
  if mode == "watched" then
    pidfile = os.tmpname()
    local base = obs.url:match("^(http://[^/]+)")
    os.execute(string.format("curl -sN '%s/api/events?token=%s' >/dev/null 2>&1 & echo $! > '%s'",
      base, obs.token, pidfile))
    tend.sleep(0.3) -- connected, its first tree sent
  end
elseif mode ~= "off" then
  io.stderr:write("usage: tend bench/observe.lua off|on|watched N\n")
  return tend.shutdown(2)
end
arg = { [0] = "bench/bench.lua", "pingpong", n, "reply", "int" }
dofile("bench/bench.lua")
if pidfile then
  os.execute("kill $(cat '" .. pidfile .. "') 2>/dev/null; rm -f '" .. pidfile .. "'")
end
tend.shutdown()
