// retrystorm serve: the page's code. Every knob is a --set; Run posts the
// scenario and the sets to /api/run and draws what comes back (the same
// CSV files a run writes). The page's state lives in the URL's hash, so a
// link reproduces it (its keys: docs/page.md). Stage mode (a button,
// or stage=1 in the hash) draws for a projector: larger type, thicker
// lines. Plain DOM and uPlot; no framework, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
let catalog = null;   // /api/scenarios
let shape = null;     // the knobs' defaults: the scenario as loaded
let results = null;   // {a: run, b: run or null}, each {files, series}
let charts = [];
let playing = null;
let checkedText = null; // the pasted text the knobs were built from
let pastedHead = null;  // what the header says of the checked text: {name, about}
let savedHash = "";     // the hash the page last wrote (or was opened with)

// ---- CSV, as written by output.c (a header, then numbers or empty cells) ----
function parseCsv(text) {
  const lines = text.trim().split("\n");
  const head = lines[0].split(",");
  const cols = head.map(() => []);
  for (let i = 1; i < lines.length; i++) {
    const cells = lines[i].split(",");
    for (let c = 0; c < head.length; c++)
      cols[c].push(cells[c] === "" || cells[c] === undefined ? null : (isNaN(+cells[c]) ? cells[c] : +cells[c]));
  }
  return Object.fromEntries(head.map((h, c) => [h, cols[c]]));
}

function summaryRow(text) {
  const [head, row] = text.trim().split("\n");
  const keys = head.split(","), vals = row.split(",");
  return Object.fromEntries(keys.map((k, i) => [k, vals[i]]));
}

// ---- knobs: each writes one SECTION.KEY=VALUE when it differs from the scenario ----
const knobs = [];

function addKnob(parent, label, key, value, input) {
  const row = document.createElement("div");
  row.className = "knob";
  const name = document.createElement("label");
  name.textContent = label;
  row.append(name, ...input.nodes);
  const set = document.createElement("div");
  set.className = "set";
  row.append(set);
  parent.append(row);
  const k = { key, base: String(value), get: input.get, put: input.put, row, set, id: input.id };
  input.onchange(() => { refreshKnob(k); saveSoon(); });
  knobs.push(k);
  refreshKnob(k);
  return k;
}

function refreshKnob(k) {
  const v = k.get();
  const changed = v !== k.base && v !== "";
  k.row.classList.toggle("changed", changed);
  k.set.textContent = changed ? `--set ${k.key}=${v}` : `${k.key} = ${k.base}`;
}

// A text field with a slider that writes into it (unit appended).
function slider(id, value, min, max, step, unit, parse, prefix = "") {
  const text = document.createElement("input");
  text.type = "text"; text.id = id; text.value = value;
  const range = document.createElement("input");
  range.type = "range"; range.min = min; range.max = max; range.step = step;
  const n = parse(value);
  range.value = n === null ? max : n;
  range.addEventListener("input", () => { text.value = prefix + range.value + unit; text.dispatchEvent(new Event("change")); });
  return {
    id, nodes: [range, text], get: () => text.value.trim(),
    put: (v) => { text.value = v; const p = parse(v); if (p !== null) range.value = p; },
    onchange: (f) => text.addEventListener("change", f),
  };
}

function choice(id, value, options) {
  const sel = document.createElement("select");
  sel.id = id;
  for (const o of options) sel.append(new Option(o, o));
  sel.value = value;
  return {
    id, nodes: [sel, document.createElement("span")], get: () => sel.value,
    put: (v) => { sel.value = v; }, onchange: (f) => sel.addEventListener("change", f),
  };
}

// "300ms" -> 300 (ms), "2s" -> 2000; none -> null
function ms(v) {
  const m = /^([0-9.]+)\s*(ns|us|ms|s|m)?$/.exec(v);
  if (!m) return null;
  const f = { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3, m: 6e4 }[m[2] || "s"];
  return +m[1] * f;
}
const num = (v) => (v === "" || isNaN(+v) ? null : +v);
const secs = (v) => { const x = ms(v); return x === null ? null : x / 1000; };

function clientLayer(s) {
  return s.layers.find((l) => l.from === "client") || s.layers[0];
}

function triggerPhase(s) {
  return s.phases.find((p) => p.factor !== null) || s.phases[0] || null;
}

