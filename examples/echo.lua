-- echo: an actor that answers every message with the same message.
-- The main chunk asks it once per argument and prints the replies.
-- Run: tend examples/echo.lua one two three
local tend = require "tend"

local function echo()
  return function(msg, ctx)
    ctx:reply(msg)
  end
end

local e = tend.spawn(echo, { name = "echo" })
local words = { ... }
if #words == 0 then words = { "hello" } end
local replies = {}
for i, w in ipairs(words) do replies[i] = tend.ask(e, w, 1.0) end
print(string.format("echo: %d replies, in order: %s", #replies, table.concat(replies, " ")))
tend.stop(e)
