// Drives the scheduler's live web view in headless Chromium (Debian's /usr/bin/chromium) through
// Playwright, for e2e/tests/dashboard_e2e.sh. Prints TAP lines; exits 1 when it cannot go on.
//   node dashboard.mjs URL EXPECT.json SCREENSHOT.png
// EXPECT: {"queues":[{"profile","queue","count"}], "nodes":N, "newPod":{"file","namespace","name"},
//          "maxDelayMs":2000}. The new pod is created here (kubectl), once the page shows the
// backlog, so its decision is seen arriving live.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const [url, expectFile, shot] = process.argv.slice(2);
const want = JSON.parse(readFileSync(expectFile, "utf8"));
let failures = 0;
const ok = (d) => console.log("ok - " + d);
const notok = (d) => { failures++; console.log("not ok - " + d); };
const check = (d, c) => (c ? ok(d) : notok(d));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const kubectl = (...a) => execFileSync("kubectl", a, { encoding: "utf8" }).trim();

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  // as the machine's notes advise: no background traffic to the closed network
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const errors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  page.on("requestfailed", (r) => errors.push("request failed: " + r.url() + " " + (r.failure() || {}).errorText));

  await page.goto(url, { waitUntil: "load" });
  try {
    await page.waitForSelector("#conn.up", { timeout: 10000 });
    ok("the page loads and its WebSocket is live (" + (await page.textContent("#conn")) + ")");
  } catch (e) {
    notok("the page's WebSocket is live: " + (await page.textContent("#conn").catch(() => "?")));
    throw e;
  }

  // queue depths: the known backlog, once it settled (pods are tried before they wait)
  const depth = (p, q) => page.textContent(`.counts [data-profile="${p}"][data-queue="${q}"] b`).catch(() => null);
  for (const w of want.queues) {
    let got = null;
    for (let i = 0; i < 60; i++) {
      got = await depth(w.profile, w.queue);
      if (got === String(w.count)) break;
      await sleep(250);
    }
    check(`queue depth ${w.profile}/${w.queue} shown as ${w.count} (page: ${got})`, got === String(w.count));
  }

  const tiles = await page.locator("#nodes .tile").count();
  check(`node fill shows every node (${tiles} of ${want.nodes})`, tiles === want.nodes);
  const tileTitle = (await page.getAttribute("#nodes .tile", "title")) || "";
  check("a node tile names its cpu and memory fill", /cpu .* \/ .*\nmemory .* \/ /.test(tileTitle));
  const cpuBar = (await page.textContent("#totals")) || "";
  check("cluster cpu and memory bars are drawn (" + cpuBar.replace(/\s+/g, " ").trim() + ")", /\(\d+%\)/.test(cpuBar));

  // a new pod: its decision must reach the feed within maxDelayMs of its binding
  const np = want.newPod;
  const key = np.namespace + "/" + np.name;
  kubectl("create", "-f", np.file);
  let boundAt = 0, node = "";
  for (let i = 0; i < 300 && !node; i++) {
    node = kubectl("get", "pod", "-n", np.namespace, np.name, "-o", "jsonpath={.spec.nodeName}");
    if (node) boundAt = Date.now();
    else await sleep(50);
  }
  check(`${key} is bound (to ${node || "nothing"})`, node !== "");
  const row = `#feed tbody tr[data-pod="${key}"]`;
  let shownAt = 0;
  try {
    await page.waitForSelector(row, { timeout: 10000 });
    shownAt = Number(await page.getAttribute(row, "data-shown-at"));
  } catch {
    notok(`${key}'s decision appears in the feed`);
  }
  // the record's time: when the scheduler finished the attempt (binding included)
  const rec = await page.evaluate(async (q) => {
    const r = await fetch("../decisions?" + q);
    return r.ok ? (await r.json()).items[0] : null;
  }, `namespace=${encodeURIComponent(np.namespace)}&name=${encodeURIComponent(np.name)}`);
  if (shownAt && rec) {
    const recordedAt = Date.parse(rec.time);
    const fromRecord = shownAt - recordedAt, fromObserved = shownAt - boundAt;
    check(`${key}'s decision appears in the feed ${fromRecord} ms after its binding finished ` +
      `(${fromObserved} ms after kubectl saw it bound; limit ${want.maxDelayMs} ms)`,
    fromRecord <= want.maxDelayMs && fromObserved <= want.maxDelayMs);
  } else if (shownAt) {
    notok(`${key}'s record is served by ../decisions`);
  }

  // click-through: the per-node, per-plugin table of that record
  if (shownAt && rec) {
    await page.click(row);
    await page.waitForSelector("#detail-panel:not([hidden]) #detail tbody tr", { timeout: 5000 });
    const heads = await page.$$eval("#detail thead th", (a) => a.map((x) => x.textContent));
    const plugins = rec.score.plugins.map((p) => `${p.name} (x${p.weight})`);
    check(`the click-through table has a column per score plugin (${plugins.join(", ")})`,
      plugins.length > 0 && plugins.every((p) => heads.includes(p)));
    const chosen = await page.getAttribute("#detail tr.chosen", "data-node");
    check(`the chosen row is ${node} (page: ${chosen})`, chosen === node);
    const chosenTotal = await page.textContent("#detail tr.chosen td:last-child");
    const recTotal = (rec.score.nodes.find((n) => n.node === node) || {}).total;
    check(`the chosen node's total matches the record (${chosenTotal} vs ${recTotal})`, chosenTotal === String(recTotal));
    const rows = await page.locator("#detail tbody tr").count();
    check(`one row per scored or rejected node (${rows} = ${rec.score.nodes.length} + ${rec.filter.length})`,
      rows === rec.score.nodes.length + rec.filter.length);
  }
  await sleep(300);
  await page.screenshot({ path: shot, fullPage: true });
  ok("screenshot saved to " + shot);
} catch (e) {
  notok("browser run: " + e.message.split("\n")[0]);
} finally {
  check("no console errors" + (errors.length ? ": " + errors.join("; ") : ""), errors.length === 0);
  await browser.close();
}
process.exit(failures ? 1 : 0);
