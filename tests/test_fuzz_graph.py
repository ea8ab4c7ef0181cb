"""Fuzzing the graph page's URL fragment (issue 39): whatever follows `#` in the
address, the page's script raises no uncaught error, `#model=NAME` (URL-encoded; a
`model=` pair among others joined by `&`, issue 38) still opens that model's panel,
and a fragment naming no model leaves the panel as it was.

One headless Chromium launch checks a whole batch of fragments: the test's copy of
the page (never the one `strata graph` writes) gets one more script that sets
`location.hash` to each fragment in turn, waits for the page's `hashchange` handler
to run, and writes on `<body>` how many it checked, the first that raised, and the
model whose panel each one left open. A failure is not shrunk (each try would be a
browser launch): the driver names the fragment that raised. Derandomized, two batches in CI (STRATA_FUZZ_
SCALE raises the number), so the added time is two browser launches.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from test_fuzz import FAST, examples
from test_graph import MODULE, _dom

from strata.graph import build_graph
from strata.graph_html import page
from strata.semantics.resolve import load_text

MODELS = [n.name for n in build_graph(load_text(MODULE)).nodes]
# names an object's prototype holds, which a lookup by name must not take for a model
PROTOTYPE = ["toString", "__proto__", "constructor", "hasOwnProperty", "valueOf",
             "__defineGetter__", "isPrototypeOf", "toLocaleString", "prototype"]
PIECES = ["%", "%2", "%E0%A4%A", "%ZZ", "%C0%80", "%ED%A0%80", "%00", "%25", "%23", "#",
          "=", "model=", "&", "?", " ", "\u2028", "\U0001f600", "é", "<", '"', "\\", "..",
          "%F0%9F%98%80", "%FF", "\x7f"]

# Chromium refuses more than 200 navigations of a page in 10 s, a change of
# `location.hash` included: a batch stays well under that, one change per fragment.
BATCH = 150

DRIVER = """<script>
"use strict";
(function () {
  var fragments = %s, body = document.body, results = [], i = 0;
  function panel() {
    var p = document.getElementById("panel");
    return p.classList.contains("open") ? p.getAttribute("data-model") : null;
  }
  function next() {
    if (body.hasAttribute("data-error")) {
      body.setAttribute("data-fuzz-failed", String(i - 1)); return finish();
    }
    if (i > 0) results.push(panel());
    if (i === fragments.length) return finish();
    var url = new URL(location.href);
    url.hash = fragments[i++];
    if (url.href === location.href) return next();  // no change: no `hashchange` either
    location.hash = fragments[i - 1];
  }
  function finish() {
    body.setAttribute("data-fuzz-checked", String(results.length));
    body.setAttribute("data-fuzz-panels", JSON.stringify(results));
  }
  window.addEventListener("hashchange", next);  // after the page's own listener
  next();
})();
</script>
"""


def fragments() -> st.SearchStrategy[str]:
    """A fragment: `model=` and a model's name (encoded or not), a prototype's name,
    stray or broken percent escapes, or any text; sometimes without `model=`."""
    name = st.one_of(st.sampled_from(MODELS).map(lambda n: quote(n, safe="")),
                     st.sampled_from(MODELS), st.sampled_from(PROTOTYPE),
                     st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)),
                              max_size=6).map("".join))
    return st.tuples(st.sampled_from(["#model=", "#model=", "#", "#model", "#MODEL=",
                                      "#x=1&model="]), name).map("".join)


def model_value(fragment: str) -> str | None:
    """The value of the fragment's first `model=` pair (pairs are joined by `&`), as
    written; None when it has none."""
    for pair in fragment.removeprefix("#").split("&"):
        if pair.startswith("model="):
            return pair.removeprefix("model=")
    return None


def expected_panel(fragment: str) -> str | None:
    """The model a fragment opens: a `model=` pair with the URL-encoded name of one."""
    wanted = {quote(n, safe=""): n for n in MODELS}
    value = model_value(fragment)
    return wanted.get(value) if value is not None else None


@settings(FAST, max_examples=examples(2),
          phases=[Phase.explicit, Phase.generate])  # no shrinking: a browser per try
@given(st.lists(fragments(), min_size=BATCH, max_size=BATCH))
def test_no_fragment_raises_and_a_model_fragment_opens_its_panel(tmp_path_factory, batch):
    html = tmp_path_factory.mktemp("fragments") / "g.html"
    text = page(build_graph(load_text(MODULE)), "fragments")
    driver = DRIVER % json.dumps(batch).replace("<", "\\u003c")
    html.write_text(text.replace("</body>", driver + "</body>"), encoding="utf-8")
    dom = _dom(html)
    failed = dom.body.get("data-fuzz-failed")
    assert "data-error" not in dom.body, (dom.body.get("data-error"),
                                          batch[int(failed)] if failed else None)
    assert dom.body.get("data-fuzz-checked") == str(len(batch))
    panels = json.loads(dom.body["data-fuzz-panels"])
    before = None
    for fragment, shown in zip(batch, panels, strict=True):
        if expected_panel(fragment) is not None:
            assert shown == expected_panel(fragment), fragment
        elif model_value(fragment) is not None:  # maybe a name the browser encoded itself
            assert shown == before or shown in MODELS, fragment
        else:  # no model named: the panel stays as it was
            assert shown == before, fragment
        before = shown

def test_the_fragment_fuzzer_catches_a_page_that_throws(tmp_path: Path):
    """The driver reports the fragment that raised: the page of before issue 39 (a
    lookup on a plain object, decodeURIComponent unguarded) fails on `toString`."""
    html = tmp_path / "g.html"
    text = page(build_graph(load_text(MODULE)), "fragments").replace(
        "try { value = decodeURIComponent(pair.slice(at + 1)); } catch (err) { return; }",
        "value = decodeURIComponent(pair.slice(at + 1));")
    batch = ["#model=two%20words", "#model=%"]
    html.write_text(text.replace("</body>", DRIVER % json.dumps(batch) + "</body>"),
                    encoding="utf-8")
    dom = _dom(html)
    assert "URIError" in dom.body.get("data-error", "")
    assert dom.body.get("data-fuzz-failed") == "1"
