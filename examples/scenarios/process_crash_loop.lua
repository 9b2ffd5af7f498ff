-- process_crash_loop: a simulated OS process (a service that crashes now
-- and then: exit 1, or a segfault) under a backoff supervisor, as
-- supervisord's autorestart with startsecs done right: the backoff grows
-- while it crashes young and resets once it ran 10 s. Deterministic for a
-- seed; a real `cmd` would be refused under the virtual clock, so the
-- service is `sim`.
-- Run: tend scenario examples/scenarios/process_crash_loop.lua --seed 3 --svg crash_loop.svg
local tend = require "tend"

local probe = tend.testkit.probe()
local runs = 0
local service = tend.process {
  cmd = { "/usr/local/bin/flaky-service", "--port", "8080" }, -- what it stands for
  to = probe.ref,
  ready = { line = "^listening" },
  sim = function(p)
    runs = runs + 1
    p:print("booting")
    p:sleep(0.5)
    p:print("listening on 8080")
    -- the first five runs crash young; then it stays up 12 s and crashes
    local life = runs <= 5 and tend.random() * 2 or 12
    p:sleep(life)
    if tend.random() < 0.5 then p:exit(1) else p:die("SEGV") end
  end,
}
local sup = tend.spawn(tend.backoff.on_failure(service, {
  name = "flaky", min_backoff = 1, max_backoff = 16, random_factor = 0.2, reset_after = 10,
}), { name = "svc" })

local starts = {}
while #starts < 8 do
  probe:fish_for(function(m) return m.line == "listening on 8080" end, 120)
  starts[#starts + 1] = tend.now()
end
tend.stop(sup)
local gaps = {}
for i = 2, #starts do gaps[#gaps + 1] = string.format("%.2f", starts[i] - starts[i - 1]) end
print("ready at " .. table.concat(gaps, ", ") .. " s intervals")
-- young crashes back off more and more; after a run of 12 s the delay is reset
assert(starts[6] - starts[5] > starts[2] - starts[1], "the backoff grows while it crashes young")
assert(starts[8] - starts[7] < starts[6] - starts[5], "a long run resets the backoff")
probe:stop()
