-- The simulated program's methods (the `p` of tend.process{ sim =
-- function(p) ... end }) and the reference's entries of class
-- tend.SimProcess name the same functions. A walk of the live modules
-- cannot reach p (it exists only inside a sim function): this spec makes
-- one and compares, both ways.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local doc = require "tend.doc"

if not tend.virtual_time() then return end

TestDocSimProcess = {}

function TestDocSimProcess:test_every_method_has_an_entry_and_every_entry_a_method()
  local me = tend.self()
  tend.spawn(tend.process { sim = function(p) me:send({ sim = p }) end })
  local p = tend.receive(1).sim
  local live, documented = {}, {}
  for k, v in pairs(p) do
    if type(v) == "function" then live[#live + 1] = "p:" .. k end
  end
  for _, e in ipairs(doc.entries) do
    if e.class == "tend.SimProcess" then documented[#documented + 1] = e.name end
  end
  table.sort(live)
  table.sort(documented)
  lu.assertEquals(documented, live)
  H.settle()
end
