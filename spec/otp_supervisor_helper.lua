-- The scaffolding shared by the two halves of the port of OTP's
-- supervisor_SUITE (otp_supervisor_spec.lua: restart strategies and
-- types; otp_supervisor_stop_spec.lua: starting, stopping and the child
-- administration). OTP's restart intensity I per period P is
-- `max_retries = I, within = P, window = "sliding", on_limit = "escalate"`;
-- `exit(Child, abnormal)` is a child raising; `exit(Child, normal)` is a
-- child stopping itself (returning tend.stopped).
local lu = require "luaunit"
local tend = require "tend"

local O = {}

function O.otp(kind, intensity, period, extra)
  local o = { max_retries = intensity, within = period, window = "sliding",
              on_limit = "escalate" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return tend[kind](o)
end

-- supervisor_1's child: logs "start <id>" at each start and "stop <id>"
-- in post_stop; "crash" raises, "normal" stops it, {sleep = s} waits.
-- With fail_restart, every start after the first raises (OTP's
-- start_child(error): the child cannot be started again).
function O.child(log, id, fail_restart)
  local starts = 0
  return function(ctx)
    starts = starts + 1
    log[#log + 1] = "start " .. id
    if fail_restart and starts > 1 then error("start_error " .. id) end
    return {
      receive = function(self, msg, ctx)
        if msg == "crash" then error("abnormal")
        elseif msg == "normal" then return tend.stopped
        elseif type(msg) == "table" and msg.sleep then ctx:sleep(msg.sleep)
        elseif msg == "ping" then ctx:reply("pong")
        end
      end,
      post_stop = function(self, ctx) log[#log + 1] = "stop " .. id end,
    }
  end
end

function O.idle() return function() end end

-- A supervisor with no children of its own, under a parent that stops
-- it on any failure (an OTP supervisor that reaches its intensity exits;
-- here it fails with Escalated and its parent stops it).
function O.start_link(strategy, name)
  local top = tend.spawn(O.idle, { children = tend.stopping })
  local sup = tend.start_child(top, O.idle, { name = name or "sup_test", children = strategy })
  return sup, top
end

function O.counts(sup)
  local c = tend.count_children(sup)
  return { c.specs, c.active, c.supervisors, c.workers }
end

function O.refs(sup)
  local out = {}
  for i, row in ipairs(tend.children(sup)) do out[i] = row.ref end
  return out
end

function O.restarts(sup)
  local out = {}
  for i, row in ipairs(tend.children(sup)) do out[i] = row.restarts end
  return out
end

-- Checks a supervisor's exit after its intensity is reached: its
-- watcher sees Escalated, the child's error as the cause; its children
-- are gone.
function O.check_exit(p, sup, kids)
  local t = p:expect_terminated(sup)
  lu.assertEquals(t.reason.kind, "Escalated")
  for _, k in ipairs(kids or {}) do lu.assertFalse(tend.alive(k)) end
  return t
end

return O
