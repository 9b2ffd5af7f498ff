-- The public names of tend as they live now, for the specs that compare
-- them with the reference (doc_spec) and with types/tend.lua
-- (types_spec): the functions and values of tend and its modules, the
-- methods of the objects a user holds (ctx, refs, timers, backoff specs,
-- typed actions, probes; lua/tend/doc.lua's receivers) and the REPL's
-- helpers. A name is "tend.x.y", "ctx:reply" or "help".
local tend = require "tend"
local doc = require "tend.doc"

local MODULES = { "backoff", "pg", "testkit", "process", "tcp", "http", "node", "chaos", "simnet",
  "global", "sim", "stream" }

local M = {}

-- { [name] = true } for every public name; `repl` adds the REPL's helpers.
function M.live(repl)
  local names = {}
  local modules = {}
  for _, m in ipairs(MODULES) do modules[m] = true end
  for k, v in pairs(tend) do
    if type(v) ~= "table" or not modules[k] then
      names["tend." .. k] = true
    elseif getmetatable(v) and getmetatable(v).__call then
      names["tend." .. k] = true -- a module that is also a function (tend.backoff{...})
    end
  end
  for _, m in ipairs(MODULES) do
    for k, v in pairs(tend[m]) do
      if type(v) == "function" then names["tend." .. m .. "." .. k] = true end
    end
  end
  local reg = debug.getregistry()
  local methods = { ctx = reg["tend.Ctx"].methods }
  for recv, class in pairs(doc.receivers) do
    local mt = reg[class]
    if mt and type(mt.__index) == "table" then methods[recv] = mt.__index end
  end
  local probe = tend.testkit.probe()
  methods.probe = getmetatable(probe).__index
  probe:stop()
  if tend.virtual_time() then -- a simulated program's p (tend.process{sim = ...})
    local me = tend.self()
    tend.spawn(tend.process { sim = function(p) me:send({ sim = p }) end })
    local got = tend.receive(1)
    methods.p = {}
    for k, v in pairs(got.sim) do methods.p[k] = v end
    tend.sleep(0) -- its program ends
  end
  for recv, t in pairs(methods) do
    for k, v in pairs(t) do
      if type(v) == "function" and not k:match("^__") then names[recv .. ":" .. k] = true end
    end
  end
  if repl then
    for k in pairs(require("tend.repl").helpers) do names[k] = true end
  end
  return names
end

-- Whether name's group of the reference is there (a name whose group's
-- file is not written yet is left out of the comparisons).
function M.present(name)
  local owner = doc.owner(name)
  return owner == nil or doc.present[owner] == true
end

return M
