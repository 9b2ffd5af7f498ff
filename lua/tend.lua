-- tend: the Lua face of the host. Everything that must be enforced lives in
-- the C module tend.core (each of its files registers its own functions);
-- this module gathers all of them under one name, with the Lua builders of
-- tend.backoff (backoff specs and tend.retry).
local core = require "tend.core"

local tend = {}
for name, value in pairs(core) do
  -- backoff_*, chaos_*, code_*, process_*, tcp_* and http_* are the plumbing of
  -- tend.backoff, tend.chaos, tend.inspect, tend.process, tend.tcp and tend.http;
  -- codec_*, wire_*, node_*, remote_*, nats_* and sim_* are the plumbing of
  -- tend.node and tend.sim
  if not (name:match("^backoff_") or name:match("^chaos_") or name:match("^code_")
      or name:match("^process_") or name:match("^tcp_") or name:match("^http_")
      or name:match("^codec_") or name:match("^wire_") or name:match("^node_") or name:match("^remote_")
      or name:match("^nats_")
      or name:match("^sim_")
      or name == "signal_number") then
    tend[name] = value
  end
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
