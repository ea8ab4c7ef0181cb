"""The model graph (issue 19, item 2): `strata graph MODULE [-o W] [--format
html|mermaid|dot]` draws every source and model and what each reads; with a
warehouse, each model's state (up to date / stale and why / never built), rows and
last run. The HTML page is self-contained, and a real headless Chromium loads it
without a script error, shows every model, and opens a model's panel (SQL, columns
with types, pins, history, column lineage -- item 3) from `#model=NAME`.

Chromium is a Debian package (`.ci/engines` installs it); without it the browser
tests skip, except in CI, where they fail."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest
from processes import run_bounded

from strata.graph import build_graph, dot, mermaid
from strata.graph_html import NODE_H, NODE_W, embed_json, page
from strata.semantics.resolve import load_module, load_text

STRATA = str(Path(sys.executable).with_name("strata"))
REPO = Path(__file__).resolve().parent.parent
JAFFLE = str(REPO / "examples" / "jaffle_shop")
JAFFLE_MODELS = ["stg_customers", "stg_orders", "customers_without_orders",
                 "customers_with_orders", "stg_order_items", "stg_products", "orders",
                 "customers", "top_orders", "latest_order_per_customer", "order_share",
                 "customer_order_history", "first_orders", "customer_order_counts",
                 "product_types", "metricflow_time_spine", "store_revenue",
                 "customer_highlights", "customer_order_totals"]

# names a page, a Mermaid label or a DOT string must not take as markup or syntax
HOSTILE = 'a</script><b onclick="x">&amp;\u2028"'
MODULE = f"""\
source raw {{ id: int, amount: int }}

model `{HOSTILE}` {{
  from raw
  derive doubled = amount * 2
  select id, doubled
  pin unique [id]
}}

model `two words` {{
  from `{HOSTILE}`
  select id, doubled + 1 as total
}}
"""


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([STRATA, *args], check=False, capture_output=True, text=True, cwd=cwd,
                          timeout=300)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> str:
    """jaffle_shop, run once into a fresh warehouse."""
    path = str(tmp_path_factory.mktemp("graph") / "wh.duckdb")
    result = _run("run", JAFFLE, "-o", path)
    assert result.returncode == 0, result.stderr
    return path


# ------------------------------------------------------------------ data and text
def test_graph_has_every_source_model_and_read_edge():
    module = load_text(MODULE)
    graph = build_graph(module)
    assert [n.name for n in graph.nodes] == ["raw", HOSTILE, "two words"]
    assert graph.edges == [("raw", HOSTILE), (HOSTILE, "two words")]
    first = graph.nodes[1]
    assert first.columns == [("id", "int"), ("doubled", "int")]
    assert first.pins == ["pin unique [id]"]
    assert "amount * 2" in first.sql and first.sql.startswith("-- model ")
    # column lineage (item 3) per column: what it reads directly, and its source columns
    total = {c["column"]: c for c in graph.nodes[2].lineage}["total"]
    assert total["reads"] == [f"{HOSTILE}.doubled"]
    assert total["sources"] == ["raw.amount"]
    assert first.state is None  # no warehouse, no state


def test_mermaid_names_every_node_and_edge_with_names_escaped():
    text = mermaid(build_graph(load_text(MODULE)))
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    nodes = dict(re.findall(r'^  (n\d+)\(?\["(.*)"\]\)?$', text, re.MULTILINE))
    assert len(nodes) == 3
    assert nodes["n0"] == "raw" and nodes["n2"] == "#96;two words#96;"  # `two words`
    # the hostile name: no quote, bracket, `<` or line separator raw, each as #NNN;
    assert "<" not in nodes["n1"] and '"' not in nodes["n1"] and "\u2028" not in text
    decoded = re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), nodes["n1"])
    assert decoded == "`" + HOSTILE.replace("\u2028", "\\u2028") + "`"
    assert re.findall(r"^  (n\d+) --> (n\d+)$", text, re.MULTILINE) == [("n0", "n1"), ("n1", "n2")]


def test_dot_names_every_node_and_edge_with_names_escaped():
    text = dot(build_graph(load_text(MODULE)))
    assert text.startswith("digraph strata {") and text.rstrip().endswith("}")
    labels = dict(re.findall(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)"', text, re.MULTILINE))
    assert labels["n0"] == "raw" and labels["n2"] == "`two words`"
    unescaped = re.sub(r"\\(.)", r"\1", labels["n1"])
    assert unescaped == "`" + HOSTILE.replace("\u2028", "\\u2028") + "`"
    assert "\u2028" not in text
    assert re.findall(r"^  (n\d+) -> (n\d+);$", text, re.MULTILINE) == [("n0", "n1"), ("n1", "n2")]


def test_state_from_the_warehouse_up_to_date_stale_and_never_built(warehouse, tmp_path):
    graph = build_graph(load_text(_jaffle_text()), warehouse)
    models = {n.name: n for n in graph.nodes if n.kind == "model"}
    assert {m.state for m in models.values()} == {"up to date"}
    assert models["stg_customers"].rows == 5
    assert models["orders"].last_run is not None
    assert models["orders"].history[0]["status"] == "rebuilt"
    # a model whose code changed is stale, and says why; a new one was never built
    changed = _jaffle_text().replace("model top_orders {", "model top_orders {\n  -- edited",
                                     1).replace("take 3\n", "take 2\n", 1)
    changed += "\nmodel brand_new {\n  from orders\n  select order_id\n}\n"
    models = {n.name: n for n in build_graph(load_text(changed), warehouse).nodes}
    assert (models["top_orders"].state, models["top_orders"].reason) == ("stale", "code changed")
    assert models["brand_new"].state == "never built" and models["brand_new"].history == []
    assert models["stg_orders"].state == "up to date"


def _jaffle_text() -> str:
    """jaffle_shop's files as one text, file paths made absolute."""
    root = Path(JAFFLE)
    texts = [p.read_text() for p in sorted(root.rglob("*.strata")) if p.name != "tests.strata"]
    return "\n".join(texts).replace("file 'data/", f"file '{root}/data/")


