-- The public face (lua/tend.lua): tend exports the names it lists, each
-- one the manual (README.md, docs/guide/) documents, and nothing else of
-- tend.core. Every name of tend.core is chosen: exported, or listed below
-- as internal (a new C function fails this spec until it is one or the
-- other).
local lu = require "luaunit"
local tend = require "tend"
local core = require "tend.core"

TestFace = {}

-- tend.core's plumbing: what the Lua modules build on, never tend.X.
local INTERNAL = {
  -- tend.backoff (lua/tend/backoff.lua)
  "backoff_check", "backoff_child", "backoff_delay_generator", "backoff_delays", "backoff_mt",
  "backoff_reset", "backoff_restart_count",
  -- tend.chaos
  "chaos_crash", "chaos_deliver", "chaos_event", "chaos_filters", "chaos_freeze", "chaos_quiet",
  "chaos_thaw",
  -- tend.invariant and tend.eventually (lua/tend/invariant.lua)
  "pass_hook",
  -- tend.pool's smallest_mailbox routing (lua/tend/pool.lua)
  "mailbox_load",
  -- tend.pg across schedulers (lua/tend/pg.lua)
  "sched_pg_join", "sched_pg_leave", "sched_pg_members",
  -- tend.inspect and tend.reload (lua/tend/code.lua)
  "code_actor", "code_install", "code_requeue",
  -- tend.http
  "http_check", "http_in_flight", "http_request", "httpd_child", "httpd_event", "httpd_listen",
  "httpd_ref",
  "stream_task", "stream_event", "on_wait", "watch_restarts", "fiber_resume", "fiber_take", "fiber_drop", "fiber_wait", "fiber_ready",
  -- tend.process
  "process_check", "process_cover", "process_event", "process_pass", "process_signal_ref",
  "process_spawn", "signal_number",
  -- tend.tcp
  "tcp_can_parent", "tcp_connect", "tcp_ctx_methods", "tcp_is_ref", "tcp_listen", "tcp_spawn",
  -- tend.node and its transports: messages and their bytes, proxies, NATS, simulated nodes
  "codec_decode", "codec_encode", "wire_batch", "wire_envelope", "wire_kind", "wire_open",
  "wire_subject", "wire_unbatch", "node_clock", "node_event", "node_exe", "node_identity", "node_spawn",
  "remote_coords", "remote_disconnect", "remote_end", "remote_hooks", "remote_new",
  "remote_reconnect", "nats_connect", "nats_dir",
  "sim_crash", "sim_dispatch", "sim_heal", "sim_join", "sim_kv", "sim_link", "sim_list", "sim_open",
  "sim_publish", "sim_stop_all",
  "clock_hold", "clock_step", -- the observer's pause (tend.observe.live)
}

local function set(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

local function sorted(s)
  local l = {}
  for k in pairs(s) do l[#l + 1] = k end
  table.sort(l)
  return l
end

-- Every name of tend.core is exported as itself or internal, not both;
-- every internal name is still in tend.core.
function TestFace:test_every_name_of_tend_core_is_exported_or_internal()
  local internal = set(INTERNAL)
  local unchosen, both = {}, {}
  for k, v in pairs(core) do
    local exported = rawequal(rawget(tend, k), v)
    if exported and internal[k] then both[k] = true end
    if not exported and not internal[k] then unchosen[k] = true end
  end
  lu.assertEquals(sorted(unchosen), {}, "tend.core names neither exported (lua/tend.lua) nor internal (here)")
  lu.assertEquals(sorted(both), {})
  local gone = {}
  for k in pairs(internal) do
    if core[k] == nil then gone[k] = true end
  end
  lu.assertEquals(sorted(gone), {}, "internal names no longer in tend.core")
end

-- The names tend.X and tend.M.X that the manual (README.md and the
-- chapters of docs/guide/) documents (not a path like runtime/tend.h;
-- beyond a module's own name, tend.core, tend.pretty: require
-- "tend.pretty").
local function readme_names()
  local texts = {}
  local ls = assert(io.popen("ls README.md docs/guide/*.md 2>/dev/null"))
  for path in ls:lines() do
    local f = assert(io.open(path, "r"))
    texts[#texts + 1] = f:read("a")
    f:close()
  end
  ls:close()
  local text = table.concat(texts, "\n")
  local top, nested = {}, {}
  for name in text:gmatch("%f[%w_./]tend%.([%a_][%w_]*)") do top[name] = true end
  for m, name in text:gmatch("%f[%w_./]tend%.([%a_][%w_]*)%.([%a_][%w_]*)") do
    nested[m .. "." .. name] = true
  end
  return top, nested
end

local LAZY = { "testkit", "chaos", "simnet", "global", "sim" } -- loaded on first use

-- tend holds exactly the names the manual documents: none lost, none
-- public without a word; tend.M.X for each documented one.
function TestFace:test_tend_holds_exactly_the_names_the_readme_documents()
  local top, nested = readme_names()
  local documented = {}
  for name in pairs(top) do
    local module = package.preload["tend." .. name] or package.loaded["tend." .. name]
    if not (rawget(tend, name) == nil and module and not set(LAZY)[name]) then
      documented[name] = true
    end
  end
  local public = {}
  for k in pairs(tend) do public[k] = true end
  for _, k in ipairs(LAZY) do public[k] = true end
  lu.assertEquals(sorted(public), sorted(documented))
  local missing = {}
  for path in pairs(nested) do
    local m, name = path:match("^(.-)%.(.*)$")
    local t = public[m] and tend[m]
    if type(t) == "table" and t[name] == nil then missing[#missing + 1] = "tend." .. path end
  end
  table.sort(missing)
  lu.assertEquals(missing, {})
end
