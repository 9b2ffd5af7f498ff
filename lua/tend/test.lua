-- tend.test: `tend test [PATH...]` runs luaunit specs inside the host.
-- Each path is a spec file or a directory whose *_spec.lua files are run.
-- Specs define global Test* tables, as luaunit expects; they run in the
-- actor /user/main, so they can ask, sleep and spawn.
local tend = require "tend"
local internal = require "tend.internal"

local M = {}

local function spec_files(paths)
  local files = {}
  for _, path in ipairs(paths) do
    if internal.is_dir(path) then
      local names = assert(internal.list_dir(path))
      for _, name in ipairs(names) do
        if name:match("_spec%.lua$") then files[#files + 1] = path .. "/" .. name end
      end
    else
      files[#files + 1] = path
    end
  end
  return files
end

-- Under the virtual clock each test starts on a whole second, so that the
-- durations it measures with tend.now() subtract exactly, whatever the
-- tests before it in the same process left the clock at.
local function on_a_whole_second()
  local ns = internal.now_ns() % 1000000000
  if ns ~= 0 and tend.virtual_time() then tend.sleep((1000000000 - ns) / 1e9) end
end

-- Each Test* class's setUp begins with it.
local function align_tests()
  for name, class in pairs(_G) do
    if type(name) == "string" and name:match("^Test") and type(class) == "table" then
      local own = class.setUp
      class.setUp = function(self)
        on_a_whole_second()
        if own then return own(self) end
      end
    end
  end
end

function M.run(...)
  local paths = { ... }
  if #paths == 0 then
    local f = io.open("spec")
    if f == nil then -- the default, absent here
      io.stderr:write("tend test: no spec/ directory here (the default); give spec files or "
        .. "directories: tend test PATH...\n")
      tend.shutdown(1)
      return
    end
    f:close()
    paths = { "spec" }
  end
  -- a runner stopped before its summary (its actor killed, the host
  -- ending under it) fails the run, whatever ended it
  internal.exit_code(1)
  local files = spec_files(paths)
  if #files == 0 then
    io.stderr:write("tend test: no *_spec.lua files in " .. table.concat(paths, " ") .. "\n")
    tend.shutdown(1)
  end
  package.path = "./spec/?.lua;" .. package.path
  for _, file in ipairs(files) do
    local chunk, err = loadfile(file)
    if not chunk then
      io.stderr:write("tend test: " .. err .. "\n")
      tend.shutdown(1)
    end
    chunk()
  end
  align_tests()
  local lu = require "luaunit"
  local runner = lu.LuaUnit.new()
  runner:runSuite("--output", "text")
  local r = runner.result
  local failed = r.notSuccessCount
  print(string.format("tend test: %d passed, %d failed", r.runCount - failed, failed))
  tend.shutdown(failed > 0 and 1 or 0)
end

return M
