-- tend.pg: process groups (OTP's pg): any actor can join a group, a
-- message to the group goes to every member, and a member that dies
-- leaves. Groups span nodes as OTP 23's pg scope does.
--
-- On one host, a library on the API (Lua): a group is a table whose weak
-- keys are this node's members' refs (a live actor's canonical ref, kept
-- by the actor itself), with their join numbers for the order. A member
-- that died is dropped at the next operation on its group, so members()
-- and send() never see one, and its ref goes with the garbage once nothing
-- else holds it: groups of dead actors hold nothing. Joining twice is one
-- membership (OTP counts joins; tend keeps a set).
--
-- Across nodes (while this process is a node; lua/tend/node.lua carries
-- the frames and says when a node goes up or down): each node knows its
-- own members and learns the others'. A join or leave here is announced
-- to every node up; when a node comes up, both send each other all their
-- own members (a sync, which replaces what the other knew of them); when
-- a node goes down, all its members go at once. /system/pg watches this
-- node's members, so that a death is announced as a leave even when no
-- one here touches the group. A group spans nodes when it is a string, a
-- number or a boolean (values that compare equal on every node); any
-- other group stays on its node. Only a node's own actors join there (as
-- OTP: pg:join takes local pids).
--
-- Monitors (OTP's pg:monitor): an actor is told of each join and leave of
-- a group, here and on the nodes up; /system/pg then also runs without
-- nodes (to see deaths at once) and watches the monitoring actors.
local tend = require "tend.core"
local node = require "tend.node"

local M = {}
local groups = {} -- group -> { [ref] = join number } (weak keys): this node's
local joins = 0   -- join numbers so far
-- group -> its join order: { refs = {ref, ...} (weak values), seqs = {join
-- number, ...}, top = last slot, n = members at most }. Slot i holds a
-- member while set[refs[i]] == seqs[i]; a leave or death leaves a hole,
-- and the list is compacted when the holes outnumber the members, so a
-- read walks the members in join order without sorting them.
local lists = {}

-- What this node knows of the others, while it is one.
local up = {}      -- node -> its incarnation, for each node up (told by tend.node)
local remote = {}  -- node -> { inc, seq, groups = { group -> { [key] = {seq, proxy} } } }
local keeper       -- /system/pg, or nil
local watched = setmetatable({}, { __mode = "k" }) -- refs keeper watches
local monitors = {} -- group -> { [actor ref] = true }: told of its changes

local CHUNK = 500 -- members per frame of a sync (a frame stays far below 1 MiB)

local function check_group(fn, group)
  if group == nil or group ~= group then
    error(("tend.pg.%s: group: expected a value other than nil or NaN, got %s")
      :format(fn, tostring(group)), 3)
  end
end

local function spans(group)
  local t = type(group)
  return t == "string" or t == "number" or t == "boolean"
end

-- Across the schedulers of this process (--schedulers): a group that spans
-- nodes spans schedulers too. Each scheduler's members are written to the
-- shared list of the C core (runtime/nodes/schedgroups.c) under the
-- group's key; members() and send() read the others' from it (an actor's
-- entries go when it dies). Monitors see their own scheduler's changes.
local function several() return select(2, tend.scheduler()) > 1 end

local function key_of(group)
  local t = type(group)
  if t == "number" then
    local n = math.tointeger(group)
    return n and ("n:" .. n) or ("n:" .. string.format("%.17g", group))
  end
  return t:sub(1, 1) .. ":" .. tostring(group)
end

-- ------------------------------------------------------------ announcing

local function by_name(list)
  table.sort(list, function(a, b) return tostring(a) < tostring(b) end)
  return list
end

-- {tend = "pg_join" | "pg_leave", group, refs} to group's monitors.
local function notify(group, what, refs)
  local m = monitors[group]
  if m == nil or #refs == 0 then return end
  local list = {}
  for r in pairs(m) do list[#list + 1] = r end
  for _, r in ipairs(by_name(list)) do
    if tend.alive(r) then
      r:send({ tend = "pg_" .. what, group = group, refs = { table.unpack(refs) } })
    else
      m[r] = nil
    end
  end
  if next(m) == nil then monitors[group] = nil end
end

local function sorted_up()
  local list = {}
  for name in pairs(up) do list[#list + 1] = name end
  table.sort(list)
  return list
end

-- {op, entries}: entries {{group, {ref, ...}}, ...}, to every node up.
local function announce(op, entries)
  if #entries == 0 or not node.running() then return end
  node.pg_send(sorted_up(), { op, entries })
end

-- Drops this node's member r of group (it left or died); a group that
-- spans nodes says so to the others.
-- A group whose set is empty goes, with its join order.
local function forget_if_empty(group, set)
  if next(set) == nil then
    groups[group], lists[group] = nil, nil
  else
    local l = lists[group]
    l.n = l.n - 1
  end
end

-- Rewrites group's join order without its holes (its set kept).
local function compact(group, set)
  local l = lists[group]
  local refs, seqs, k = setmetatable({}, { __mode = "v" }), {}, 0
  for i = 1, l.top do
    local r = l.refs[i]
    if r ~= nil and set[r] == l.seqs[i] then
      k = k + 1
      refs[k], seqs[k] = r, l.seqs[i]
    end
  end
  l.refs, l.seqs, l.top, l.n = refs, seqs, k, k
end

local function drop(group, r)
  local set = groups[group]
  if set == nil or set[r] == nil then return end
  set[r] = nil
  forget_if_empty(group, set)
  notify(group, "leave", { r })
  if spans(group) then announce("leave", { { group, { r } } }) end
end

-- The live local members of group in join order (a new list), the dead
-- ones dropped; nil when none is left (the group goes).
local function live(group)
  local set = groups[group]
  if set == nil then return nil end
  local l = lists[group]
  local refs, seqs, list, dead = l.refs, l.seqs, {}, nil
  for i = 1, l.top do
    local r = refs[i]
    if r ~= nil and set[r] == seqs[i] then
      if tend.alive(r) then
        list[#list + 1] = r
      else
        dead = dead or {}
        dead[#dead + 1] = r
      end
    end
  end
  if dead then
    for _, r in ipairs(dead) do drop(group, r) end
  end
  if #list == 0 then return nil end
  if l.top > 2 * #list + 16 then compact(group, set) end
  return list
end

local function order_groups(list)
  table.sort(list, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then
      return a < b
    end
    return tostring(a) < tostring(b)
  end)
  return list
end

-- /system/pg runs while this process is a node or a group has a monitor.
local function needed() return node.running() or next(monitors) ~= nil end

-- /system/pg: watches this node's members and the monitoring actors; a
-- member's death is a leave of all its groups, announced in one frame; a
-- monitor's death ends its monitors. It stops when it is not needed.
local function keeper_actor()
  return function(m, c)
    if type(m) ~= "table" then return end
    if m.tend == "pg_watch" then
      c:watch(m.ref)
    elseif m.tend == "terminated" then
      watched[m.ref] = nil
      for group, set in pairs(monitors) do
        set[m.ref] = nil
        if next(set) == nil then monitors[group] = nil end
      end
      local left = {}
      for group, set in pairs(groups) do
        if set[m.ref] ~= nil then left[#left + 1] = group end
      end
      order_groups(left)
      local entries = {}
      for _, group in ipairs(left) do
        groups[group][m.ref] = nil
        forget_if_empty(group, groups[group])
        notify(group, "leave", { m.ref })
        if spans(group) then entries[#entries + 1] = { group, { m.ref } } end
      end
      announce("leave", entries)
    end
    if not needed() then return tend.stopped end
  end
end

-- When /system/pg is needed: it watches refs (all of this node's members
-- and the monitoring actors when refs is nil or when it starts). It starts
-- when there is something to watch.
local function watch_members(refs)
  if not needed() then return end
  local fresh = not (keeper and tend.alive(keeper))
  if fresh or refs == nil then
    local all, mons = {}, {}
    for _, set in pairs(groups) do
      for r, n in pairs(set) do all[#all + 1] = { n, r } end
    end
    table.sort(all, function(a, b) return a[1] < b[1] end)
    for i, e in ipairs(all) do all[i] = e[2] end
    for _, m in pairs(monitors) do
      for r in pairs(m) do mons[#mons + 1] = r end
    end
    for _, r in ipairs(by_name(mons)) do all[#all + 1] = r end
    refs = all
  end
  local todo = {}
  for _, r in ipairs(refs) do
    if (fresh or not watched[r]) and tend.alive(r) then todo[#todo + 1] = r end
  end
  if #todo == 0 then return end
  if fresh then
    keeper = tend.node_spawn(keeper_actor, { name = "pg" })
    watched = setmetatable({}, { __mode = "k" })
  end
  for _, r in ipairs(todo) do
    if not watched[r] then
      watched[r] = true
      keeper:send({ tend = "pg_watch", ref = r })
    end
  end
end

-- This node's members of the groups that span nodes, to node `name`: the
-- first frame a sync (it replaces what `name` knew of ours; reply: it
-- answers with its own), the rest joins.
local function sync_to(name, reply)
  local list = {}
  for group in pairs(groups) do
    if spans(group) then list[#list + 1] = group end
  end
  order_groups(list)
  local frames, entries, n = {}, {}, 0
  local function cut()
    frames[#frames + 1] = entries
    entries, n = {}, 0
  end
  for _, group in ipairs(list) do
    local refs = live(group) or {}
    local i = 1
    while i <= #refs do
      local part = {}
      while i <= #refs and n < CHUNK do
        part[#part + 1] = refs[i]
        i, n = i + 1, n + 1
      end
      entries[#entries + 1] = { group, part }
      if n == CHUNK then cut() end
    end
  end
  if n > 0 or #frames == 0 then cut() end
  node.pg_send({ name }, { "sync", frames[1], reply })
  for k = 2, #frames do node.pg_send({ name }, { "join", frames[k] }) end
end

-- ------------------------------------------------------------ other nodes

local function visible(name)
  local r = remote[name]
  return r ~= nil and up[name] == r.inc and r or nil
end

-- The refs of a set of a node's members ({[key] = {seq, proxy}}) in their
-- join order there, only the live ones when `alive` (a new list).
local function in_order(set, alive)
  local list = {}
  for _, e in pairs(set) do
    if not alive or tend.alive(e[2]) then list[#list + 1] = e end
  end
  table.sort(list, function(a, b) return a[1] < b[1] end)
  for i, e in ipairs(list) do list[i] = e[2] end
  return list
end

-- A node's live members of group in their join order there (a new list).
local function remote_members(r, group)
  local set = r.groups[group]
  return set and in_order(set, true) or {}
end

-- Of a node's groups that have monitors: group -> { [key] = {seq, proxy} },
-- a copy (nothing when r is nil).
local function snapshot(r)
  local out = {}
  if r == nil then return out end
  for group in pairs(monitors) do
    local set = r.groups[group]
    if set then
      local copy = {}
      for p, n in pairs(set) do copy[p] = n end
      out[group] = copy
    end
  end
  return out
end

-- Tells the monitors what changed from one snapshot to the next.
local function tell_changes(before, after)
  if next(before) == nil and next(after) == nil then return end
  local list = {}
  for group in pairs(monitors) do list[#list + 1] = group end
  for _, group in ipairs(order_groups(list)) do
    local old, new = before[group] or {}, after[group] or {}
    local gone, came = {}, {}
    for k, e in pairs(old) do if not new[k] then gone[k] = e end end
    for k, e in pairs(new) do if not old[k] then came[k] = e end end
    notify(group, "leave", in_order(gone))
    notify(group, "join", in_order(came))
  end
end

-- A frame from node `from` (incarnation inc). Frames of an incarnation
-- older than one seen are dropped; what comes before the node is up here
-- is kept (it shows once the node is up). A member is known by its actor's
-- id and generation there: a leave that comes after the member's death
-- (its proxy ended) decodes as a new proxy, and still finds it.
local function on_frame(from, inc, msg)
  if type(msg) ~= "table" or type(msg[2]) ~= "table" then return end
  local op = msg[1]
  if not (op == "sync" or op == "join" or op == "leave") then return end
  if up[from] and up[from] > inc then return end
  local r = remote[from]
  if r and r.inc > inc then return end
  local before = snapshot(visible(from))
  if r == nil or r.inc < inc or op == "sync" then
    r = { inc = inc, seq = 0, groups = {} }
    remote[from] = r
  end
  for _, e in ipairs(msg[2]) do
    local group, refs = type(e) == "table" and e[1], type(e) == "table" and e[2]
    if spans(group) and group == group and type(refs) == "table" then
      for _, p in ipairs(refs) do
        local c = pcall(tend.alive, p) and tend.remote_coords(p)
        if c and c[1] == from then -- only the sender's own actors
          local key, set = c[3] .. ":" .. c[4], r.groups[group]
          if op == "leave" then
            if set then
              set[key] = nil
              if next(set) == nil then r.groups[group] = nil end
            end
          else
            if not set then
              set = {}
              r.groups[group] = set
            end
            if not set[key] then
              r.seq = r.seq + 1
              set[key] = { r.seq, p }
            end
          end
        end
      end
    end
  end
  tell_changes(before, snapshot(visible(from)))
  if op == "sync" and msg[3] == true then sync_to(from, false) end
end

-- What the node layer calls must not fail it (a frame too large, say):
-- it is logged.
local function guarded(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then tend.log("warn", "tend.pg: %s", tostring(err)) end
  end
end

node.pg_hooks {
  up = guarded(function(name, inc)
    local before = snapshot(visible(name))
    up[name] = inc
    if remote[name] and remote[name].inc < inc then remote[name] = nil end
    tell_changes(before, snapshot(visible(name)))
    watch_members()
    sync_to(name, true)
  end),
  down = guarded(function(name, inc)
    local before = snapshot(visible(name))
    up[name] = nil
    if remote[name] and remote[name].inc <= inc then remote[name] = nil end
    tell_changes(before, {})
  end),
  frame = on_frame,
  -- the node's state is gone: so are the other nodes' members (this
  -- node's own stay with its actors; /system/pg stops unless a monitor
  -- needs it)
  reset = guarded(function()
    for _, name in ipairs(sorted_up()) do tell_changes(snapshot(visible(name)), {}) end
    up, remote = {}, {}
    if keeper and tend.alive(keeper) then keeper:send({ tend = "pg_idle" }) end
  end),
}

-- ------------------------------------------------------------ the API

local function refs_of(fn, what)
  local list = type(what) == "table" and what or { what }
  for i, r in ipairs(list) do
    if not pcall(tend.alive, r) then
      error(("tend.pg.%s: ref: expected an actor ref or a list of refs, got %s%s")
        :format(fn, r == nil and "nil" or ("a " .. type(r)),
          #list > 1 and (" at " .. i) or ""), 3)
    end
  end
  if #list == 0 then
    error(("tend.pg.%s: ref: expected an actor ref or a list of refs, got an empty table")
      :format(fn), 3)
  end
  return list
end

-- tend.pg.join(group, ref_or_refs): each live ref joins (a dead one is
-- gone already; a member joins once). Only this node's actors join here.
function M.join(group, what)
  check_group("join", group)
  local refs = refs_of("join", what)
  for _, r in ipairs(refs) do
    local c = tend.remote_coords(r)
    if c and c[1] == (node.name() or "") then
      error(("tend.pg.join: ref: %s is an actor of scheduler %d: join it there (a scheduler's own actors join its groups)")
        :format(tostring(r), c[6] >> 1), 2)
    elseif c then
      error(("tend.pg.join: ref: %s is an actor of node %s: join it there (a node's own actors join its groups)")
        :format(tostring(r), c[1]), 2)
    end
  end
  local set, new, seen = groups[group], {}, {}
  for _, r in ipairs(refs) do
    if tend.alive(r) and not seen[r] and not (set and set[r]) then
      seen[r] = true
      new[#new + 1] = r
    end
  end
  if #new == 0 then return end
  -- told first: a group that cannot travel (over the size limit) raises
  -- before anything changed
  if spans(group) then announce("join", { { group, new } }) end
  if set == nil then
    set = setmetatable({}, { __mode = "k" })
    groups[group] = set
    lists[group] = { refs = setmetatable({}, { __mode = "v" }), seqs = {}, top = 0, n = 0 }
  end
  local l = lists[group]
  local shared = spans(group) and several()
  for _, r in ipairs(new) do
    joins = joins + 1
    set[r] = joins
    l.top, l.n = l.top + 1, l.n + 1
    l.refs[l.top], l.seqs[l.top] = r, joins
    if shared then tend.sched_pg_join(key_of(group), r) end
  end
  if l.top > 2 * l.n + 16 then compact(group, set) end
  notify(group, "join", new)
  watch_members(new)
end

-- tend.pg.leave(group, ref_or_refs) -> true when one of them was a member
-- (OTP's ok), else false (OTP's not_joined).
function M.leave(group, what)
  check_group("leave", group)
  local refs = refs_of("leave", what)
  local set, left = groups[group], false
  if set == nil then return false end
  local gone = {}
  for _, r in ipairs(refs) do
    if set[r] ~= nil then
      if tend.alive(r) then left = true end
      gone[#gone + 1] = r
      set[r] = nil
      lists[group].n = lists[group].n - 1
    end
  end
  if next(set) == nil then groups[group], lists[group] = nil, nil end
  if spans(group) and several() then
    for _, r in ipairs(gone) do tend.sched_pg_leave(key_of(group), r) end
  end
  notify(group, "leave", gone)
  if spans(group) then announce("leave", { { group, gone } }) end
  return left -- (the dead members go at the next read: a leave costs the
  -- same with 10 members or 10^5)
end

-- tend.pg.local_members(group) -> this node's live members, in join order
-- (OTP's get_local_members).
function M.local_members(group)
  check_group("local_members", group)
  return live(group) or {}
end

-- tend.pg.members(group) -> the live members on every node up: by node
-- name, and on each node in join order there (every node lists them in
-- the same order); without nodes, the local ones in join order.
function M.members(group)
  check_group("members", group)
  local mine = live(group) or {}
  if spans(group) and several() then -- the schedulers' in index order
    local me = tend.scheduler()
    local out, placed = {}, false
    for _, e in ipairs(tend.sched_pg_members(key_of(group))) do
      if e[1] > me and not placed then
        table.move(mine, 1, #mine, #out + 1, out)
        placed = true
      end
      if tend.alive(e[2]) then out[#out + 1] = e[2] end
    end
    if not placed then table.move(mine, 1, #mine, #out + 1, out) end
    return out
  end
  if not node.running() or not spans(group) then return mine end
  local parts = { { node.name(), mine } }
  for name in pairs(up) do
    local r = visible(name)
    if r and r.groups[group] then parts[#parts + 1] = { name, remote_members(r, group) } end
  end
  table.sort(parts, function(a, b) return a[1] < b[1] end)
  local out = {}
  for _, part in ipairs(parts) do
    for _, ref in ipairs(part[2]) do out[#out + 1] = ref end
  end
  return out
end

-- tend.pg.monitor(group [, false]) -> the members now (as members()): the
-- calling actor is then told {tend = "pg_join" | "pg_leave", group =
-- group, refs = {ref, ...}} at each change, here or on another node up
-- (OTP's pg:monitor). monitor(group, false) stops that.
function M.monitor(group, on)
  check_group("monitor", group)
  local me = tend.self()
  if not me then error("tend.pg.monitor: call it from an actor", 2) end
  if on == false then
    local m = monitors[group]
    if m then
      m[me] = nil
      if next(m) == nil then monitors[group] = nil end
    end
    if keeper and tend.alive(keeper) then keeper:send({ tend = "pg_idle" }) end
    return nil
  end
  monitors[group] = monitors[group] or {}
  monitors[group][me] = true
  watch_members({ me })
  return M.members(group)
end

-- tend.pg.send(group, msg) -> how many members it was sent to, on every
-- node (the sender is the running actor, as ref:send)
function M.send(group, msg)
  check_group("send", group)
  local list = M.members(group)
  for _, r in ipairs(list) do r:send(msg) end
  return #list
end

-- tend.pg.which_groups() -> the groups with a live member on any node up
-- (strings and numbers sorted first, as tostring orders them)
function M.which_groups()
  local seen, out = {}, {}
  for g in pairs(groups) do seen[#seen + 1] = g end
  for _, g in ipairs(seen) do
    if live(g) then out[#out + 1] = g end
  end
  local have = {}
  for _, g in ipairs(out) do have[g] = true end
  for name in pairs(up) do
    local r = visible(name)
    if r then
      for g in pairs(r.groups) do
        if not have[g] and #remote_members(r, g) > 0 then
          have[g] = true
          out[#out + 1] = g
        end
      end
    end
  end
  return order_groups(out)
end

return M
