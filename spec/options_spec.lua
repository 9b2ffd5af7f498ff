-- Bad input to spawn: a clear error at the caller's line naming the
-- option, and nothing spawned.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestOptions = {}

function TestOptions:tearDown() H.assert_clean() end

local function idle() return function() end end

local function spawn_error(factory, opts)
  local before = tend.stats().spawned
  local ok, err = pcall(tend.spawn, factory, opts)
  lu.assertFalse(ok)
  lu.assertEquals(tend.stats().spawned, before)
  return err
end

function TestOptions:test_factory_must_be_a_function()
  lu.assertStrContains(spawn_error(42), 'tend.spawn: factory: expected a function, "module.factory" or a backoff/supervise spec, got an integer')
  lu.assertStrContains(spawn_error(nil), "got nil")
end

function TestOptions:test_a_named_factory_must_name_a_function_of_a_module()
  lu.assertStrContains(spawn_error("nodot"),
    'tend.spawn: factory: expected a function or "module.factory", got "nodot"')
  lu.assertStrContains(spawn_error("string.nope"),
    "tend.spawn: factory: 'string.nope' is not a function")
  lu.assertStrContains(spawn_error("math.pi"), "tend.spawn: factory: 'math.pi' is not a function")
  lu.assertStrContains(spawn_error("no_such_module_here.f"),
    "module 'no_such_module_here' not found")
end

function TestOptions:test_unknown_option()
  local err = spawn_error(idle, { nmae = "x" })
  lu.assertStrContains(err, "tend.spawn: unknown option 'nmae'")
  lu.assertStrContains(err, "expected one of: name, args")
  -- the nearest valid option is suggested (at most 2 edits; 1 for 3 letters)
  lu.assertStrContains(err, "): did you mean 'name'?")
  lu.assertStrContains(spawn_error(idle, { restrat = "temporary" }), "did you mean 'restart'?")
  lu.assertStrContains(spawn_error(idle, { shutdwn = 1 }), "did you mean 'shutdown'?")
  lu.assertStrContains(spawn_error(idle, { mailbox = { capcity = 2 } }),
    "unknown option 'mailbox.capcity' (expected one of: capacity, overflow): did you mean 'mailbox.capacity'?")
  lu.assertStrContains(spawn_error(idle, { nam = 1 }), "did you mean 'name'?")
  for _, far in ipairs { "colour", "nme1x", "ab" } do -- nothing close: no guess
    lu.assertNotStrContains(spawn_error(idle, { [far] = 1 }), "did you mean")
  end
  lu.assertNotStrContains(spawn_error(idle, { [1] = 1 }), "did you mean")
end

function TestOptions:test_options_must_be_a_table()
  lu.assertStrContains(spawn_error(idle, "fast"), "tend.spawn: options: expected a table, got a string")
end

function TestOptions:test_name()
  local expected = "option 'name': expected a name of 1-255 bytes without '/' or NUL, not starting " ..
    "with '$', not \".\" or \"..\" (a step of the actor's path), got "
  lu.assertStrContains(spawn_error(idle, { name = 5 }), expected .. "5 (number)")
  lu.assertStrContains(spawn_error(idle, { name = "a/b" }), expected .. '"a/b"')
  lu.assertStrContains(spawn_error(idle, { name = "$x" }), expected .. '"$x"')
  lu.assertStrContains(spawn_error(idle, { name = "" }), expected .. '""')
  -- a name is one step of a path: "." and ".." would read as steps of another
  lu.assertStrContains(spawn_error(idle, { name = ".." }), expected .. '".."')
  lu.assertStrContains(spawn_error(idle, { name = "." }), expected .. '"."')
  lu.assertStrContains(spawn_error(idle, { name = "a\0b" }), expected .. '"a\\0b"')
  lu.assertStrContains(spawn_error(idle, { name = ("x"):rep(256) }), "option 'name'")
  -- the same for the child of a backoff supervisor
  local ok, err = pcall(tend.backoff.on_failure, idle, { name = ".." })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tend.backoff.on_failure: " .. expected .. '".."')
  -- what is only like them is a name
  local dots = tend.spawn(idle, { name = "..." })
  lu.assertEquals(dots:path(), "/user/...")
  H.stop_all(dots)
end

function TestOptions:test_args()
  lu.assertStrContains(spawn_error(idle, { args = 3 }), "option 'args': expected a table (list), got 3")
end

function TestOptions:test_mailbox()
  lu.assertStrContains(spawn_error(idle, { mailbox = 10 }), "option 'mailbox': expected a table")
  lu.assertStrContains(spawn_error(idle, { mailbox = { capacity = -3 } }),
    "option 'mailbox.capacity': expected an integer >= 1, got -3")
  lu.assertStrContains(spawn_error(idle, { mailbox = { capacity = 1.5 } }), "got 1.5")
  lu.assertStrContains(spawn_error(idle, { mailbox = { capacity = 2, overflow = "explode" } }),
    "option 'mailbox.overflow': expected \"drop_new\", \"drop_old\" or \"fail\", got explode")
  lu.assertStrContains(spawn_error(idle, { mailbox = { size = 2 } }), "unknown option 'mailbox.size'")
