"""The model graph as one self-contained HTML page: inline CSS and JavaScript, no
network.

The page lays itself out with dagre (`graph_assets/dagre.min.js`, vendored and
inlined): a layered layout, left to right, in which an edge spanning several layers
passes through places kept free between the boxes of each layer. Edges are drawn
as horizontal runs through layers and vertical runs in the gaps between them (each
edge on a lane of its own in a gap), ending in an arrowhead, so no edge crosses a
box. The page pans (drag), zooms (wheel), finds a model (the search box: the model,
its upstream and its downstream lit, the rest dimmed), collapses a module folder into
one box (the folder buttons) and opens a side panel on a click (SQL, columns with
types, pins, lineage per column, state and history).

A URL fragment of `&`-separated `key=value` pairs (each value URL-encoded) sets the
page's state on load: `model=NAME` opens that model's panel, `focus=NAME` finds it,
`collapse=FOLDER` (repeatable) collapses a folder. A value naming nothing (no such
model, `toString`, a stray `%`) does nothing.

User text reaches the page only as JSON data, embedded with `<`, `>`, `&` and every
non-ASCII character (U+2028/2029 included) as `\\u` escapes, so no name can close
the `<script>` element; the script puts text into the page with `textContent`,
never as markup. Layout ids are `n:NAME` and `f:FOLDER`, so no name meets an
object's own keys (`__proto__`) inside dagre.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from strata.graph import Graph

NODE_W, NODE_H = 220, 46  # a node's box, in SVG units
GAP_X, GAP_Y = 90, 22  # between layers, between nodes of a layer
EDGE_SEP = 14  # between two edges passing one layer
_DAGRE = Path(__file__).with_name("graph_assets") / "dagre.min.js"


@lru_cache(maxsize=1)
def dagre_script() -> str:
    """The vendored layout library, checked to be inert inside a `<script>` element."""
    text = _DAGRE.read_text(encoding="utf-8")
    lowered = text.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise ValueError(f"{_DAGRE} would end the page's <script> element")
    return text


def embed_json(data) -> str:
    """JSON safe inside `<script>`: no `<`, `>`, `&` or non-ASCII character raw."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(graph: Graph, title: str) -> str:
    """The whole page, as text."""
    data = graph.to_json()
    data["title"] = title
    data["box"] = [NODE_W, NODE_H]
    data["gaps"] = [GAP_X, GAP_Y, EDGE_SEP]
    return (_TEMPLATE.replace("/*DAGRE*/", dagre_script())
            .replace("/*DATA*/null", embed_json(data)))


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>strata graph</title>
<style>
html,body{margin:0;height:100%;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d2330;background:#f6f7f9}
#top{position:fixed;left:0;right:0;top:0;min-height:40px;display:flex;flex-wrap:wrap;align-items:center;gap:8px 16px;padding:4px 14px;box-sizing:border-box;background:#fff;border-bottom:1px solid #dde1e7;z-index:2}
#top h1{font-size:15px;margin:0;font-weight:600}
.legend span{display:inline-flex;align-items:center;gap:5px;margin-right:12px;color:#555}
.legend i{display:inline-block;width:12px;height:12px;border-radius:3px;border:1px solid #888}
#search{font:inherit;padding:3px 8px;border:1px solid #c5cbd5;border-radius:5px;width:200px}
#folders button{font:12px inherit;margin:0 4px 0 0;padding:2px 8px;border:1px solid #c5cbd5;border-radius:5px;background:#f3f4f7;cursor:pointer}
#folders button.collapsed{background:#e0e4f0;border-color:#4b6cc1}
#canvas{position:fixed;left:0;top:41px;bottom:0;right:0;cursor:grab}
#canvas.drag{cursor:grabbing}
svg{width:100%;height:100%;display:block}
.node rect{stroke-width:1.4;rx:7}
.node{cursor:pointer}
.node text{font-size:13px;fill:#1d2330}
.node text.sub{font-size:11px;fill:#5a6272}
.node.source rect{fill:#e8efff;stroke:#4b6cc1}
.node.model rect{fill:#fff;stroke:#8a93a3}
.node.folder rect{fill:#eef0f6;stroke:#4b6cc1;stroke-width:2;stroke-dasharray:7 3}
.node.s-up-to-date rect{fill:#e3f5e5;stroke:#2e7d32}
.node.s-stale rect{fill:#fff3d6;stroke:#b26a00}
.node.s-never-built rect{fill:#efefef;stroke:#888;stroke-dasharray:5 3}
.node.s-failed rect{fill:#fde2e1;stroke:#c62828;stroke-width:2}
.badge.s-failed{background:#fde2e1;color:#8e1b1b}
.failure{border-left:3px solid #c62828;background:#fff5f5;padding:6px 10px;margin:8px 0}
.node.selected rect{stroke:#c2185b;stroke-width:3}
.node.dim,.edge.dim{opacity:.18}
.edge{fill:none;stroke:#a3abb8;stroke-width:1.4;stroke-linejoin:round}
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
<div id="top"><h1 id="title"></h1>
<input id="search" type="search" list="names" placeholder="find a model" autocomplete="off"><datalist id="names"></datalist>
<div id="folders"></div><div class="legend" id="legend"></div><span class="muted">drag to pan, wheel to zoom, click a node</span></div>
<div id="canvas"><svg id="svg" xmlns="http://www.w3.org/2000/svg"><defs>
<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#a3abb8"/></marker>
<marker id="arrow-hi" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#c2185b"/></marker>
</defs><g id="view"><g id="edges"></g><g id="nodes"></g></g></svg></div>
<aside id="panel"><button id="close" title="close">&times;</button><div id="detail"></div></aside>
<script>/*DAGRE*/</script>
<script id="graph-data" type="application/json">/*DATA*/null</script>
<script>
"use strict";
window.onerror = function (msg, src, line) {
  document.body.setAttribute("data-error", String(msg) + " at " + line);
};
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var G = JSON.parse(document.getElementById("graph-data").textContent);
  var W = G.box[0], H = G.box[1], GAP_X = G.gaps[0], GAP_Y = G.gaps[1], EDGE_SEP = G.gaps[2];
  // by name in Maps: a plain object would find `toString` or `__proto__` on its prototype
  var byName = new Map(), nodeEls = new Map(), edgeEls = [], boxEls = new Map();
  G.nodes.forEach(function (n) { byName.set(n.name, n); });
  var collapsed = new Set();  // folders drawn as one box each
  var focused = null;  // the model found: it, its upstream and downstream are lit
  var selected = null;

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

  // ---------------------------------------------------------------- folders
  var folderSizes = new Map();  // every module folder (and each folder above one) -> nodes
  G.nodes.forEach(function (n) {
    var parts = n.folder ? n.folder.split("/") : [];
    for (var i = 1; i <= parts.length; i++) {
      var f = parts.slice(0, i).join("/");
      folderSizes.set(f, (folderSizes.get(f) || 0) + 1);
    }
  });
  function collapsedFolder(n) {  // the outermost collapsed folder holding n, or null
    if (!n.folder) return null;
    var parts = n.folder.split("/");
    for (var i = 1; i <= parts.length; i++) {
      var f = parts.slice(0, i).join("/");
      if (collapsed.has(f)) return f;
    }
    return null;
  }
  function boxId(n) { var f = collapsedFolder(n); return f === null ? "n:" + n.name : "f:" + f; }
  var folderBar = document.getElementById("folders"), folderButtons = new Map();
  Array.from(folderSizes.keys()).sort().forEach(function (f) {
    var b = el("button", {type: "button", "data-folder": f, title: "collapse or expand " + shown(f)},
      shown(f) + "/ (" + folderSizes.get(f) + ")");
    b.addEventListener("click", function () { toggle(f); });
    folderBar.appendChild(b); folderButtons.set(f, b);
  });
  function toggle(f) {
    if (collapsed.has(f)) collapsed.delete(f); else collapsed.add(f);
    draw(); fit();
  }

  // ---------------------------------------------------------------- layout and drawing
  var edgesG = document.getElementById("edges"), nodesG = document.getElementById("nodes");
  var boxes = new Map();  // drawn box id -> {id, x, y (top left), names, folder, node}
  function draw() {
    var g = new dagre.graphlib.Graph();
    g.setGraph({rankdir: "LR", nodesep: GAP_Y, ranksep: GAP_X, edgesep: EDGE_SEP, marginx: 20, marginy: 20});
    g.setDefaultEdgeLabel(function () { return {}; });
    boxes = new Map();
    G.nodes.forEach(function (n) {
      var id = boxId(n), box = boxes.get(id);
      if (!box) {
        box = {id: id, names: [], folder: id.charAt(0) === "f" ? id.slice(2) : null, node: null};
        boxes.set(id, box); g.setNode(id, {width: W, height: H});
      }
      box.names.push(n.name);
      if (box.folder === null) box.node = n;
    });
    var links = new Map();  // "a\\u0000b" -> {from, to, ends: [[read, reader], ...]}
    G.edges.forEach(function (e) {
      var a = boxId(byName.get(e[0])), b = boxId(byName.get(e[1]));
      if (a === b) return;  // inside one collapsed folder
      var key = a + "\\u0000" + b, link = links.get(key);
      if (!link) { link = {from: a, to: b, ends: []}; links.set(key, link); g.setEdge(a, b); }
      link.ends.push(e);
    });
    dagre.layout(g);
    boxes.forEach(function (box) {
      var p = g.node(box.id); box.x = p.x - W / 2; box.y = p.y - H / 2;
    });
    nodesG.textContent = ""; edgesG.textContent = "";
    nodeEls = new Map(); boxEls = new Map(); edgeEls = [];
    var gaps = route(g, links);
    links.forEach(function (link) {
      var p = el("path", {"class": "edge", d: gaps.get(link), "marker-end": "url(#arrow)",
        "data-from": link.from, "data-to": link.to}, null, true);
      p.__link = link; edgesG.appendChild(p); edgeEls.push(p);
    });
    boxes.forEach(function (box) { nodesG.appendChild(drawBox(box)); });
    document.body.setAttribute("data-drawn", String(boxes.size));
    paint();
  }

  // An edge runs right through each layer at the height dagre kept for it there (the
  // source's, a layer's free place, the reader's) and turns only in the gaps between
  // layers, each edge on its own lane there: it never crosses a box.
  function route(g, links) {
    var layers = [];  // the x of each layer's centre, left to right
    boxes.forEach(function (box) { var c = box.x + W / 2; if (layers.indexOf(c) < 0) layers.push(c); });
    layers.sort(function (a, b) { return a - b; });
    function inLayer(x) { return layers.some(function (c) { return Math.abs(x - c) <= W / 2 + 0.5; }); }
    var runs = [];  // per edge: the heights of its runs through layers, and its gaps
    links.forEach(function (link) {
      var a = boxes.get(link.from), b = boxes.get(link.to);
      var ys = [a.y + H / 2];
      g.edge(link.from, link.to).points.slice(1, -1).forEach(function (p) {
        if (inLayer(p.x)) ys.push(p.y);
      });
      ys.push(b.y + H / 2);
      var starts = [];  // each gap's left side: the right side of the layer before it
      var x = a.x + W;
      for (var i = 1; i < ys.length; i++) { starts.push(x); x += W + GAP_X; }
      runs.push({link: link, ys: ys, gaps: starts, end: b.x});
    });
    var lanes = new Map();  // gap's left x -> the turns in it, spread over its width
    runs.forEach(function (r) {
      r.gaps.forEach(function (gx, i) {
        var key = Math.round(gx); if (!lanes.has(key)) lanes.set(key, []);
        lanes.get(key).push({run: r, i: i, mid: (r.ys[i] + r.ys[i + 1]) / 2});
      });
    });
    lanes.forEach(function (turns, key) {
      turns.sort(function (p, q) { return p.mid - q.mid; });
      var margin = 12, width = GAP_X - 2 * margin;
      turns.forEach(function (t, k) {
        t.run.lanes = t.run.lanes || [];
        t.run.lanes[t.i] = key + margin + (turns.length > 1 ? width * k / (turns.length - 1) : width / 2);
      });
    });
    var paths = new Map();
    runs.forEach(function (r) {
      var d = "M" + (r.gaps[0]) + "," + r.ys[0];
      for (var i = 0; i < r.gaps.length; i++) d += " H" + r.lanes[i] + " V" + r.ys[i + 1];
      d += " H" + r.end;
      paths.set(r.link, d);
    });
    return paths;
  }

  function drawBox(box) {
    var n = box.node, g;
    if (n === null) {  // a collapsed folder
      g = el("g", {"class": "node folder", transform: "translate(" + box.x + "," + box.y + ")",
        "data-folder": box.folder}, null, true);
      g.appendChild(el("title", {}, shown(box.folder) + "/: " + box.names.length + " nodes (click to expand)", true));
      g.appendChild(el("rect", {width: W, height: H, rx: 7}, null, true));
      g.appendChild(el("text", {x: 10, y: 19}, clip(box.folder + "/", 28), true));
      g.appendChild(el("text", {x: 10, y: 36, "class": "sub"}, box.names.length + " nodes, collapsed", true));
      g.addEventListener("click", function (ev) { ev.stopPropagation(); toggle(box.folder); });
    } else {
      g = el("g", {"class": "node " + n.kind + " " + stateClass(n.state),
        transform: "translate(" + box.x + "," + box.y + ")", "data-name": n.name}, null, true);
      g.appendChild(el("title", {}, shown(n.name) + (n.reason ? "\\n" + shown(n.reason) : ""), true));
      g.appendChild(el("rect", {width: W, height: H, rx: 7}, null, true));
      g.appendChild(el("text", {x: 10, y: 19}, clip(n.name, 28), true));
      var sub = n.kind === "source" ? "source, " + n.columns.length + " columns" :
        (n.state ? n.state + (n.rows !== null ? ", " + n.rows + " rows" : "") :
          n.columns.length + " columns");
      g.appendChild(el("text", {x: 10, y: 36, "class": "sub"}, clip(sub, 34), true));
      g.addEventListener("click", function (ev) { ev.stopPropagation(); select(n.name); });
      nodeEls.set(n.name, g);
    }
    boxEls.set(box.id, g);
    return g;
  }

  // ---------------------------------------------------------------- search
  function closure(name, forward) {  // the names upstream (or downstream) of `name`
    var seen = new Set([name]), todo = [name];
    while (todo.length) {
      var at = todo.pop();
      G.edges.forEach(function (e) {
        var from = forward ? e[0] : e[1], to = forward ? e[1] : e[0];
        if (from === at && !seen.has(to)) { seen.add(to); todo.push(to); }
      });
    }
    return seen;
  }
  function lit() {  // the names lit by the search, or null when nothing is searched
    if (focused === null) return null;
    var all = closure(focused, true);
    closure(focused, false).forEach(function (x) { all.add(x); });
    return all;
  }
  function paint() {  // classes from the search and the selection
    var on = lit();
    boxes.forEach(function (box) {
      var g = boxEls.get(box.id);
      g.classList.toggle("dim", on !== null && !box.names.some(function (x) { return on.has(x); }));
      g.classList.toggle("selected", box.node !== null && box.node.name === selected);
    });
    edgeEls.forEach(function (p) {
      var ends = p.__link.ends;
      var hi = selected !== null && ends.some(function (e) { return e[0] === selected || e[1] === selected; });
      var dim = on !== null && !ends.some(function (e) { return on.has(e[0]) && on.has(e[1]); });
      p.classList.toggle("hi", hi); p.classList.toggle("dim", dim);
      p.setAttribute("marker-end", hi ? "url(#arrow-hi)" : "url(#arrow)");
    });
    document.body.setAttribute("data-focus", focused === null ? "" : focused);
  }
  function focus(name) {
    var n = byName.get(name);
    if (!n) { focused = null; paint(); return; }
    var f = collapsedFolder(n);
    while (f !== null) { collapsed.delete(f); f = collapsedFolder(n); }  // show it
    focused = name; draw(); fitTo(lit());
  }
  var search = document.getElementById("search"), names = document.getElementById("names");
  G.nodes.forEach(function (n) { names.appendChild(el("option", {value: n.name})); });
  search.addEventListener("change", function () {
    if (search.value === "") { focused = null; paint(); fit(); return; }
    var exact = byName.has(search.value) ? search.value : null;
    if (exact === null) {  // the one name holding what was typed, if only one does
      var typed = search.value.toLowerCase(), found = [];
      byName.forEach(function (n, name) { if (name.toLowerCase().indexOf(typed) >= 0) found.push(name); });
      if (found.length === 1) exact = found[0];
    }
    if (exact !== null) { focus(exact); select(exact); }
  });

  // ---------------------------------------------------------------- pan and zoom
  var svg = document.getElementById("svg"), view = document.getElementById("view");
  var canvas = document.getElementById("canvas");
  var panel = document.getElementById("panel"), detail = document.getElementById("detail");
  var t = {x: 20, y: 20, k: 1};
  function apply() { view.setAttribute("transform", "translate(" + t.x + "," + t.y + ") scale(" + t.k + ")"); }
  function fitTo(names) {  // the boxes holding `names` (all when null) in view
    var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    boxes.forEach(function (box) {
      if (names && !box.names.some(function (x) { return names.has(x); })) return;
      minX = Math.min(minX, box.x); minY = Math.min(minY, box.y);
      maxX = Math.max(maxX, box.x + W); maxY = Math.max(maxY, box.y + H);
    });
    if (minX === Infinity) return;
    var r = svg.getBoundingClientRect(), pad = 24;
    var width = r.width - (panel.classList.contains("open") ? panel.offsetWidth : 0);  // left of the panel
    var k = Math.min((width - 2 * pad) / Math.max(maxX - minX, 1), (r.height - 2 * pad) / Math.max(maxY - minY, 1), 1.5);
    t.k = Math.max(k, 0.05);
    t.x = (width - (maxX - minX) * t.k) / 2 - minX * t.k; t.y = (r.height - (maxY - minY) * t.k) / 2 - minY * t.k; apply();
  }
  function fit() { fitTo(lit()); }
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

  // ---------------------------------------------------------------- the side panel
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
    panel.removeAttribute("data-model");
    selected = null; paint();
  }
  function select(name) {
    var n = byName.get(name); if (!n) return;
    if (collapsedFolder(n) !== null) focus(name);  // a model inside a collapsed folder
    selected = name; paint();
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
    if (n.folder) detail.appendChild(el("div", {"class": "muted"}, "folder: " + shown(n.folder) + "/"));
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

  // ---------------------------------------------------------------- the URL fragment
  function fragment() {  // key -> [values]; a pair that does not decode counts for nothing
    var out = new Map();
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var at = pair.indexOf("="), value;
      if (at < 0) return;
      try { value = decodeURIComponent(pair.slice(at + 1)); } catch (err) { return; }
      var key = pair.slice(0, at);
      if (!out.has(key)) out.set(key, []);
      out.get(key).push(value);
    });
    return out;
  }
  function fromHash() {
    var f = fragment();
    collapsed = new Set((f.get("collapse") || []).filter(function (x) { return folderSizes.has(x); }));
    folderButtons.forEach(function (b, name) { b.classList.toggle("collapsed", collapsed.has(name)); });
    var find = (f.get("focus") || [])[0];
    focused = find !== undefined && byName.has(find) ? find : null;
    draw();
    var model = (f.get("model") || [])[0];
    if (model !== undefined && byName.has(model)) select(model);
    fit();
  }
  var redraw = draw;
  draw = function () {
    redraw();
    folderButtons.forEach(function (b, name) { b.classList.toggle("collapsed", collapsed.has(name)); });
  };
  function underBar() {  // the bar wraps on a narrow window: the canvas starts below it
    var h = document.getElementById("top").offsetHeight + 1;
    canvas.style.top = h + "px"; panel.style.top = h + "px";
  }
  window.addEventListener("hashchange", fromHash);
  underBar(); fromHash();
  window.addEventListener("resize", function () { underBar(); fit(); });
  document.body.setAttribute("data-ready", String(G.nodes.length));
})();
</script>
</body></html>
"""