function buildKnobs(s) {
  knobs.length = 0;
  for (const id of ["policy", "trigger", "load"]) {
    const f = $(id);
    while (f.children.length > 1) f.lastChild.remove();
  }
  const L = clientLayer(s), P = triggerPhase(s), kinds = catalog.kinds;
  $("layer-name").textContent = L.name;
  const lk = (k) => `layer.${L.name}.${k}`;
  addKnob($("policy"), "attempts", lk("attempts"), L.attempts, slider("k-attempts", String(L.attempts), 1, 10, 1, "", num));
  addKnob($("policy"), "timeout", lk("timeout"), L.timeout, slider("k-timeout", L.timeout, 10, 5000, 10, "ms", ms));
  addKnob($("policy"), "backoff", lk("backoff"), L.backoff, choice("k-backoff", L.backoff, kinds.backoff));
  addKnob($("policy"), "base", lk("base"), L.base, slider("k-base", L.base, 1, 2000, 1, "ms", ms));
  addKnob($("policy"), "cap", lk("cap"), L.cap, slider("k-cap", L.cap, 0.1, 60, 0.1, "s", secs));
  addKnob($("policy"), "budget", lk("budget"), L.budget, choice("k-budget", L.budget, kinds.budget));
  addKnob($("policy"), "breaker", lk("breaker"), L.breaker, choice("k-breaker", L.breaker, kinds.breaker));
  if (P) {
    if (P.factor !== null)
      addKnob($("trigger"), `${P.name} size`, `phase.${P.name}.rate`, `x${P.factor}`,
              slider("k-spike", `x${P.factor}`, 1, 10, 0.5, "", (v) => num(v.replace(/^x/, "")), "x"));
    const len = +(P.end_s - P.start_s).toFixed(3);
    const lenKnob = slider("k-length", `${len}s`, 0.5, 60, 0.5, "s", secs);
    const k = addKnob($("trigger"), `${P.name} length`, `phase.${P.name}.end`, P.end, lenKnob);
    // the length is shown, the end is what is set
    k.get = () => { const l = secs(lenKnob.get()); return l === null ? lenKnob.get() : `${+(P.start_s + l).toFixed(6)}s`; };
    k.base = `${+P.end_s.toFixed(6)}s`;
    k.put = (v) => { const e = secs(v); if (e !== null) lenKnob.put(`${+(e - P.start_s).toFixed(6)}s`); };
    refreshKnob(k);
  } else {
    $("trigger").append("this scenario has no phase");
  }
  if (s.model === "open")
    addKnob($("load"), "rate", "load.rate", `${s.rate}/s`, slider("k-rate", `${s.rate}/s`, 10, Math.max(2000, 2 * s.rate), 10, "/s", (v) => num(v.replace(/\/s$/, ""))));
  else
    addKnob($("load"), "clients", "load.clients", String(s.clients), slider("k-clients", String(s.clients), 1, Math.max(2000, 2 * s.clients), 1, "", num));
  addKnob($("load"), "seed", "run.seed", String(s.seed), slider("k-seed", String(s.seed), 1, 50, 1, "", num));
}

function lines(id) {
  return $(id).value.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
}

function sets() {
  const out = [];
  for (const k of knobs) {
    const v = k.get();
    if (v !== k.base && v !== "") out.push(`${k.key}=${v}`);
  }
  return out.concat(lines("extra"));
}

// ---- state in the URL ----
let saveTimer = 0;
function saveSoon() { // a slider fires on every step: the URL follows at most 5 times a second
  clearTimeout(saveTimer);
  saveTimer = setTimeout(saveState, 200);
}

function saveState() {
  const p = new URLSearchParams();
  if ($("paste-on").checked) p.set("text", $("text").value);
  else p.set("s", $("scenario").value);
  for (const s of sets()) p.append("set", s);
  if ($("ab-on").checked) { p.set("ab", "1"); for (const s of lines("b-sets")) p.append("b", s); }
  if (staged()) p.set("stage", "1");
  savedHash = "#" + p.toString();
  history.replaceState(null, "", savedHash);
}

function loadState() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { s: p.get("s"), text: p.get("text"), sets: p.getAll("set"), ab: p.get("ab") === "1", b: p.getAll("b"),
           stage: p.get("stage") === "1" };
}

