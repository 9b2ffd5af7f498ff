-- tend.away: a child on another scheduler. ctx:spawn("module.factory",
-- { scheduler = k }) (or tend.start_child, a supervise spec) under any
-- actor but /user makes a stand-in here: an actor of its parent's
-- scheduler, its parent's child as any other (the strategy, its decider,
-- the limits, backoff and the stop order apply to it unchanged), which
--   * spawns the real actor on scheduler k, under /user there, temporary
--     (its scheduler never restarts it: the stand-in's supervisor decides),
--     named after the stand-in's path ("/user/sup/w" -> "sup.w",
--     "/user/$3/w" -> "_$3.w");
--   * adopts the real actor's proxy as its own child, so that its stop and
--     its restart wait for the real actor's end (a stop from above reaches
--     the real actor, and the next sibling is stopped only after it died);
--   * forwards every message to it, the sender kept (a reply goes straight
--     to the asker);
--   * fails with the real actor's error when it fails (the decider sees
--     the error value as it travelled), stops when it stops.
-- Messages handed to the real actor before it failed are lost with it
-- (dead letters): a restart here starts a new real actor with an empty
-- mailbox. A resume cannot keep the state of an actor that lived on
-- another scheduler: the stand-in starts a new one (fresh state).
local tend = require "tend.core"
local internal = require "tend.internal"

local M = {}

-- The real actor of each stand-in of this scheduler (weak keys: a
-- stand-in gone is forgotten), for routers that skip the hop (tend.pool).
local current = setmetatable({}, { __mode = "k" })

-- The real actor of the stand-in ref while it lives, else ref itself.
function M.target(ref)
  local real = current[ref]
  if real ~= nil and tend.alive(real) then return real end
  return ref
end

local down = setmetatable({}, { __name = "tend.away: the real actor ended" })

-- The reason a real actor failed with, as its supervisor here sees it: an
-- error value travels as a plain table (the codec leaves metatables
-- behind), so a tend.Error is made again with its kind, message, data
-- and traceback.
local function as_error(r)
  if type(r) ~= "table" or getmetatable(r) ~= nil or type(r.kind) ~= "string" then
    return r
  end
  local e = tend.error(r.kind, r.message, r.data)
  e.traceback = r.traceback
  return e
end

local function start(ctx, k, spec, args)
  local name = ctx.self:path():gsub("^/user/", ""):gsub("/", "."):gsub("^%$", "_$")
  local real = tend.spawn(spec, { scheduler = k, args = args, name = name,
    restart = "temporary" })
  internal.adopt(real)
  ctx:watch(real)
  current[ctx.self] = real
  return real
end

-- The stand-in's factory: (ctx, k, "module.factory", args).
function M.standin(ctx, k, spec, args)
  local real = start(ctx, k, spec, args)
  return function(msg, ctx)
    if type(msg) == "table" and msg.tend == "terminated" and msg.ref == real then
      if msg.reason == "normal" or msg.reason == "shutdown" or msg.reason == "stopped" then
        return tend.stopped
      end
      error(as_error(msg.reason), 0) -- its error, for this supervisor to decide
    end
    if not tend.alive(real) then real = start(ctx, k, spec, args) end -- resumed
    real:tell(msg, ctx.sender)
  end
end

return M
