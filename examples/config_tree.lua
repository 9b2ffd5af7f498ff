-- config_tree: a rest_for_one tree (Erlang's classic): config, then cache
-- (which reads config), then api (which reads the cache). When config
-- fails, the cache and the api restart after it, in start order; when the
-- api fails, it restarts alone. tend.whereis finds each by its path;
-- tend.children says what the supervisor sees (OTP's which_children).
-- Run: tend --log-level error examples/config_tree.lua
local tend = require "tend"

local version = 0
local function config(ctx)
  version = version + 1
  local v = version
  return function(msg, ctx)
    if msg == "crash" then error("config file corrupt") end
    ctx:reply(v)
  end
end

local function cache(ctx)
  local v = ctx:ask(tend.whereis("/user/app/config"), "get", 1) -- at start
  return function(msg, ctx)
    if msg == "crash" then error("cache poisoned") end
    ctx:reply("config v" .. v)
  end
end

local function api(ctx)
  return function(msg, ctx)
    if msg == "crash" then error("bad request handler") end
    ctx:reply("api sees " .. ctx:ask(tend.whereis("/user/app/cache"), "get", 1))
  end
end

local app = tend.spawn(function(ctx)
  ctx:spawn(config, { name = "config", restart = "permanent" })
  ctx:spawn(cache, { name = "cache", restart = "permanent" })
  ctx:spawn(api, { name = "api", restart = "permanent" })
  return function() end
end, { name = "app", children = tend.rest_for_one{ max_retries = 5, within = 60 } })

local function restarts()
  local out = {}
  for _, c in ipairs(tend.children(app)) do
    out[#out + 1] = c.ref:name() .. "=" .. c.restarts
  end
  return table.concat(out, " ")
end

tend.sleep(0.1)
print("started: " .. tend.ask(tend.whereis("/user/app/api"), "get", 1))
tend.whereis("/user/app/config"):send("crash")
tend.sleep(0.1)
print("after config failed: " .. restarts() .. "; "
  .. tend.ask(tend.whereis("/user/app/api"), "get", 1))
tend.whereis("/user/app/api"):send("crash")
tend.sleep(0.1)
print("after api failed: " .. restarts())
local n = tend.count_children(app)
print(("config_tree: %d children, %d active, %d workers"):format(n.specs, n.active, n.workers))
tend.stop(app)
