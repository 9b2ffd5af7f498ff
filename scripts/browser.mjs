// A test-only driver of headless Chromium over the DevTools protocol, with
// nothing but node (20: run with --experimental-websocket) and Debian's
// chromium: opens URL, waits until --wait-for EXPR is true (if given),
// evaluates --eval EXPR in the page (a promise is awaited), takes a
// screenshot with --screenshot OUT.png, and prints one JSON line: the
// evaluation's value (an object's fields, else as "value") with "errors"
// (console errors, uncaught exceptions, failed loads) and "ms" (from the
// navigation to the load, or to --wait-for being true). Keep the value
// flat (scalars, arrays of scalars): tend.timeline.parse_line reads it.
// Exits 3 with "no chromium" on stderr when there is no browser, 1 on a
// failure of the browser or the page, 0 otherwise (errors included).
// Usage: node --experimental-websocket scripts/browser.mjs URL
//          [--eval EXPR] [--wait-for EXPR] [--screenshot OUT.png]
//          [--width W] [--height H] [--timeout SECONDS]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const opt = { width: 1200, height: 900, timeout: 20 };
let url;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a.startsWith("--")) opt[a.slice(2).replace(/-(.)/g, (_, c) => c.toUpperCase())] = args[++i];
  else url = a;
}
if (!url) { console.error("browser.mjs: expected a URL"); process.exit(2); }

function findBrowser() {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    for (const dir of (process.env.PATH || "").split(":")) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  return null;
}
const exe = findBrowser();
if (!exe) { console.error("no chromium"); process.exit(3); }

const profile = mkdtempSync(join(tmpdir(), "tend-browser-"));
const child = spawn(exe, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
  "--no-first-run", "--remote-debugging-port=0", `--user-data-dir=${profile}`,
  `--window-size=${opt.width},${opt.height}`, "about:blank"], { stdio: "ignore" });
const deadline = Date.now() + Number(opt.timeout) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let exited = false;
child.on("exit", () => { exited = true; });
function finish(code, out) {
  if (out !== undefined) console.log(JSON.stringify(out));
  try { child.kill("SIGTERM"); } catch (_) { /* gone */ }
  const t0 = Date.now();
  const done = () => { // once chromium has exited (it writes its profile to the end)
    if (!exited && Date.now() - t0 < 3000) { setTimeout(done, 50); return; }
    try { child.kill("SIGKILL"); } catch (_) { /* gone */ }
    for (let i = 0; i < 5; i++) {
      try { rmSync(profile, { recursive: true, force: true }); break; } catch (_) { /* busy: again */ }
    }
    process.exit(code);
  };
  done();
}
function fail(why) { console.error("browser.mjs: " + why); finish(1); }

async function main() {
  let port;
  while (!port) { // chromium writes its port there once it listens
    if (Date.now() > deadline) return fail("chromium did not start");
    try { port = readFileSync(join(profile, "DevToolsActivePort"), "utf8").split("\n")[0]; } catch (_) { await sleep(50); }
  }
  const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = list.find((t) => t.type === "page");
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((ok, ko) => { ws.onopen = ok; ws.onerror = ko; });
  let next = 0;
  const waiting = new Map();
  const listeners = [];
  const errors = [];
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id !== undefined && waiting.has(msg.id)) {
      const { ok, ko } = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) ko(new Error(msg.error.message)); else ok(msg.result);
      return;
    }
    if (msg.method === "Runtime.exceptionThrown") {
      const d = msg.params.exceptionDetails;
      errors.push("exception: " + ((d.exception && d.exception.description) || d.text));
    } else if (msg.method === "Runtime.consoleAPICalled" && msg.params.type === "error") {
      errors.push("console.error: " + msg.params.args.map((a) => a.value ?? a.description).join(" "));
    } else if (msg.method === "Log.entryAdded" && msg.params.entry.level === "error") {
      errors.push("log: " + msg.params.entry.text + (msg.params.entry.url ? " " + msg.params.entry.url : ""));
    }
    for (const l of listeners) l(msg);
  };
  const send = (method, params = {}) => new Promise((ok, ko) => {
    const id = ++next;
    waiting.set(id, { ok, ko });
    ws.send(JSON.stringify({ id, method, params }));
  });
  const evaluate = async (expr) => {
    const r = await send("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error("evaluating: " + (r.exceptionDetails.exception?.description || r.exceptionDetails.text));
    return r.result.value;
  };
  await send("Page.enable");
  await send("Runtime.enable");
  await send("Log.enable");
  await send("Emulation.setDeviceMetricsOverride", { width: Number(opt.width),
    height: Number(opt.height), deviceScaleFactor: 1, mobile: false });
  const loaded = new Promise((ok) => listeners.push((m) => { if (m.method === "Page.loadEventFired") ok(); }));
  const t0 = Date.now();
  const nav = await send("Page.navigate", { url });
  if (nav.errorText) return fail(`cannot open ${url}: ${nav.errorText}`);
  await Promise.race([loaded, sleep(deadline - Date.now())]);
  let ms = Date.now() - t0;
  if (opt.waitFor) {
    while (!(await evaluate(opt.waitFor))) {
      if (Date.now() > deadline) return fail(`timed out waiting for ${opt.waitFor}`);
      await sleep(20);
    }
    ms = Date.now() - t0;
  }
  const value = opt.eval ? await evaluate(opt.eval) : null;
  if (opt.screenshot) {
    const shot = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: false });
    writeFileSync(opt.screenshot, Buffer.from(shot.data, "base64"));
  }
  ws.close();
  const flat = value && typeof value === "object" && !Array.isArray(value) ? value : { value };
  finish(0, { ...flat, errors, ms });
}
main().catch((e) => fail(e.message));
