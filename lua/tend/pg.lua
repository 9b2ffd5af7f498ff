-- tend.pg: process groups (OTP's pg): any actor can join a group, a
-- message to the group goes to every member, and a member that dies
-- leaves. The shape is OTP's (join, leave, members, which_groups, and a
-- send to all), so that it can span nodes later.
--
-- A library on the API (Lua): membership is a table of refs in join
-- order. A member that died is dropped at the next operation on its
-- group, so members() and send() never see one (OTP removes it at once,
-- which nobody can tell apart from this in one host). Joining twice is
-- one membership (OTP counts joins; tend keeps a set).
local tend = require "tend.core"

local M = {}
local groups = {} -- group -> { refs in join order }

local function check_group(fn, group)
  if group == nil or group ~= group then
    error(("tend.pg.%s: group: expected a value other than nil or NaN, got %s")
      :format(fn, tostring(group)), 3)
  end
end

-- The refs of group, the dead ones dropped (the group goes when empty).
local function live(group)
  local list = groups[group]
  if list == nil then return nil end
  local j = 0
  for i = 1, #list do
    local r = list[i]
    list[i] = nil
    if tend.alive(r) then
      j = j + 1
      list[j] = r
    end
  end
  if j == 0 then
    groups[group] = nil
    return nil
  end
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
  local list = live(group) or {}
  for _, r in ipairs(refs) do
    local member = false
    for _, m in ipairs(list) do
      if m == r then member = true break end
    end
    if not member and tend.alive(r) then list[#list + 1] = r end
  end
  if #list > 0 then groups[group] = list end
end

-- tend.pg.leave(group, ref_or_refs) -> true when one of them was a member
-- (OTP's ok), else false (OTP's not_joined).
function M.leave(group, what)
  check_group("leave", group)
  local refs = refs_of("leave", what)
  local list, left = live(group), false
  if list == nil then return false end
  for _, r in ipairs(refs) do
    for i, m in ipairs(list) do
      if m == r then
        table.remove(list, i)
        left = true
        break
      end
    end
  end
  if #list == 0 then groups[group] = nil end
  return left
end

-- tend.pg.members(group) -> the live members, in join order (a new list)
function M.members(group)
  check_group("members", group)
  local list, out = live(group), {}
  for i, r in ipairs(list or {}) do out[i] = r end
  return out
end

-- tend.pg.send(group, msg) -> how many members it was sent to (the sender
-- is the running actor, as ref:send)
function M.send(group, msg)
  check_group("send", group)
  local list = live(group)
  if list == nil then return 0 end
  local copy = {}
  for i, r in ipairs(list) do copy[i] = r end
  for _, r in ipairs(copy) do r:send(msg) end
  return #copy
end

-- tend.pg.which_groups() -> the groups with a live member (strings and
-- numbers sorted first, as tostring orders them)
function M.which_groups()
  local out = {}
  for g in pairs(groups) do
    if live(g) then out[#out + 1] = g end
  end
  table.sort(out, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then
      return a < b
    end
    return tostring(a) < tostring(b)
  end)
  return out
end

return M