// A hash edited by hand: the stage flag applies at once; any other change
// loads the page afresh from it, as a link would.
function hashEdited() {
  const rest = (h) => { const p = new URLSearchParams(h.slice(1)); p.delete("stage"); return p.toString(); };
  if (rest(location.hash) !== rest(savedHash)) { location.reload(); return; }
  savedHash = location.hash;
  setStage(loadState().stage);
}

// Puts URL sets back into the knobs; the rest go to "more overrides".
function applySets(list) {
  const extra = [];
  for (const s of list) {
    const eq = s.indexOf("=");
    const k = knobs.find((x) => x.key === s.slice(0, eq));
    if (k) { k.put(s.slice(eq + 1)); refreshKnob(k); } else extra.push(s);
  }
  $("extra").value = extra.join("\n");
}

// ---- talking to the server ----
async function post(path, fields) {
  const body = new URLSearchParams();
  for (const [k, v] of fields) body.append(k, v);
  const r = await fetch(path, { method: "POST", body });
  let j;
  try { j = await r.json(); } catch (e) { j = { ok: false, messages: [`the server answered ${r.status}`] }; }
  return j;
}

function scenarioFields() {
  return $("paste-on").checked ? [["text", $("text").value]] : [["scenario", $("scenario").value]];
}

function showMessages(list) {
  const ul = $("messages");
  ul.replaceChildren(...(list || []).map((m) => { const li = document.createElement("li"); li.textContent = m; return li; }));
}

// Checks the pasted text; the knobs are rebuilt from it, keeping the
// overrides already set (those that still name a knob).
async function check() {
  const j = await post("/api/check", [["text", $("text").value]]);
  if (!j.ok) { showMessages(j.messages); return false; }
  showMessages([]);
  const keep = sets();
  shape = j.shape;
  checkedText = $("text").value;
  pastedHead = { name: j.shape.name === DEFAULT_NAME ? "pasted scenario" : j.shape.name, about: j.about };
  header();
  buildKnobs(shape);
  applySets(keep);
  return true;
}

