-- tend cluster N SCRIPT [ARGS...]: a local nats-server and N nodes of
-- SCRIPT (n1 .. nN), each a `tend --node nK --nats URL SCRIPT ARGS...`
-- process supervised here as an OS process (lua/tend/process.lua): their
-- output is this one's, a node that fails is restarted with backoff and a
-- limit (BACKOFF), and Ctrl-C (or SIGTERM) stops them all, then the
-- server. One node per core is the use: `tend cluster $(nproc) app.lua`.
local core = require "tend.core"
local tend = require "tend"

local M = {}

-- A node that fails is restarted after 0.5 s, then 1, 2 and 4 s (+0-20
-- %); once it has failed 5 times in a row (each sooner than 10 s after
-- its start), it is left down. docs/guide/processes.md's advice.
local BACKOFF = { min = 0.5, max = 10, random = 0.2, reset = 10, retries = 4 }

local function usage(msg)
  io.stderr:write("tend cluster: " .. msg .. "\nusage: tend cluster N SCRIPT [ARGS...]\n")
  tend.shutdown(2)
end

local USAGE = [[
usage: tend cluster N SCRIPT [ARGS...]
Starts a nats-server on a free loopback port (JetStream on), then N nodes
n1..nN, each `tend --node nK --nats URL --nats-retry SCRIPT ARGS...`,
as OS processes supervised here; a node that fails is restarted after 0.5 s,
1, 2 and 4 s, and left down after 5 failures in a row. Ends when every node
has ended (exit 1 if one failed for good); Ctrl-C stops them all.
]]

function M.run(...)
  local args = { ... }
  if args[1] == "--help" or args[1] == "-h" then
    io.stdout:write(USAGE)
    return tend.shutdown(0)
  end
  local n = math.tointeger(tonumber(args[1] or ""))
  if not n or n < 1 or n > 64 then
    return usage("N: expected a number of nodes 1..64, got " .. (args[1] and ("'" .. args[1] .. "'") or "nothing"))
  end
  local script = args[2]
  if not script then return usage("SCRIPT: expected a file, got nothing") end
  local f = io.open(script, "r")
  if not f then return usage("SCRIPT: cannot open '" .. script .. "'") end
  f:close()
  local rest = table.move(args, 3, #args, 1, {})

  local url = require("tend.nats").local_server() -- (a NatsError ends tend here)
  -- /user/cluster: the nodes, each under a backoff supervisor; when every
  -- node has ended, tend exits (1 if a node failed for good), and the
  -- server (under /system) stops last
  tend.spawn(function(ctx)
    local left, failed = n, false
    local last = {} -- node index -> the error of its last incarnation, or nil
    for i = 1, n do
      local argv = { core.node_exe(), "--node", "n" .. i, "--nats", url, "--nats-retry", script }
      table.move(rest, 1, #rest, #argv + 1, argv)
      local program = tend.process { cmd = argv, stdout = "inherit", stderr = "inherit" }
      local function node(c)
        last[i] = nil
        return program(c)
      end
      local sup = ctx:spawn(tend.backoff.on_failure(node, {
        name = "n" .. i, min_backoff = BACKOFF.min, max_backoff = BACKOFF.max,
        random_factor = BACKOFF.random, reset_after = BACKOFF.reset, max_retries = BACKOFF.retries,
        supervisor_strategy = tend.one_for_one { decider = function(err)
          last[i] = err
          return "restart"
        end },
      }), { name = "n" .. i })
      ctx:watch(sup, { node = i })
    end
    return function(m)
      if type(m) == "table" and m.node then
        left = left - 1
        if last[m.node] then
          failed = true
          local err = last[m.node]
          core.log("error", "node n%d failed %d times in a row (the last: %s); no more restarts",
            m.node, BACKOFF.retries + 1, tostring(type(err) == "table" and err.message or err))
        end
        if left == 0 then tend.shutdown(failed and 1 or 0) end
      end
    end
  end, { name = "cluster" })
  core.log("info", string.format("%d nodes of %s on %s", n, script, url))
end

return M
