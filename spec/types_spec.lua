-- types/tend.lua (the lua-language-server annotations, made by
-- scripts/gen-docs.lua) loads in an empty sandbox and declares exactly the
-- live API: every function, value and method of tend, none that is gone.
local lu = require "luaunit"
local H = require "helper"
local names = require "api_names"

TestTypes = {}

function TestTypes:tearDown() H.assert_clean() end

local MODULES = { backoff = true, pg = true, testkit = true, process = true, tcp = true, http = true,
  node = true, chaos = true, simnet = true, global = true, sim = true, stream = true }

local function read(path)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  return text
end

-- The names types/tend.lua declares, as api_names spells them.
local function declared()
  local text = read("types/tend.lua")
  local fn = assert(load(text, "=types/tend.lua", "t", {})) -- no globals: it only declares
  local tend, classes = fn()
  local out = {}
  for k, v in pairs(tend) do
    if MODULES[k] and type(v) == "table" then
      for f, g in pairs(v) do
        if type(g) == "function" then out["tend." .. k .. "." .. f] = true end
      end
    else
      out["tend." .. k] = true
    end
  end
  for m in text:gmatch("\n%-%-%-@overload [^\n]*\n(tend%.[%w_]+) = {}") do out[m] = true end
  local recv = {}
  for r, class in pairs(require("tend.doc").receivers) do recv[class] = r end
  for class, t in pairs(classes) do
    for m in pairs(t) do out[(recv[class] or class) .. ":" .. m] = true end
  end
  return out
end

local function sorted(set)
  local list = {}
  for k in pairs(set) do list[#list + 1] = k end
  table.sort(list)
  return list
end

function TestTypes:test_types_declare_every_live_name()
  local have, missing = declared(), {}
  for name in pairs(names.live(false)) do
    if names.present(name) and not have[name] then missing[name] = true end
  end
  lu.assertEquals(sorted(missing), {}, "live names types/tend.lua lacks (make docs)")
end

function TestTypes:test_types_declare_nothing_that_is_gone()
  local live, extra = names.live(false), {}
  for name in pairs(declared()) do
    if not live[name] then extra[name] = true end
  end
  lu.assertEquals(sorted(extra), {}, "names types/tend.lua declares that tend lacks (make docs)")
end

function TestTypes:test_every_class_a_type_names_is_declared()
  local text = read("types/tend.lua")
  local classes = {}
  for c in text:gmatch("%-%-%-@class ([%w_.]+)") do classes[c] = true end
  for c in text:gmatch("%-%-%-@alias ([%w_.]+)") do classes[c] = true end
  local unknown = {}
  for line in text:gmatch("%-%-%-@[^\n]+") do
    for c in line:gmatch("(tend%.[%u][%w_]*)") do
      if not classes[c] then unknown[c] = true end
    end
  end
  lu.assertEquals(sorted(unknown), {})
end