def test_cli_formats_and_out(warehouse, tmp_path):
    result = _run("graph", JAFFLE, "-o", warehouse, "--format", "mermaid")
    assert result.returncode == 0, result.stderr
    for name in JAFFLE_MODELS:
        assert f'["{name}<br/>up to date (live view: ' in result.stdout
    result = _run("graph", JAFFLE, "--format", "dot", "--out", str(tmp_path / "g.dot"))
    assert result.returncode == 0 and (tmp_path / "g.dot").read_text().startswith("digraph")
    result = _run("graph", JAFFLE, cwd=tmp_path)  # html goes to graph.html by default
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "graph.html").read_text().startswith("<!DOCTYPE html>")
    result = _run("graph", JAFFLE, "--out", str(tmp_path / "no" / "such" / "g.html"))
    assert result.returncode == 1 and "error[E093]" in result.stderr
    assert "Traceback" not in result.stderr
    result = _run("graph", JAFFLE, "-o", str(tmp_path / "missing.duckdb"))
    assert result.returncode == 1 and "error[E" in result.stderr


# ------------------------------------------------------------------ the page
def test_page_is_self_contained_and_embeds_names_safely():
    html = page(build_graph(load_text(MODULE)), "hostile")
    assert "</script><b" not in html and "\u2028" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # no network
    # the layout library, the data, the page's own script
    assert html.count("<script") == 3 and html.count("</script>") == 3
    assert embed_json({"a": "</script>&\u2028"}) == '{"a":"\\u003c/script\\u003e\\u0026\\u2028"}'


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") \
        or shutil.which("google-chrome")
    if found is None:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("CI needs chromium for the graph page (.ci/engines installs it)",
                        pytrace=False)
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    return found


