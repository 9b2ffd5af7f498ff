-- backoff_sender: the "BackOffSender" pattern. A sender forwards tracked
-- messages to a dangerous child and keeps those not yet acknowledged in a
-- bounded buffer (the oldest dropped beyond 5). When the child dies, the
-- sender waits a backoff delay, creates and watches a new child and sends the
-- buffer again; an acknowledgement resets the backoff. The resource fails at
-- random, from the seeded generator, so a seed replays the same run.
-- Run: tend --virtual-time --seed 3 examples/backoff_sender.lua
local tend = require "tend"

local BUFFER = 5

-- The dangerous child: fails on half the messages it handles.
local function dangerous()
  return function(msg, ctx)
    if tend.random() < 0.5 then
      tend.raise("ResourceError", "the resource failed on message " .. msg.id)
    end
    ctx:reply({ ack = msg.id })
  end
end

local stats = { sent = 0, acked = 0, dropped = 0, children = 0 }

local function sender(ctx, total)
  local buffer = {}       -- unacknowledged {id = ...} in order
  local child
  local delays = tend.backoff.delays({ min_backoff = 0.2, max_backoff = 5, random_factor = 0.2 }, 16)
  local attempt = 0       -- index into delays; reset on an acknowledgement
  local function new_child()
    child = ctx:spawn(dangerous, { restart = "temporary" })
    ctx:watch(child)
    stats.children = stats.children + 1
    for _, m in ipairs(buffer) do child:send(m) end -- resend, in order
  end
  new_child()
  for id = 1, total do ctx:after(id * 0.25, { send = id }) end
  return function(msg, ctx)
    if msg.send then
      local m = { id = msg.send }
      buffer[#buffer + 1] = m
      if #buffer > BUFFER then
        local old = table.remove(buffer, 1)
        stats.dropped = stats.dropped + 1
        print(string.format("%7.3f  buffer full: message %d dropped", tend.now(), old.id))
      end
      stats.sent = stats.sent + 1
      if tend.alive(child) then child:send(m) end
    elseif msg.ack then
      for i, m in ipairs(buffer) do
        if m.id == msg.ack then table.remove(buffer, i) break end
      end
      stats.acked = stats.acked + 1
      attempt = 0 -- the resource works: reset the backoff
    elseif msg.tend == "terminated" then
      attempt = math.min(attempt + 1, #delays)
      print(string.format("%7.3f  child died (%s); new one in %.3f s, %d waiting",
        tend.now(), msg.reason.kind, delays[attempt], #buffer))
      ctx:after(delays[attempt], "recreate")
    elseif msg == "recreate" then
      new_child()
    end
  end
end

local s = tend.spawn(sender, {
  name = "sender", args = { 30 },
  -- a failing child stops (quietly); the sender watches it
  children = tend.one_for_one { decider = { ["*"] = "stop" }, log = false },
})
tend.sleep(60)
print(string.format("sent %d, acknowledged %d, dropped %d, children %d (seed %d)",
  stats.sent, stats.acked, stats.dropped, stats.children, tend.seed()))
tend.stop(s)