end

function TestOptions:test_shutdown()
  lu.assertStrContains(spawn_error(idle, { shutdown = -1 }),
    "option 'shutdown': expected a number of seconds >= 0, got -1")
  lu.assertStrContains(spawn_error(idle, { shutdown = "5" }), "option 'shutdown'")
end

function TestOptions:test_later_options_are_checked_too()
  lu.assertStrContains(spawn_error(idle, { restart = "sometimes" }), "option 'restart'")
  lu.assertStrContains(spawn_error(idle, { max_message_time = 0 }), "option 'max_message_time'")
  lu.assertStrContains(spawn_error(idle, { supervisor = "strict" }), "option 'supervisor'")
end

function TestOptions:test_error_names_the_callers_line()
  local ok, err = pcall(function()
    tend.spawn(idle, { bogus = true }) -- this line
  end)
  lu.assertFalse(ok)
  lu.assertStrMatches(err, ".*options_spec%.lua:%d+: tend%.spawn: unknown option 'bogus'.*")
end

function TestOptions:test_ctx_spawn_is_checked_the_same_way()
  local err
  local a = tend.spawn(function()
    return function(msg, ctx) err = select(2, pcall(ctx.spawn, ctx, idle, { mailbox = { capacity = 0 } })) end
  end)
  a:send("go")
  H.settle()
  lu.assertStrContains(err, "ctx:spawn: option 'mailbox.capacity': expected an integer >= 1, got 0")
  lu.assertEquals(H.live(), 1)
  H.stop_all(a)
end

function TestOptions:test_valid_options_spawn()
  local a = tend.spawn(idle, { name = "ok", args = {}, mailbox = { capacity = 3, overflow = "fail" },
    shutdown = 0, restart = "temporary" })
  lu.assertEquals(a:path(), "/user/ok")
  H.stop_all(a)
end

-- One wording for an unknown option everywhere, C- or Lua-checked: the
-- known options, then the nearest one when one is close.
local function raised(fn, ...)
  local ok, err = pcall(fn, ...)
  lu.assertFalse(ok)
  return (tostring(err):gsub("^[^:]*%.lua:%d+: ", ""))
end

function TestOptions:test_unknown_option_wording_is_shared()
  local f = idle
  lu.assertEquals(raised(tend.backoff.on_failure, f, { min_bakoff = 1, max_backoff = 2 }),
    "tend.backoff.on_failure: unknown option 'min_bakoff' (expected one of: mode, factory, name, "
    .. "args, min_backoff, max_backoff, random_factor, algorithm, jitter, slot_time, ceiling, "
    .. "stay_at_ceiling, reset, reset_after, max_retries, supervisor_strategy, reply_while_stopped, "
    .. "handler_while_stopped, stash, final_stop_message, default_stopping_strategy): "
    .. "did you mean 'min_backoff'?")
  lu.assertEquals(raised(tend.one_for_one, { max_retires = 3 }),
    "tend.one_for_one: unknown option 'max_retires' (expected one of: max_retries, within, window, "
    .. "on_limit, decider, log): did you mean 'max_retries'?")
  lu.assertEquals(raised(tend.tcp.listen, { prot = 0, handler = f }),
    "tend.tcp.listen: unknown option 'prot' (expected one of: backlog, framing, handler, host, "
    .. "max_connections, max_line, port): did you mean 'port'?")
  lu.assertStrContains(raised(tend.tcp.connect, { port = 1, hots = "127.0.0.1" }),
    "tend.tcp.connect: unknown option 'hots' (expected one of: ")
  lu.assertStrContains(raised(tend.tcp.connect, { port = 1, hots = "127.0.0.1" }),
    "): did you mean 'host'?")
  lu.assertEquals(raised(tend.pool, { sise = 2, factory = f }),
    "tend.pool: unknown option 'sise' (expected one of: args, factory, name, routing, size, "
    .. "spread, strategy, under): did you mean 'size'?")
  lu.assertEquals(raised(tend.retry, function() end, { min_backoff = 1, max_backoff = 1, tries = 3 }),
    "tend.retry: unknown option 'tries' (expected one of: algorithm, ceiling, jitter, max_backoff, "
    .. "max_restarts, min_backoff, random_factor, slot_time, stay_at_ceiling)")
  lu.assertStrContains(raised(tend.retry, function() end, { max_restart = 3 }),
    "): did you mean 'max_restarts'?")
  lu.assertEquals(raised(tend.node.start, { name = "a", nats = "local", timout = 1 }),
    "tend.node.start: unknown option 'timout' (expected one of: limit, name, nats, retry, timeout): "
    .. "did you mean 'timeout'?")
  -- nothing close: the list alone
  lu.assertEquals(raised(tend.pool, { colour = 1 }),
    "tend.pool: unknown option 'colour' (expected one of: args, factory, name, routing, size, "
    .. "spread, strategy, under)")
end
