-- tend: the Lua face of the host. Everything that must be enforced lives in
-- the C module tend.core (each of its files registers its own functions);
-- this module exports the ones chosen below, with the Lua builders of
-- tend.backoff (backoff specs and tend.retry) and the modules after them.
local core = require "tend.core"

-- The names of tend.core that are tend's own (the guide documents each as
-- tend.<name>). The rest of tend.core is plumbing of the Lua modules
-- (tend.backoff, tend.node, tend.process, ...): a new C function is
-- public only once it is written here; spec/face_spec.lua fails on one
-- that is neither here nor in its list of internal names.
local EXPORTS = {
  -- actors, messages, asks
  "spawn", "self", "send", "ask", "receive", "sleep", "after", "alive",
  "stop", "kill", "poison", "watch", "unwatch", "copy_messages",
  -- names
  "register", "unregister", "registered", "whereis",
  -- supervision: strategies, deciders, directives, children
  "supervise", "one_for_one", "all_for_one", "rest_for_one", "default_strategy",
  "guardian_strategy", "decider", "restart", "resume", "stop_on_failure",
  "restart_with_limit", "restart_with_backoff", "unhandled", "stopping", "stopped",
  "children", "count_children", "start_child", "stop_child",
  -- errors
  "error", "raise", "describe",
  -- the host: time, randomness, logs, traces, what runs
  "now", "virtual_time", "random", "seed", "log", "trace", "trace_file",
  "tree", "ps", "stats", "scheduler", "shutdown", "version",
}

local tend = {}
for _, name in ipairs(EXPORTS) do
  tend[name] = core[name]
  assert(tend[name] ~= nil, name) -- (a name that went from tend.core)
end

local backoff = require "tend.backoff"
tend.backoff = backoff
tend.retry = backoff.retry
local code = require "tend.code"
tend.inspect = code.inspect
tend.reload = code.reload
tend.pool = require "tend.pool"
tend.pg = require "tend.pg"
tend.process = require "tend.process"
tend.tcp = require "tend.tcp"
tend.http = require "tend.http"
local node = require "tend.node"
tend.node = { start = node.start, name = node.name, list = node.list, monitor = node.monitor,
  stats = node.stats, tree = node.tree, peer = function(...) return require("tend.nats").peer(...) end }
tend.spawn_on = node.spawn_on
tend.stream = require "tend.stream"
local invariant = require "tend.invariant"
tend.invariant = invariant.invariant
tend.eventually = invariant.eventually
-- the browser observer of this host (lua/tend/observe/live.lua), loaded
-- when first called
function tend.observe(opts) return require("tend.observe.live").start(opts) end

-- tend.testkit, tend.chaos, tend.simnet, tend.global and tend.sim (the
-- simulated nodes, lua/tend/simnodes.lua) load on first use.
setmetatable(tend, {
  __index = function(t, k)
    if k == "sim" then -- its public face: the rest serves tend.chaos
      local m = require "tend.simnodes"
      local face = { nodes = m.nodes, list = m.list, stop = m.stop }
      rawset(t, k, face)
      return face
    end
    if k == "testkit" or k == "chaos" or k == "simnet" or k == "global" then
      local m = require("tend." .. k)
      rawset(t, k, m)
      return m
    end
  end,
})

-- require "tend.core" from now on gives a view of core (reads, writes and
-- pairs go to it) that holds no function itself. Lua's tracebacks
-- (debug.traceback, the REPL's, luaL_argerror's) name a C function by the
-- first loaded module found to hold it, in hash order: tend.ask showed as
-- often as not as 'tend.core.ask', a name the user never wrote.
package.loaded["tend.core"] = setmetatable({}, { __index = core, __newindex = core,
  __pairs = function() return next, core, nil end })

return tend
