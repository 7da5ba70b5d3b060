/* The GPU Fabric Lab page: served by `fabriclab lab --serve`, nothing fetched from elsewhere. */
"use strict";

/*
 * The lab's presets (`fabriclab lab --like NAME`, tools/lab/lab_like.c): a real fabric's rate and
 * latency at one scale factor. One sets the fabric and the rate, and lets the fabric have
 * switches (the "switches" field: `--topology`).
 */
const PRESETS = [
  { name: "hdr", label: "HDR InfiniBand, 200 Gb/s", fabric: "ib" },
  { name: "ndr", label: "NDR InfiniBand, 400 Gb/s", fabric: "ib" },
  { name: "xdr", label: "XDR InfiniBand, 800 Gb/s", fabric: "ib" },
  { name: "roce400", label: "RoCE, 400 Gb/s", fabric: "roce" },
];

/*
 * The projection's model, stated on the page (docs/lab.md, tools/lab/lab_project.c): the field
 * guide's 70B job all-reduces its bf16 gradients every step in one ring over every GPU.
 */
const MODEL = {
  params: 70e9, bytesPerParam: 2, gpusPerNode: 8, computeS: 3.4,
  fabrics: [{ id: "tcp", name: "TCP", gbps: 100 }, { id: "roce", name: "RoCE", gbps: 400 },
            { id: "ib", name: "InfiniBand", gbps: 400 }],
};

const SVGNS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const FAULT_TEXT = {
  "halve-cable": "halve the cable of", "slow-node": "slow", "gdr-off": "switch GPUDirect off on",
  "flaky-roce": "a PFC pause storm on", "slow-rail": "slow the leaf switch of",
  "slow-spine": "slow", "slow-uplink": "slow the uplink", "slow-leafport": "slow the leaf port of",
  healthy: "",
};
const SWITCH_FAULTS = ["slow-spine", "slow-uplink", "slow-leafport"];

let series = { healthy: [], broken: [] };
let baseline = null;     /* { key, steps } of the last healthy run */
let running = false, source = null, liveSeen = new Set();
/* The fabric's description being drawn: { key, data, from: "layout" | "run" }, or null. */
let topo = null, topoLoad = Promise.resolve(), layoutAsked = 0;

/* ---- the form ---- */

function num(id, lo, hi, dflt) {
  const v = parseInt($(id).value, 10);
  return Number.isFinite(v) ? Math.max(lo, Math.min(hi, v)) : dflt;
}

function preset() { return PRESETS.find((x) => x.name === $("preset").value) || null; }

function setup() {
  const p = preset(), fabric = p ? p.fabric : $("fabric").value, nodes = num("nodes", 1, 16, 4);
  const rails = fabric === "tcp" ? 1 : Math.min(num("rails", 1, 8, 1), Math.floor(16 / nodes));
  const topology = p ? $("topology").value : "";
  return { fabric, nodes, rails, steps: num("steps", 2, 50, 8), link_rate: $("link_rate").value,
           like: p ? p.name : "", topology, leaves: num("leaves", 1, nodes, Math.min(2, nodes)),
           spines: num("spines", 1, 8, 1) };
}

function fault() {
  return { scenario: $("scenario").value, target: parseInt($("target").value, 10),
           rail: parseInt($("rail").value, 10), element: $("element").value };
}

/* What POST /api/run takes for these settings (docs/lab.md, "The API"). */
function request(s) {
  const r = { fabric: s.fabric, nodes: s.nodes, rails: s.rails, steps: s.steps };
  if (!s.like) return Object.assign(r, { link_rate: s.link_rate });
  Object.assign(r, { like: s.like });
  if (s.topology) Object.assign(r, { topology: s.topology, leaves: s.leaves, spines: s.spines });
  return r;
}

/* A switch fault's fields: "spine1" -> spine 1; "leaf0-spine1" -> leaf 0, spine 1. */
function switchFields(f) {
  const m = /^(?:leaf(\d+)-)?spine(\d+)$/.exec(f.element || "");
  return m ? { leaf: m[1] === undefined ? 0 : +m[1], spine: +m[2] } : {};
}

