// The live page in a real browser: Debian's Chromium, driven by
// puppeteer-core, against `retrystorm serve`. Run by tests/browser_test.sh:
//   node serve.test.mjs URL BIN OUTDIR
// Loads the page from a link that carries a scenario and an override, and
// checks that the charts were drawn (canvas pixels that are not background,
// and a screenshot), that the summary cards show the numbers the command
// line writes for the same scenario and seed, that an A/B comparison draws
// both variants with B's numbers equal to the command line's, that play
// mode reveals the series step by step, that a slider's value reaches the
// run, that a pasted bad scenario gets check's message beside the field
// (also when it comes in a link, and the page works once it is fixed),
// that the header names a pasted scenario, and that stage mode (a button,
// or stage=1 in the hash) reads on a 1920x1080 projector: the rules below,
// STAGE_DIGIT_PX and the colour rule, are docs/page.md's.
// Any error in the page fails the test.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

const [url, bin, outdir] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { console.log(`${ok ? "ok  " : "FAIL"} ${what}`); if (!ok) failures.push(what); };

// summary.csv of `retrystorm run SCENARIO --set ...`, as an object
function cli(scenario, sets) {
  const dir = mkdtempSync(join(tmpdir(), "rs-browser-"));
  try {
    execFileSync(bin, ["run", scenario, ...sets.flatMap((s) => ["--set", s]), "-o", join(dir, "o")], { stdio: "ignore" });
    const [head, row] = readFileSync(join(dir, "o", "summary.csv"), "utf8").trim().split("\n");
    const k = head.split(","), v = row.split(",");
    return Object.fromEntries(k.map((x, i) => [x, v[i]]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CARDS = ["verdict", "recovery_s", "attempts_mean", "lat_p99", "ok_share", "wasted", "amplification"];

async function cards(page, which) {
  return page.$$eval(`#cards .card`, (cs, which) => Object.fromEntries(cs.map((c) => {
    const v = c.querySelectorAll(".value")[which];
    return [c.dataset.key, v ? v.dataset.value : undefined];
  })), which);
}

// Share of a chart's canvas pixels that are not the background.
async function inked(page, id) {
  return page.$eval(`#${id} canvas`, (cv) => {
    const d = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) n++;
    return n / (d.length / 4);
  });
}

async function cardText(page, which) {
  return page.$$eval(`#cards .card`, (cs, which) => Object.fromEntries(cs.map((c) => {
    const v = c.querySelectorAll(".value")[which];
    return [c.dataset.key, v ? v.textContent : undefined];
  })), which);
}

async function runsDone(page, n) {
  await page.waitForFunction((n) => +(document.body.dataset.runs || 0) >= n, { timeout: 30000 }, n);
}

// ---- the stage rules (docs/page.md, "Stage mode") ----
// Type: the farthest seat is six image heights away (the usual rule for
// presentation rooms); a digit is read there when it subtends 10 arcmin
// (twice a 20/20 Snellen letter's 5). On a 1080-line image that is
// 6 * 1080 * tan(10') = 18.85 px of digit height.
const STAGE_DIGIT_PX = 6 * 1080 * Math.tan((10 / 60) * (Math.PI / 180));
// Colour: on each chart every two series differ by CIEDE2000 >= 20 (a
// projector washes colours out; 2.3 is a just noticeable difference), and
// by >= 12 for a viewer with deuteranopia or protanopia (Machado, Oliveira
// and Fernandes 2009, severity 1); each series has a WCAG 2.1 contrast of
// at least 3:1 against the white plot (SC 1.4.11, non-text contrast).
const DE_MIN = 20, DE_CVD_MIN = 12, CONTRAST_MIN = 3;
const lin = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
const unlin = (v) => { v = Math.min(1, Math.max(0, v)); return 255 * (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055); };
const luminance = (rgb) => { const [r, g, b] = rgb.map(lin); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
function lab(rgb) { // sRGB (D65) to CIE L*a*b*
  const [r, g, b] = rgb.map(lin);
  const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  const X = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047), Y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const Z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * Y - 16, 500 * (X - Y), 200 * (Y - Z)];
}
function ciede2000(c1, c2) { // Sharma, Wu and Dalal (2005)
  const [L1, a1, b1] = lab(c1), [L2, a2, b2] = lab(c2), d = Math.PI / 180;
  const Cb = (Math.hypot(a1, b1) + Math.hypot(a2, b2)) / 2, G = 0.5 * (1 - Math.sqrt(Cb ** 7 / (Cb ** 7 + 25 ** 7)));
  const A1 = (1 + G) * a1, A2 = (1 + G) * a2, C1 = Math.hypot(A1, b1), C2 = Math.hypot(A2, b2);
  const hue = (b, a) => (a === 0 && b === 0 ? 0 : (Math.atan2(b, a) / d + 360) % 360);
  const h1 = hue(b1, A1), h2 = hue(b2, A2);
  let dh = C1 * C2 === 0 ? 0 : h2 - h1;
  if (dh > 180) dh -= 360; else if (dh < -180) dh += 360;
  const dH = 2 * Math.sqrt(C1 * C2) * Math.sin((dh * d) / 2), Lb = (L1 + L2) / 2, Cp = (C1 + C2) / 2;
  let hb = h1 + h2;
  if (C1 * C2 !== 0) hb = Math.abs(h1 - h2) > 180 ? (hb < 360 ? hb + 360 : hb - 360) / 2 : hb / 2;
  const T = 1 - 0.17 * Math.cos((hb - 30) * d) + 0.24 * Math.cos(2 * hb * d) + 0.32 * Math.cos((3 * hb + 6) * d) -
            0.2 * Math.cos((4 * hb - 63) * d);
  const SL = 1 + (0.015 * (Lb - 50) ** 2) / Math.sqrt(20 + (Lb - 50) ** 2), SC = 1 + 0.045 * Cp, SH = 1 + 0.015 * Cp * T;
  const RT = -Math.sin(2 * 30 * Math.exp(-(((hb - 275) / 25) ** 2)) * d) * 2 * Math.sqrt(Cp ** 7 / (Cp ** 7 + 25 ** 7));
  const l = (L2 - L1) / SL, c = (C2 - C1) / SC, h = dH / SH;
  return Math.sqrt(l * l + c * c + h * h + RT * c * h);
}
const CVD = { // Machado et al. 2009, severity 1.0, on linear RGB
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
};
const seenBy = (rgb, m) => { const l = rgb.map(lin); return m.map((r) => unlin(r[0] * l[0] + r[1] * l[1] + r[2] * l[2])); };

// What the audience reads (the header, the seven cards, both charts with
// their legends) that is not all on a 1920x1080 screen; or a list of one
// "missing" entry if they are not all there.
async function offScreen(page) {
  const boxes = await page.evaluate(() => ["header", "#cards .card", "#chart-load", "#chart-queue"].flatMap((q) =>
    [...document.querySelectorAll(q)].map((e) => { const r = e.getBoundingClientRect(); return { q, bottom: r.bottom, right: r.right }; })));
  if (boxes.length !== 10) return [{ missing: 10 - boxes.length }];
  return boxes.filter((b) => b.bottom > 1080 || b.right > 1920);
}

// Each legend entry of a chart: its name, its marker's colour (the series'
// stroke) as [r, g, b] and its border style (dashed for B).
async function legendColours(page, id) {
  return page.$$eval(`#${id} .u-legend .u-series`, (rows) => rows.filter((r) => r.offsetParent !== null).map((r) => {
    const m = getComputedStyle(r.querySelector(".u-marker"));
    return { name: r.querySelector(".u-label").textContent, rgb: m.borderTopColor.match(/\d+/g).slice(0, 3).map(Number),
             style: m.borderTopStyle };
  }).filter((x) => x.name !== "t (s)"));
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // "Failed to load resource": the 400s the bad scenarios get, and /favicon.ico
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });

  // 1. a link with a scenario and an override runs it
  const sets = ["run.seed=3"];
  await page.goto(`${url}#s=storm&set=${encodeURIComponent(sets[0])}`);
  await runsDone(page, 1);
  check((await page.$eval("#k-seed", (e) => e.value)) === "3", "the link's override is in its knob");
  const ink = await inked(page, "chart-load");
  check(ink > 0.01, `the load chart is drawn (${(ink * 100).toFixed(1)} % of its pixels inked)`);
  check((await inked(page, "chart-queue")) > 0.005, "the queue chart is drawn");
  const shot = await page.screenshot({ path: join(outdir, "serve-storm.png"), fullPage: true });
  check(shot.length > 20000, `the screenshot is not blank (${shot.length} bytes)`);
  const want = cli("storm", sets), got = await cards(page, 0);
  for (const k of CARDS) check(got[k] === want[k], `card ${k}: page ${got[k]}, command line ${want[k]}`);
  const shown = await cardText(page, 0);
  const why = await page.$eval(`#cards .card[data-key="verdict"] .why`, (e) => e.textContent);
  check(why.startsWith("still out of the baseline's band") && why.includes("queue"), `the verdict says why: ${why}`);
  check(shown.verdict === "metastable" && shown.recovery_s === "never" &&
        shown.attempts_mean === (+want.attempts_mean).toFixed(2), `cards read ${JSON.stringify(shown)}`);

  // 2. a slider is a --set: the spike's size to x4 (the slider writes x4, not 4)
  await page.$eval("#k-spike", (text) => {
    const range = text.previousElementSibling;
    range.value = "4";
    range.dispatchEvent(new Event("input"));
  });
  check((await page.$eval("#k-spike", (e) => e.value)) === "x4", "the spike slider writes a factor");
  await page.click("#run");
  await runsDone(page, 2);
  const want4 = cli("storm", [...sets, "phase.spike.rate=x4"]), got4 = await cards(page, 0);
  check(got4.ok_share === want4.ok_share && got4.wasted === want4.wasted,
        `after the slider, the cards equal the command line's with phase.spike.rate=x4 (${got4.ok_share})`);
  await page.$eval("#k-spike", (text) => { text.previousElementSibling.value = "2"; text.previousElementSibling.dispatchEvent(new Event("input")); });

  // 3. A/B on the same seed
  await page.click("#ab-on");
  await page.$eval("#b-sets", (e) => { e.value = "layer.app.attempts=1"; });
  await page.click("#run");
  await runsDone(page, 3);
  const wantB = cli("storm", [...sets, "layer.app.attempts=1"]), gotB = await cards(page, 1), gotA = await cards(page, 0);
  for (const k of ["attempts_mean", "verdict", "ok_share"]) {
    check(gotB[k] === wantB[k], `B card ${k}: page ${gotB[k]}, command line ${wantB[k]}`);
    check(gotA[k] === want[k], `A card ${k} unchanged: ${gotA[k]}`);
  }
  const shownB = await cardText(page, 1);
  check(shownB.verdict === "B: recovered" && shownB.recovery_s === `B: ${(+wantB.recovery_s).toFixed(1)} s`,
        `B's cards read ${shownB.verdict}, ${shownB.recovery_s}`);
  const legend = await page.$$eval("#chart-load .u-legend .u-series", (s) => s.length);
  check(legend === 7, `the load chart overlays both variants (${legend - 1} series)`);
  check((await page.evaluate(() => location.hash)).includes("ab=1"), "the URL holds the A/B state");
  await page.screenshot({ path: join(outdir, "serve-ab.png"), fullPage: true });

  // 4. play reveals the series over simulated time: fewer rows drawn, then all
  const rows = await page.evaluate(() => +document.body.dataset.drawn);
  await page.select("#speed", "60");
  await page.click("#play");
  await new Promise((r) => setTimeout(r, 1000));
  const partial = await page.evaluate(() => +document.body.dataset.drawn);
  check((await page.$eval("#play", (b) => b.textContent)) === "Stop" && partial > 0 && partial < rows,
        `play is revealing the series (${partial} of ${rows} rows drawn)`);
  await page.waitForFunction(() => document.getElementById("play").textContent === "Play", { timeout: 20000 });
  const end = await page.evaluate(() => +document.body.dataset.drawn);
  check(end === rows, `play reached the end (${end} of ${rows} rows)`);

  // 5. a pasted bad scenario gets check's message beside the field
  await page.click("#paste-on");
  await page.$eval("#text", (e) => { e.value = "[run]\nduration = x\n"; });
  await page.click("#check");
  await page.waitForSelector("#messages li", { timeout: 10000 });
  const msgs = await page.$$eval("#messages li", (l) => l.map((x) => x.textContent));
  check(msgs.some((m) => m.includes("pasted:2: [run] duration = 'x': expected a duration > 0 such as 300s")),
        `the bad scenario's message is shown: ${msgs[0]}`);
  // 6. a pasted scenario that names a file is refused: the page reads no file
  await page.$eval("#text", (e) => { e.value = "[load]\nrate = 1/s\ntrace = /etc/passwd\n[server]\nservice = exp(10ms)\n"; });
  await page.click("#check");
  const refusal = "pasted:3: [load] trace = '/etc/passwd': no file is read here";
  await page.waitForFunction((m) => [...document.querySelectorAll("#messages li")].some((l) => l.textContent.startsWith(m)), { timeout: 10000 }, refusal);
  check(true, "a pasted trace path is refused");

  // 6b. the header names the pasted scenario: its [run] name and first comment line, or "pasted scenario"
  const talk = "; my talk: one server, a spike\n[run]\nname = talk\nduration = 20s\n[load]\nrate = 100/s\n" +
               "[server]\nworkers = 2\nservice = exp(10ms)\n[phase spike]\nstart = 5s\nend = 8s\nrate = x3\n" +
               "[layer app]\nattempts = 3\ntimeout = 100ms\n"; // (A/B is on: B sets layer.app.attempts)
  const head = () => page.evaluate(() => ({
    pick: !document.getElementById("pick").hidden, name: document.getElementById("pasted").hidden ? null
      : document.getElementById("pasted-name").textContent, about: document.getElementById("about").textContent }));
  await page.$eval("#text", (e, t) => { e.value = t; }, talk);
  await page.click("#run");
  await runsDone(page, 4);
  let h = await head();
  check(!h.pick && h.name === "talk" && h.about === "my talk: one server, a spike",
        `the header names the pasted scenario that ran: ${JSON.stringify(h)}`);
  await page.$eval("#text", (e, t) => { e.value = t.replace(/^; .*\n/, "").replace("name = talk\n", ""); }, talk);
  await page.click("#run");
  await runsDone(page, 5);
  h = await head();
  check(h.name === "pasted scenario" && h.about === "", `a pasted scenario without a name: ${JSON.stringify(h)}`);
  await page.click("#paste-on");
  await page.waitForFunction(() => !document.getElementById("pick").hidden, { timeout: 5000 });
  h = await head();
  check(h.pick && h.name === null && h.about.startsWith("storm: "), `out of paste mode, the built-in again: ${JSON.stringify(h)}`);

  // 7. a link carrying a bad pasted scenario: the message, and the page still works once it is fixed
  const fresh = await browser.newPage();
  fresh.on("pageerror", (e) => errors.push(String(e)));
  await fresh.goto(`${url}#text=${encodeURIComponent("[run]\nduration = x\n")}&set=run.seed%3D3`);
  await fresh.waitForSelector("#messages li", { timeout: 10000 });
  const storm = readFileSync(join(process.env.RS_SOURCE, "scenarios", "storm.ini"), "utf8");
  await fresh.$eval("#text", (e, t) => { e.value = t; }, storm);
  await fresh.click("#run");
  await runsDone(fresh, 1);
  const fixed = await cards(fresh, 0);
  check(fixed.ok_share === want.ok_share, `a bad link's page runs once the text is fixed, with the link's seed (${fixed.ok_share})`);
  await fresh.close();

  // 8. stage mode at 1920x1080, from the link: type, units, colours, all of it on the screen
  const stage = await browser.newPage();
  stage.on("pageerror", (e) => errors.push(String(e)));
  await stage.setViewport({ width: 1920, height: 1080 });
  await stage.goto(`${url}#s=storm&set=run.seed%3D3&ab=1&b=layer.app.attempts%3D1&stage=1`);
  await runsDone(stage, 1);
  const staged = () => stage.evaluate(() => ({ on: document.body.classList.contains("stage"),
    pressed: document.getElementById("stage").getAttribute("aria-pressed"), hash: location.hash }));
  let st = await staged();
  check(st.on && st.pressed === "true", `stage=1 in the link turns stage mode on (${JSON.stringify(st)})`);
  const look = () => stage.evaluate(() => charts.map((c) => ({
    ticks: c.axes.map((a) => a.font[2]), family: c.axes[1].font[0].replace(/^\S+px /, ""),
    labels: c.axes.map((a) => a.label), lines: c.series.slice(1).map((s) => s.width) })));
  const big = await look();
  const digit = await stage.evaluate((px, family) => {
    const cx = document.createElement("canvas").getContext("2d");
    cx.font = `${px}px ${family}`;
    const m = cx.measureText("0123456789");
    return m.actualBoundingBoxAscent + m.actualBoundingBoxDescent;
  }, Math.min(...big.flatMap((c) => c.ticks)), big[0].family);
  check(digit >= STAGE_DIGIT_PX, `on stage, tick digits are ${digit.toFixed(1)} px tall (at least ${STAGE_DIGIT_PX.toFixed(1)}: ` +
        `10 arcmin at six image heights); fonts ${JSON.stringify(big.map((c) => c.ticks))} px`);
  check(big.every((c) => c.lines.every((w) => w >= 4)), `on stage, lines are 4 px or more (${JSON.stringify(big.map((c) => c.lines))})`);
  // units: every axis that has ticks names its unit; p99 in ms, the cards' unit
  const unit = /\((s|ms|requests)\)$|\/ s$/;
  const axes = await stage.evaluate(() => charts.map((c) => c.axes.map((a, i) => ({ label: a.label,
    ticked: c.axes[i].ticks.show && a._values && a._values.some((v) => v !== "" && v !== null) }))));
  const unlabelled = axes.flat().filter((a) => a.ticked && !unit.test(a.label));
  check(unlabelled.length === 0 && axes.flat().filter((a) => a.ticked).length === 5,
        `each of the 5 axes with ticks names its unit: ${JSON.stringify(axes)}`);
  check(big[1].labels[2] === "p99 latency (ms)", `the p99 axis reads "${big[1].labels[2]}"`);
  const p99 = await stage.evaluate(() => {
    const drawn = charts[1].data[charts[1].series.findIndex((s) => s.label.startsWith("p99"))];
    const csv = results.a.ts.lat_p99;
    return { n: csv.filter((v, i) => v !== null && Math.abs(drawn[i] - v * 1000) < 1e-9).length, of: csv.filter((v) => v !== null).length };
  });
  check(p99.of > 0 && p99.n === p99.of, `the p99 drawn is timeseries.csv's lat_p99 in ms (${p99.n} of ${p99.of} buckets)`);
  // colours: both charts, A and B, by the rule above
  for (const id of ["chart-load", "chart-queue"]) {
    const ls = await legendColours(stage, id);
    const bad = [];
    for (const x of ls) if (contrast(x.rgb, [255, 255, 255]) < CONTRAST_MIN) bad.push(`${x.name}: contrast ${contrast(x.rgb, [255, 255, 255]).toFixed(2)}`);
    for (let i = 0; i < ls.length; i++)
      for (let j = i + 1; j < ls.length; j++) {
        const de = ciede2000(ls[i].rgb, ls[j].rgb);
        if (de < DE_MIN) bad.push(`${ls[i].name}/${ls[j].name}: ΔE00 ${de.toFixed(1)}`);
        for (const [k, m] of Object.entries(CVD)) {
          const dc = ciede2000(seenBy(ls[i].rgb, m), seenBy(ls[j].rgb, m));
          if (dc < DE_CVD_MIN) bad.push(`${ls[i].name}/${ls[j].name}: ΔE00 ${dc.toFixed(1)} with ${k}`);
        }
      }
    const dashed = ls.filter((x) => x.name.endsWith(" B")).every((x) => x.style === "dashed");
    check(ls.length === (id === "chart-load" ? 6 : 4) && bad.length === 0 && dashed,
          `${id}: ${ls.length} series, every two told apart (ΔE00 >= ${DE_MIN}, >= ${DE_CVD_MIN} with deuteranopia or ` +
          `protanopia; contrast >= ${CONTRAST_MIN}:1; B dashed)${bad.length ? ": " + bad.join("; ") : ""}`);
  }
  // the audience sees it all on one 1920x1080 screen: header, cards, both charts with their legends
  const out = await offScreen(stage);
  check(out.length === 0, `on stage at 1920x1080, nothing is off the screen${out.length ? ": " + JSON.stringify(out) : ""}`);
  const stageShot = await stage.screenshot({ path: join(outdir, "serve-stage.png") });
  check(stageShot.length > 20000, `the stage screenshot is not blank (${stageShot.length} bytes)`);
  // the button turns it off and on, and the link follows; the cards are the command line's
  await stage.click("#stage");
  st = await staged();
  const small = await look();
  check(!st.on && st.pressed === "false" && !st.hash.includes("stage") && small[0].ticks[1] < big[0].ticks[1],
        `the button leaves stage mode (ticks ${small[0].ticks[1]} px, hash ${st.hash})`);
  await stage.click("#stage");
  st = await staged();
  check(st.on && st.hash.endsWith("&stage=1"), `the button enters it again (${st.hash})`);
  const gotStage = await cards(stage, 1);
  check(gotStage.ok_share === wantB.ok_share, `on stage, B's cards are still the command line's (${gotStage.ok_share})`);
  // the hash edited by hand: the stage flag applies at once, without a reload; anything else reloads the page
  await stage.evaluate(() => { window.unreloaded = true; location.hash = location.hash.replace("&stage=1", ""); });
  await stage.waitForFunction(() => !document.body.classList.contains("stage"), { timeout: 5000 });
  check(await stage.evaluate(() => window.unreloaded === true), "removing stage=1 from the hash leaves stage mode, without a reload");
  // (herd: the talk's demonstration, fine buckets drawn smoothed, p99 as points, a longer header)
  await stage.evaluate(() => { location.hash = "#s=herd&ab=1&b=layer.app.backoff%3Dfull&stage=1"; });
  await stage.waitForFunction(() => window.unreloaded === undefined && +(document.body.dataset.runs || 0) >= 1, { timeout: 30000 });
  st = await staged();
  check(st.on && (await stage.$eval("#scenario", (e) => e.value)) === "herd", `a hash edited to herd loads it afresh, on stage (${st.hash})`);
  const herdOut = await offScreen(stage);
  check(herdOut.length === 0, `herd on stage: nothing is off the screen${herdOut.length ? ": " + JSON.stringify(herdOut) : ""}`);
  await stage.screenshot({ path: join(outdir, "serve-stage-herd.png") });
  // a window moved to another screen, or zoomed: the charts take the new width
  const wide = await stage.evaluate(() => charts[0].width);
  await stage.setViewport({ width: 1600, height: 900 });
  await stage.waitForFunction((w) => charts[0].width < w - 200, { timeout: 5000 }, wide);
  check(true, `resized to 1600 px, the charts are redrawn narrower (${wide} px before)`);
  await stage.close();
  check(errors.length === 0, `no error in the page${errors.length ? ": " + errors.join("; ") : ""}`);
} finally {
  await browser.close();
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log("browser test passed");
