-- tend: the Lua face of the host. Everything that must be enforced lives in
-- the C module tend.core; this module only gathers it under one name.
local core = require "tend.core"

local tend = {}
for _, name in ipairs {
  "spawn", "send", "ask", "stop", "alive", "self", "sleep", "now", "after",
  "random", "seed", "stats", "shutdown", "log", "error", "raise",
  "virtual_time", "executable", "list_dir", "is_dir", "trace", "trace_file",
  "wall_clock",
  "one_for_one", "all_for_one", "rest_for_one", "decider", "describe",
  "default_strategy", "stopping", "guardian_strategy", "tree", "ps", "kill",
  "watch", "unwatch",
} do
  tend[name] = core[name]
end
tend.stopped = core.stopped
tend.unhandled = core.unhandled
tend.version = core.version

local backoff = require "tend.backoff"
tend.backoff = backoff
for _, name in ipairs {
  "supervise", "restart", "resume", "stop_on_failure", "restart_with_limit",
  "restart_with_backoff", "retry",
} do
  tend[name] = backoff[name]
end

-- tend.testkit and tend.chaos load on first use.
setmetatable(tend, {
  __index = function(t, k)
    if k == "testkit" or k == "chaos" then
      local m = require("tend." .. k)
      rawset(t, k, m)
      return m
    end
  end,
})

return tend