function fillSelect(sel, items, keep) {
  sel.textContent = "";
  for (const [value, text] of items) {
    const o = document.createElement("option");
    o.value = String(value); o.textContent = text; sel.appendChild(o);
  }
  if (items.some(([v]) => String(v) === keep)) sel.value = keep;
}

function refreshForm() {
  const s = setup();
  const maxRails = s.fabric === "tcp" ? 1 : Math.max(1, Math.floor(16 / s.nodes));
  const railChoices = [1, 2, 4, 8].filter((k) => k <= maxRails).map((k) => [k, String(k)]);
  fillSelect($("rails"), railChoices, String(s.rails));
  $("rails").disabled = railChoices.length < 2;
  const nodes = [[-1, "a random node"]];
  for (let i = 0; i < s.nodes; i++) nodes.push([i, "node" + i]);
  fillSelect($("target"), nodes, $("target").value);
  const rails = [[-1, s.rails > 1 ? "every NIC" : "its NIC"]];
  for (let k = 0; k < s.rails && s.rails > 1; k++) rails.push([k, "rail " + k + " (" + dev(k) + ")"]);
  fillSelect($("rail"), rails, $("rail").value);
  $("rail-label").hidden = s.rails < 2;
  refreshSwitchForm(s);
  loadLayout(s);
  drawFabric();
  drawChart();
  drawProjection();
}

/* The switches' fields: with a preset only; the element a spine or uplink fault takes. */
function refreshSwitchForm(s) {
  $("fabric").disabled = !!s.like;
  if (s.like) $("fabric").value = s.fabric;
  $("link_rate").disabled = !!s.like;
  $("topology").disabled = !s.like;
  $("leaves-label").hidden = s.topology !== "fat-tree";
  $("spines-label").hidden = !s.topology;
  $("leaves").max = String(s.nodes);
  for (const o of $("scenario").options)
    if (SWITCH_FAULTS.includes(o.value)) o.disabled = !s.topology;
  refreshElements();
}

function refreshElements() {
  const sc = $("scenario").value, t = topo && topo.data;
  let items = [];
  if (sc === "slow-spine" && t) items = switchNames(t, "spine").map((n) => [n, n]);
  if (sc === "slow-uplink" && t)
    items = (t.uplinks || []).map((u) => [u.leaf + "-" + u.spine, u.leaf + "-" + u.spine]);
  fillSelect($("element"), items, $("element").value);
  $("element-label").hidden = !items.length;
  $("target-label").hidden = sc === "slow-spine" || sc === "slow-uplink";
}

function layoutKey(s) {
  return [s.fabric, s.nodes, s.rails, s.like, s.topology, s.leaves, s.spines].join("/");
}

/* The fabric the lab would build for the form (GET /api/layout): drawn before a run. */
async function loadLayout(s) {
  const key = layoutKey(s), asked = ++layoutAsked;
  if (topo && topo.key === key) return;
  topo = null;
  if (!s.topology) return;
  const q = new URLSearchParams({ fabric: s.fabric, nodes: s.nodes, rails: s.rails, like: s.like,
                                  topology: s.topology, leaves: s.leaves, spines: s.spines });
  const r = await fetch("/api/layout?" + q);
  const j = await r.json().catch(() => ({}));
  if (asked !== layoutAsked) return; /* the form changed since */
  if (!r.ok) { say(j.error || "HTTP " + r.status); return; }
  topo = { key, data: j, from: "layout" };
  refreshElements();
  drawFabric();
}

