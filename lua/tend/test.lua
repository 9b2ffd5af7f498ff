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

function M.run(...)
  local paths = { ... }
  if #paths == 0 then paths = { "spec" } end
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
  local lu = require "luaunit"
  local runner = lu.LuaUnit.new()
  runner:runSuite("--output", "text")
  local r = runner.result
  local failed = r.notSuccessCount
  print(string.format("tend test: %d passed, %d failed", r.runCount - failed, failed))
  tend.shutdown(failed > 0 and 1 or 0)
end

return M
