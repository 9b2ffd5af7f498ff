-- fixed_bank: examples/explore/bank.lua with its fix: every step of a
-- transfer carries an id, and an account applies an id once (a retry of
-- a request that was only slow is answered "ok" again, not applied
-- again). The same nemesis; 2,000 seeds pass.
-- Run: tend scenario examples/explore/fixed_bank.lua --seeds 1..100
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
return assert(loadfile(here .. "bank.lua"))("fixed")
