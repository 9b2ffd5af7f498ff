-- tend.shrink: a failing seed of a scenario shrunk to the fewest nemesis
-- injections that still fail it the same way (`tend explore --shrink`).
-- The seed's trace gives the injections its nemesis made; each candidate
-- list is replayed with `tend scenario FILE --seed N --chaos-schedule
-- LIST.lua` (the nemesis then applies the list and every other random
-- choice of the run stays the same) and kept while its failure signature
-- stays. Delta debugging (Zeller's ddmin) removes injections; then each
-- one moves as early as it can (not before the one before it) and each
-- heal comes as soon as it can. The result is written as a runnable
-- scenario, DIR/NAME.seedN.min.lua, with its trace and timeline.
local seeds = require "tend.seeds"
local timeline = require "tend.timeline"

local M = {}

M.STEPS = 6 -- bisection steps per time moved (a 64th of its span)

------------------------------------------------------------ the schedule
-- The fields of a trace event that are not the injection's: where and by
-- whom, and the line the timeline prints.
local envelope = { ev = true, path = true, by = true, detail = true }

-- An injection event of the trace as a schedule entry: the event minus
-- ev, path and by (the interface of tend.chaos.schedule), and its detail.
local function entry(e)
  local x = {}
  for k, v in pairs(e) do
    if not envelope[k] and v ~= timeline.null then x[k] = v end
  end
  return x
end

-- The injections of a trace's events, in order.
function M.injections(events)
  local list = {}
  for _, e in ipairs(events) do
    if e.ev == "chaos" and e.by == "nemesis" and not e.heal then list[#list + 1] = entry(e) end
  end
  return list
end

local first_keys = { "t", "fault", "target", "a", "b" }

-- A value as Lua source that reads back as the same value and type.
local function literal(v)
  if type(v) == "string" then return string.format("%q", v) end
  if math.type(v) == "integer" then return tostring(v) end
  if type(v) == "number" then
    local s = string.format("%.17g", v)
    if tonumber(string.format("%.15g", v)) == v then s = string.format("%.15g", v) end
    if not s:find("[%.eEn]") then s = s .. ".0" end
    return s
  end
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = literal(x) end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  return tostring(v)
end

-- An entry as one line of Lua: t, fault, target, a, b first, the other
-- parameters by name, heal_after last.
function M.entry_source(x)
  local parts, seen = {}, { heal_after = true }
  for _, k in ipairs(first_keys) do
    if x[k] ~= nil then parts[#parts + 1] = k .. " = " .. literal(x[k]) end
    seen[k] = true
  end
  local rest = {}
  for k in pairs(x) do if not seen[k] then rest[#rest + 1] = k end end
  table.sort(rest)
  for _, k in ipairs(rest) do parts[#parts + 1] = k .. " = " .. literal(x[k]) end
  if x.heal_after ~= nil then parts[#parts + 1] = "heal_after = " .. literal(x.heal_after) end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- The list as a table constructor, one entry a line, indented by `ind`.
function M.list_source(list, ind)
  if #list == 0 then return "{}" end
  local lines = { "{" }
  for _, x in ipairs(list) do lines[#lines + 1] = ind .. "  " .. M.entry_source(x) .. "," end
  lines[#lines + 1] = ind .. "}"
  return table.concat(lines, "\n")
end

------------------------------------------------------------ delta debugging
-- ddmin(items, first): the smallest sublist found that still fails;
-- first(candidates) -> the index of the first candidate list that fails
-- (they are tried in batches, the earliest wins: the result does not
-- depend on how many run at once), or nil.
function M.ddmin(items, first)
  if #items > 0 and first({ {} }) then return {} end
  local n = 2
  while #items >= 2 do
    local size = #items / n
    local chunks = {}
    for c = 1, n do
      local part = {}
      for i = math.floor((c - 1) * size) + 1, math.floor(c * size) do part[#part + 1] = items[i] end
      if #part > 0 then chunks[#chunks + 1] = part end
    end
    local k = first(chunks)
    if k then
      items, n = chunks[k], 2
    else
      local comps = {}
      if #chunks > 2 then
        for c = 1, #chunks do
          local rest = {}
          for d, part in ipairs(chunks) do
            if d ~= c then table.move(part, 1, #part, #rest + 1, rest) end
          end
          comps[#comps + 1] = rest
        end
      end
      k = #comps > 0 and first(comps) or nil
      if k then
        items, n = comps[k], math.max(n - 1, 2)
      elseif n >= #items then
        break
      else
        n = math.min(#items, n * 2)
      end
    end
  end
  return items
end

local function round_ms(x) return math.floor(x * 1000 + 0.5) / 1000 end

local function copy_list(list)
  local out = {}
  for i, x in ipairs(list) do
    local y = {}
    for k, v in pairs(x) do y[k] = v end
    out[i] = y
  end
  return out
end

-- The earliest value of list[i][key] in [lo, list[i][key]] (to the
-- millisecond, by bisection) at which fails(list) still holds; sets it.
local function earliest(list, i, key, lo, fails)
  local hi = list[i][key]
  if hi - lo < 0.001 then return end
  local function try(v)
    local c = copy_list(list)
    c[i][key] = v
    return fails(c)
  end
  if try(lo) then
    list[i][key] = lo
    return
  end
  for _ = 1, M.STEPS do
    local mid = round_ms((lo + hi) / 2)
    if mid <= lo or mid >= hi then break end
    if try(mid) then hi = mid else lo = mid end
  end
  list[i][key] = hi
end

-- Moves each injection as early as it still fails (keeping their order),
-- then shortens each heal delay.
function M.tighten(list, fails)
  list = copy_list(list)
  for i = 1, #list do
    earliest(list, i, "t", i > 1 and list[i - 1].t or 0, fails)
  end
  for i = 1, #list do
    if type(list[i].heal_after) == "number" then earliest(list, i, "heal_after", 0, fails) end
  end
  return list
end

------------------------------------------------------------ the files
local function write(path, text)
  local f, err = io.open(path, "w")
  if not f then return nil, err end
  f:write(text)
  f:close()
  return true
end

local function read(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

-- The end of the balanced argument that opens at src[i] ("{" or "("),
-- skipping strings and comments; nil if it does not close.
local function closing(src, i)
  local depth, n = 0, #src
  while i <= n do
    local c = src:sub(i, i)
    if c == "-" and src:sub(i, i + 1) == "--" then
      local eq = src:match("^%[(=*)%[", i + 2)
      if eq then i = select(2, src:find("]" .. eq .. "]", i, true)) or n
      else i = src:find("\n", i, true) or n end
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and src:sub(j, j) ~= c do
        if src:sub(j, j) == "\\" then j = j + 1 end
        j = j + 1
      end
      i = j
    elseif c == "[" and src:match("^%[=*%[", i) then
      local eq = src:match("^%[(=*)%[", i)
      i = select(2, src:find("]" .. eq .. "]", i, true)) or n
    elseif c == "{" or c == "(" then
      depth = depth + 1
    elseif c == "}" or c == ")" then
      depth = depth - 1
      if depth == 0 then return i end
    end
    i = i + 1
  end
end

-- The list as a table constructor of at most `lines` newlines: one
-- entry a line when that fits, else all on one line.
local function fitted(list, ind, lines)
  local text = M.list_source(list, ind)
  if select(2, text:gsub("\n", "")) <= lines then return text end
  local parts = {}
  for i, x in ipairs(list) do parts[i] = M.entry_source(x) end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- src with each call X.nemesis{...} or X.nemesis(...) replaced by
-- X.schedule(LIST), on as many lines as the call (the lines after it keep
-- their numbers); returns the new source and how many calls it replaced.
function M.rewrite(src, list)
  local out, pos, count = {}, 1, 0
  while true do
    local s, e, prefix = src:find("([%w_]+%s*%.%s*)nemesis%s*[{(]", pos)
    if not s then break end
    local stop = closing(src, e)
    if not stop then break end
    local ind = src:sub(1, s):match("([ \t]*)[^\n]*$") or ""
    local lines = select(2, src:sub(s, stop):gsub("\n", ""))
    local call = prefix .. "schedule(" .. fitted(list, ind, lines) .. ")"
    out[#out + 1] = src:sub(pos, s - 1)
    out[#out + 1] = call .. string.rep("\n", lines - select(2, call:gsub("\n", "")))
    count, pos = count + 1, stop + 1
  end
  out[#out + 1] = src:sub(pos)
  return table.concat(out), count
end

-- The minimal scenario's text: the header, then the rewritten source run
-- under the original's chunk name (its errors name the same file and
-- lines, and a file it loads beside itself is found).
function M.scenario_text(header, file, body)
  local eq = ""
  while body:find("]" .. eq .. "]", 1, true) do eq = eq .. "=" end
  if body:sub(1, 1) == "#" then body = "--" .. body end -- a #! line
  return header .. "return assert(load([" .. eq .. "[\n" .. body .. "]" .. eq .. "], " ..
    string.format("%q", "@" .. file) .. "))(...)\n"
end

local function base(file)
  return (file:match("([^/]+)$"):gsub("%.lua$", ""))
end

------------------------------------------------------------ the run
-- Shrinks seed c.seed of c.file, failing with c.signature (at c.t, if
-- known): c.args (the scenario's arguments), c.out (the directory),
-- c.jobs, c.limit (wall seconds a run may take). Prints what it did; returns the path of the
-- minimal scenario, or nil.
function M.run(c)
  local name = string.format("%s.seed%d", base(c.file), c.seed)
  local stem = c.out .. "/" .. name
  local say = function(fmt, ...) print(string.format("shrink seed %d: " .. fmt, c.seed, ...)) end
  local trace = stem .. ".jsonl"
  seeds.run_blocking(seeds.argv(c.file, c.seed, { trace = trace, args = c.args }))
  local events, err = timeline.read(trace)
  os.remove(trace)
  if not events then return say("no trace (%s)", tostring(err)) end
  local all = M.injections(events)
  if #all == 0 then return say("%s: no nemesis injection to remove", c.signature) end
  local runs, cache = 0, {}
  -- the outcome of each list (at most c.jobs at once), by its source
  local function outcomes(lists)
    local argvs, files, keys, res = {}, {}, {}, {}
    for i, l in ipairs(lists) do
      keys[i] = M.list_source(l, "")
      if cache[keys[i]] == nil then
        files[#files + 1] = os.tmpname()
        write(files[#files], "return " .. keys[i] .. "\n")
        argvs[#argvs + 1] = seeds.argv(c.file, c.seed, { schedule = files[#files], args = c.args })
        res[#argvs] = i
      end
    end
    runs = runs + #argvs
    seeds.run_parallel(argvs, c.jobs, c.limit, function(j, r)
      local o = seeds.result(r, c.limit)
      cache[keys[res[j]]] = not o.ok and o.signature == c.signature
    end)
    for _, f in ipairs(files) do os.remove(f) end
    local fails = {}
    for i in ipairs(lists) do fails[i] = cache[keys[i]] end
    return fails
  end
  local function first(lists)
    for from = 1, #lists, c.jobs do
      local batch = table.move(lists, from, math.min(#lists, from + c.jobs - 1), 1, {})
      local fails = outcomes(batch)
      for i = 1, #batch do if fails[i] then return from + i - 1 end end
    end
  end
  local function fails(list) return outcomes({ list })[1] end
  local t0 = require("tend.internal").wall_clock()
  if not fails(all) then
    return say("its %d injections replayed as a schedule do not fail with %s: not shrunk",
      #all, c.signature)
  end
  local min = M.tighten(M.ddmin(all, first), fails)
  local src, rerr = read(c.file)
  if not src then return say("cannot read %s: %s", c.file, tostring(rerr)) end
  local body, count = M.rewrite(src, min)
  if count == 0 then -- the nemesis is in a file FILE loads: the list alone
    local list = stem .. ".schedule.lua"
    local ok, werr = write(list, string.format("-- The %d of %d injections of %s, seed %d, that\n" ..
      "-- still fail it with %s (tend explore --shrink, %d runs).\nreturn %s\n", #min, #all,
      c.file, c.seed, c.signature, runs, M.list_source(min, "")))
    if not ok then return say("cannot write %s: %s", list, tostring(werr)) end
    return say("%s: %d of %d injections removed (%d runs); no nemesis call in %s to replace: " ..
      "replay with tend scenario %s --seed %d --chaos-schedule %s", c.signature, #all - #min, #all,
      runs, c.file, c.file, c.seed, list)
  end
  local path = stem .. ".min.lua"
  local header = string.format("-- Minimal scenario written by `tend explore --shrink` from %s, seed %d:\n" ..
    "-- it fails with %s.\n-- %d of the nemesis's %d injections removed (the seed failed%s with all\n" ..
    "-- of them), the rest as early and their heals as soon as it still fails\n" ..
    "-- (%d runs). Replay: tend scenario %s --seed %d\n" ..
    "-- Below: %s with its nemesis replaced by the schedule, run under its\n" ..
    "-- own name (the same file and lines in errors; run it from where you ran explore).\n",
    c.file, c.seed, c.signature, #all - #min, #all, c.t and string.format(" at t=%.3f", c.t) or "",
    runs, path, c.seed, c.file)
  local ok, werr = write(path, M.scenario_text(header, c.file, body))
  if not ok then return say("cannot write %s: %s", path, tostring(werr)) end
  local r = seeds.run_blocking(seeds.argv(path, c.seed,
    { trace = stem .. ".min.jsonl", svg = stem .. ".min.svg", args = c.args }))
  say("%s: %d of %d injections removed (%d runs, %.1f s) -> %s", c.signature, #all - #min,
    #all, runs, require("tend.internal").wall_clock() - t0, path)
  if r.ok or r.signature ~= c.signature then
    say("warning: %s fails %s", path, r.ok and "no more" or ("with " .. r.signature))
  end
  return path
end

return M
