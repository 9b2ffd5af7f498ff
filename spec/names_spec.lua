-- Names and lookup (OTP's register, unregister, whereis, registered):
-- one name per actor, one actor per name, the name goes with the actor,
-- tend.send and tend.ask to a name, paths looked up in the tree.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestNames = {}

function TestNames:tearDown() H.assert_clean() end

local function echo()
  return function(msg, ctx) ctx:reply(msg) end
end

local function idle() return function() end end

function TestNames:test_register_send_ask_and_whereis()
  local db = tend.spawn(echo)
  lu.assertTrue(tend.register("db", db) == db)
  lu.assertTrue(tend.whereis("db") == db)
  lu.assertEquals(tend.ask("db", "ping", 1), "ping")
  local got = {}
  local r = H.recorder(got)
  tend.register("log", r)
  tend.send("log", "a")
  tend.send("log", "b")
  H.settle()
  lu.assertEquals(got, { "a", "b" })
  lu.assertEquals(tend.registered(), { "db", "log" })
  H.stop_all(db, r)
  lu.assertEquals(tend.registered(), {})
end

function TestNames:test_the_name_goes_when_the_actor_dies()
  local db = tend.spawn(echo)
  tend.register("db", db)
  H.stop_all(db)
  lu.assertNil(tend.whereis("db"))
  lu.assertErrorMsgContains("send: name: no live actor is registered as 'db'",
    tend.send, "db", "x")
  -- the name is free for another actor
  local db2 = tend.spawn(echo)
  tend.register("db", db2)
  lu.assertTrue(tend.whereis("db") == db2)
  H.stop_all(db2)
end

function TestNames:test_a_restart_keeps_the_name()
  local db = tend.spawn(function()
    return function(msg, ctx) if msg == "crash" then error("x") end ctx:reply(msg) end
  end)
  tend.register("db", db)
  db:send("crash")
  H.settle()
  lu.assertTrue(tend.whereis("db") == db)
  lu.assertEquals(tend.ask("db", "still", 1), "still")
  H.stop_all(db)
end

function TestNames:test_a_taken_name_is_an_error_naming_both()
  local a = tend.spawn(idle, { name = "a" })
  local b = tend.spawn(idle, { name = "b" })
  tend.register("svc", a)
  lu.assertErrorMsgContains(
    "tend.register: the name 'svc' is taken by /user/a; cannot give it to /user/b",
    tend.register, "svc", b)
  lu.assertTrue(tend.whereis("svc") == a)
  tend.register("svc", a) -- the same name for the same actor: no change
  H.stop_all(a, b)
end

function TestNames:test_one_name_per_actor()
  local a = tend.spawn(idle, { name = "a" })
  tend.register("first", a)
  lu.assertErrorMsgContains("/user/a is already registered as 'first'",
    tend.register, "second", a)
  lu.assertTrue(tend.unregister("first"))
  lu.assertFalse(tend.unregister("first"))
  tend.register("second", a)
  lu.assertTrue(tend.whereis("second") == a)
  lu.assertNil(tend.whereis("first"))
  H.stop_all(a)
end

function TestNames:test_whereis_takes_paths()
  local app = tend.spawn(function(ctx)
    ctx:spawn(function(c) c:spawn(idle, { name = "api" }) return idle() end,
      { name = "web" })
    return idle()
  end, { name = "app" })
  H.settle()
  lu.assertTrue(tend.whereis("/user/app") == app)
  lu.assertEquals(tend.whereis("/user/app/web/api"):path(), "/user/app/web/api")
  lu.assertEquals(tend.whereis("/user/app/web/"):path(), "/user/app/web")
  lu.assertNil(tend.whereis("/user/app/nope"))
  lu.assertNil(tend.whereis("/user/app/web/ap")) -- a whole segment, not a prefix
  lu.assertNil(tend.whereis("/user/app/web/apis"))
  lu.assertNil(tend.whereis("/nowhere"))
  lu.assertNil(tend.whereis("/"))
  lu.assertTrue(tend.whereis("/user/main") == tend.self())
  tend.send("/user/app/web/api", "hello") -- a path works as an address too
  H.stop_all(app)
  lu.assertNil(tend.whereis("/user/app/web/api"))
end

function TestNames:test_bad_input()
  local a = tend.spawn(idle)
  lu.assertErrorMsgContains("tend.register: name: expected a non-empty string",
    tend.register, 42, a)
  lu.assertErrorMsgContains("tend.register: name: expected a non-empty string",
    tend.register, "", a)
  lu.assertErrorMsgContains("got a path", tend.register, "/user/x", a)
  lu.assertErrorMsgContains(
    "tend.register: ref: expected an actor ref, a registered name or a path, got an integer",
    tend.register, "x", 3)
  lu.assertErrorMsgContains("tend.whereis: expected a registered name or a path, got nil",
    tend.whereis)
  H.stop_all(a)
  lu.assertErrorMsgContains("is not alive", tend.register, "x", a)
  local ok, err = pcall(tend.ask, "nobody", 1, 1) -- gen_server:call's noproc
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "NoActor")
  lu.assertEquals(err.message, "no actor registered as 'nobody'")
  ok, err = pcall(tend.ask, "/user/nobody", 1, 1)
  lu.assertEquals(err.message, "no actor at /user/nobody (no live actor at that path)")
