-- tend.pool: a pool of identical workers behind one ref (Akka's pool
-- routers; OTP's simple_one_for_one with a dispatcher in front). The pool
-- is an actor that supervises `size` members with `strategy` and routes
-- every message it is sent to one of them (or to all: "broadcast"), the
-- sender kept, so a member's ctx:reply answers the asker; an ask's request
-- sent on to one member is held by that member (the runtime hands it over,
-- runtime/promise.h), so its failure fails the ask at once.
--
-- With spread = true the members are placed on every scheduler in turn
-- (member i on scheduler (i - 1) % n, --schedulers), each one away from the
-- pool's scheduler a child through a stand-in (lua/tend/away.lua): the
-- pool supervises them as any other, and routes a message straight to the
-- member there (not through its stand-in, which would forward only once
-- this scheduler got to it); smallest_mailbox sees the stand-ins'
-- mailboxes, not the members' own.
--
-- A library on the API (Lua): it only spawns, watches and forwards; it
-- keeps its members in a list of its own (a member restarted is the same
-- ref; one stopped for good leaves it), so that routing a message costs
-- the same with 10 members or 10^5 (smallest_mailbox reads the members'
-- mailboxes one by one and stops at the first empty idle one, as Akka's
-- does: linear in the worst case). Nothing in it must be enforced by the
-- runtime (the members' supervision is the C core's).
local tend = require "tend.core"
local internal = require "tend.internal"

local routings = { round_robin = true, random = true, smallest_mailbox = true,
  broadcast = true }
local keys = { size = true, factory = true, args = true, strategy = true,
  routing = true, name = true, under = true, spread = true }

local function bad(opt, expected, got)
  local shown = type(got) == "string" and ("%q"):format(got) or tostring(got)
  if type(got) == "table" or type(got) == "function" or type(got) == "userdata" then
    shown = "a " .. type(got)
  end
  error(("tend.pool: option '%s': expected %s, got %s"):format(opt, expected, shown), 4)
end

local function is_strategy(s)
  local mt = type(s) == "userdata" and getmetatable(s)
  return type(mt) == "table" and rawget(mt, "__name") == "tend.Strategy"
end

local function check(opts)
  if type(opts) ~= "table" then
    error("tend.pool: expected a table of options, got " .. type(opts), 3)
  end
  local unknown = internal.check_keys(opts, keys, "tend.pool")
  if unknown then error(unknown, 3) end
  local size = opts.size
  if math.type(size) ~= "integer" or size < 1 then
    bad("size", "an integer >= 1", size)
  end
  if opts.spread ~= nil and type(opts.spread) ~= "boolean" then
    bad("spread", "a boolean", opts.spread)
  end
  if opts.spread then
    if type(opts.factory) ~= "string" or not opts.factory:find(".", 2, true) then
      bad("factory", '"module.factory" (spread members are made on every scheduler, where a'
        .. ' closure cannot go)', opts.factory)
    end
  elseif type(opts.factory) ~= "function" then
    bad("factory", "a function (the members' factory)", opts.factory)
  end
  if opts.args ~= nil and type(opts.args) ~= "table" then
    bad("args", "a table (list)", opts.args)
  end
  if opts.strategy ~= nil and not is_strategy(opts.strategy) then
    bad("strategy", "a strategy (tend.one_for_one{...}, tend.all_for_one{...}, ...)",
      opts.strategy)
  end
  if opts.name ~= nil and type(opts.name) ~= "string" then
    bad("name", "a string", opts.name)
  end
  local routing = opts.routing or "round_robin"
  if not routings[routing] then
    bad("routing", '"round_robin", "random", "smallest_mailbox" or "broadcast"',
      routing)
  end
  return size, routing
end

-- The member to route to, by the routing rule; nil when none is left.
local pick = {}

function pick.round_robin(members, state)
  state.next = state.next % #members + 1
  return members[state.next]
end

function pick.random(members)
  return members[tend.random(#members)]
end

-- Akka's SmallestMailboxRoutingLogic: the fewest queued messages; among
-- equals, one that is not busy (in the middle of a message, restarting,
-- suspended), then the earliest started; an empty idle one ends the search.
local load = tend.mailbox_load
function pick.smallest_mailbox(members)
  local best, score
  for _, r in ipairs(members) do
    local s = load(r)
    if s == 0 then return r end
    if s and (score == nil or s < score) then best, score = r, s end
  end
  return best
end

local down = setmetatable({}, { __name = "tend.pool: a member stopped" })

local function pool(opts)
  local size, routing = check(opts)
  local factory, args, spread = opts.factory, opts.args, opts.spread
  local spawn_opts = { name = opts.name, children = opts.strategy }
  local route = pick[routing]
  -- spread: a member away is reached straight, not through its stand-in
  -- (which would forward only once this scheduler got to it)
  local via = spread and require("tend.away").target or function(m) return m end
  local function behavior(ctx)
    local state, members = { next = 0 }, {}
    local _, schedulers = tend.scheduler()
    for i = 1, size do -- spread: member i on scheduler (i - 1) % n
      members[i] = ctx:spawn(factory, { name = tostring(i), args = args,
        scheduler = spread and (i - 1) % schedulers or nil })
      ctx:watch(members[i], down)
    end
    -- the members still alive, in start order (after a death)
    local function prune()
      local kept = {}
      for _, r in ipairs(members) do
        if tend.alive(r) then kept[#kept + 1] = r end
      end
      members = kept
      if state.next > #members then state.next = 0 end
    end
    return function(msg, ctx)
      if msg == down then -- Akka: a pool whose members are all gone stops
        prune()
        if #members == 0 then return tend.stopped end
        return
      end
      if #members == 0 then return tend.unhandled end
      if routing == "broadcast" then
        for _, m in ipairs(members) do
          if tend.alive(m) then via(m):tell(msg, ctx.sender) end
        end
        return
      end
      local to = route(members, state)
      if to == nil or not tend.alive(to) then -- a death not yet told
        prune()
        if #members == 0 then return tend.unhandled end
        to = route(members, state)
      end
      via(to):tell(msg, ctx.sender)
    end
  end
  local ok, ref -- under /user, or as a child of `under` (tend.start_child)
  if opts.under == nil then
    ok, ref = pcall(tend.spawn, behavior, spawn_opts)
  else
    ok, ref = pcall(tend.start_child, opts.under, behavior, spawn_opts)
  end
  if not ok then -- a taken name, a host shutting down: said as tend.pool's
    error((tostring(ref):gsub("^tend%.spawn:", "tend.pool:")
      :gsub("^tend%.start_child: sup:", "tend.pool: option 'under':")
      :gsub("^tend%.start_child:", "tend.pool:")), 2)
  end
  return ref
end

return pool