def _browser(html: Path, *args: str, fragment: str = "") -> subprocess.CompletedProcess:
    # no background networking, component updates, sync or QUIC: on a closed network
    # each is a connection refused (or a lookup that waits) at every start
    cmd = [_chromium(), "--headless", "--disable-gpu", "--no-sandbox",
           "--no-first-run", "--disable-extensions", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-quic",
           "--window-size=1400,900",
           f"--user-data-dir={html.parent / 'profile'}", "--virtual-time-budget=5000",
           *args, html.as_uri() + fragment]
    return run_bounded(cmd, timeout=180)  # a hung browser's helpers cannot hang the test


class _Dom(HTMLParser):
    """The attributes a test reads from the dumped DOM, and the panel's SQL text."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self.classes: dict[str, str] = {}  # node name -> its class attribute
        self.failure: dict[str, str | None] = {}  # the panel's failure box
        self.body: dict[str, str | None] = {}
        self.panel: dict[str, str | None] = {}
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "g" and "data-name" in attrs:
            self.names.append(attrs["data-name"])
            self.classes[attrs["data-name"]] = attrs.get("class") or ""
        if tag == "div" and "data-failed-entry" in attrs:
            self.failure = attrs
        if tag == "body":
            self.body = attrs
        if tag == "aside":
            self.panel = attrs

    def handle_data(self, data):
        self.text.append(data)


def _dom(html: Path, fragment: str = "") -> _Dom:
    result = _browser(html, "--dump-dom", fragment=fragment)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = _Dom()
    dom.feed(result.stdout)
    return dom


def test_browser_loads_the_page_and_shows_every_model(warehouse, tmp_path):
    html = tmp_path / "graph.html"
    assert _run("graph", JAFFLE, "-o", warehouse, "--out", str(html)).returncode == 0
    dom = _dom(html)
    assert "data-error" not in dom.body, dom.body.get("data-error")
    # the script ran to its end: it marks how many nodes it drew (models and sources)
    assert dom.body.get("data-ready") == str(len(JAFFLE_MODELS) + 4)
    assert sorted(dom.names) == sorted(["raw_customers", "raw_orders", "raw_items",
                                        "raw_products", *JAFFLE_MODELS])
    # a click, by URL: the panel holds the model's SQL, columns, pins, lineage, history
    dom = _dom(html, "#model=orders")
    assert "data-error" not in dom.body
    assert dom.panel.get("data-model") == "orders" and "open" in dom.panel.get("class", "")
    text = "".join(dom.text)
    for wanted in ("-- model orders (full)", "FROM v_stg_orders", "count_order_items",
                   "pin unique [order_id]", "Column lineage", "raw_orders.id", "History",
                   "rebuilt"):
        assert wanted in text, wanted


def test_browser_page_with_hostile_names_runs_and_shows_them(tmp_path):
    html = tmp_path / "g.html"
    html.write_text(page(build_graph(load_text(MODULE)), "hostile"), encoding="utf-8")
    dom = _dom(html, "#model=" + quote(HOSTILE, safe=""))
    assert "data-error" not in dom.body, dom.body.get("data-error")
    assert sorted(dom.names) == sorted(["raw", HOSTILE, "two words"])
    assert dom.panel.get("data-model") == HOSTILE
    assert "amount * 2" in "".join(dom.text)


@pytest.mark.parametrize("fragment", ["#model=toString", "#model=%"])
def test_browser_page_opens_nothing_for_a_fragment_naming_no_model(tmp_path, fragment):
    """Issue 39, item 12: `#model=toString` found Object.prototype's function where a
    model was looked up, and `#model=%` made decodeURIComponent throw; the script
    stopped at load. Neither names a model: the page draws the graph, opens no panel."""
    html = tmp_path / "g.html"
    html.write_text(page(build_graph(load_text(MODULE)), "fragments"), encoding="utf-8")
    dom = _dom(html, fragment)
    assert "data-error" not in dom.body, dom.body.get("data-error")
    assert dom.body.get("data-ready") == "3"
    assert "open" not in dom.panel.get("class", "") and "data-model" not in dom.panel


def test_browser_screenshot_is_a_picture_of_the_graph(warehouse, tmp_path):
    html = tmp_path / "graph.html"
    assert _run("graph", JAFFLE, "-o", warehouse, "--out", str(html)).returncode == 0
    shot = tmp_path / "shot.png"
    result = _browser(html, f"--screenshot={shot}")
    assert result.returncode == 0, result.stderr[-2000:]
    width, height, colours = _png_summary(shot.read_bytes())
    assert (width, height) == (1400, 900)
    # boxes in five fills, borders, text and edges: far more than a blank page's few
    assert colours > 50


def _png_summary(data: bytes) -> tuple[int, int, int]:
    """(width, height, distinct colours) of an 8-bit RGB or RGBA PNG, decoded here:
    chunks, inflated IDAT, each row unfiltered (PNG filters 0-4)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type = header[:4]
    assert depth == 8 and colour_type in (2, 6)
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, colours = bytearray(stride), set()
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = row[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + _predict(kind, left, up, corner)) & 0xFF
        colours.update(bytes(row[i:i + 3]) for i in range(0, stride, bpp * 7))  # a sample
        prev = row
    return width, height, len(colours)


