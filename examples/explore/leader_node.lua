-- A node of examples/explore/leader.lua: its candidate claims the global
-- name "leader" (tend.global: a lease in the store, renewed by its node);
-- the node that holds it runs /user/duty, the work only a leader may do.
-- The bug (a cache a person would write): when the leader it follows is
-- gone (its node looks down), a candidate does not ask the store again;
-- the first of the nodes it sees up takes over on its own word. Behind a
-- partition the old leader is not gone: two nodes then run /user/duty.
-- With "fixed" as its argument it claims through the store again, and
-- steps down when its node loses the name.
local tend = require "tend"
local fixed = ... == "fixed"
local me = tend.node.name()

local function candidate(ctx)
  local leader, duty -- the ref it follows (ctx.self when it leads), its duty
  ctx:every(1, "tick")
  local function lead(c)
    leader = c.self
    duty = duty or tend.spawn(function() return function() end end, { name = "duty" })
  end
  local function step_down()
    if duty then tend.stop(duty) end
    duty, leader = nil, nil
  end
  return function(msg, c)
    if msg == "tick" and leader == nil then
      local ok, holder = tend.global.register("leader", c.self)
      if ok then
        lead(c)
      elseif tend.alive(holder) then
        leader = holder
        c:watch(holder)
      end
    elseif type(msg) == "table" and msg.tend == "terminated" and msg.ref == leader then
      leader = nil
      if not fixed then -- the bug: the first node up leads, the store unasked
        local up = tend.node.list()
        up[#up + 1] = me
        table.sort(up)
        if up[1] == me then lead(c) end
      end
    elseif type(msg) == "table" and msg.tend == "global_name_lost" and fixed then
      step_down()
    end
  end
end

tend.spawn(candidate, { name = "candidate" })