async function run() {
  stopPlay();
  saveState();
  $("status").textContent = "running…";
  const base = scenarioFields().concat(sets().map((s) => ["set", s]));
  const asks = [post("/api/run", base)];
  if ($("ab-on").checked)
    asks.push(post("/api/run", base.concat(lines("b-sets").map((s) => ["set", s]))));
  const t0 = performance.now();
  const [a, b] = await Promise.all(asks);
  const bad = [a, b].filter((x) => x && !x.ok);
  if (bad.length) {
    showMessages(bad.flatMap((x, i) => x.messages.map((m) => (bad.length > 1 || x === b ? `${x === a ? "A" : "B"}: ` : "") + m)));
    $("status").textContent = "not run";
    return;
  }
  showMessages([]);
  results = { a: digest(a), b: b ? digest(b) : null, shape: a.shape }; // the scenario as run
  const ev = a.events >= 1e6 ? `${(a.events / 1e6).toFixed(1)} M` : `${Math.round(a.events / 1e3)} k`;
  $("status").textContent = `${ev} events in ${a.wall_s.toFixed(2)} s; answered and drawn in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
  draw(Infinity);
  cards();
  downloads();
  document.body.dataset.runs = String(+(document.body.dataset.runs || 0) + 1);
}

function digest(j) {
  return { files: j.files, ts: parseCsv(j.files["timeseries.csv"]), sum: summaryRow(j.files["summary.csv"]), reason: j.verdict_reason || "" };
}

// ---- summary cards: the numbers of summary.csv ----
const cardDefs = [
  // the verdict (docs/verdicts.md), and why under it
  { key: "verdict", label: "verdict", fmt: (v) => v, tone: (v) => (v === "recovered" || v === "stable" ? "good" : v === "metastable" || v === "overloaded" ? "bad" : ""), why: true },
  { key: "recovery_s", label: "time to recover", fmt: (v, row) => (v !== "" ? `${(+v).toFixed(1)} s` : row.recovered === "0" ? "never" : "—") },
  { key: "attempts_mean", label: "attempts per request", fmt: (v) => (+v).toFixed(2) },
  { key: "lat_p99", label: "p99 latency", fmt: (v) => (v === "" ? "—" : `${(+v * 1000).toFixed(0)} ms`) },
  { key: "ok_share", label: "requests ok", fmt: (v) => `${(+v * 100).toFixed(1)} %` },
  { key: "wasted", label: "wasted work (executions)", fmt: (v) => (+v).toLocaleString("en") },
  { key: "amplification", label: "load amplification", fmt: (v) => `${(+v).toFixed(2)}×` },
];

function cards() {
  const box = $("cards");
  box.replaceChildren();
  for (const d of cardDefs) {
    const c = document.createElement("div");
    const va = results.a.sum[d.key];
    c.className = "card " + (d.tone ? d.tone(va) : "");
    c.dataset.key = d.key;
    const label = document.createElement("div");
    label.className = "label"; label.textContent = d.label;
    const a = document.createElement("div");
    a.className = "value"; a.dataset.value = va; a.textContent = d.fmt(va, results.a.sum);
    c.append(label, a);
    if (results.b) {
      const b = document.createElement("div");
      const vb = results.b.sum[d.key];
      b.className = "value b"; b.dataset.value = vb; b.textContent = "B: " + d.fmt(vb, results.b.sum);
      c.append(b);
    }
    if (d.why) { // the reason: which signal stayed out of the baseline's band, or came back
      const whys = document.createElement("div");
      whys.className = "whys";
      for (const [tag, run] of [["", results.a], ["B: ", results.b]]) {
        if (!run || !run.reason) continue;
        const w = document.createElement("div");
        w.className = "why"; w.textContent = tag + run.reason;
        whys.append(w);
      }
      c.append(whys);
      c.classList.add("wide");
    }
    box.append(c);
  }
}

// Every file of each run (scenario.ini is the effective scenario, with the
// overrides: `retrystorm run scenario.ini` reproduces the run).
function downloads() {
  const box = $("downloads");
  for (const a of box.querySelectorAll("a")) URL.revokeObjectURL(a.href);
  box.replaceChildren();
  for (const [tag, run] of [["A", results.a], ["B", results.b]]) {
    if (!run) continue;
    const line = document.createElement("div");
    line.append(`download ${results.b ? tag : "the run"}: `);
    for (const [name, text] of Object.entries(run.files)) {
      const a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
      a.download = results.b ? `${tag}-${name}` : name;
      a.textContent = name;
      line.append(a);
    }
    box.append(line);
  }
}

// ---- charts ----
function rolling(xs, n) {
  if (n <= 1) return xs;
  const out = new Array(xs.length);
  let sum = 0, cnt = 0;
  for (let i = 0; i < xs.length; i++) {
    if (xs[i] !== null) { sum += xs[i]; cnt++; }
    if (i >= n && xs[i - n] !== null) { sum -= xs[i - n]; cnt--; }
    out[i] = cnt ? sum / cnt : null;
  }
  return out;
}

function phaseShade(u) {
  const ctx = u.ctx;
  ctx.save();
  ctx.fillStyle = "rgba(230, 159, 0, 0.15)";
  for (const p of results.shape.phases) {
    const x0 = u.valToPos(p.start_s, "x", true), x1 = u.valToPos(p.end_s, "x", true);
    ctx.fillRect(x0, u.bbox.top, Math.max(1, x1 - x0), u.bbox.height);
  }
  ctx.restore();
}

// Each series' colour, [A, B]: A's dark and cool, B's warm (and dashed).
// On either chart every two series differ by CIEDE2000 ΔE >= 20 (>= 12 for
// a viewer with deuteranopia or protanopia) and each has a contrast of at
// least 3:1 on white (docs/page.md; the browser test checks it).
const COLORS = {
  offered: ["#000000", "#8c564b"], arrivals: ["#0072b2", "#ee3377"], ok: ["#009988", "#a6761d"],
  queue: ["#000000", "#8c564b"], p99: ["#0072b2", "#ee3377"],
};

// The charts' look, in px: tick labels (font), axis labels (bold, label
// font in labelRoom), lines, plot height, y axes' width, tick spacing (x,
// y), p99 points. Stage: tick labels of 28 px, whose digits (20 px tall)
// subtend 10 arcmin six image heights away on a 1080-line projector
// (docs/page.md); axis sizes and tick spacing grow with the type.
const LOOK = {
  normal: { font: 13, label: 13, labelRoom: 30, line: 2, height: 300, axis: 60, space: [60, 30], points: 4 },
  stage: { font: 28, label: 24, labelRoom: 34, line: 4, height: 310, axis: 100, space: [120, 60], points: 8 },
};
const FONT = "system-ui, sans-serif";

function staged() { return document.body.classList.contains("stage"); }

function setStage(on) {
  document.body.classList.toggle("stage", on);
  $("stage").setAttribute("aria-pressed", String(on));
  if (results && !playing) draw(Infinity); // play draws the next frame in the new look
}

// The two charts: the title (with what was smoothed), each series' name,
// its column and its colour, and the axes' labels, with their units.
const CHARTS = [
  { id: "chart-load", title: (sm) => `load per second${sm}`, left: "requests / s", right: "",
    series: [["offered", "offered", "offered"], ["server arrivals", "server_arrivals", "arrivals"],
             ["ok (goodput)", "ok", "ok"]] },
  { id: "chart-queue", title: (sm) => `queue length${sm} and p99 latency per bucket`, left: "queue (requests)",
    right: "p99 latency (ms)",
    series: [["queue", "queue_len", "queue"], ["p99 latency (ms, right axis)", "lat_p99", "p99"]] },
];

// A series' values as drawn: smoothed over n buckets; p99 in ms (the
// cards' unit), per bucket (a rolling p99 would be no p99).
function values(run, col, n) {
  const xs = run.ts[col];
  return col === "lat_p99" ? xs.map((v) => (v === null ? null : v * 1000)) : rolling(xs, n);
}

const maxOf = (xs) => xs.reduce((m, v) => (v !== null && v > m ? v : m), 0);

// Draws the series up to simulated time tmax on axes fixed by the whole
// run, so that play reveals the storm without rescaling.
function draw(tmax) {
  for (const c of charts) c.destroy();
  charts = [];
  const a = results.a, t = a.ts.t;
  const bucket = t.length > 1 ? t[1] - t[0] : 1;
  const n = $("smooth").checked && bucket < 0.1 ? Math.round(1 / bucket) : 1;
  const upto = t.filter((x) => x <= tmax).length;
  const runs = [a].concat(results.b ? [results.b] : []);
  const width = Math.max(400, $("charts").clientWidth - 10);
  const smooth = n > 1 ? " (1 s rolling mean)" : ""; // of n buckets; short, for the stage
  for (const def of CHARTS)
    charts.push(chart(def, def.title(smooth), runs, n, t, upto, width, bucket < 0.1));
  document.body.dataset.drawn = String(upto); // rows drawn (the browser test watches play)
}

// Tick values: 1,500 and 250k (a 28 px "250,000" would not fit its axis).
const tick = (v) => (Math.abs(v) >= 1e4 ? `${+(v / 1e3).toFixed(1)}k` : v.toLocaleString("en"));

function axis(look, label, more) {
  return { label, font: `${look.font}px ${FONT}`, labelFont: `bold ${look.label}px ${FONT}`, labelSize: look.labelRoom,
           stroke: "#111", grid: { stroke: "rgba(0,0,0,0.12)", width: 1 },
           values: (u, splits) => splits.map(tick), ...more };
}

function chart(def, title, runs, n, t, upto, width, fine) {
  const look = LOOK[staged() ? "stage" : "normal"];
  const data = [t.slice(0, upto)], series = [{ label: "t (s)" }];
  let ymax = 1, smax = 0.001;
  runs.forEach((run, v) => def.series.forEach(([name, col, role]) => {
    const xs = values(run, col, n), right = role === "p99";
    data.push(xs.slice(0, upto));
    if (right) smax = Math.max(smax, maxOf(xs));
    else ymax = Math.max(ymax, maxOf(xs));
    const s = { label: name + (v ? " B" : ""), stroke: COLORS[role][v], width: look.line,
                dash: v ? [4 * look.line, 2 * look.line] : undefined, scale: right ? "s" : "y", spanGaps: false };
    if (right && fine) { // a p99 per fine bucket is a cloud, not a line
      s.paths = () => null;
      s.points = { show: true, size: look.points, fill: s.stroke };
    }
    series.push(s);
  }));
  const el = $(def.id);
  el.replaceChildren();
  el.dataset.per = String(def.series.length); // the legend's columns on stage: A's row, then B's
  // Both charts have the same axes' sizes (the load chart's right axis is
  // empty), so their time axes, and the phases' shading, line up.
  const right = def.right ? { scale: "s" } : { scale: "y", values: () => [], ticks: { show: false } };
  const opts = {
    title, width, height: look.height,
    scales: { x: { time: false, auto: false, range: [0, results.shape.duration_s] },
              y: { auto: false, range: [0, ymax * 1.05] }, s: { auto: false, range: [0, smax * 1.05] } },
    axes: [axis(look, "simulated time (s)", { space: look.space[0] }),
           axis(look, def.left, { size: look.axis, space: look.space[1] }),
           axis(look, def.right, { side: 1, size: look.axis, space: look.space[1], grid: { show: false }, ...right })],
    series,
    // on stage, the names only (nobody hovers); B's markers dashed like its lines
    legend: { live: !staged(), markers: { width: look.line, dash: (u, i) => (u.series[i].dash ? "dashed" : "solid") } },
    hooks: { drawClear: [phaseShade] },
  };
  return new uPlot(opts, data, el);
}

// ---- play: the series revealed over simulated time ----
function stopPlay() {
  if (playing) cancelAnimationFrame(playing.frame);
  playing = null;
  $("play").textContent = "Play";
}

function play() {
  if (!results) return;
  if (playing) { stopPlay(); draw(Infinity); return; }
  const speed = +$("speed").value, start = performance.now();
  $("play").textContent = "Stop";
  playing = { frame: 0 };
  const step = () => {
    const tsim = ((performance.now() - start) / 1000) * speed;
    draw(tsim);
    if (tsim < results.shape.duration_s && playing) playing.frame = requestAnimationFrame(step);
    else stopPlay();
  };
  playing.frame = requestAnimationFrame(step);
}

// ---- start ----
// The header names what runs: the built-in picked, or the pasted text's
// [run] name and first comment line once checked ("pasted scenario"
// without a name: its name is then the default).
const DEFAULT_NAME = "scenario";

function header() {
  const pasted = $("paste-on").checked;
  $("pick").hidden = pasted;
  $("pasted").hidden = !pasted;
  if (pasted) {
    $("pasted-name").textContent = pastedHead ? pastedHead.name : "pasted scenario";
    $("about").textContent = pastedHead ? pastedHead.about : "";
  } else {
    $("about").textContent = catalog.scenarios.find((x) => x.name === $("scenario").value).about;
  }
}

async function chooseScenario(name) {
  const s = catalog.scenarios.find((x) => x.name === name) || catalog.scenarios[0];
  $("scenario").value = s.name;
  shape = s.shape;
  header();
  buildKnobs(shape);
}

function listen() {
  $("scenario").addEventListener("change", async () => { await chooseScenario($("scenario").value); $("extra").value = ""; saveState(); });
  $("paste-on").addEventListener("change", async () => {
    $("paste").hidden = !$("paste-on").checked;
    if ($("paste-on").checked && !$("text").value) $("text").value = catalog.scenarios.find((x) => x.name === $("scenario").value).text;
    if (!$("paste-on").checked) { checkedText = null; pastedHead = null; showMessages([]); await chooseScenario($("scenario").value); }
    header();
    saveState();
  });
  $("check").addEventListener("click", async () => { if (await check()) saveState(); });
  $("run").addEventListener("click", async () => {
    if (!$("paste-on").checked || $("text").value === checkedText || (await check())) await run();
  });
  $("play").addEventListener("click", play);
  $("smooth").addEventListener("change", () => results && draw(Infinity));
  for (const id of ["extra", "b-sets", "ab-on"]) $(id).addEventListener("change", saveState);
  $("stage").addEventListener("click", () => { setStage(!staged()); saveState(); });
  window.addEventListener("hashchange", hashEdited);
  let resized = 0; // a window moved to the projector, or zoomed: the charts take the new width
  window.addEventListener("resize", () => { clearTimeout(resized); resized = setTimeout(() => results && !playing && draw(Infinity), 150); });
}

async function start() {
  catalog = await (await fetch("/api/scenarios")).json();
  for (const s of catalog.scenarios) $("scenario").append(new Option(s.name, s.name));
  listen(); // before anything can fail: a link with a bad pasted scenario is fixed on the page
  document.body.dataset.ready = "1";
  const st = loadState();
  savedHash = location.hash;
  setStage(st.stage);
  $("ab-on").checked = st.ab;
  $("b-sets").value = st.b.join("\n");
  await chooseScenario(st.s || "storm");
  if (st.text !== null) {
    $("paste-on").checked = true; $("paste").hidden = false; $("text").value = st.text;
    header();
    if (!(await check())) { $("extra").value = st.sets.join("\n"); return; }
  }
  applySets(st.sets);
  await run();
}

start();