end

-- Anonymous actors are named by their spawn number, which is never reused
-- (their ids are).
function TestNames:test_anonymous_actors_are_named_by_spawn_number()
  local a = tend.spawn(function() return function() end end)
  local n = tonumber(a:path():match("^/user/%$(%d+)$"))
  lu.assertNotNil(n, a:path())
  H.stop_all(a)
  local b = tend.spawn(function() return function() end end)
  lu.assertEquals(b:path(), "/user/$" .. (n + 1))
  lu.assertEquals(a:path(), "/user/$" .. n)
  H.stop_all(b)
end

-- A dead anonymous actor's path under a long one (past the 256 bytes the
-- path is made in at once) and under a short one: its parent's, then
-- "/$seq", read from its ref after its death.
function TestNames:test_a_dead_anonymous_actors_path_under_long_and_short_parents()
  local long = string.rep("n", 150)
  local got, me = {}, tend.self()
  local function kid(parent) -- an anonymous child, stopped at once
    local k = parent:spawn(function() return function() end end)
    tend.stop(k)
    got[#got + 1] = k
  end
  local top = tend.spawn(function(ctx)
    kid(ctx)
    ctx:spawn(function(c2)
      kid(c2)
      tend.send(me, "made")
      return function() end
    end, { name = long })
    return function() end
  end, { name = long })
  lu.assertEquals(tend.receive(5), "made")
  H.settle()
  local base = "/user/" .. long
  lu.assertStrMatches(got[1]:path(), base:gsub("%p", "%%%0") .. "/%$%d+")
  lu.assertStrMatches(got[2]:path(), (base .. "/" .. long):gsub("%p", "%%%0") .. "/%$%d+")
  lu.assertTrue(#got[2]:path() > 256)
  local n1, n2 = got[1]:path():match("%$(%d+)$"), got[2]:path():match("%$(%d+)$")
  lu.assertEquals(tonumber(n2), tonumber(n1) + 2) -- the named middle one between
  H.stop_all(top)
end

-- A path of anonymous actors ("$seq") and of named ones under them: a
-- named actor's path is looked up whole, a "$seq" among the children
function TestNames:test_whereis_takes_anonymous_segments()
  local inner
  local top = tend.spawn(function(ctx)
    local mid = ctx:spawn(function(c) inner = c:spawn(idle, { name = "api" }) return idle() end)
    ctx:spawn(idle)
    return function(_, c) c:reply(mid) end
  end)
  local mid = tend.ask(top, "mid", 1)
  H.settle()
  lu.assertTrue(tend.whereis(top:path()) == top)
  lu.assertTrue(tend.whereis(mid:path()) == mid)
  lu.assertTrue(tend.whereis(mid:path() .. "/") == mid)
  lu.assertTrue(tend.whereis(mid:path() .. "/api") == inner)
  lu.assertEquals(inner:path(), mid:path() .. "/api")
  local n = tonumber(mid:path():match("%$(%d+)$"))
  lu.assertNil(tend.whereis(top:path() .. "/$" .. (n + 100)))
  lu.assertNil(tend.whereis(top:path() .. "/$x"))
  lu.assertNil(tend.whereis(top:path() .. "/$"))
  lu.assertNil(tend.whereis(mid:path() .. "/api/$1"))
  tend.stop(mid)
  H.settle()
  lu.assertNil(tend.whereis(mid:path()))
  lu.assertNil(tend.whereis(mid:path() .. "/api"))
  H.stop_all(top)
end

-- tend.registered() after names come and go between listings (it merges
-- the new ones into the last listing): sorted, each name once, only
-- the names there are
function TestNames:test_registered_follows_changes()
  local refs = {}
  for i = 1, 6 do refs[i] = tend.spawn(idle) end
  tend.register("c", refs[1])
  tend.register("a", refs[2])
  lu.assertEquals(tend.registered(), { "a", "c" })
  local l = tend.registered()
  l[1] = "changed" -- a copy: the next listing is not
  tend.register("b", refs[3])
  tend.register("d", refs[4])
  tend.unregister("c")
  lu.assertEquals(tend.registered(), { "a", "b", "d" })
  tend.register("c", refs[5]) -- back, on another actor
  tend.unregister("b")
  tend.register("b", refs[3]) -- gone and back between two listings
  lu.assertEquals(tend.registered(), { "a", "b", "c", "d" })
  H.stop_all(refs[2])
  lu.assertEquals(tend.registered(), { "b", "c", "d" })
  lu.assertEquals(tend.registered(), { "b", "c", "d" })
  -- many changes without a listing: the next sorts them all
  for i = 1, 3000 do tend.register("x", refs[6]) tend.unregister("x") end
  tend.register("e", refs[6])
  lu.assertEquals(tend.registered(), { "b", "c", "d", "e" })
  H.stop_all(table.unpack(refs, 1, 1))
  H.stop_all(table.unpack(refs, 3, 6))
  lu.assertEquals(tend.registered(), {})
end
