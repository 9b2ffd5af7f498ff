-- The actors of bench/nodes.lua, a module so that tend.spawn_on can load
-- them on the other node (require "bench.nodes_actors").
local M = {}

-- Answers each message with itself (ctx:reply: to the sender, on its node).
function M.pong()
  return function(m, ctx) ctx:reply(m) end
end

-- A ring member: first {next = ref, main = ref}, then tokens: a token n
-- goes on as n - 1 to the next member; 0 ends its journey at main. "sync"
-- is answered (the setup before it is done).
function M.relay()
  local next, main
  return function(m, ctx)
    if type(m) == "table" then
      next, main = m.next, m.main
    elseif m == "sync" then
      ctx:reply(true)
    elseif m == 0 then
      main:send("done")
    else
      next:send(m - 1)
    end
  end
end

-- The end of a one-way stream: counts the messages before {main = ref}
-- and sends main the count then (one sender's messages arrive in order).
function M.sink()
  local count = 0
  return function(m)
    if type(m) == "table" then
      m.main:send(count)
      count = 0
    else
      count = count + 1
    end
  end
end

return M
