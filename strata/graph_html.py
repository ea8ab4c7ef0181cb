"""The model graph as one self-contained HTML page: inline CSS and JavaScript, no
network. The layout is computed here (layers by longest path from the sources,
order within a layer by the barycenter of neighbours, a few sweeps each way), so
the page only draws, pans (drag), zooms (wheel) and opens a side panel on a click
(SQL, columns with types, pins, lineage per column, state and history). A URL
ending `#model=NAME` (URL-encoded) opens that model's panel on load; any other
fragment (no such model, `toString`, a stray `%`) opens nothing.

User text reaches the page only as JSON data, embedded with `<`, `>`, `&` and every
non-ASCII character (U+2028/2029 included) as `\\u` escapes, so no name can close
the `<script>` element; the script puts text into the page with `textContent`,
never as markup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from strata.graph import Graph

NODE_W, NODE_H = 220, 46  # a node's box, in SVG units
GAP_X, GAP_Y = 90, 22  # between layers, between nodes of a layer
SWEEPS = 4  # barycenter passes each way: enough for a model graph's crossings


@dataclass(frozen=True)
class Placed:
    name: str
    layer: int
    x: float
    y: float


def layout(graph: Graph) -> dict[str, Placed]:
    """Each node's box: the layer is the longest path from a node reading nothing;
    within a layer, nodes sit in barycenter order of their neighbours."""
    parents: dict[str, list[str]] = {n.name: [] for n in graph.nodes}
    children: dict[str, list[str]] = {n.name: [] for n in graph.nodes}
    for src, dst in graph.edges:
        parents[dst].append(src)
        children[src].append(dst)
    layer: dict[str, int] = {}
    for node in graph.nodes:  # sources first, then models upstream first
        layer[node.name] = 1 + max((layer[p] for p in parents[node.name]), default=-1)
    layers: list[list[str]] = [[] for _ in range(1 + max(layer.values(), default=0))]
    for node in graph.nodes:
        layers[layer[node.name]].append(node.name)
    for _ in range(SWEEPS):
        _order(layers, parents, range(1, len(layers)))
        _order(layers, children, range(len(layers) - 2, -1, -1))
    tallest = max((len(lay) for lay in layers), default=0)
    out = {}
    for i, names in enumerate(layers):
        offset = (tallest - len(names)) * (NODE_H + GAP_Y) / 2  # centre short layers
        for j, name in enumerate(names):
            out[name] = Placed(name, i, i * (NODE_W + GAP_X),
                               offset + j * (NODE_H + GAP_Y))
    return out


def _order(layers: list[list[str]], neighbours: dict[str, list[str]], which) -> None:
    """Sort each layer in `which` by the mean position of its neighbours in the layer
    just swept; a node without one keeps its place (a stable sort on its index)."""
    for i in which:
        ref = layers[i - 1] if which.step > 0 else layers[i + 1]
        pos = {n: k for k, n in enumerate(ref)}

        def key(item: tuple[int, str], pos=pos) -> float:
            k, name = item
            near = [pos[n] for n in neighbours[name] if n in pos]
            return sum(near) / len(near) if near else k

        layers[i] = [n for _, n in sorted(enumerate(layers[i]), key=key)]


def embed_json(data) -> str:
    """JSON safe inside `<script>`: no `<`, `>`, `&` or non-ASCII character raw."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(graph: Graph, title: str) -> str:
    """The whole page, as text."""
    placed = layout(graph)
    data = graph.to_json()
    for node in data["nodes"]:
        box = placed[node["name"]]
        node["x"], node["y"], node["layer"] = box.x, box.y, box.layer
    data["title"] = title
    data["box"] = [NODE_W, NODE_H]
    return _TEMPLATE.replace("/*DATA*/null", embed_json(data))


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>strata graph</title>
<style>
html,body{margin:0;height:100%;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d2330;background:#f6f7f9}
#top{position:fixed;left:0;right:0;top:0;height:40px;display:flex;align-items:center;gap:16px;padding:0 14px;background:#fff;border-bottom:1px solid #dde1e7;z-index:2}
#top h1{font-size:15px;margin:0;font-weight:600}
.legend span{display:inline-flex;align-items:center;gap:5px;margin-right:12px;color:#555}
.legend i{display:inline-block;width:12px;height:12px;border-radius:3px;border:1px solid #888}
#canvas{position:fixed;left:0;top:41px;bottom:0;right:0;cursor:grab}
#canvas.drag{cursor:grabbing}
svg{width:100%;height:100%;display:block}
.node rect{stroke-width:1.4;rx:7}
.node{cursor:pointer}
.node text{font-size:13px;fill:#1d2330}
.node text.sub{font-size:11px;fill:#5a6272}
.node.source rect{fill:#e8efff;stroke:#4b6cc1}
.node.model rect{fill:#fff;stroke:#8a93a3}
.node.s-up-to-date rect{fill:#e3f5e5;stroke:#2e7d32}
.node.s-stale rect{fill:#fff3d6;stroke:#b26a00}
.node.s-never-built rect{fill:#efefef;stroke:#888;stroke-dasharray:5 3}
.node.s-failed rect{fill:#fde2e1;stroke:#c62828;stroke-width:2}
.badge.s-failed{background:#fde2e1;color:#8e1b1b}
.failure{border-left:3px solid #c62828;background:#fff5f5;padding:6px 10px;margin:8px 0}
.node.selected rect{stroke:#c2185b;stroke-width:3}
.edge{fill:none;stroke:#a3abb8;stroke-width:1.4}
.edge.hi{stroke:#c2185b;stroke-width:2.2}
#panel{position:fixed;right:0;top:41px;bottom:0;width:min(560px,48vw);background:#fff;border-left:1px solid #dde1e7;overflow:auto;padding:14px 18px;box-sizing:border-box;display:none;z-index:1}
#panel.open{display:block}
#panel h2{font-size:17px;margin:0 0 4px;word-break:break-all}
#panel h3{font-size:13px;margin:16px 0 6px;text-transform:uppercase;letter-spacing:.04em;color:#5a6272}
#panel pre{background:#f3f4f7;padding:10px;border-radius:6px;overflow:auto;font:12px/1.45 ui-monospace,Menlo,Consolas,monospace;white-space:pre}
#panel table{border-collapse:collapse;width:100%}
#panel td,#panel th{text-align:left;padding:3px 8px 3px 0;border-bottom:1px solid #eef0f3;vertical-align:top;overflow-wrap:anywhere}
#panel td:first-child{white-space:nowrap}
#panel code{font:12px ui-monospace,Menlo,Consolas,monospace}
#close{float:right;border:0;background:none;font-size:20px;cursor:pointer;color:#5a6272}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;font-size:12px;background:#eee}
.muted{color:#7a8291}
</style></head>
<body>
<div id="top"><h1 id="title"></h1><div class="legend" id="legend"></div><span class="muted">drag to pan, wheel to zoom, click a node</span></div>
<div id="canvas"><svg id="svg" xmlns="http://www.w3.org/2000/svg"><g id="view"><g id="edges"></g><g id="nodes"></g></g></svg></div>
<aside id="panel"><button id="close" title="close">&times;</button><div id="detail"></div></aside>
<script id="graph-data" type="application/json">/*DATA*/null</script>
<script>
"use strict";
window.onerror = function (msg, src, line) {
  document.body.setAttribute("data-error", String(msg) + " at " + line);
};
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var G = JSON.parse(document.getElementById("graph-data").textContent);
  var W = G.box[0], H = G.box[1];
  // by name in Maps: a plain object would find `toString` or `__proto__` on its prototype
  var byName = new Map(), nodeEls = new Map(), edgeEls = [];
  G.nodes.forEach(function (n) { byName.set(n.name, n); });

  function el(tag, attrs, text, ns) {
    var e = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function shown(s) {  // control and separator characters as escapes: a name holds anything
    return String(s).replace(/[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]/g,
      function (c) { return "\\\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4); });
  }
  function clip(s, n) { s = shown(s); return s.length > n ? s.slice(0, n - 1) + "\\u2026" : s; }
  function stateClass(s) { return s ? "s-" + s.replace(/ /g, "-") : ""; }

  document.getElementById("title").textContent = G.title;
  document.title = "strata graph: " + G.title;
  var legend = document.getElementById("legend");
  [["source", "#e8efff"], ["model", "#fff"]].concat(G.warehouse ? [["up to date", "#e3f5e5"],
    ["stale", "#fff3d6"], ["never built", "#efefef"], ["failed", "#fde2e1"]] : []).forEach(function (p) {
    var s = el("span"); var i = el("i"); i.style.background = p[1];
    s.appendChild(i); s.appendChild(document.createTextNode(p[0])); legend.appendChild(s);
  });

  // edges: from the right of the read relation to the left of the reader
  var edgesG = document.getElementById("edges");
  G.edges.forEach(function (e) {
    var a = byName.get(e[0]), b = byName.get(e[1]);
    var x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    var p = el("path", {"class": "edge", d: "M" + x1 + "," + y1 + " C" + mx + "," + y1 + " " +
      mx + "," + y2 + " " + x2 + "," + y2}, null, true);
    p.__ends = e; edgesG.appendChild(p); edgeEls.push(p);
  });

  var nodesG = document.getElementById("nodes");
  G.nodes.forEach(function (n) {
    var g = el("g", {"class": "node " + n.kind + " " + stateClass(n.state),
      transform: "translate(" + n.x + "," + n.y + ")", "data-name": n.name}, null, true);
    g.appendChild(el("title", {}, shown(n.name) + (n.reason ? "\\n" + shown(n.reason) : ""), true));
    g.appendChild(el("rect", {width: W, height: H, rx: 7}, null, true));
    g.appendChild(el("text", {x: 10, y: 19}, clip(n.name, 28), true));
    var sub = n.kind === "source" ? "source, " + n.columns.length + " columns" :
      (n.state ? n.state + (n.rows !== null ? ", " + n.rows + " rows" : "") :
        n.columns.length + " columns");
    g.appendChild(el("text", {x: 10, y: 36, "class": "sub"}, clip(sub, 34), true));
    g.addEventListener("click", function (ev) { ev.stopPropagation(); select(n.name); });
    nodesG.appendChild(g); nodeEls.set(n.name, g);
  });

  // pan and zoom: the view group's transform
  var svg = document.getElementById("svg"), view = document.getElementById("view");
  var canvas = document.getElementById("canvas");
  var t = {x: 20, y: 20, k: 1};
  function apply() { view.setAttribute("transform", "translate(" + t.x + "," + t.y + ") scale(" + t.k + ")"); }
  function fit() {
    var maxX = 0, maxY = 0;
    G.nodes.forEach(function (n) { maxX = Math.max(maxX, n.x + W); maxY = Math.max(maxY, n.y + H); });
    var r = svg.getBoundingClientRect(), pad = 24;
    var width = r.width - (panel.classList.contains("open") ? panel.offsetWidth : 0);  // left of the panel
    var k = Math.min((width - 2 * pad) / Math.max(maxX, 1), (r.height - 2 * pad) / Math.max(maxY, 1), 1.5);
    t.k = Math.max(k, 0.05);
    t.x = (width - maxX * t.k) / 2; t.y = (r.height - maxY * t.k) / 2; apply();
  }
  var panel = document.getElementById("panel"), detail = document.getElementById("detail");
  var drag = null;
  canvas.addEventListener("mousedown", function (ev) { drag = {x: ev.clientX - t.x, y: ev.clientY - t.y}; canvas.classList.add("drag"); });
  window.addEventListener("mousemove", function (ev) { if (drag) { t.x = ev.clientX - drag.x; t.y = ev.clientY - drag.y; apply(); } });
  window.addEventListener("mouseup", function () { drag = null; canvas.classList.remove("drag"); });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
    var k = Math.min(Math.max(t.k * Math.exp(-ev.deltaY * 0.0015), 0.05), 6);
    t.x = px - (px - t.x) * k / t.k; t.y = py - (py - t.y) * k / t.k; t.k = k; apply();
  }, {passive: false});
  canvas.addEventListener("click", function () { if (!drag) close(); });

  // the side panel
  function section(title) { detail.appendChild(el("h3", {}, title)); }
  function table(head, rows) {
    var tb = el("table"), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", {}, h)); }); tb.appendChild(tr);
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (c) { var td = el("td"); td.appendChild(el("code", {}, c === null ? "" : shown(c))); row.appendChild(td); });
      tb.appendChild(row);
    });
    detail.appendChild(tb);
  }
  function close() {
    panel.classList.remove("open");
    nodeEls.forEach(function (g) { g.classList.remove("selected"); });
    edgeEls.forEach(function (p) { p.classList.remove("hi"); });
  }
  function select(name) {
    var n = byName.get(name); if (!n) return;
    close(); nodeEls.get(name).classList.add("selected");
    edgeEls.forEach(function (p) { if (p.__ends[0] === name || p.__ends[1] === name) p.classList.add("hi"); });
    detail.textContent = "";
    detail.appendChild(el("h2", {}, shown(n.name)));
    var badge = el("span", {"class": "badge " + stateClass(n.state)}, n.kind + (n.state ? ": " + n.state : ""));
    detail.appendChild(badge);
    if (n.description) detail.appendChild(el("p", {"class": "description"}, shown(n.description)));
    if (n.owner) detail.appendChild(el("div", {}, "owner: " + shown(n.owner)));
    if (n.tags.length) detail.appendChild(el("div", {}, "tags: " + n.tags.map(shown).join(", ")));
    if (n.failure) {  // its last attempt failed after its last successful build
      var box = el("div", {"class": "failure", "data-failed-entry": n.failure.entry});
      box.appendChild(el("div", {}, "last attempt failed at " + n.failure.at + " (history entry " +
        n.failure.entry + ", run " + n.failure.run_id + "); nothing was published"));
      n.failure.errors.forEach(function (e) {
        box.appendChild(el("div", {}, "error[" + e.code + "] " + shown(e.message)));
      });
      detail.appendChild(box);
    } else if (n.reason) detail.appendChild(el("div", {"class": "muted"}, "why: " + shown(n.reason)));
    if (n.rows !== null || n.last_run) detail.appendChild(el("div", {"class": "muted"},
      (n.rows !== null ? n.rows + " rows" : "") + (n.last_run ? "; last run " + n.last_run : "")));
    var reads = G.edges.filter(function (e) { return e[1] === name; }).map(function (e) { return shown(e[0]); });
    var readBy = G.edges.filter(function (e) { return e[0] === name; }).map(function (e) { return shown(e[1]); });
    if (reads.length) detail.appendChild(el("div", {}, "reads: " + reads.join(", ")));
    if (readBy.length) detail.appendChild(el("div", {}, "read by: " + readBy.join(", ")));
    section("Columns");
    var notes = n.column_descriptions;
    if (Object.keys(notes).length) table(["column", "type", "description"], n.columns.map(function (c) {
      return [c[0], c[1], Object.prototype.hasOwnProperty.call(notes, c[0]) ? notes[c[0]] : null];
    }));
    else table(["column", "type"], n.columns);
    if (n.kind === "model") {
      section("Pins");
      if (n.pins.length) table(["pin"], n.pins.map(function (p) { return [p]; }));
      else detail.appendChild(el("div", {"class": "muted"}, "none"));
      section("Column lineage");
      table(["column", "made by", "reads", "source columns"], n.lineage.map(function (l) {
        return [l.column, l.step + (l.expression ? ": " + l.expression : ""), l.reads.join(", "),
          l.sources.join(", ") || "(none)"];
      }));
      section("SQL (duckdb)");
      detail.appendChild(el("pre", {"class": "sql"}, n.sql));
      if (G.warehouse) {
        section("History");
        if (n.history.length) table(["run", "kind", "finished", "status", "rows"], n.history.map(function (h) {
          return [h.run, h.kind, h.finished_at, h.status, h.rows === null || h.rows === undefined ? "" : String(h.rows)];
        }));
        else detail.appendChild(el("div", {"class": "muted"}, "never built on this branch"));
      }
    }
    panel.classList.add("open");
    panel.setAttribute("data-model", n.name);
  }
  document.getElementById("close").addEventListener("click", close);
  panel.addEventListener("click", function (ev) { ev.stopPropagation(); });
  panel.addEventListener("mousedown", function (ev) { ev.stopPropagation(); });
  function fromHash() {  // any fragment: one naming no model (or not decodable) opens nothing
    var m = /^#model=(.*)$/.exec(location.hash), name;
    if (!m) return;
    try { name = decodeURIComponent(m[1]); } catch (err) { return; }
    select(name);
  }
  window.addEventListener("hashchange", fromHash);
  fromHash(); fit(); window.addEventListener("resize", fit);
  document.body.setAttribute("data-ready", String(G.nodes.length));
})();
</script>
</body></html>
"""