/* The run's own description (GET /api/topology), faults and all, once the lab has written it. */
async function loadRunTopology(s) {
  const key = layoutKey(s);
  if (s.fabric === "tcp") return;
  for (let i = 0; i < 60; i++) {
    const r = await fetch("/api/topology");
    if (r.ok) {
      const j = await r.json();
      if (layoutKey(setup()) !== key) return;
      topo = { key, data: j, from: "run" };
      drawFabric();
      return;
    }
    if (r.status !== 404) return;
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

function dev(k) { return ($("fabric").value === "tcp" ? "eth" : "mlx5_") + k; }

/* ---- the fabric ---- */

function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

/* A part of the fabric a click or a key breaks. */
function part(g, kind, node, rail, label, act) {
  g.setAttribute("data-part", kind);
  if (node >= 0) g.setAttribute("data-node", node);
  if (rail >= 0) g.setAttribute("data-rail", rail);
  g.setAttribute("tabindex", "0");
  g.setAttribute("role", "button");
  g.setAttribute("aria-label", label);
  el("title", {}, g, label);
  const go = (e) => { e.preventDefault(); e.stopPropagation(); act(); };
  g.addEventListener("click", go);
  g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") go(e); });
}

function breakPart(scenario, node, rail) {
  if (running) { say("a run is going on: cancel it first"); return; }
  $("scenario").value = scenario;
  $("target").value = String(node);
  $("rail").value = String(rail);
  refreshElements();
  compare();
}

/* A spine ("spine1") or an uplink ("leaf0-spine1") of the drawn switches. */
function breakSwitch(scenario, element) {
  if (running) { say("a run is going on: cancel it first"); return; }
  $("scenario").value = scenario;
  refreshElements();
  $("element").value = element;
  compare();
}

const GEOM = { w: 600, h: 236, leafY: 8, leafH: 28, nodeY: 118, nodeH: 56, ringY: 190 };

function nodeBox(i, n) {
  const gap = n > 8 ? 4 : 10, w = (GEOM.w - 20 - gap * (n - 1)) / n;
  return { x: 10 + i * (w + gap), w };
}

function nicBox(i, k, s) {
  const b = nodeBox(i, s.nodes), w = Math.min(22, (b.w - 4) / s.rails - 2);
  const x0 = b.x + (b.w - (w + 2) * s.rails + 2) / 2;
  return { x: x0 + k * (w + 2), y: GEOM.nodeY + 4, w, h: 12 };
}

function leafBox(k, s) {
  const w = Math.min(140, (GEOM.w - 20) / s.rails - 16);
  const span = (GEOM.w - 20) / s.rails;
  return { x: 10 + k * span + (span - w) / 2, y: GEOM.leafY, w, h: GEOM.leafH };
}

/* Where the culprit's label goes, over the nodes of the drawing shown. */
let labelY = GEOM.nodeY - 8;

function drawFabric() {
  const s = setup(), svg = $("fabric-map"), f = fault();
  const t = topo && topo.key === layoutKey(s) && hasSwitches(topo.data) ? topo : null;
  svg.textContent = "";
  svg.dataset.source = t ? t.from : "form";
  const defs = el("defs", {}, svg);
  const m = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
                           markerUnits: "userSpaceOnUse", markerWidth: 8, markerHeight: 8,
                           orient: "auto-start-reverse" }, defs);
  el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#777" }, m);
  if (t) {
    labelY = SW.nodeY - 8;
    drawSwitched(svg, s, t.data);
    markSwitchFaults(t.data, f, t.from === "run");
    markFault(f, s); /* the plugin's faults (halve-cable, slow-node...): the description has none */
    return;
  }
  labelY = GEOM.nodeY - 8;
  svg.setAttribute("viewBox", "0 0 " + GEOM.w + " " + GEOM.h);
  svg.setAttribute("height", GEOM.h);
  const cables = el("g", {}, svg), leaves = el("g", {}, svg), nodes = el("g", {}, svg);
  for (let k = 0; k < s.rails; k++) {
    const b = leafBox(k, s), g = el("g", { class: "leaf", id: "leaf" + k }, leaves);
    el("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 4 }, g);
    el("text", { x: b.x + b.w / 2, y: b.y + 19, "text-anchor": "middle" }, g,
       (s.rails > 1 ? "leaf " : "switch ") + k);
    if (s.rails > 1)
      part(g, "leaf", -1, k, "leaf switch of rail " + k + ": slow it (slow-rail)",
           () => breakPart("slow-rail", -1, k));
  }
  for (let i = 0; i < s.nodes; i++) {
    const b = nodeBox(i, s.nodes);
    for (let k = 0; k < s.rails; k++) {
      const n = nicBox(i, k, s), l = leafBox(k, s);
      const x2 = l.x + l.w * (i + 0.5) / s.nodes;
      const g = el("g", { class: "cable", id: "cable" + i + "-" + k }, cables);
      const line = { x1: n.x + n.w / 2, y1: n.y, x2, y2: l.y + l.h };
      el("line", Object.assign({ class: "hit" }, line), g);
      el("line", Object.assign({ class: "wire" }, line), g);
      part(g, "cable", i, k, "cable of node" + i + " " + dev(k) + " to " +
           (s.rails > 1 ? "leaf " + k : "the switch") + ": halve it",
           () => breakPart("halve-cable", i, s.rails > 1 ? k : -1));
    }
    const g = el("g", { class: "node", id: "node" + i }, nodes);
    el("rect", { class: "box", x: b.x, y: GEOM.nodeY, width: b.w, height: GEOM.nodeH, rx: 3 }, g);
    el("text", { x: b.x + b.w / 2, y: GEOM.nodeY + 34, "text-anchor": "middle" }, g,
       b.w > 44 ? "node" + i : String(i));
    el("text", { x: b.x + b.w / 2, y: GEOM.nodeY + 48, "text-anchor": "middle",
                 "font-size": 9 }, g, b.w > 44 ? "8 GPUs" : "");
    part(g, "node", i, -1, "node" + i + ": slow it (slow-node)", () => breakPart("slow-node", i, -1));
    for (let k = 0; k < s.rails; k++) {
      const n = nicBox(i, k, s);
      const r = el("rect", { class: "nic", id: "nic" + i + "-" + k, x: n.x, y: n.y, width: n.w,
                             height: n.h }, nodes);
      part(r, "nic", i, k, "NIC " + dev(k) + " of node" + i + ": switch GPUDirect off",
           () => breakPart("gdr-off", i, s.rails > 1 ? k : -1));
    }
  }
  drawRing(svg, s, GEOM);
  el("text", { x: GEOM.w - 8, y: GEOM.h - 6, "text-anchor": "end", "font-size": 10 }, svg,
     s.fabric.toUpperCase() + ", " + s.nodes + " node" + (s.nodes > 1 ? "s" : "") + " x " +
     s.rails + " NIC" + (s.rails > 1 ? "s (NIC k of every node on leaf k)" : ""));
  markFault(f, s);
}

/* The ring: node k sends to node k+1, the last back to node0 (geom: GEOM or SW). */
function drawRing(svg, s, geom) {
  const g = el("g", { id: "ring" }, svg), y = geom.ringY;
  el("text", { x: 10, y: geom.h - 6, "font-size": 10 }, g, "ring: node0 \u2192 node1 \u2192 \u2026 \u2192 node0");
  if (s.nodes < 2) return;
  for (let i = 0; i < s.nodes; i++) {
    const a = nodeBox(i, s.nodes), j = (i + 1) % s.nodes, b = nodeBox(j, s.nodes);
    const x1 = a.x + a.w / 2, x2 = b.x + b.w / 2;
    const d = j > i ? "M" + (x1 + 3) + "," + y + " L" + (x2 - 3) + "," + y
                    : "M" + x1 + "," + (y + 4) + " L" + x1 + "," + (y + 14) + " L" + x2 + "," +
                      (y + 14) + " L" + x2 + "," + (y + 4);
    el("path", { class: "ring", id: "hop" + i + "-" + j, d, "marker-end": "url(#arrow)" }, g);
  }
}

function mark(id, cls) { const e = $(id); if (e) e.classList.add(cls); }

/* The fault asked for, dashed orange where it is. */
function markFault(f, s) {
  const t = f.target;
  if (f.scenario === "slow-rail") {
    for (let k = 0; k < s.rails; k++) if (f.rail < 0 || f.rail === k) mark("leaf" + k, "broken");
    return;
  }
  if (t < 0) return;
  for (let k = 0; k < s.rails; k++) {
    if (f.rail >= 0 && f.rail !== k) continue;
    if (f.scenario === "halve-cable") mark("cable" + t + "-" + k, "broken");
    if (f.scenario === "gdr-off") mark("nic" + t + "-" + k, "broken");
  }
  if (f.scenario === "slow-node" || f.scenario === "flaky-roce") mark("node" + t, "broken");
}

function nodeIndex(name) { const m = /^node(\d+)$/.exec(name || ""); return m ? +m[1] : -1; }
function railOf(d) { const m = /(\d+)$/.exec(d || ""); return m ? +m[1] : 0; }

/* What the report (or a live finding) names, on the fabric; returns where to label it. */
function markCulprit(v, cls) {
  const s = setup(), n = nodeIndex(v.node);
  const hop = v.hop || null;
  if (v.kind === "switch") return markParts(switchParts(v.node), cls);
  if (v.kind === "rail") {
    const leaf = $("leaf" + railOf(v.dev)) || $("sw-leaf" + railOf(v.dev));
    if (leaf) leaf.classList.add(cls);
    return leaf;
  }
  if (v.kind === "link" && hop) {
    const a = nodeIndex(hop.src_node), b = nodeIndex(hop.dst_node);
    mark("hop" + a + "-" + b, cls);
    mark("cable" + a + "-" + railOf(hop.src_dev), cls);
    mark("cable" + b + "-" + railOf(hop.dst_dev), cls);
    return $("node" + b);
  }
  if (n < 0) return null;
  if (v.kind === "node") mark("node" + n, cls);
  else if (v.kind === "gdr") mark("nic" + n + "-" + Math.min(railOf(v.dev), s.rails - 1), cls);
  else {
    mark("cable" + n + "-" + Math.min(railOf(v.dev), s.rails - 1), cls);
    mark("nic" + n + "-" + Math.min(railOf(v.dev), s.rails - 1), cls);
  }
  return $("node" + n);
}

function labelCulprit(at, text) {
  if (!at) return;
  const box = at.getBBox(), x = Math.min(Math.max(box.x + box.width / 2, 80), GEOM.w - 80);
  /* a switch's under it, between its row and the next; anything else's over the nodes */
  const y = at.classList.contains("switch") ? box.y + box.height + 13 : labelY;
  el("text", { class: "culprit-label", x, y, "text-anchor": "middle" }, $("fabric-map"), text);
}

/* ---- the chart ---- */

function niceStep(max) {
  const raw = max / 5, p = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((v) => v >= raw);
}

function drawChart() {
  const svg = $("chart"), title = $("chart-title");
  svg.textContent = ""; svg.appendChild(title);
  const L = 62, R = 600, T = 30, B = 210, all = series.healthy.concat(series.broken);
  const steps = Math.max(setup().steps, series.healthy.length, series.broken.length, 2);
  const top = all.length ? niceStep(Math.max(...all) * 1.05) : 100;
  const ymax = top * Math.ceil((all.length ? Math.max(...all) * 1.05 : 500) / top);
  const x = (i) => L + (R - L) * (i - 1) / (steps - 1), y = (v) => B - (B - T) * v / ymax;
  for (let v = 0; v <= ymax + 1e-9; v += top) {
    el("line", { class: "grid", x1: L, x2: R, y1: y(v), y2: y(v) }, svg);
    el("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, svg, +v.toFixed(1));
  }
  for (let i = 1; i <= steps; i++) {
    if (steps > 20 && i % 5 && i !== 1) continue;
    el("line", { class: "axis", x1: x(i), x2: x(i), y1: B, y2: B + 4 }, svg);
    el("text", { x: x(i), y: B + 16, "text-anchor": "middle" }, svg, i);
  }
  el("line", { class: "axis", x1: L, x2: L, y1: T - 6, y2: B }, svg);
  el("line", { class: "axis", x1: L, x2: R, y1: B, y2: B }, svg);
  el("text", { x: (L + R) / 2, y: B + 34, "text-anchor": "middle" }, svg, "training step");
  el("text", { x: 14, y: (T + B) / 2, "text-anchor": "middle",
               transform: "rotate(-90 14 " + (T + B) / 2 + ")" }, svg, "step time (ms)");
  for (const name of ["healthy", "broken"]) {
    const pts = series[name].map((v, i) => [x(i + 1), y(v)]);
    el("polyline", { class: "series " + name, points: pts.map((p) => p.join(",")).join(" ") }, svg);
    for (const p of pts) el("circle", { class: "step " + name, r: 3, cx: p[0], cy: p[1] }, svg);
  }
  const f = fault(), what = f.scenario === "healthy" ? "" : " (" + f.scenario + ")";
  el("line", { class: "series healthy", x1: L + 10, x2: L + 40, y1: 14, y2: 14 }, svg);
  el("text", { x: L + 46, y: 18 }, svg, "healthy");
  el("line", { class: "series broken", x1: L + 120, x2: L + 150, y1: 14, y2: 14 }, svg);
  el("text", { x: L + 156, y: 18 }, svg, "broken" + what);
}

function median(a) {
  if (!a.length) return NaN;
  const s = a.slice().sort((p, q) => p - q), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/* The first step carries the connection setup: medians leave it out when there are others. */
function steady(a) { return a.length > 2 ? a.slice(1) : a; }

function effect() {
  const h = median(steady(series.healthy)), b = median(steady(series.broken));
  return h > 0 && b > 0 ? b / h : NaN;
}

function showRatio() {
  const h = median(steady(series.healthy)), b = median(steady(series.broken)), r = effect();
  $("ratio").textContent = Number.isFinite(r)
    ? "median step: healthy " + h.toFixed(1) + " ms, broken " + b.toFixed(1) + " ms: " +
      r.toFixed(2) + "x"
    : Number.isFinite(h) ? "median step: healthy " + h.toFixed(1) + " ms" : "";
}

/* ---- the projection ---- */

function drawProjection() {
  const s = setup(), gpus = s.nodes * MODEL.gpusPerNode, measured = effect();
  /* under 5% slower is within a loaded machine's noise: no cost claimed */
  const r = measured >= 1.05 ? measured : NaN;
  const bytes = MODEL.params * MODEL.bytesPerParam, body = $("projection").tBodies[0];
  body.textContent = "";
  for (const fab of MODEL.fabrics) {
    const comm = s.nodes < 2 ? 0 : 2 * (gpus - 1) / gpus * bytes / (fab.gbps * 1e9 / 8);
    const healthy = MODEL.computeS + comm;
    const broken = Number.isFinite(r) ? MODEL.computeS + comm * r : NaN;
    const tr = document.createElement("tr");
    const cells = [fab.name + (fab.id === s.fabric ? " (this run)" : ""), comm.toFixed(1) + " s",
                   healthy.toFixed(1) + " s", Number.isFinite(broken) ? broken.toFixed(1) + " s" : "-",
                   Number.isFinite(broken) ? "+" + (broken - healthy).toFixed(1) + " s" : "-",

                   (100 * MODEL.computeS / (Number.isFinite(broken) ? broken : healthy)).toFixed(0) + "%"];
    for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.appendChild(td); }
    body.appendChild(tr);
  }
  $("model").textContent = "Model, not a measurement: " + MODEL.params / 1e9 + "B parameters, " +
    "bf16 gradients (" + bytes / 1e9 + " GB) ring all-reduced every step over " + s.nodes +
    " node" + (s.nodes > 1 ? "s" : "") + " x " + MODEL.gpusPerNode + " GPUs (2(n-1)/n of them " +
    "through every GPU's link: " + MODEL.fabrics.map((f) => f.name + " " + f.gbps + " Gb/s").join(", ") +
    " per GPU), " + MODEL.computeS + " s of compute a step" +
    (s.nodes < 2 ? "; on one node the ring stays on NVLink" : "") +
    ". The fault stretches the all-reduce by this lab's measured slowdown (broken over healthy " +
    "median step" + (Number.isFinite(measured) ? ": " + measured.toFixed(2) + "x" : "") + ")" +
    (Number.isFinite(measured) && !Number.isFinite(r)
      ? "; this run measured no slowdown (under 1.05x), so no cost is shown: with many ranks " +
        "on few cores the machine, not the links, may set the pace (try a lower link rate)"
      : "") + ". Efficiency: compute over step time.";
}

/* ---- runs ---- */

function setState(text) { $("state").textContent = text; }

/* A passing remark (a key pressed while a run goes): shown for a few seconds. */
function say(text) {
  $("error").textContent = text;
  setTimeout(() => { if ($("error").textContent === text) $("error").textContent = ""; }, 4000);
}

async function post(path, body) {
  const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                                body: JSON.stringify(body || {}) });
  let j = {};
  try { j = await r.json(); } catch (e) { /* an empty answer */ }
  return { ok: r.ok, status: r.status, body: j };
}

