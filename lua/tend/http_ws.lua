-- WebSocket connections of tend.http.serve (src/runtime/io/http/ws.c, on
-- H2O's websocket support): the connection actor's factory, and its ctx
-- methods ctx:ws_send and ctx:ws_close.
--
-- A connection is an actor built by the user's factory(ctx, req); it gets
-- { tend = "ws", data, binary } per message and { tend = "closed", code,
-- reason } once at the end. Writes are back-pressured as tend.tcp's:
-- while more than 1 MiB is queued the writer waits until the socket has
-- taken it down to 256 KiB.
local core = require "tend.core"

local M = {}

local HIGH, LOW = 1 << 20, 256 << 10

local conns = setmetatable({}, { __mode = "k" }) -- actor ref -> { S, wid }

-- The connection actor's factory; conn.wid is set by the server right
-- after the spawn, before the actor gets any message.
function M.connection(factory, req, conn)
  return function(ctx)
    conns[ctx.self] = conn
    return factory(ctx, req)
  end
end

local function conn_of(ctx, fn)
  local c = conns[ctx.self]
  if c == nil then
    error(string.format("%s: %s is not a WebSocket connection", fn, ctx.self:path()), 3)
  end
  return c
end

core.tcp_ctx_methods({
  -- ctx:ws_send(data [, binary]) -> true, or false, "closed"
  ws_send = function(ctx, data, binary)
    if type(data) ~= "string" then
      error("ctx:ws_send: data: expected a string, got " .. type(data), 2)
    end
    local c = conn_of(ctx, "ctx:ws_send")
    if c.wid == nil then return false, "closed" end
    local q = c.S:ws_send(c.wid, data, binary == true)
    while q and q > LOW and (q > HIGH or c.waiting) do -- wait for the socket
      c.waiting = true
      core.sleep(0.005)
      q = c.S:ws_queued(c.wid)
    end
    c.waiting = nil
    if q == false then return false, "closed" end
    return true
  end,
  -- ctx:ws_close([code]): a close frame (code 1000 unless given) after
  -- what is queued; the actor gets { tend = "closed" } once the peer
  -- answered, then stops.
  ws_close = function(ctx, code)
    if code ~= nil and (math.type(code) ~= "integer" or code < 1000 or code > 4999) then
      error("ctx:ws_close: code: expected an integer 1000-4999, got " .. tostring(code), 2)
    end
    local c = conn_of(ctx, "ctx:ws_close")
    if c.wid == nil then return end
    -- wslay sends a control frame before the data queued: let the data go
    -- first (at most 30 s: a client that never reads is closed anyway)
    local deadline = core.now() + 30
    while (c.S:ws_queued(c.wid) or 0) > 0 and core.now() < deadline do core.sleep(0.005) end
    c.S:ws_close(c.wid, code or 1000)
  end,
})

return M
