-- A ctx works only inside its own actor (design §3.1): every method
-- of a ctx saved and called from elsewhere (the main chunk, another actor,
-- a tend.after task, a trace listener) raises, naming the method, the
-- ctx's actor and what runs, and changes nothing.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestCtxOutside = {}

function TestCtxOutside:tearDown() H.assert_clean() end

local METHODS = { "after", "ask", "children", "every", "log", "reply",
  "reset_backoff", "sleep", "spawn", "stop", "unwatch", "watch" }

-- Spawns /user/<name> and returns its ref and its ctx (saved by the factory).
local function with_saved_ctx(name)
  local saved
  local r = tend.spawn(function(ctx)
    saved = ctx
    return function() end
  end, { name = name })
  H.settle()
  return r, saved
end

-- Calls ctx:<m> with plausible arguments; returns pcall's results.
local function call(ctx, m, target)
  local args = {
    after = { 1, "x" }, every = { 1, "x" }, sleep = { 1 }, ask = { target, "x", 1 },
    log = { "warn", "x" }, reply = { "x" }, spawn = { function() return function() end end },
    stop = {}, children = {}, watch = { target }, unwatch = { target }, reset_backoff = {},
  }
  return pcall(ctx[m], ctx, table.unpack(args[m]))
end

function TestCtxOutside:test_every_method_raises_from_the_main_chunk()
  local a, ctx = with_saved_ctx("a")
  local t0, before = tend.now(), tend.stats()
  for _, m in ipairs(METHODS) do
    local ok, err = call(ctx, m, a)
    lu.assertFalse(ok, m)
    lu.assertStrContains(err, "ctx:" .. m .. " called outside its actor (/user/a); running: /user/main")
  end
  H.settle()
  local after = tend.stats()
  lu.assertEquals(tend.now(), t0)                 -- main did not sleep
  lu.assertEquals(after.timers, before.timers)    -- no timer armed
  lu.assertEquals(after.spawned, before.spawned)  -- no child spawned
  lu.assertEquals(after.actors, before.actors)    -- a still alive, nothing new
  lu.assertTrue(tend.alive(a))
  H.stop_all(a)
end

function TestCtxOutside:test_from_another_actor_it_names_that_actor()
  local a, ctx = with_saved_ctx("a")
  local err
  local b = tend.spawn(function()
    return function()
      local ok, e = pcall(ctx.spawn, ctx, function() return function() end end)
      err = ok and "no error" or e
    end
  end, { name = "b" })
  b:send("go")
  H.settle()
  lu.assertStrContains(err, "ctx:spawn called outside its actor (/user/a); running: /user/b")
  lu.assertEquals(#tend.ps(), 5) -- /user, main, a, b, /system: no child of a
  H.stop_all(a, b)
end

function TestCtxOutside:test_from_a_tend_after_task()
  local a, ctx = with_saved_ctx("a")
  local err
  tend.after(0, function()
    local ok, e = pcall(ctx.sleep, ctx, 1)
    err = ok and "no error" or e
  end)
  H.settle()
  lu.assertStrMatches(err, ".*ctx:sleep called outside its actor %(/user/a%); running: /system/%$%d+$")
  H.stop_all(a)
end

function TestCtxOutside:test_from_no_actor_at_all()
  local a, ctx = with_saved_ctx("a")
  local err
  tend.trace(function()
    if err == nil then
      local ok, e = pcall(ctx.log, ctx, "warn", "from a listener")
      err = ok and "no error" or e
    end
  end)
  H.stop_all(a) -- events: the listener runs between turns
  tend.trace(false)
  lu.assertStrContains(err, "ctx:log called outside its actor (/user/a); running: no actor")
end

function TestCtxOutside:test_a_dead_actors_ctx_still_names_it()
  local a, ctx = with_saved_ctx("gone")
  H.stop_all(a)
  local ok, err = pcall(ctx.after, ctx, 1, "x")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "ctx:after called outside its actor (/user/gone); running: /user/main")
end

function TestCtxOutside:test_inside_its_actor_and_its_coroutines_it_works()
  local me = tend.self()
  local r = tend.spawn(function(ctx)
    return function(msg, ctx)
      local co = coroutine.wrap(function()
        ctx:spawn(function() return function() end end, { name = "kid" })
        return #ctx:children()
      end)
      local n = co()
      ctx:sleep(1)
      me:send(n)
    end
  end, { name = "owner" })
  r:send("go")
  lu.assertEquals(tend.receive(5), 1)
  H.stop_all(r)
end

function TestCtxOutside:test_fields_stay_readable_outside()
  local a, ctx = with_saved_ctx("a")
  lu.assertTrue(ctx.self == a)
  lu.assertEquals(ctx.parent:path(), "/user")
  lu.assertEquals(tostring(ctx), "Ctx(/user/a)")
  H.stop_all(a)
end
