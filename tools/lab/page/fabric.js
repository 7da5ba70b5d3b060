/*
 * The fabric with switches, drawn from its description (fabric/README.md, "The description"):
 * before a run the one the lab would build (GET /api/layout), during and after a run the run's
 * own topology.json (GET /api/topology), faults included. Spines on top, leaves below them with
 * every leaf-spine uplink, the nodes at the bottom with each NIC cabled to its leaf port, and the
 * ring. Loaded before lab.js, whose helpers (el, part, nodeBox, drawRing, breakPart, mark) it
 * uses when called.
 */
"use strict";

const SW = { w: 600, h: 290, spineY: 8, leafY: 86, swH: 26, nodeY: 166, nodeH: 50, ringY: 236 };

function hasSwitches(t) { return !!t && Array.isArray(t.switches) && t.switches.length > 0; }

function switchNames(t, role) {
  return (t.switches || []).filter((x) => x.role === role).map((x) => x.name);
}

function rowBox(i, n, y, maxW) {
  const span = (SW.w - 20) / n, w = Math.min(maxW, span - 10);
  return { x: 10 + i * span + (span - w) / 2, y, w, h: SW.swH };
}

/* The ports a leaf's NICs take (1..P): where each NIC's cable meets the leaf. */
function portsOn(t) {
  const p = {};
  for (const n of t.nodes || [])
    for (const c of n.nics || []) if (c.leaf) p[c.leaf] = Math.max(p[c.leaf] || 0, c.leaf_port || 1);
  return p;
}

function indexIn(name, prefix) {
  const m = new RegExp("^" + prefix + "(\\d+)$").exec(name || "");
  return m ? +m[1] : -1;
}

