-- flaky_service: a small shell script that serves for a moment and then
-- crashes at random (exit 1 or a SIGSEGV of its own), supervised by a
-- backoff supervisor with jitter; its stdout goes to tend's log with the
-- actor's path. The trace counts starts and exits; after 2 s the service
-- is stopped (SIGTERM to its process group).
-- Run: tend --log-level info examples/processes/flaky_service.lua
local tend = require "tend"

local script = [[
echo "serving as pid $$"
n=$(od -An -N1 -tu1 /dev/urandom | tr -d ' ')
sleep 0.$((n % 3))
if [ $((n % 2)) -eq 0 ]; then echo "crashing (exit 1)"; exit 1; fi
echo "crashing (segfault)"; kill -SEGV $$
]]

local starts, exits, delays = 0, {}, {}
tend.trace(function(e)
  if e.path ~= "/user/service/flaky" and e.path ~= "/user/service" then return end
  if e.ev == "spawn_os" then starts = starts + 1
  elseif e.ev == "exit" then exits[#exits + 1] = e.signal or ("status " .. e.status)
  elseif e.ev == "backoff" then delays[#delays + 1] = string.format("%.2f", e.delay) end
end)

local sup = tend.spawn(tend.backoff.on_failure(
  tend.process { cmd = { "sh", "-c", script }, stdout = "log", shutdown = 1 },
  { name = "flaky", min_backoff = 0.05, max_backoff = 0.4, random_factor = 0.3, reset_after = 1 }),
  { name = "service" })
tend.sleep(2)
tend.stop(sup)
tend.sleep(0.2)
print(string.format("flaky_service: %d starts, %d exits (%s), backoff delays %s s",
  starts, #exits, table.concat(exits, ", "), table.concat(delays, ", ")))
assert(starts >= 2, "it was restarted after its crash")
