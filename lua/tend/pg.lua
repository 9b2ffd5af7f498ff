-- tend.pg: process groups (OTP's pg): any actor can join a group, a
-- message to the group goes to every member, and a member that dies
-- leaves. The shape is OTP's (join, leave, members, which_groups, and a
-- send to all), so that it can span nodes later.
--
-- A library on the API (Lua): a group is a table whose weak keys are the
-- members' refs (a live actor's canonical ref, kept by the actor itself),
-- with their join numbers for the order. A member that died is dropped at
-- the next operation on its group, so members() and send() never see one
-- (OTP removes it at once, which nobody can tell apart from this in one
-- host), and its ref goes with the garbage once nothing else holds it:
-- groups of dead actors hold nothing. Joining twice is one membership
-- (OTP counts joins; tend keeps a set).
local tend = require "tend.core"

local M = {}
local groups = {} -- group -> { [ref] = join number } (weak keys)
local joins = 0   -- join numbers so far

local function check_group(fn, group)
  if group == nil or group ~= group then
    error(("tend.pg.%s: group: expected a value other than nil or NaN, got %s")
      :format(fn, tostring(group)), 3)
  end
end

-- The live members of group in join order (a new list), the dead ones
-- dropped; nil when none is left (the group goes).
local function live(group)
  local set = groups[group]
  if set == nil then return nil end
  local list = {}
  for r in pairs(set) do
    if tend.alive(r) then list[#list + 1] = r else set[r] = nil end
  end
  if #list == 0 then
    groups[group] = nil
    return nil
  end
  table.sort(list, function(a, b) return set[a] < set[b] end)
  return list
end

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
-- gone already; a member joins once).
function M.join(group, what)
  check_group("join", group)
  local refs = refs_of("join", what)
  local set = groups[group]
  for _, r in ipairs(refs) do
    if tend.alive(r) then
      if set == nil then
        set = setmetatable({}, { __mode = "k" })
        groups[group] = set
      end
      if set[r] == nil then
        joins = joins + 1
        set[r] = joins
      end
    end
  end
end

-- tend.pg.leave(group, ref_or_refs) -> true when one of them was a member
-- (OTP's ok), else false (OTP's not_joined).
function M.leave(group, what)
  check_group("leave", group)
  local refs = refs_of("leave", what)
  local set, left = groups[group], false
  if set == nil then return false end
  for _, r in ipairs(refs) do
    if set[r] ~= nil and tend.alive(r) then left = true end
    set[r] = nil
  end
  live(group) -- the group goes when empty
  return left
end

-- tend.pg.members(group) -> the live members, in join order (a new list)
function M.members(group)
  check_group("members", group)
  return live(group) or {}
end

-- tend.pg.send(group, msg) -> how many members it was sent to (the sender
-- is the running actor, as ref:send)
function M.send(group, msg)
  check_group("send", group)
  local list = live(group)
  if list == nil then return 0 end
  for _, r in ipairs(list) do r:send(msg) end
  return #list
end

-- tend.pg.which_groups() -> the groups with a live member (strings and
-- numbers sorted first, as tostring orders them)
function M.which_groups()
  local out = {}
  for g in pairs(groups) do out[#out + 1] = g end
  local keep = {}
  for _, g in ipairs(out) do
    if live(g) then keep[#keep + 1] = g end
  end
  table.sort(keep, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then
      return a < b
    end
    return tostring(a) < tostring(b)
  end)
  return keep
end

return M
