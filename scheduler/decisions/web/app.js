// The scheduler's live web view (docs/explain.md, "The live web view"). State and decisions come
// over the WebSocket next to this page ("ws", subprotocol schedkit.v1); a row's full record from
// ../decisions?namespace=&name= (the decisions API). Every URL is relative, so the page works
// behind the API server's service proxy and `kubectl schedkit dashboard`.
"use strict";

const FEED_MAX = 200;
const QUEUES = ["active", "backoff", "unschedulable", "gated"];
const seen = new Map(); // seq -> decision summary (feed rows)
let selected = null;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

function pct(req, alloc) {
  return alloc > 0 ? Math.min(100, (100 * req) / alloc) : 0;
}

function level(p) {
  return p >= 85 ? "lvl2" : p >= 60 ? "lvl1" : "lvl0";
}

function fmtCPU(m) {
  return m >= 1000 ? (m / 1000).toFixed(m % 1000 ? 1 : 0) : m + "m";
}

function fmtMem(b) {
  const u = ["B", "Ki", "Mi", "Gi", "Ti"];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (b >= 10 || i === 0 ? Math.round(b) : b.toFixed(1)) + u[i];
}

function renderQueues(profiles) {
  const box = document.getElementById("queues");
  box.replaceChildren();
  for (const p of profiles) {
    const total = QUEUES.reduce((s, q) => s + p[q], 0);
    const stack = el("div", { class: "stack" });
    for (const q of QUEUES)
      if (p[q] > 0) stack.append(el("div", { class: "seg " + q, title: q + ": " + p[q], style: "" }));
    [...stack.children].forEach((seg) => {
      const q = seg.className.split(" ")[1];
      seg.style.width = (100 * p[q]) / Math.max(total, 1) + "%";
    });
    const counts = el("div", { class: "counts" });
    for (const q of QUEUES)
      counts.append(el("span", { "data-profile": p.name, "data-queue": q }, el("b", { text: String(p[q]) }), q + "  "));
    box.append(el("div", { class: "profile", "data-profile": p.name },
      el("div", {}, el("span", { class: "name", text: p.name }),
        el("span", { class: "muted", text: "  " + total + " pending" + (p.records ? "" : " (no decision records)") })),
      stack, counts));
  }
  if (!profiles.length) box.append(el("p", { class: "muted", text: "no profiles" }));
}

function bar(label, req, alloc, fmt) {
  const p = pct(req, alloc);
  const fill = el("i", { class: level(p) });
  fill.style.width = p + "%";
  return el("div", {}, el("div", { class: "muted", text: label }),
    el("div", { class: "bar" }, fill, el("span", { text: fmt(req) + " / " + fmt(alloc) + " (" + Math.round(p) + "%)" })));
}

function renderNodes(nodes, totals) {
  document.getElementById("node-count").textContent = "(" + nodes.length + " nodes, " + totals.pods + " pods)";
  const t = document.getElementById("totals");
  t.replaceChildren(bar("cluster cpu requested", totals.cpu.requested, totals.cpu.allocatable, fmtCPU),
    bar("cluster memory requested", totals.memory.requested, totals.memory.allocatable, fmtMem));
  const grid = document.getElementById("nodes");
  grid.classList.toggle("dense", nodes.length > 120);
  grid.replaceChildren();
  for (const n of nodes) {
    const c = pct(n.cpu.requested, n.cpu.allocatable), m = pct(n.memory.requested, n.memory.allocatable);
    const ci = el("i", { class: level(c) }), mi = el("i", { class: level(m) });
    ci.style.width = c + "%";
    mi.style.width = m + "%";
    grid.append(el("div", {
      class: "tile" + (n.unschedulable ? " cordoned" : ""), "data-node": n.name,
      title: n.name + "\ncpu " + fmtCPU(n.cpu.requested) + " / " + fmtCPU(n.cpu.allocatable) + " (" + Math.round(c) + "%)" +
        "\nmemory " + fmtMem(n.memory.requested) + " / " + fmtMem(n.memory.allocatable) + " (" + Math.round(m) + "%)" +
        "\npods " + n.pods + " / " + n.maxPods + (n.unschedulable ? "\ncordoned" : ""),
    }, el("div", { class: "n", text: n.name }), el("div", { class: "m" }, ci), el("div", { class: "m" }, mi)));
  }
}

