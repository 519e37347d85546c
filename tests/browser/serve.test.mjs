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
// (also when it comes in a link, and the page works once it is fixed).
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
  check(errors.length === 0, `no error in the page${errors.length ? ": " + errors.join("; ") : ""}`);
} finally {
  await browser.close();
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log("browser test passed");