function drawSwitch(parent, name, role, b, t, s) {
  const g = el("g", { class: "switch " + role, id: "sw-" + name, "data-switch": name,
                      "data-role": role }, parent);
  el("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 4 }, g);
  el("text", { x: b.x + b.w / 2, y: b.y + 17, "text-anchor": "middle" }, g, name);
  if (role === "spine")
    part(g, "spine", -1, -1, name + ": slow it to 25% (every cable of it, slow-spine)",
         () => breakSwitch("slow-spine", name));
  else if (/^rail/.test(t.layout || "") && s.rails > 1 && indexIn(name, "leaf") < s.rails)
    part(g, "leaf", -1, indexIn(name, "leaf"), name + ", the leaf of rail " +
         indexIn(name, "leaf") + ": slow it (slow-rail)",
         () => breakPart("slow-rail", -1, indexIn(name, "leaf")));
  return g;
}

function drawUplinks(parent, t, pos, spines, leaves) {
  for (const u of t.uplinks || []) {
    const a = pos[u.leaf], b = pos[u.spine];
    if (!a || !b) continue;
    const name = u.leaf + "-" + u.spine;
    const g = el("g", { class: "cable uplink", id: "up-" + name, "data-leaf": u.leaf,
                        "data-spine": u.spine }, parent);
    const line = { x1: a.x + a.w * (spines.indexOf(u.spine) + 0.5) / spines.length, y1: a.y,
                   x2: b.x + b.w * (leaves.indexOf(u.leaf) + 0.5) / leaves.length, y2: b.y + b.h };
    el("line", Object.assign({ class: "hit" }, line), g);
    el("line", Object.assign({ class: "wire" }, line), g);
    part(g, "uplink", -1, -1, "uplink " + name + " (" + (u.cables || 1) + " cable" +
         ((u.cables || 1) > 1 ? "s" : "") + "): slow it to 25% (slow-uplink)",
         () => breakSwitch("slow-uplink", name));
  }
}

/* A node's NICs, each cabled to its leaf port. */
function drawNode(layers, t, s, i, node, pos, ports) {
  const n = (t.nodes || []).length, b = nodeBox(i, n), nics = node.nics || [];
  const id = indexIn(node.name, "node") >= 0 ? indexIn(node.name, "node") : i;
  const w = Math.min(22, (b.w - 4) / Math.max(1, nics.length) - 2);
  const x0 = b.x + (b.w - (w + 2) * nics.length + 2) / 2;
  const g = el("g", { class: "node", id: "node" + id,
                      "data-leaf": [...new Set(nics.map((c) => c.leaf || ""))].join(" ") },
               layers.nodes);
  el("rect", { class: "box", x: b.x, y: SW.nodeY, width: b.w, height: SW.nodeH, rx: 3 }, g);
  el("text", { x: b.x + b.w / 2, y: SW.nodeY + 32, "text-anchor": "middle" }, g,
     b.w > 44 ? node.name : String(id));
  el("text", { x: b.x + b.w / 2, y: SW.nodeY + 45, "text-anchor": "middle", "font-size": 9 }, g,
     b.w > 44 ? "8 GPUs" : "");
  part(g, "node", id, -1, node.name + ": slow it (slow-node)", () => breakPart("slow-node", id, -1));
  nics.forEach((c, k) => {
    const nb = { x: x0 + k * (w + 2), y: SW.nodeY + 4, w, h: 12 }, lb = pos[c.leaf];
    if (lb) {
      const line = { x1: nb.x + nb.w / 2, y1: nb.y,
                     x2: lb.x + lb.w * ((c.leaf_port || 1) - 0.5) / (ports[c.leaf] || 1),
                     y2: lb.y + lb.h };
      const cg = el("g", { class: "cable", id: "cable" + id + "-" + k, "data-leaf": c.leaf,
                           "data-port": c.leaf_port || 0 }, layers.cables);
      el("line", Object.assign({ class: "hit" }, line), cg);
      el("line", Object.assign({ class: "wire" }, line), cg);
      part(cg, "cable", id, k, node.name + " " + c.name + " to " + c.leaf + " port " +
           (c.leaf_port || "?") + ": slow that leaf port to 50% (slow-leafport)",
           () => breakPart("slow-leafport", id, nics.length > 1 ? k : -1));
    }
    const r = el("rect", { class: "nic", id: "nic" + id + "-" + k, x: nb.x, y: nb.y, width: nb.w,
                           height: nb.h }, layers.nodes);
    part(r, "nic", id, k, "NIC " + c.name + " of " + node.name + ": switch GPUDirect off",
         () => breakPart("gdr-off", id, nics.length > 1 ? k : -1));
  });
}

function drawSwitched(svg, s, t) {
  const spines = switchNames(t, "spine"), leaves = switchNames(t, "leaf"), pos = {};
  const layers = { up: el("g", {}, svg), cables: el("g", {}, svg), sws: el("g", {}, svg),
                   nodes: el("g", {}, svg) };
  const ports = portsOn(t);
  svg.setAttribute("viewBox", "0 0 " + SW.w + " " + SW.h);
  svg.setAttribute("height", SW.h);
  spines.forEach((name, j) => { pos[name] = rowBox(j, spines.length, SW.spineY, 110); });
  leaves.forEach((name, i) => { pos[name] = rowBox(i, leaves.length, SW.leafY, 130); });
  drawUplinks(layers.up, t, pos, spines, leaves);
  for (const name of spines.concat(leaves))
    drawSwitch(layers.sws, name, spines.includes(name) ? "spine" : "leaf", pos[name], t, s);
  (t.nodes || []).forEach((node, i) => drawNode(layers, t, s, i, node, pos, ports));
  drawRing(svg, s, SW);
  el("text", { x: SW.w - 8, y: SW.h - 6, "text-anchor": "end", "font-size": 10 }, svg,
     t.layout + ": " + leaves.length + " lea" + (leaves.length === 1 ? "f" : "ves") + ", " +
     spines.length + " spine" + (spines.length === 1 ? "" : "s"));
}

/* The drawn parts an element of the description names: "spine1", "leaf0", "leaf0-spine1",
 * "node3/mlx5_0", "leaf1:2" (fabric/README.md, "Elements"). */
function elementParts(name) {
  let m = /^(leaf\d+|spine\d+)$/.exec(name);
  if (m) return ["sw-" + m[1]];
  if ((m = /^(leaf\d+)-(spine\d+)$/.exec(name))) return ["up-" + name];
  if ((m = /^(leaf\d+):(\d+)$/.exec(name)))
    return [...document.querySelectorAll('#fabric-map .cable[data-leaf="' + m[1] +
                                         '"][data-port="' + m[2] + '"]')].map((e) => e.id);
  if ((m = /^node(\d+)\/(\S+)$/.exec(name))) {
    const k = railOf(m[2]);
    return ["cable" + m[1] + "-" + k, "nic" + m[1] + "-" + k];
  }
  return [];
}

/*
 * The parts a verdict's switch element names (tools/topology/topo_hops.c): "spine1",
 * "leaf0-spine1", "leaf0's uplinks (leaf0-spine0, leaf0-spine1)", "the spine layer (spine0,
 * spine1)", "leaf2", "leaf1 port 2 (node5/mlx5_0)".
 */
function switchParts(name) {
  const ids = [];
  let rest = name || "", m;
  const take = (re, f) => { rest = rest.replace(re, (...a) => { ids.push(...f(a)); return " "; }); };
  take(/(leaf\d+) port (\d+) \([^)]*\)/g, (a) => elementParts(a[1] + ":" + a[2]));
  take(/(leaf\d+)-(spine\d+)/g, (a) => ["up-" + a[1] + "-" + a[2]]);
  if ((m = /(leaf\d+)'s uplinks/.exec(rest)) && !ids.length)
    ids.push(...[...document.querySelectorAll('#fabric-map .uplink[data-leaf="' + m[1] + '"]')]
      .map((e) => e.id));
  rest = rest.replace(/leaf\d+'s uplinks/g, " ");
  take(/(spine\d+|leaf\d+)/g, (a) => ["sw-" + a[1]]);
  if (/the spine layer/.test(name) && !ids.some((x) => /^sw-spine/.test(x)))
    ids.push(...[...document.querySelectorAll("#fabric-map .switch.spine")].map((e) => e.id));
  return ids;
}

/* Marks the parts; the first, to label, or null. */
function markParts(ids, cls) {
  let first = null;
  for (const id of ids) {
    const e = document.getElementById(id);
    if (!e) continue;
    e.classList.add(cls);
    first = first || e;
  }
  return first;
}

/* The faults where they are: the run's description's own (a switch's, a NIC's hardware), or the
 * form's before a run; slow-rail (the plugin's, on every NIC of a rail) on the rail's leaf. */
function markSwitchFaults(t, f, fromRun) {
  if (f.scenario === "slow-rail")
    markParts([...document.querySelectorAll("#fabric-map .switch.leaf")]
      .filter((e) => f.rail < 0 || e.id === "sw-leaf" + f.rail).map((e) => e.id), "broken");
  if (fromRun) {
    for (const x of t.faults || []) markParts(elementParts(x.element), "broken");
    return;
  }
  if (f.scenario === "slow-spine" || f.scenario === "slow-uplink")
    markParts(elementParts(f.element), "broken");
  else if (f.scenario === "slow-leafport" && f.target >= 0)
    markParts([...document.querySelectorAll('#fabric-map .cable[id^="cable' + f.target + '-"]')]
      .filter((e) => f.rail < 0 || e.id === "cable" + f.target + "-" + f.rail).map((e) => e.id),
      "broken");
}
