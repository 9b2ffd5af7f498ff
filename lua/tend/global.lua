-- tend.global: names that every node sees (Erlang's global), kept in a
-- NATS JetStream key-value bucket (`tend_global`), so the server, not a
-- protocol of ours, decides who has a name: a register is a KV create, and
-- of two registrations of one name the first (older) one wins; the later
-- one is told (register returns false and the holder). Each entry is a
-- lease: the bucket forgets entries `lease` seconds after their last write
-- (MaxAge), and the node that holds a name writes it again every lease/3
-- seconds (/system/global), so the names of a node that died expire with
-- it. A name goes when its actor dies (the holder's node deletes it).
-- whereis caches what it read; a cached ref is dropped when its actor or
-- its node is gone (the proxy ends), and read again.
local core = require "tend.core"
local node = require "tend.node"

local M = {}

local BUCKET = "tend_global"
local function kv(...) return require("tend.nats").kv(...) end
local G -- { conn, lease, mine = {name -> {ref, rev}}, cache = {name -> ref}, actor }

local function fail(kind, msg)
  error(core.error(kind, msg), 3)
end

local function check_name(name, fn)
  if type(name) ~= "string" or not name:match("^[%w_%-]+$") then
    error(string.format("%s: name: expected letters, digits, '_' or '-', got %s", fn,
      type(name) == "string" and string.format("%q", name) or type(name)), 3)
  end
end

-- /system/global: rewrites this node's names every lease/3 seconds (an
-- entry it finds rewritten by another is lost: its actor is told), and
-- deletes the name of an actor that died.
local function keeper(ctx)
  ctx:every(G.lease / 3, "renew")
  return function(m, c)
    if m == "renew" then
      local names = {}
      for name in pairs(G.mine) do names[#names + 1] = name end
      table.sort(names)
      for _, name in ipairs(names) do
        local e = G.mine[name]
        local rev, why = kv("update", { bucket = BUCKET, key = name, value = e.value, revision = e.rev })
        if rev then
          e.rev = rev
        else
          G.mine[name] = nil
          core.log("warn", "global name %s lost (%s)", name, tostring(why))
          if core.alive(e.ref) then e.ref:send({ tend = "global_name_lost", name = name }) end
        end
      end
    elseif type(m) == "table" and m.tend == "global_watch" then
      c:watch(m.ref)
    elseif type(m) == "table" and m.tend == "terminated" then
      for name, e in pairs(G.mine) do
        if e.ref == m.ref then
          G.mine[name] = nil
          kv("delete", { bucket = BUCKET, key = name })
        end
      end
    end
  end
end

local function start()
  if G then return G end
  local nats = require "tend.nats"
  if not (node.running() and nats.conn) then
    fail("NodeError", "tend.global: this process is no node on NATS (start one with --node NAME --nats URL)")
  end
  G = { conn = nats.conn, lease = math.max(3, node.timeout() * 2), mine = {}, cache = {} }
  kv("bucket", { bucket = BUCKET, ttl = G.lease })
  G.actor = core.node_spawn(keeper, { name = "global" })
  return G
end

local function read(name)
  local value = kv("get", { bucket = BUCKET, key = name })
  if not value then return nil end
  local ok, e = pcall(core.codec_decode, value)
  if not ok or type(e) ~= "table" or not core.alive(e[1]) then return nil end
  return e[1]
end

-- tend.global.register(name, ref) -> true, or false and the holder's ref
-- when a live actor has the name (the older registration wins).
function M.register(name, ref)
  check_name(name, "tend.global.register")
  if not core.alive(ref) then
    error("tend.global.register: ref: expected a live actor's ref, got " .. tostring(ref), 2)
  end
  start()
  local value = core.codec_encode({ ref, node.name(), node.incarnation() })
  local rev = kv("create", { bucket = BUCKET, key = name, value = value })
  if not rev then
    local holder = read(name)
    if holder then return false, holder end
    -- the entry names a dead actor (its node was lost before the lease ran
    -- out): take it over where it stands
    local _, old = kv("get", { bucket = BUCKET, key = name })
    rev = old and kv("update", { bucket = BUCKET, key = name, value = value, revision = old })
    if not rev then return false, read(name) end
  end
  G.mine[name] = { ref = ref, rev = rev, value = value }
  G.cache[name] = ref
  G.actor:send({ tend = "global_watch", ref = ref })
  return true
end

-- tend.global.whereis(name) -> ref or nil.
function M.whereis(name)
  check_name(name, "tend.global.whereis")
  start()
  local r = G.cache[name]
  if r and core.alive(r) then return r end
  r = read(name)
  G.cache[name] = r
  return r
end

-- tend.global.unregister(name): only the node that holds a name drops it.
function M.unregister(name)
  check_name(name, "tend.global.unregister")
  start()
  G.cache[name] = nil
  if G.mine[name] then
    G.mine[name] = nil
    kv("delete", { bucket = BUCKET, key = name })
  end
end

-- tend.global.registered() -> sorted names with a live holder.
function M.registered()
  start()
  local out = {}
  for _, name in ipairs(kv("keys", { bucket = BUCKET })) do
    if read(name) then out[#out + 1] = name end
  end
  return out
end

return M
