-- The actors of examples/nodes/kv.lua: a module, so that tend.spawn_on
-- can load them on another node (require "examples.nodes.kv_store").
local tend = require "tend"
local M = {}

-- A key-value store: {op = "put", key, value} and {op = "get", key},
-- answered with ctx:reply (to the asker, on whatever node it is).
function M.store()
  local data = {}
  return function(m, ctx)
    if m.op == "put" then
      data[m.key] = m.value
      ctx:reply(true)
    elseif m.op == "get" then
      ctx:reply(data[m.key])
    end
  end
end

-- A client: args {store, report}. It watches the store, writes its own
-- key, reads it back, and tells `report`; when the store's node is lost,
-- its watch says so and it tells `report` that too.
function M.client(ctx, store, report)
  ctx:watch(store)
  local me = tend.node.name()
  tend.ask(store, { op = "put", key = me, value = "hello from " .. me })
  report:send({ node = me, read = tend.ask(store, { op = "get", key = me }) })
  return function(m)
    if m.tend == "terminated" and m.ref == store then
      report:send({ node = me, lost = m.reason })
    end
  end
end

return M
