-- The examples of the reference's entries (lua/tend/doc/<group>.lua) run
-- as written: each is a whole program, run as its own tend process with
-- the flags its first line gives ("-- run: tend --virtual-time ..."; none
-- without that line). An example passes when it exits 0, writes no
-- traceback (an error in a simulated node's script or a task ends with
-- status 0 but prints one), and prints something when it says what it
-- prints (a "-->" comment). Used by spec/doc_entry_examples_spec.lua (the
-- virtual-clock examples) and spec/realtime/doc_entry_examples_spec.lua
-- (the others: real processes, a nats-server).
local H = require "helper"

local M = {}

-- The groups whose examples are whole programs.
M.groups = { scenario = true, process = true, net = true, nodes = true, streams = true }

-- The flags of an example (a list), from its first line.
function M.flags(example)
  local line = example:match("^%-%- run: tend([^\n]*)")
  local flags = {}
  for w in (line or ""):gmatch("%S+") do flags[#flags + 1] = w end
  return flags
end

-- Runs one example; returns nil when it passes, else why not.
function M.check(example, seconds)
  local path = H.script(example .. "\n")
  local args = M.flags(example)
  args[#args + 1] = path
  local out, code = H.run_bounded(seconds or 30, args)
  os.remove(path)
  if code ~= 0 then return "exit status " .. tostring(code) .. ":\n" .. out end
  if out:find("stack traceback", 1, true) then return "a traceback:\n" .. out end
  if example:find("%-%->") and not out:find("%S") then return "it printed nothing" end
  return nil
end

-- Adds a test per entry of M.groups whose example wants(flags) to the
-- luaunit class `class`.
function M.define(class, wants)
  local doc = require "tend.doc"
  for _, e in ipairs(doc.entries) do
    if M.groups[e.group] and e.example ~= "" and wants(M.flags(e.example)) then
      class["test_" .. e.name:gsub("[^%w]", "_")] = function()
        local why = M.check(e.example)
        if why then error(e.name .. ": its example failed: " .. why, 0) end
      end
    end
  end
end

-- Whether the flags run the virtual clock.
function M.virtual(flags)
  for _, f in ipairs(flags) do
    if f == "--virtual-time" then return true end
  end
  return false
end

return M