def _predict(kind: int, left: int, up: int, corner: int) -> int:
    if kind == 0:
        return 0
    if kind == 1:
        return left
    if kind == 2:
        return up
    if kind == 3:
        return (left + up) // 2
    p = left + up - corner
    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
    return left if pa <= pb and pa <= pc else up if pb <= pc else corner


FAILING = """\
source raw { id: int, code: text }

model base {
  from raw
  select id, code
}

model casted {
  from base
  derive n = cast(code as int)
  select id, n
}
"""


def test_browser_shows_a_failed_model_then_up_to_date_after_the_fix(tmp_path):
    """A model whose last run failed after its last successful build is `failed` on
    the page (its box and its panel: the error, when, the failed entry); once the
    data is fixed and a run succeeds, it is up to date again."""
    import duckdb

    wh = tmp_path / "w.duckdb"
    con = duckdb.connect(str(wh))
    con.execute("CREATE TABLE raw AS SELECT * FROM (VALUES (1, '1'), (2, '2')) t(id, code)")
    con.close()
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "m.strata").write_text(FAILING)
    assert _run("run", "mod", "-o", "w.duckdb", cwd=tmp_path).returncode == 0
    con = duckdb.connect(str(wh))
    con.execute("INSERT INTO raw VALUES (3, 'x')")
    con.close()
    failed = _run("run", "mod", "-o", "w.duckdb", cwd=tmp_path)
    assert failed.returncode == 1 and "error[E080]" in failed.stderr
    html = tmp_path / "graph.html"
    assert _run("graph", "mod", "-o", "w.duckdb", "--out", str(html), cwd=tmp_path
                ).returncode == 0
    dom = _dom(html, "#model=casted")
    assert "data-error" not in dom.body, dom.body.get("data-error")
    assert "s-failed" in dom.classes["casted"] and "s-up-to-date" in dom.classes["base"]
    assert dom.failure.get("data-failed-entry"), dom.failure
    text = "".join(dom.text)
    # (the dumped DOM holds the script too: each phrase here appears only as rendered)
    assert "model: failed" in text and re.search(r"last attempt failed at \d{4}-", text)
    assert "error[E080]" in text and "Could not convert string 'x'" in text
    assert "failed: E080" in text  # the history table lists the failed attempt

    con = duckdb.connect(str(wh))
    con.execute("UPDATE raw SET code = '3' WHERE code = 'x'")
    con.close()
    assert _run("run", "mod", "-o", "w.duckdb", cwd=tmp_path).returncode == 0
    assert _run("graph", "mod", "-o", "w.duckdb", "--out", str(html), cwd=tmp_path
                ).returncode == 0
    dom = _dom(html, "#model=casted")
    assert "s-up-to-date" in dom.classes["casted"] and not dom.failure
    assert not re.search(r"last attempt failed at \d{4}-", "".join(dom.text))
    assert "model: up to date" in "".join(dom.text)