function timeOf(s) {
  const d = new Date(s);
  return isNaN(d) ? s : d.toLocaleTimeString([], { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0");
}

function addDecisions(items, flash) {
  const body = document.querySelector("#feed tbody");
  // items are newest first; insert oldest first so the newest ends on top
  for (const d of [...items].reverse()) {
    if (seen.has(d.seq)) continue;
    seen.set(d.seq, d);
    const key = d.pod.namespace + "/" + d.pod.name;
    const reason = d.reasons && d.reasons.length ? d.reasons[0].count + " " + d.reasons[0].reason : d.message || "";
    const tr = el("tr", { class: flash ? "new" : "", "data-pod": key, "data-seq": String(d.seq) },
      el("td", { text: timeOf(d.time) }), el("td", { text: key }), el("td", { text: d.profile }),
      el("td", {}, el("span", { class: "badge " + d.result, text: d.result })),
      el("td", { text: d.node || "" }), el("td", { class: "reason", text: reason }));
    tr.dataset.shownAt = String(Date.now());
    tr.addEventListener("click", () => showDetail(d, tr));
    body.prepend(tr);
  }
  while (body.children.length > FEED_MAX) {
    const last = body.lastElementChild;
    seen.delete(Number(last.dataset.seq));
    last.remove();
  }
  document.getElementById("feed-empty").hidden = body.children.length > 0;
}

const POINT_COLORS = ["#2f6fde", "#7a4fd6", "#d64545", "#e9a23b", "#2e9e5b", "#138a9c", "#b0457f", "#6b7385",
  "#9c6b13", "#3a3a9c", "#4f8f2e", "#9c1313"];

function renderDetail(rec) {
  document.getElementById("detail-title").textContent = rec.pod.namespace + "/" + rec.pod.name + " #" + rec.seq;
  document.getElementById("detail-summary").textContent = rec.result + (rec.node ? " on " + rec.node : "") +
    " - profile " + rec.profile + ", attempt " + rec.attempts + ", " + rec.numAllNodes + " nodes, " +
    (rec.durationSeconds * 1000).toFixed(2) + " ms" + (rec.message ? " - " + rec.message : "") +
    (rec.chosen && rec.chosen.tiedWith ? " (tie with " + rec.chosen.tiedWith + " other node(s), broken at random)" : "");
  const pe = rec.preemption || {};
  const cands = (pe.candidates || []).map((c) => c.node + " (" + c.victims + " victim" + (c.victims === 1 ? "" : "s") +
    (c.pdbViolations ? ", " + c.pdbViolations + " PDB violation(s)" : "") + (c.droppedByExtenders ? ", dropped by an extender" : "") + ")");
  const pre = document.getElementById("detail-preemption");
  pre.textContent = pe.nominatedNode || cands.length ? "Preemption: nominated " + (pe.nominatedNode || "none") +
    (cands.length ? "; candidates " + cands.join(", ") + (pe.candidatesTotal > cands.length ? " and " + (pe.candidatesTotal - cands.length) + " more" : "") : "") +
    ((pe.victims || []).length ? "; victims " + pe.victims.join(", ") : "") : "";
  const tm = document.getElementById("detail-timings");
  tm.replaceChildren();
  const total = (rec.timings || []).reduce((s, t) => s + t.seconds, 0);
  if (total > 0) {
    const row = el("div", { class: "timings" });
    rec.timings.forEach((t, i) => {
      const s = el("span", { title: t.point + ": " + (t.seconds * 1e3).toFixed(3) + " ms (" + t.runs + " runs)", text: t.point });
      s.style.width = (100 * t.seconds) / total + "%";
      s.style.background = POINT_COLORS[i % POINT_COLORS.length];
      row.append(s);
    });
    tm.append(el("div", { class: "muted", text: "time per extension point" }), row);
  }
  const table = document.getElementById("detail");
  table.replaceChildren();
  const plugins = (rec.score && rec.score.plugins) || [];
  const head = el("tr", {}, el("th", { text: "node" }), el("th", { text: "result" }));
  for (const p of plugins) head.append(el("th", { text: p.name + " (x" + p.weight + ")" }));
  head.append(el("th", { text: "extenders" }), el("th", { text: "total" }));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  const rows = [...((rec.score && rec.score.nodes) || [])].sort((a, b) => b.total - a.total);
  const chosen = rec.chosen && rec.chosen.node;
  for (const n of rows) {
    const isChosen = n.node === chosen;
    const tr = el("tr", { class: isChosen ? "chosen" : "", "data-node": n.node },
      el("td", { text: n.node }), el("td", { text: isChosen ? "chosen" : "feasible" }));
    n.normalized.forEach((v) => {
      const td = el("td", { class: "score", text: String(v) });
      td.style.background = "rgba(47,111,222," + (v / 100) * 0.35 + ")";
      tr.append(td);
    });
    tr.append(el("td", { class: "score", text: String(n.extenders) }), el("td", { class: "score", text: String(n.total) }));
    body.append(tr);
  }
  if (chosen && !rows.length)
    body.append(el("tr", { class: "chosen", "data-node": chosen }, el("td", { text: chosen }),
      el("td", { text: "chosen (the only feasible node, not scored)" })));
  for (const f of rec.filter || []) {
    const why = el("td", { class: "why", colSpan: plugins.length + 2, text: (f.plugin ? f.plugin + ": " : "") + f.message });
    body.append(el("tr", { class: "rejected", "data-node": f.node }, el("td", { text: f.node }), el("td", { text: "rejected" }), why));
  }
  table.append(body);
  document.getElementById("detail-panel").hidden = false;
}

async function showDetail(d, tr) {
  if (selected) selected.classList.remove("sel");
  selected = tr;
  tr.classList.add("sel");
  const q = "namespace=" + encodeURIComponent(d.pod.namespace) + "&name=" + encodeURIComponent(d.pod.name);
  try {
    const r = await fetch("../decisions?" + q, { headers: { Accept: "application/json" } });
    const j = await r.json();
    if (!r.ok) throw new Error(j.message || r.status);
    const rec = (j.items || []).find((x) => x.seq === d.seq) || (j.items || [])[0];
    if (!rec) throw new Error("the record is no longer kept");
    renderDetail(rec);
  } catch (e) {
    document.getElementById("detail-panel").hidden = false;
    document.getElementById("detail-title").textContent = d.pod.namespace + "/" + d.pod.name;
    document.getElementById("detail-summary").textContent = "cannot load the record: " + e.message;
    document.getElementById("detail").replaceChildren();
  }
}

function setConn(up, text) {
  const c = document.getElementById("conn");
  c.className = "conn " + (up ? "up" : "down");
  c.textContent = text;
}

let retry = 500;
function connect() {
  const u = new URL("ws", location.href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(u.href, "schedkit.v1");
  ws.onopen = () => { setConn(true, "live"); retry = 500; };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.type === "state") {
      document.getElementById("leading").textContent = m.leading ? "leading" : "standby (not scheduling)";
      document.getElementById("updated").textContent = "updated " + timeOf(m.time);
      renderQueues(m.profiles);
      renderNodes(m.nodes, m.totals);
      addDecisions(m.recent || [], false);
    } else if (m.type === "decisions") {
      addDecisions(m.items, true);
    }
  };
  ws.onclose = (ev) => {
    setConn(false, ev.code === 1008 ? "refused: " + ev.reason : "reconnecting");
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 10000);
  };
}

document.getElementById("detail-close").addEventListener("click", () => {
  document.getElementById("detail-panel").hidden = true;
  if (selected) selected.classList.remove("sel");
  selected = null;
});
connect();
