-- tend.observe.page: the observer's page, one HTML document with its CSS
-- and JavaScript, written here and embedded in the binary like every
-- lua/ module (no CDN, no third-party code, no build step). It reads the
-- token from its own URL and asks the JSON endpoints of
-- tend.observe.replay (a recorded trace: a time slider, steps to the next
-- failure, restart or chaos event, the timeline as the navigator) or of
-- tend.observe.live (a running tree, following its /api/events stream).
return [==[<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>tend observer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
:root { --run: #59a14f; --wait: #edc948; --back: #f28e2b; --stop: #b0b0b0; --fail: #d62728; }
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { position: sticky; top: 0; z-index: 2; background: #263238; color: #eee; padding: 8px 14px;
  display: flex; gap: 14px; align-items: center; flex-wrap: wrap; }
header h1 { font-size: 15px; margin: 0; font-weight: 600; }
header .t { font: 600 15px ui-monospace, monospace; min-width: 7em; }
header input[type=range] { flex: 1; min-width: 200px; }
header button { background: #37474f; color: #eee; border: 1px solid #546e7a; border-radius: 3px;
  padding: 3px 8px; cursor: pointer; font-size: 12px; }
header button:hover { background: #455a64; }
main { display: grid; grid-template-columns: minmax(420px, 3fr) minmax(260px, 1fr); gap: 12px; padding: 12px; }
section { background: white; border: 1px solid #ddd; border-radius: 4px; padding: 8px 10px; overflow: auto; }
section h2 { font-size: 13px; margin: 0 0 6px; color: #555; text-transform: uppercase; letter-spacing: .04em; }
#tree { max-height: 60vh; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 2px 6px; border-bottom: 1px solid #f0f0f0; white-space: nowrap; }
th { color: #777; font-weight: 500; position: sticky; top: 0; background: white; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.actor { cursor: pointer; height: 23px; }
tr.spacer td { padding: 0; border: 0; }
tr.actor:hover { background: #f3f7fb; }
tr.selected { background: #e3eefa; }
.tw { display: inline-block; width: 1em; color: #888; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 11px; }
.running { background: #dcefd9; } .waiting { background: #fbf0c6; } .backoff { background: #fde0c5; }
.stopped { background: #e6e6e6; color: #666; } .none { color: #aaa; }
.badge.up { background: #dcefd9; } .badge.down { background: #f8d3d3; } .partitioned { background: #e9d8f5; }
.busy { background: #f8d3d3; } .suspended { background: #d6e4f5; } .restarting, .starting, .stopping { background: #fbf0c6; }
#actions button { margin: 2px 4px 2px 0; } #actions input { width: 14em; font: 12px ui-monospace, monospace; }
.failure { color: var(--fail); max-width: 28em; overflow: hidden; text-overflow: ellipsis; }
#nav { grid-column: 1 / -1; max-height: 48vh; padding: 0; }
#nav svg { display: block; cursor: crosshair; }
.down { color: var(--fail); font-weight: 600; } .up { color: var(--run); }
#error { color: var(--fail); }
#actor pre { white-space: pre-wrap; font-size: 12px; background: #f6f6f6; padding: 6px; }
.hidden { display: none; }
</style></head>
<body>
<header>
  <h1 id="title">tend observer</h1>
  <span class="t" id="now">t = 0 s</span>
  <input type="range" id="slider" min="0" max="1" step="0.001" value="0" aria-label="time">
  <span id="steps">
    <button data-what="failure" data-dir="prev" title="previous failure">&#9664; failure</button>
    <button data-what="failure" data-dir="next" title="next failure">failure &#9654;</button>
    <button data-what="restart" data-dir="prev" title="previous restart">&#9664; restart</button>
    <button data-what="restart" data-dir="next" title="next restart">restart &#9654;</button>
    <button data-what="chaos" data-dir="prev" title="previous chaos event">&#9664; chaos</button>
    <button data-what="chaos" data-dir="next" title="next chaos event">chaos &#9654;</button>
    <button data-what="any" data-dir="next" title="next event (right arrow)">event &#9654;</button>
  </span>
  <span id="clock" class="hidden">
    <button id="pause" title="hold the virtual clock (the page still answers)">pause</button>
    <button id="step" title="one jump of the clock to its next timer">step &#9654;</button>
  </span>
  <span id="error"></span>
</header>
<main>
  <section id="tree"><h2>Tree <small id="treecount"></small></h2>
    <table><thead><tr><th>path</th><th>state</th><th class="num" title="since its last start">age</th><th class="num">restarts</th>
      <th class="num">failures</th><th class="num">mailbox</th><th>last failure</th><th>kind</th></tr></thead><tbody id="rows"></tbody></table>
  </section>
  <div>
    <section id="counters"><h2>Counters</h2><table><tbody id="counts"></tbody></table></section>
    <section id="nodes"><h2>Nodes</h2><div id="nodelist">none</div></section>
    <section id="actor" class="hidden"><h2>Actor</h2><div id="actorbody"></div></section>
  </div>
  <section id="nav"></section>
</main>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
async function api(path, q = {}) {
  const r = await fetch(path + "?" + new URLSearchParams({ ...q, token }));
  if (!r.ok) {
    let why = r.status + " " + r.statusText;
    try { why = (await r.json()).error || why; } catch (_) { /* not JSON */ }
    throw new Error(why);
  }
  return path.endsWith(".svg") ? r.text() : r.json();
}
function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}
const fmt = (x) => (Math.round(x * 1000) / 1000).toString();
let info = null, t = 0, tMax = 1, scale = null, cursor = null, selected = null, state = null;
const collapsed = new Set();

// The tree is virtualised: only the rows in view (and a margin) are in
// the page, between two spacers, so 10,000 actors cost what 60 do. The
// actors come in tree order: an actor's children follow it.
const ROW = 23;
function visibleActors(st) {
  const out = [];
  let skip = null;
  const list = st.actors;
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    if (skip && a.path.startsWith(skip)) continue;
    skip = null;
    const next = list[i + 1];
    a.hasKids = !!(next && next.path.startsWith(a.path + "/"));
    out.push(a);
    if (a.hasKids && collapsed.has(a.path)) skip = a.path + "/";
  }
  return out;
}
// an age in seconds, as a person reads it: 0.25 s, 42 s, 3 min 5 s, 2 h 7 min
function age(s) {
  if (!(s >= 0)) return "";
  if (s < 10) return fmt(Math.round(s * 100) / 100) + " s";
  if (s < 60) return Math.floor(s) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + Math.floor(s % 60) + " s";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}
// what an actor is, besides an actor: a supervisor's strategy, an OS
// process's pid, a socket's ends, a stream's state and stages
function kindOf(a) {
  const out = [];
  if (a.strategy === "backoff") out.push("backoff supervisor" + (a.backing_off ? ", backing off" : "") + (a.backoff_restarts ? ", " + a.backoff_restarts + " restarts" : ""));
  else if (a.strategy) out.push("supervisor " + a.strategy);
  if (a.node && a.depth === 0) out.push((a.partitioned && a.partitioned.length ? "cut from " + a.partitioned.join(", ") + "; " : "") + (a.why || ""));
  if (a.pid) out.push("process pid " + a.pid);
  if (a.socket) out.push("socket " + a.socket);
  if (a.stream) {
    const stages = Array.isArray(a.stream.stages) ? a.stream.stages : [];
    out.push("stream " + a.stream.state + (stages.length ? " [" + stages.join(" \u2192 ") + "]" : ""));
  }
  return out.join("; ");
}
function rowOf(a) {
  const st = state;
  const name = a.path.replace(/^.*\//, "") || a.path;
  const tw = el("span", { class: "tw" }, a.hasKids ? (collapsed.has(a.path) ? "\u25b8" : "\u25be") : "");
  const label = a.node && a.depth === 0 ? "node " + a.node : name;
  const pathCell = el("td", { style: `padding-left:${6 + a.depth * 14}px`, title: a.path }, tw, label);
  const s = a.state || "none";
  const tr = el("tr", { class: "actor" + (a.path === selected ? " selected" : ""), "data-path": a.path },
    pathCell,
    el("td", {}, el("span", { class: "badge " + s }, a.state ? (a.state === "backoff" ? "backing off" : a.state) : "-")),
    el("td", { class: "num", title: a.since !== undefined ? "since " + fmt(a.since) + " s" : "" },
      a.since !== undefined ? age(st.t - a.since) : ""),
    el("td", { class: "num" }, String(a.restarts)),
    el("td", { class: "num" }, String(a.failures ?? "")),
    el("td", { class: "num" }, a.mailbox !== undefined ? String(a.mailbox) : "-"),
    el("td", { class: "failure", title: a.last_failure ? a.last_failure.message || "" : "" },
      a.last_failure ? `${fmt(a.last_failure.t)} s ${a.last_failure.kind || ""}: ${a.last_failure.message || ""}` : ""),
    el("td", { class: "kind" }, kindOf(a)));
  tr.addEventListener("click", (ev) => {
    if (ev.target === tw && a.hasKids) {
      if (collapsed.has(a.path)) collapsed.delete(a.path); else collapsed.add(a.path);
    } else selected = a.path;
    render(state);
  });
  return tr;
}
let shown = [];
function renderTree(st) {
  shown = visibleActors(st);
  drawRows();
}
function drawRows() {
  const box = $("tree");
  const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 20);
  const last = Math.min(shown.length, first + Math.ceil((box.clientHeight || 600) / ROW) + 40);
  const out = [];
  const spacer = (n) => el("tr", { class: "spacer", style: `height:${n * ROW}px` });
  if (first > 0) out.push(spacer(first));
  for (let i = first; i < last; i++) out.push(rowOf(shown[i]));
  if (last < shown.length) out.push(spacer(shown.length - last));
  $("rows").replaceChildren(...out);
  $("treecount").textContent = `${shown.length} shown of ${state ? state.actors.length : shown.length}`;
}

function renderCounters(st) {
  const rows = [];
  for (const k of Object.keys(st.counters).sort()) {
    rows.push(el("tr", {}, el("td", {}, k.replace("_", " ")),
      el("td", { class: "num" }, String(st.counters[k])),
      el("td", { class: "num" }, (st.rates && st.rates[k] !== undefined ? st.rates[k] : "-") + "/s")));
  }
  rows.push(el("tr", {}, el("td", {}, "events"), el("td", { class: "num" }, String(st.events)), el("td")));
  $("counts").replaceChildren(...rows);
  const nodes = st.nodes.map((n) => el("div", {}, "node " + n.name + (n.real ? " (connected)" : "") + " ",
    el("span", { class: n.up ? "up" : "down" }, n.state || (n.up ? "up" : "down")),
    n.partitioned && n.partitioned.length ? " from " + n.partitioned.join(", ") : ""));
  for (const o of st.outages) nodes.push(el("div", { class: "down" }, `${o.label} since ${fmt(o.from)} s`));
  $("nodelist").replaceChildren(...(nodes.length ? nodes : ["none"]));
}

function renderActor(st) {
  const a = selected && st.actors.find((x) => x.path === selected);
  $("actor").classList.toggle("hidden", !a);
  if (!a) return;
  const lines = [["path", a.path], ["state", a.state || "-"], ["since", a.since !== undefined ? fmt(a.since) + " s" : "-"],
    ["incarnation", a.incarnation ?? "-"], ["restarts", a.restarts], ["failures", a.failures]];
  if (a.pid) lines.push(["pid", a.pid]);
  if (a.mailbox !== undefined) lines.push(["mailbox", a.mailbox]);
  if (a.strategy) lines.push(["strategy", a.strategy]);
  const body = [el("table", {}, el("tbody", {}, ...lines.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, String(v))))))];
  if (a.last_failure) body.push(el("pre", {}, `last failure at ${fmt(a.last_failure.t)} s: ${a.last_failure.kind || ""}\n${a.last_failure.message || ""}`));
  if (info.mode === "live" && a.node && a.depth === 0) { // a node: its actions (simulated ones)
    body.push(nodeActions(a, st));
    $("actorbody").replaceChildren(...body);
    return;
  }
  if (info.mode === "live" && a.node_path) { // an actor of another node: seen, not acted on
    $("actorbody").replaceChildren(...body);
    return;
  }
  if (info.mode === "live") body.push(actions(a.path), el("div", { id: "inspect" }, detail.path === a.path ? detail.node : ""));
  $("actorbody").replaceChildren(...body);
  if (info.mode === "live" && detail.path !== a.path && detail.loading !== a.path) loadDetail(a.path);
}

// live: the actions on the selected actor, and its inspect and history
const detail = { path: null, node: "", at: 0 };
async function loadDetail(path) {
  detail.loading = path;
  detail.at = Date.now();
  try {
    const d = await api("/api/actor", { path });
    const hist = d.history.map((e) => `${fmt(e.t)} s ${e.ev} ${e.kind || e.detail || ""} ${e.message || ""}`);
    detail.path = path;
    detail.node = el("div", {}, el("pre", {}, d.inspect), el("pre", {}, hist.length ? hist.join("\n") : "no failure, restart or chaos kept"));
    const box = $("inspect");
    if (box) box.replaceChildren(detail.node);
  } catch (e) { $("error").textContent = e.message; }
  detail.loading = null;
}
async function act(verb, path, body) {
  const r = await fetch("/api/action?" + new URLSearchParams({ do: verb, path, token }), { method: "POST", body: body || "" });
  const j = await r.json();
  $("error").textContent = r.ok ? "" : j.error;
  detail.path = null;
}
async function nodeAct(q) {
  const r = await fetch("/api/action?" + new URLSearchParams({ ...q, token }), { method: "POST", body: "" });
  const j = await r.json();
  $("error").textContent = r.ok ? "" : j.error;
}
// a simulated node's actions: partition from / repair with another node,
// crash, restart (each a trace event, through tend.chaos)
function nodeActions(a, st) {
  const box = el("div", { id: "nodeactions" });
  const n = st.nodes.find((x) => x.name === a.node);
  if (!n || !n.sim) { box.append("no actions: not a simulated node"); return box; }
  const others = st.nodes.filter((x) => x.sim && x.name !== a.node).map((x) => x.name);
  const pick = el("select", { id: "othernode", "aria-label": "the other node" }, ...others.map((o) => el("option", { value: o }, o)));
  for (const v of ["partition", "repair"]) {
    const b = el("button", { "data-do": v }, v);
    b.addEventListener("click", () => nodeAct({ do: v, node: a.node, to: pick.value }));
    box.append(b);
  }
  box.append(pick);
  for (const [v, label] of [["crash_node", "crash"], ["restart_node", "restart"]]) {
    const b = el("button", { "data-do": v }, label);
    b.addEventListener("click", () => nodeAct({ do: v, node: a.node }));
    box.append(b);
  }
  return box;
}
function actions(path) {
  const input = el("input", { id: "message", placeholder: '{ op = "get", key = 1 }', "aria-label": "message (a Lua literal)" });
  const send = el("button", { "data-do": "send" }, "send");
  send.addEventListener("click", () => act("send", path, input.value));
  const box = el("div", { id: "actions" }, input, send);
  for (const v of ["stop", "kill", "crash", "suspend", "resume"]) {
    const b = el("button", { "data-do": v }, v);
    b.addEventListener("click", () => act(v, path));
    box.append(b);
  }
  return box;
}

function render(st) {
  state = st;
  renderTree(st);
  renderCounters(st);
  renderActor(st);
  $("now").textContent = "t = " + fmt(st.t) + " s";
  if (scale && cursor) {
    const x = scale.x0 + (scale.x1 - scale.x0) * Math.min(1, st.t / scale.tMax);
    cursor.setAttribute("x1", x); cursor.setAttribute("x2", x);
  }
  document.body.dataset.ready = "1";
}

let inflight = false, wanted = null;
async function show(nt) {
  wanted = Math.max(0, Math.min(nt, tMax));
  $("slider").value = wanted;
  if (inflight) return;
  inflight = true;
  try {
    while (wanted !== null) {
      const at = wanted; wanted = null; t = at;
      render(await api("/api/state", { t: at }));
    }
    $("error").textContent = "";
  } catch (e) { $("error").textContent = e.message; }
  inflight = false;
}

async function navigator() {
  const svgText = await api("/api/timeline.svg");
  $("nav").innerHTML = svgText; // our own drawing, from our own server
  const svg = $("nav").querySelector("svg");
  scale = { tMax: +svg.dataset.tMax, x0: +svg.dataset.x0, x1: +svg.dataset.x1 };
  cursor = document.createElementNS("http://www.w3.org/2000/svg", "line");
  cursor.setAttribute("id", "cursor");
  cursor.setAttribute("y1", 0); cursor.setAttribute("y2", svg.getAttribute("height"));
  cursor.setAttribute("stroke", "#1565c0"); cursor.setAttribute("stroke-width", 2);
  cursor.setAttribute("x1", scale.x0); cursor.setAttribute("x2", scale.x0);
  svg.append(cursor);
  if (info.mode === "replay") {
    svg.addEventListener("click", (ev) => {
      const r = svg.getBoundingClientRect();
      const x = (ev.clientX - r.left) * (+svg.getAttribute("width") / r.width);
      show((x - scale.x0) / (scale.x1 - scale.x0) * scale.tMax);
    });
  }
}

// live: the tree, counters and timeline follow /api/events (server-sent
// events: "tree" snapshots, "trace" batches); if the stream cannot be
// opened at all, /api/tree is polled every 200 ms instead.
function showTree(st) {
  if (!(state && document.activeElement && document.activeElement.id === "message")) render(st);
  else { state = st; renderTree(st); renderCounters(st); }
  if (selected && Date.now() - detail.at > 1000) detail.path = null; // inspect again every second
}
let navBusy = false, navAgain = false, navAt = 0;
async function redrawTimeline() { // at most once a second, the last request wins
  if (!info.timeline) return;
  if (navBusy) { navAgain = true; return; }
  navBusy = true;
  try {
    const wait = navAt + 1000 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    navAgain = false; navAt = Date.now();
    const nav = $("nav"), top = nav.scrollTop, left = nav.scrollLeft;
    const follow = nav.scrollLeft + nav.clientWidth >= nav.scrollWidth - 4; // scrolled to the end: stay there
    await navigator();
    nav.scrollTop = top;
    nav.scrollLeft = follow ? nav.scrollWidth : left;
  } catch (e) { $("error").textContent = e.message; }
  navBusy = false;
  if (navAgain) redrawTimeline();
}
async function poll() {
  document.body.dataset.feed = "poll";
  for (let n = 0; ; n++) {
    try {
      showTree(await api("/api/tree"));
      if (n % 10 === 0) redrawTimeline();
    } catch (e) { $("error").textContent = e.message; }
    await new Promise((r) => setTimeout(r, 200));
  }
}
function live() {
  let opened = false;
  const es = new EventSource("/api/events?" + new URLSearchParams({ token }));
  es.addEventListener("tree", (ev) => {
    opened = true;
    document.body.dataset.feed = "events";
    $("error").textContent = "";
    showTree(JSON.parse(ev.data));
  });
  es.addEventListener("trace", () => redrawTimeline());
  es.onerror = () => {
    if (!opened) { es.close(); poll(); } // never opened: poll instead
    else if (!(state && state.paused)) $("error").textContent = "the event stream broke; reconnecting";
  };
  redrawTimeline();
}

// under --virtual-time: pause (the clock held), resume, step (one jump
// of the clock to its next timer); while paused the event stream ends
// after each tree and comes back after 1 s, so the page asks for the
// tree itself after each step
function clockButtons(paused) {
  $("clock").classList.remove("hidden");
  const show = (p) => { $("pause").textContent = p ? "resume" : "pause"; $("step").disabled = !p; };
  show(paused);
  const clock = async (verb) => {
    const r = await fetch("/api/clock?" + new URLSearchParams({ do: verb, token }), { method: "POST", body: "" });
    const j = await r.json();
    $("error").textContent = r.ok ? "" : j.error;
    if (!r.ok) return;
    show(j.paused);
    await new Promise((res) => setTimeout(res, 50));
    showTree(await api("/api/tree"));
    redrawTimeline();
  };
  $("pause").addEventListener("click", () => clock($("pause").textContent === "pause" ? "pause" : "resume"));
  $("step").addEventListener("click", () => clock("step"));
}

$("tree").addEventListener("scroll", () => drawRows());

async function start() {
  try { info = await api("/api/info"); } catch (e) { $("error").textContent = e.message; return; }
  $("title").textContent = info.mode === "replay" ? "tend observe " + info.trace : "tend observer (live)";
  if (info.mode === "replay") {
    tMax = info.t_max;
    $("slider").max = tMax;
    $("slider").step = tMax / 2000;
    $("slider").addEventListener("input", (ev) => show(+ev.target.value));
    for (const b of document.querySelectorAll("#steps button")) {
      b.addEventListener("click", async () => {
        try {
          const r = await api("/api/step", { t, what: b.dataset.what, dir: b.dataset.dir });
          if (r.t !== null) show(r.t);
        } catch (e) { $("error").textContent = e.message; }
      });
    }
    document.addEventListener("keydown", async (ev) => {
      if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
      const r = await api("/api/step", { t, what: "any", dir: ev.key === "ArrowRight" ? "next" : "prev" });
      if (r.t !== null) show(r.t);
    });
    await navigator();
    await show(0);
  } else {
    $("slider").classList.add("hidden");
    $("now").title = "the host's clock";
    $("steps").classList.add("hidden");
    if (info.virtual) clockButtons(info.paused);
    live(); // the tree first; the timeline (larger) after it
  }
}
start();
</script>
</body></html>
]==]