def test_dot_wraps_long_labels_so_a_failure_message_does_not_widen_the_picture():
    """Issue 38: a failed model's message made the DOT picture 2,760 px wide."""
    name = "a_" + "very_long_model_name_" * 4
    graph = build_graph(load_text(f"source raw {{ id: int }}\nmodel {name} {{\n  from raw\n}}\n"))
    model = next(n for n in graph.nodes if n.kind == "model")
    model.state, model.reason = "failed", "error[E080] " + "Conversion Error: " * 12
    text = dot(graph)
    label = re.search(r'label="(a_very[^"]*)"', text).group(1)
    lines = label.split("\\n")
    assert len(lines) >= 6 and max(len(line) for line in lines) <= 40
    assert "".join(lines[:3]) == name  # the name cut, nothing lost
    assert "Conversion Error:" in label



# ------------------------------------------------------------------ 300 models (issue 38)
FOLDERS = ("staging", "core", "marts/finance", "marts/sales", "reports", "exports")


def _wide_module(root: Path, models: int = 300) -> dict[str, list[str]]:
    """`models` models in six folders, 50 each, every one reading one to three earlier
    ones (often in another folder) or a source: a graph with long edges and fans.
    Returns folder -> its models."""
    import random

    rng = random.Random(38)
    root.mkdir()
    (root / "sources.strata").write_text(
        "source orders { id: int, amount: int }\nsource customers { id: int, amount: int }\n")
    made: list[str] = []
    by_folder: dict[str, list[str]] = {f: [] for f in FOLDERS}
    for i in range(models):
        folder = FOLDERS[i * len(FOLDERS) // models]
        name = f"m{i:03}_{folder.replace('/', '_')}"
        inputs = rng.sample(made[-60:], min(len(made[-60:]), rng.choice((1, 1, 2, 3)))) \
            if made and rng.random() > 0.08 else [rng.choice(("orders", "customers"))]
        parts = [f"  from {inputs[0]} as r0"]
        parts += [f"  join {other} as r{k} on r0.id = r{k}.id"
                  for k, other in enumerate(inputs[1:], start=1)]
        parts.append("  select r0.id as id, r0.amount as amount")
        by_folder[folder].append(name)
        path = root / folder / "models.strata"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as out:
            out.write(f"model {name} {{\n" + "\n".join(parts) + "\n}\n\n")
        made.append(name)
    return by_folder


class _Drawn(HTMLParser):
    """The boxes (top left corner, by name or folder) and edge paths of a drawn page."""

    def __init__(self) -> None:
        super().__init__()
        self.boxes: dict[str, tuple[float, float]] = {}
        self.classes: dict[str, str] = {}
        self.paths: list[dict[str, str]] = []
        self.body: dict[str, str | None] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        key = attrs.get("data-name") or (attrs.get("data-folder") and "folder " + attrs["data-folder"])
        if tag == "g" and key:
            x, y = re.fullmatch(r"translate\(([-\d.e]+),([-\d.e]+)\)", attrs["transform"]).groups()
            self.boxes[key] = (float(x), float(y))
            self.classes[key] = attrs.get("class") or ""
        if tag == "path" and "edge" in (attrs.get("class") or "").split():
            self.paths.append(attrs)
        if tag == "body":
            self.body = attrs


def _drawn(html: Path, fragment: str = "") -> _Drawn:
    result = _browser(html, "--dump-dom", fragment=fragment)
    assert result.returncode == 0, result.stderr[-2000:]
    drawn = _Drawn()
    drawn.feed(result.stdout)
    assert "data-error" not in drawn.body, drawn.body.get("data-error")
    return drawn


def _segments(d: str) -> list[tuple[float, float, float, float]]:
    """An edge's path (`M x,y H x V y ...`) as straight segments."""
    tokens = re.findall(r"([MHV])\s*([-\d.e]+)(?:,([-\d.e]+))?", d)
    assert tokens and tokens[0][0] == "M" and "".join(t[0] for t in tokens[1:]).strip("HV") == ""
    x, y = float(tokens[0][1]), float(tokens[0][2])
    out = []
    for kind, a, _ in tokens[1:]:
        nx, ny = (float(a), y) if kind == "H" else (x, float(a))
        out.append((x, y, nx, ny))
        x, y = nx, ny
    return out


def _crosses(seg, box: tuple[float, float]) -> bool:
    """Does an axis-parallel segment pass through the inside of a box (its border
    excluded, where an edge leaves or enters its own boxes)?"""
    x1, y1, x2, y2 = seg
    bx, by = box
    inside_x = (bx + 0.5, bx + NODE_W - 0.5)
    inside_y = (by + 0.5, by + NODE_H - 0.5)
    lo_x, hi_x, lo_y, hi_y = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
    return lo_x < inside_x[1] and hi_x > inside_x[0] and lo_y < inside_y[1] and hi_y > inside_y[0]


def _assert_readable(drawn: _Drawn) -> None:
    """No edge through a box, no two boxes overlapping, each edge left to right with
    an arrowhead."""
    boxes = list(drawn.boxes.values())
    for i, (ax, ay) in enumerate(boxes):
        for bx, by in boxes[i + 1:]:
            assert abs(ax - bx) >= NODE_W or abs(ay - by) >= NODE_H, "two boxes overlap"
    for path in drawn.paths:
        assert path["marker-end"].startswith("url(#arrow")
        segments = _segments(path["d"])
        assert segments[0][0] < segments[-1][2]  # read on the left, reader on the right
        for seg in segments:
            for name, box in drawn.boxes.items():
                assert not _crosses(seg, box), f"edge {path['data-from']} -> {path['data-to']} " \
                    f"crosses {name} at {seg}"


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> tuple[Path, dict[str, list[str]]]:
    root = tmp_path_factory.mktemp("wide")
    by_folder = _wide_module(root / "module")
    html = root / "graph.html"
    assert _run("graph", str(root / "module"), "--out", str(html)).returncode == 0
    return html, by_folder


def test_a_300_model_page_draws_every_edge_around_the_boxes_with_arrowheads(wide):
    html, _ = wide
    graph = build_graph(load_module(html.parent / "module"))
    drawn = _drawn(html)
    assert drawn.body.get("data-ready") == str(302)
    assert len(drawn.boxes) == 302 and len(drawn.paths) == len(graph.edges)
    assert {(p["data-from"], p["data-to"]) for p in drawn.paths} == \
        {("n:" + a, "n:" + b) for a, b in graph.edges}
    _assert_readable(drawn)


def test_search_lights_a_model_with_its_upstream_and_downstream(wide):
    html, by_folder = wide
    graph = build_graph(load_module(html.parent / "module"))
    name = by_folder["marts/finance"][10]
    lineage = {name}
    for forward in (True, False):
        todo = [name]
        while todo:
            at = todo.pop()
            for a, b in graph.edges:
                nxt = b if forward and a == at else a if not forward and b == at else None
                if nxt is not None and nxt not in lineage:
                    lineage.add(nxt)
                    todo.append(nxt)
    assert 2 < len(lineage) < 302
    drawn = _drawn(html, "#focus=" + quote(name, safe=""))
    assert drawn.body.get("data-focus") == name
    dim = {n for n, c in drawn.classes.items() if "dim" in c.split()}
    assert dim == set(drawn.boxes) - lineage


def test_collapsing_folders_draws_each_as_one_box_and_stays_readable(wide):
    html, by_folder = wide
    drawn = _drawn(html, "#collapse=marts&collapse=staging")
    assert "folder marts" in drawn.boxes and "folder staging" in drawn.boxes
    hidden = {*by_folder["marts/finance"], *by_folder["marts/sales"], *by_folder["staging"]}
    assert hidden.isdisjoint(drawn.boxes)
    assert len(drawn.boxes) == 302 - len(hidden) + 2
    assert {p["data-to"] for p in drawn.paths} >= {"f:marts"}
    _assert_readable(drawn)
