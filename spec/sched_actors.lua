-- Factories for spec/multi/schedulers_spec.lua: actors placed on other
-- schedulers are named as "sched_actors.<factory>" (their module is loaded
-- on that scheduler).
local tend = require "tend"
local M = {}

-- A counter from `start`: a number adds, "get" replies, "sender" sends the
-- sender its own ref as seen there, "quit" stops it.
function M.counter(ctx, start)
  local n = start or 0
  return function(msg, ctx)
    if msg == "get" then ctx:reply(n)
    elseif type(msg) == "table" and next(msg) == nil then error("boom")
    elseif msg == "sender" then tend.send(ctx.sender, { sender = ctx.sender })
    elseif msg == "quit" then return tend.stopped
    elseif type(msg) == "number" then n = n + msg
    end
  end
end

-- Sends `to` the integers 1, 2, ... every `every` seconds (ctx:every sends
-- the message "tick" to itself).
function M.ticker(ctx, to, every)
  local n = 0
  ctx:every(every, "tick")
  return function(msg)
    if msg == "tick" then
      n = n + 1
      tend.send(to, n)
    end
  end
end

-- Asks `target` for "get" when told "go" and replies with the answer.
function M.asker(ctx, target)
  return function(msg, ctx)
    if msg == "go" then ctx:reply(tend.ask(target, "get")) end
  end
end

-- Replies with the ref it is given, sent back (it travels twice).
function M.mirror(ctx)
  return function(msg, ctx) tend.send(msg.to, { ref = msg.ref, me = ctx.self }) end
end

-- A counter (as counter) that registers itself as `name`; "ready" replies
-- true.
function M.registrar(ctx, name)
  tend.register(name, ctx.self)
  local inner = M.counter(ctx, 0)
  return function(msg, ctx)
    if msg == "ready" then ctx:reply(true) return end
    return inner(msg, ctx)
  end
end

-- A supervised worker for spec/multi/sched_supervision_spec.lua: tells
-- `log` {"start", id, scheduler} when it starts and {"stop", id} in its
-- post_stop; "fail" raises a tend.error of kind Bad, "crash" a plain
-- error; "get" answers its count of numbers received (fresh after a
-- restart).
function M.worker(ctx, log, id)
  tend.send(log, { "start", id, (tend.scheduler()) })
  local n = 0
  return {
    receive = function(_, msg, ctx)
      if msg == "fail" then error(tend.error("Bad", "asked to fail " .. id), 0)
      elseif msg == "crash" then error("crashed " .. id)
      elseif msg == "get" then ctx:reply(n)
      elseif type(msg) == "number" then n = n + msg
      end
    end,
    post_stop = function() tend.send(log, { "stop", id }) end,
  }
end

-- Joins `group` (tend.pg); tells `to` {scheduler, msg} of every message.
function M.joiner(ctx, group, to)
  tend.pg.join(group, ctx.self)
  return function(msg)
    if msg == "leave" then tend.pg.leave(group, ctx.self)
    elseif msg == "quit" then return tend.stopped
    else tend.send(to, { (tend.scheduler()), msg }) end
  end
end

return M
