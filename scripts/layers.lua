-- scripts/layers.lua: checks that the sources keep their four layers,
-- base < runtime < api < cli, where a layer uses only itself and those below.
--
--   build/tend scripts/layers.lua [SRC_DIR [OBJ_DIR]]   (src, build/obj)
--
-- Violations, one line each as "layers: <file>: <what>", then exit 1:
--   1. a quoted include must name its layer folder ("runtime/core/actor.h"),
--      exist under SRC_DIR and not be in a layer above the file's own;
--   2. src/base includes no Lua header (lua*, lauxlib*, lualib*);
--   3. src/base and src/runtime register no Lua functions (luaL_Reg);
--   4. no object OBJ_DIR/<layer>/<name>.o uses a symbol (nm -u) that an
--      object of a layer above defines (nm -g --defined-only);
--   5. no .c or .h file has more than 700 lines;
--   6. a file of src/api or src/cli includes from src/runtime only its
--      face, "runtime/tend.h" (the files of FACE_PENDING excepted, until
--      they are moved to it; a listed file that no longer needs it fails).
--   7. inside src/runtime, the wings (design §4.2): a file of core/
--      includes and calls only core/; a file of another wing
--      (supervision/, io/process/, io/tcp/, io/http/, nodes/) only its own
--      folder and core/ (the core reaches the wings through the driver
--      table, core/driver.h); only the files at the root of src/runtime
--      (drivers.c, which lists the drivers; face.c) may name every wing;
--      every wing may include the face's headers (the types it defines).
-- Also reported, without failing: the face's size (lines, functions
-- declared), the files still in FACE_PENDING, and the loops in the call graph among the
-- runtime files (Tarjan's strongly connected components).
-- Every .c and .h file must sit in a layer folder; build/obj/modules.o
-- (generated, outside the layer folders) is ignored.

local LAYERS = { "base", "runtime", "api", "cli" }
local RANK = {}
for i, name in ipairs(LAYERS) do RANK[name] = i end
local MAX_LINES = 700
local FACE = "runtime/tend.h"
-- Files of src/api and src/cli that may still include private runtime
-- headers (rule 6) while the face lacks what they use: empty since every
-- file moved to the face; a file listed here that includes only the face
-- fails, so the list can only shrink.
local FACE_PENDING = {}

local src_dir = (arg[1] or "src"):gsub("(.)/+$", "%1")
local obj_dir = (arg[2] or "build/obj"):gsub("(.)/+$", "%1")

local failed = false
local function violation(file, what)
  print(("layers: %s: %s"):format(file, what))
  failed = true
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- The output lines of a shell command.
local function lines_of(cmd)
  local out = {}
  local p = assert(io.popen(cmd))
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

local function is_dir(path) return os.execute("test -d " .. quote(path)) == true end

-- The layer a relative path starts with ("runtime/actor.c" -> "runtime").
local function layer_of(rel)
  local top = rel:match("^([^/]+)/")
  return RANK[top] and top or nil
end

-- Paths of the files under dir matching a find(1) test, relative to dir.
local function find(dir, test)
  local out = {}
  for _, path in ipairs(lines_of(("cd %s && find . -type f %s | sort"):format(quote(dir), test))) do
    out[#out + 1] = path:gsub("^%./", "")
  end
  return out
end

-- Sources: includes, Lua and size (rules 1, 2, 3, 5) --------------------

-- Blanks out comments, keeping their newlines.
local function strip_comments(text)
  text = text:gsub("/%*.-%*/", function(c) return (c:gsub("[^\n]", "")) end)
  return (text:gsub("//[^\n]*", ""))
end

local function is_lua_header(name)
  local base = name:match("[^/]*$")
  return base:find("^lua") or base:find("^lauxlib")
end

local face_pending_seen = {}

-- The wing of a runtime path ("runtime/io/tcp/tcp.c" -> "io/tcp"; "" for
-- the files at the root of runtime), or nil outside runtime.
local function wing_of(rel)
  local rest = rel:match("^runtime/(.*)$")
  if not rest then return nil end
  return rest:match("^(io/[^/]+)/") or rest:match("^([^/]+)/") or ""
end

-- May a file of wing `from` use one of wing `to`? (rule 7)
local function wing_allows(from, to)
  return from == to or to == "core" or from == ""
end

local function check_include(file, layer, name, exists)
  local target = layer_of(name)
  if target == "runtime" and RANK[layer] > RANK.runtime and name ~= FACE then
    local rel = file:sub(#src_dir + 2)
    if FACE_PENDING[rel] then
      face_pending_seen[rel] = true
    else
      violation(file, ("includes %s: above the runtime, include only %s"):format(name, FACE))
    end
  end
  if not target then
    local what = 'includes "%s": include headers with their layer folder'
    return violation(file, what:format(name))
  end
  if not exists[name] then
    violation(file, ("includes %s, which is not in %s"):format(name, src_dir))
  end
  if RANK[target] > RANK[layer] then
    violation(file, ("includes %s, and %s is above %s"):format(name, target, layer))
  end
  local from, to = wing_of(file:sub(#src_dir + 2)), wing_of(name)
  local face_part = name == FACE or name == "runtime/tend_io.h" -- its types
  if from and to and not face_part and not wing_allows(from, to) then
    violation(file, ("includes %s: runtime/%s may use only its own folder and core/")
      :format(name, from))
  end
end

local function check_source(rel, exists)
  local file, layer = src_dir .. "/" .. rel, layer_of(rel)
  if not layer then return violation(file, "is not in a layer folder (base, runtime, api, cli)") end
  local f = assert(io.open(file, "rb"))
  local text = f:read("a")
  f:close()
  local code = strip_comments(text)
  for line in code:gmatch("[^\n]+") do
    local open, name, close = line:match('^%s*#%s*include%s*([<"])([^>"]+)([>"])')
    if open == '"' then check_include(file, layer, name, exists) end
    if name and layer == "base" and is_lua_header(name) then
      violation(file, ("includes %s%s%s: no Lua in base"):format(open, name, close))
    end
  end
  if RANK[layer] < RANK.api and code:find("%f[%w_]luaL_Reg%f[^%w_]") then
    violation(file, "registers Lua functions (luaL_Reg): only src/api may")
  end
  local n = select(2, text:gsub("\n", "")) + (text:find("[^\n]$") and 1 or 0)
  if n > MAX_LINES then violation(file, ("has %d lines, more than %d"):format(n, MAX_LINES)) end
end

-- Objects: calls between layers (rule 4) ---------------------------------

-- The lines `nm FLAGS` prints for each of the paths, by path: one nm over
-- them all (one nm per object took ~20 s of CPU over the fat LTO objects;
-- one nm, under a second).
local function nm_lines(flags, paths)
  local by, quoted = {}, {}
  for i, path in ipairs(paths) do
    by[path], quoted[i] = {}, quote(path)
  end
  local cur = by[paths[1]] -- (nm names the file only when it reads several)
  for _, l in ipairs(lines_of("nm " .. flags .. " " .. table.concat(quoted, " "))) do
    local head = l:match("^(%S.*):$")
    if head and by[head] then cur = by[head]
    elseif l ~= "" then cur[#cur + 1] = l end
  end
  return by
end

-- Each object's used symbols, and the object defining each global symbol.
local function read_objects(rels)
  local objs, definer, paths = {}, {}, {}
  for i, rel in ipairs(rels) do paths[i] = obj_dir .. "/" .. rel end
  local used, defined = nm_lines("-u", paths), nm_lines("-g --defined-only", paths)
  for i, rel in ipairs(rels) do
    local path = paths[i]
    local src = rel:gsub("%.o$", ".c")
    local o = { layer = layer_of(rel), src = src, name = src:match("/(.*)"), uses = {} }
    for _, l in ipairs(used[path]) do o.uses[#o.uses + 1] = l:match("(%S+)$") end
    for _, l in ipairs(defined[path]) do
      local sym = l:match("%S+%s+%a%s+(%S+)$")
      if sym and not definer[sym] then definer[sym] = o end
    end
    objs[#objs + 1] = o
  end
  return objs, definer
end

local function check_calls(objs, definer)
  for _, o in ipairs(objs) do
    for _, sym in ipairs(o.uses) do
      local d = definer[sym]
      if d and RANK[d.layer] > RANK[o.layer] then
        violation(src_dir .. "/" .. o.src, ("calls %s, defined in %s/%s (%s is above %s)")
          :format(sym, src_dir, d.src, d.layer, o.layer))
      end
      local from, to = wing_of(o.src), d and wing_of(d.src)
      if from and to and not wing_allows(from, to) then
        violation(src_dir .. "/" .. o.src, ("calls %s, defined in %s/%s: runtime/%s may use only its own folder and core/")
          :format(sym, src_dir, d.src, from))
      end
    end
  end
end

-- Report: loops among the runtime files ----------------------------------

-- Strongly connected components of graph (node -> set of nodes), Tarjan.
local function tarjan(nodes, graph)
  local index, low, on_stack, stack, comps, next_index = {}, {}, {}, {}, {}, 0
  local function visit(v)
    next_index = next_index + 1
    index[v], low[v] = next_index, next_index
    stack[#stack + 1], on_stack[v] = v, true
    for w in pairs(graph[v]) do
      if not index[w] then
        visit(w)
        low[v] = math.min(low[v], low[w])
      elseif on_stack[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local comp = {}
      repeat
        local w = table.remove(stack)
        on_stack[w] = nil
        comp[#comp + 1] = w
      until w == v
      comps[#comps + 1] = comp
    end
  end
  for _, v in ipairs(nodes) do if not index[v] then visit(v) end end
  return comps
end

local function report_runtime_loops(objs, definer)
  local nodes, graph = {}, {}
  for _, o in ipairs(objs) do
    if o.layer == "runtime" then
      nodes[#nodes + 1], graph[o.name] = o.name, {}
      for _, sym in ipairs(o.uses) do
        local d = definer[sym]
        if d and d.layer == "runtime" and d ~= o then graph[o.name][d.name] = true end
      end
    end
  end
  local loops, in_loops = {}, 0
  for _, comp in ipairs(tarjan(nodes, graph)) do
    if #comp >= 2 then
      table.sort(comp)
      loops[#loops + 1], in_loops = table.concat(comp, " "), in_loops + #comp
    end
  end
  table.sort(loops)
  for _, loop in ipairs(loops) do
    print("layers: note: runtime files calling each other in a loop: " .. loop)
  end
  print(("layers: note: %d runtime files are in loops"):format(in_loops))
end

-- The face's size (tend.h and the part it includes, FACE_PARTS), and the
-- files that do not use it alone yet (rule 6).
local FACE_PARTS = { FACE, "runtime/tend_io.h", "runtime/core/errkind.h", "runtime/nodes/wire.h" }
local function report_face()
  local lines, fns = 0, 0
  for _, part in ipairs(FACE_PARTS) do
    local f = io.open(src_dir .. "/" .. part, "rb")
    if not f then return violation(src_dir .. "/" .. part, "is missing: the runtime's face") end
    local text = f:read("a")
    f:close()
    lines = lines + select(2, text:gsub("\n", ""))
    -- bodies (of structs, enums, inline functions) become ";", so that a
    -- declaration "type name(args);" and an inline "type name(args) {...}"
    -- count once each and what their bodies call not at all
    local code = strip_comments(text):gsub("#[^\n]*", ""):gsub("%b{}", ";")
    for _ in code:gmatch("[%w_]%s*%**%s*[%a_][%w_]*%s*%b()%s*;") do fns = fns + 1 end
  end
  print(("layers: note: face: %s has %d lines, %d functions"):format(
    table.concat(FACE_PARTS, " + "), lines, fns))
  local stale, pending = {}, {}
  for rel in pairs(FACE_PENDING) do
    if face_pending_seen[rel] then pending[#pending + 1] = rel else stale[#stale + 1] = rel end
  end
  table.sort(stale)
  table.sort(pending)
  for _, rel in ipairs(stale) do
    violation(src_dir .. "/" .. rel, "is in FACE_PENDING but includes only " .. FACE .. ": drop it from the list")
  end
  if #pending > 0 then
    print(("layers: note: face: %d files still include private headers: %s")
      :format(#pending, table.concat(pending, " ")))
  end
end

local function main()
  if not is_dir(src_dir) then violation(src_dir, "no such directory") end
  local exists, sources = {}, find(src_dir, "-name '*.[ch]'")
  for _, rel in ipairs(find(src_dir, "")) do exists[rel] = true end
  for _, rel in ipairs(sources) do check_source(rel, exists) end
  report_face()

  local rels = {}
  if is_dir(obj_dir) then
    for _, rel in ipairs(find(obj_dir, "-name '*.o'")) do
      if layer_of(rel) then rels[#rels + 1] = rel end
    end
  end
  if #rels == 0 then violation(obj_dir, ("no objects in %s: run make first"):format(obj_dir)) end
  local objs, definer = read_objects(rels)
  check_calls(objs, definer)
  report_runtime_loops(objs, definer)

  if failed then os.exit(1) end
  print(("layers: ok (%d files in %d layers; no upward include or call)"):format(#sources, #LAYERS))
  os.exit(0)
end

main()