function addFinding(f) {
  const key = f.kind + " " + f.culprit;
  if (liveSeen.has(key)) return;
  liveSeen.add(key);
  const none = $("findings").querySelector(".none");
  if (none) none.remove();
  const li = document.createElement("li");
  li.textContent = "live: " + f.kind + " " + f.culprit + " at " + (+f.ratio).toFixed(2) +
    "x its line rate";
  $("findings").appendChild(li);
  const m = /^(node\d+)\/(\S+)(?: -> (node\d+)\/(\S+))?$/.exec(f.culprit);
  if (m) markCulprit(m[3] ? { kind: "link", hop: { src_node: m[1], src_dev: m[2], dst_node: m[3],
                                                   dst_dev: m[4] } }
                          : { kind: f.kind, node: m[1], dev: m[2] }, "live");
}

/* One run: POST /api/run, its steps as they come; resolves with its end state. */
function runOne(req, name) {
  return new Promise(async (resolve) => {
    const r = await post("/api/run", req);
    if (!r.ok) { $("error").textContent = r.body.error || "HTTP " + r.status; resolve("refused"); return; }
    topoLoad = loadRunTopology(setup());
    const total = req.steps;
    setState(name + " run " + r.body.run + ": starting " + req.nodes + " node" +
             (req.nodes > 1 ? "s" : "") + "...");
    source = new EventSource("/api/events");
    source.addEventListener("step", (e) => {
      series[name].push(JSON.parse(e.data).ms);
      setState(name + " run: step " + series[name].length + " of " + total);
      drawChart(); showRatio();
    });
    source.addEventListener("finding", (e) => { if (name === "broken") addFinding(JSON.parse(e.data)); });
    source.addEventListener("end", (e) => {
      source.close(); source = null;
      resolve(JSON.parse(e.data).state);
    });
    source.onerror = () => { if (source && source.readyState === EventSource.CLOSED) resolve("lost"); };
  });
}

