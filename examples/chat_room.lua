-- chat_room: a chat room on a process group. Each user joins the group
-- "lobby" (tend.pg) and says things with tend.pg.send; a user still
-- connecting stashes what it hears (ctx:stash) and reads it once
-- connected (ctx:unstash_all); a moderator watches every user (DeathWatch)
-- and tells the room who left; a user that hears nothing for 10 s leaves
-- (ctx:set_receive_timeout). A user who dies leaves the group by itself.
-- Run: tend --virtual-time examples/chat_room.lua
local tend = require "tend"

local heard = {}

local function user(ctx, name, connect_time)
  heard[name] = {}
  tend.pg.join("lobby", ctx.self)
  ctx:after(connect_time, "connected")
  local connected = false
  return function(msg, ctx)
    if msg == "connected" then
      connected = true
      ctx:unstash_all()
      ctx:set_receive_timeout(10, "quiet")
    elseif not connected then
      ctx:stash()
    elseif msg == "quiet" then
      return tend.stopped -- nothing for 10 s: leave
    elseif msg.say then
      tend.pg.send("lobby", { from = name, text = msg.say })
    elseif msg.from ~= name then
      table.insert(heard[name], msg.from .. ": " .. msg.text)
    end
  end
end

local moderator = tend.spawn(function(ctx)
  return function(msg, ctx)
    if msg.watch then
      ctx:watch(msg.watch, { left = msg.name })
    elseif msg.left then
      tend.pg.send("lobby", { from = "moderator", text = msg.left .. " left" })
    end
  end
end, { name = "moderator" })

local users = {}
for i, name in ipairs { "alice", "bob", "carol" } do
  users[name] = tend.spawn(user, { name = name, args = { name, 0.5 * i }, stash = 100 })
  moderator:send({ watch = users[name], name = name })
end

users.alice:send({ say = "hello" })  -- bob and carol are still connecting
tend.sleep(2)
users.bob:send({ say = "hi alice" })
tend.sleep(1)
tend.stop(users.bob)
tend.sleep(1)
print(("lobby at %g s: %d members"):format(tend.now(), #tend.pg.members("lobby")))
users.carol:send({ say = "bye bob" })
while #tend.pg.members("lobby") > 0 do tend.sleep(1) end
for _, name in ipairs { "alice", "bob", "carol" } do
  print(name .. " heard: " .. table.concat(heard[name], " | "))
end
print(("chat_room: the room was quiet for 10 s; everyone had left by %g s"):format(tend.now()))
tend.stop(moderator)
