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
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local node = require "tend.node"

local M = {}

local BUCKET = "tend_global"
local function kv(...) return node.kv(...) end
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
  if not node.has_kv() then
    fail(K.NodeError, "tend.global: this process is no node on NATS (start one with --node NAME --nats URL)")
  end
  G = { lease = math.max(3, node.timeout() * 2), mine = {}, cache = {} }
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
-- when a live actor has the name (the older registration wins). A name
-- whose holder this node sees dead is taken over once its lease is not
-- renewed for lease/2 s (the call waits that long).
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
    if holder then
      core.node_event("/global/" .. name, "claim lost to " .. tostring(holder))
      return false, holder
    end
    -- the entry names an actor this node sees dead: its node is down for
    -- us. That node may be alive behind a partition and still renew its
    -- lease (every lease/3 s), so the entry is taken over only when
    -- nobody wrote it for lease/2 s: while its holder renews it, the older
    -- registration wins (no second holder rises on the other side).
    local _, seen = kv("get", { bucket = BUCKET, key = name })
    if seen then core.sleep(G.lease / 2) end
    local now_value, now_rev = kv("get", { bucket = BUCKET, key = name })
    if not now_value then
      rev = kv("create", { bucket = BUCKET, key = name, value = value })
    elseif now_rev == seen then
      rev = kv("update", { bucket = BUCKET, key = name, value = value, revision = seen })
    end
    if not rev then
      local ok, e = pcall(core.codec_decode, now_value or "")
      holder = read(name) or (ok and type(e) == "table" and e[1]) or nil
      core.node_event("/global/" .. name, "claim lost to " .. tostring(holder))
      return false, holder
    end
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

-- This node leaves (tend.sim.stop, for the world's node): the keeper
-- stops; names held here expire with their leases.
function M.stop()
  if not G then return end
  local a = G.actor
  G = nil
  if a and core.alive(a) then core.stop(a) end
end

return M