function resetResult() {
  $("culprit").textContent = "Running...";
  $("evidence").textContent = "";
  $("commands").textContent = "";
  $("commands-box").hidden = true;
  $("findings").innerHTML = '<li class="none">none yet</li>';
  liveSeen = new Set();
  $("error").textContent = "";
}

function culpritName(v) {
  if (v.kind === "link" && v.hop)
    return v.hop.src_node + "/" + v.hop.src_dev + " \u2192 " + v.hop.dst_node + "/" + v.hop.dst_dev;
  if (v.kind === "rail") return "rail of " + v.dev;
  return v.node ? v.node + (v.dev ? "/" + v.dev : "") : "";
}

async function showResult() {
  await topoLoad; /* the run's fabric drawn first: the culprit is marked on it */
  const r = await fetch("/api/result");
  if (!r.ok) { $("error").textContent = (await r.json()).error; return; }
  const rep = await r.json(), v = rep.verdict || { kind: "none" };
  const findings = (rep.findings || []).filter((f) => f.kind !== "none");
  if (v.kind === "none") {
    $("culprit").textContent = "verdict: none - no hop, node or rail stands out";
  } else {
    $("culprit").textContent = "culprit: " + v.kind + " " + culpritName(v) +
      (v.ratio ? " (" + (+v.ratio).toFixed(2) + "x its peers)" : "");
    labelCulprit(markCulprit(v, "culprit"), v.kind + ": " + culpritName(v));
  }
  $("evidence").textContent = "evidence: " + (v.reason || "") +
    (findings.length > 1 ? " Also: " + findings.slice(1).map((f) => f.kind + " " + f.culprit + ": " +
      f.evidence).join("; ") : "");
  const cmds = v.commands || [];
  $("commands").textContent = "";
  for (const c of cmds) {
    const li = document.createElement("li"), code = document.createElement("code");
    code.textContent = c; li.appendChild(code); $("commands").appendChild(li);
  }
  $("commands-box").hidden = !cmds.length;
  $("report").src = "/report.html?" + Date.now();
}

