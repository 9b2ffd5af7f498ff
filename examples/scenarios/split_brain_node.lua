-- A node of the split_brain scenario: its candidate claims the global
-- name "leader" when nobody holds it, follows (watches) the holder when
-- somebody does, and claims again when the holder is gone. It says each
-- change in one line.
local tend = require "tend"
local me = tend.node.name()

local function say(fmt, ...) print(string.format("%6.2f %s: " .. fmt, tend.now(), me, ...)) end

local function candidate(ctx)
  local leader, said
  ctx:every(1, "tick")
  return function(msg, ctx)
    if msg == "tick" and leader == nil then
      local ok, holder = tend.global.register("leader", ctx.self)
      if ok then
        leader = ctx.self
        say("I lead")
      else -- the older registration wins; this one is told who holds it
        if said ~= tostring(holder) then say("lost the claim: %s leads", tostring(holder)) end
        said = tostring(holder)
        if tend.alive(holder) then -- (else: its node is down for us; try again)
          leader = holder
          ctx:watch(holder)
        end
      end
    elseif type(msg) == "table" and msg.tend == "terminated" and msg.ref == leader then
      if said ~= "gone" then say("the leader is gone (%s)", tostring(msg.reason)) end
      said, leader = "gone", nil
    end
  end
end

tend.spawn(candidate, { name = "candidate" })
