-- Binding in the caller, shared by tend.tcp.listen and tend.http.serve:
-- the listening actor is spawned first (a child of the caller), then the
-- caller binds its socket, so a taken port raises ListenError where the
-- call was made and leaves no actor behind. The socket is handed over to
-- the actor's first start; every other start (a restart, each start of a
-- factory made by tend.tcp.server or tend.http.server) binds again on the
-- port the first one got.
local core = require "tend.core"

local M = {}

-- In a factory's start: the socket of this incarnation. handoff is the
-- table of M.listen for the first start, nil for every other (then it
-- binds here, bind(spec, self)). Returns sock() -> the socket, and
-- close() for post_stop (a socket handed over later is closed by the
-- caller: the start can run before the caller has bound).
function M.take(handoff, bind, spec, self)
  local own
  if handoff == nil then
    own = bind(spec, self)
    spec.port = own:port()
  end
  local function sock() return own or handoff.sock end
  local function close()
    if own then own:close() return end
    handoff.stopped = true
    if handoff.sock then handoff.sock:close() end
  end
  return sock, close
end

-- Spawns make(handoff)'s actor as a child of the caller (fn names the
-- call in errors), binds with bind(spec, ref) and hands the socket over;
-- a failure stops the actor and raises the error (ListenError) at the
-- caller of fn. Returns the ref.
function M.listen(make, bind, spec, spawn_opts, fn)
  local handoff = {}
  local ref = core.tcp_spawn(make(handoff), spawn_opts, fn)
  local ok, sock = pcall(bind, spec, ref)
  if not ok then
    core.stop(ref)
    if type(sock) == "table" then sock.where = nil end
    error(sock, 3)
  end
  spec.port = sock:port() -- where a restart listens again
  handoff.sock = sock
  if handoff.stopped then sock:close() end
  return ref
end

return M