function settingsKey(s) { return [layoutKey(s), s.steps, s.link_rate].join("/"); }

async function compare() {
  if (running) return;
  const s = setup(), f = fault();
  running = true; $("run").disabled = true; $("cancel").disabled = false;
  delete $("state").dataset.finished;
  resetResult(); drawFabric();
  series.broken = [];
  if (!baseline || baseline.key !== settingsKey(s)) {
    series.healthy = []; drawChart();
    const end = await runOne(Object.assign({ scenario: "healthy" }, request(s)), "healthy");
    if (end !== "done") return finish("healthy run " + end);
    baseline = { key: settingsKey(s), steps: series.healthy.slice() };
  } else {
    series.healthy = baseline.steps.slice();
  }
  drawChart(); showRatio(); drawProjection();
  if (f.scenario === "healthy") { await showResult(); return finish("done (healthy only)"); }
  const end = await runOne(Object.assign(request(s), { scenario: f.scenario, target: f.target,
                                                      rail: f.rail }, switchFields(f)), "broken");
  showRatio(); drawProjection();
  if (end === "done") await showResult();
  finish(end === "done" ? "done: healthy and broken side by side" : "broken run " + end);
}

function finish(text) {
  running = false; $("run").disabled = false; $("cancel").disabled = true;
  setState(text);
  $("state").dataset.finished = "1";
  if (!/^done/.test(text)) $("culprit").textContent = "No report: the run " + text.split(" ").pop() + ".";
}

/* ---- wiring ---- */

if (PRESETS.length) {
  fillSelect($("preset"), [["", "(none)"]].concat(PRESETS.map((p) => [p.name, p.label || p.name])), "");
  $("preset-label").hidden = false;
}
for (const id of ["preset", "fabric", "nodes", "rails", "steps", "link_rate", "topology", "leaves",
                  "spines"])
  $(id).addEventListener("change", () => { series = { healthy: [], broken: [] }; refreshForm(); });
$("scenario").addEventListener("change", () => { refreshElements(); drawFabric(); });
for (const id of ["target", "rail", "element"]) $(id).addEventListener("change", drawFabric);
$("setup").addEventListener("submit", (e) => { e.preventDefault(); compare(); });
$("cancel").addEventListener("click", async () => {
  const r = await post("/api/cancel");
  if (!r.ok && r.status !== 409) $("error").textContent = r.body.error || "HTTP " + r.status;
});
refreshForm();
