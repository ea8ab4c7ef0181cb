"""`strata gc`: thin. Parse flags, call strata.engine.gc, print."""

from __future__ import annotations

import click

from strata.cli.compile_cmds import json_option
from strata.cli.main import cli, console, handled, print_json
from strata.diagnostics import fail
from strata.engine import gc
from strata.engine.branches import ensure_branch
from strata.engine.warehouse import Warehouse


@cli.command(name="gc")
@click.option("-o", "--warehouse", "warehouse", required=True, type=click.Path(),
              metavar="WAREHOUSE", help="The warehouse: a DuckDB file, postgresql://..., spark:DIR or "
              "sc://HOST:PORT.")
@click.option("--older-than", "older_than", required=True, metavar="AGE",
              help="Collect only runs older than this: 90m, 12h, 30d, 2w, 0d.")
@click.option("--keep-last", "keep_last", default=5, show_default=True, type=int,
              help="Always keep the snapshots of each branch's last N runs.")
@click.option("--branch", default=None, help="Consider only this branch's history "
              "(what other branches need is kept anyway).")
@click.option("--dry-run", is_flag=True, help="Say what would go and the space it frees; "
              "change nothing.")
@click.option("--compact-file", is_flag=True, help="Afterwards, rewrite the file so it "
              "shrinks (a copy, then an atomic rename; needs room for the copy).")
@json_option
@handled
def gc_cmd(warehouse: str, older_than: str, keep_last: int, branch: str | None, dry_run: bool,
           compact_file: bool, as_json: bool) -> None:
    """Drop snapshots no branch needs: not live, older than AGE, not among the last runs."""
    opts = gc.GcOptions(older_than=older_than, keep_last=keep_last, branch=branch,
                        dry_run=dry_run)
    gc.parse_duration(older_than)  # a bad value fails before the file is touched
    wh = Warehouse.open(warehouse, read_only=dry_run, create=False)
    on_file = wh.adapter.compacts_file
    try:
        if compact_file and not on_file:
            raise fail("E084", f"--compact-file rewrites a DuckDB file; `{wh.label}` is not one",
                       None, "leave it out: a PostgreSQL server reclaims the space of dropped "
                       "tables itself (VACUUM), and Spark's DROP TABLE deletes their files")
        if branch is not None:
            ensure_branch(wh, branch)
        report = gc.collect(wh, opts)
        if compact_file and not dry_run:
            done = gc.compact_file(wh)
            report.compacted = True
            report.file_bytes_after = done.bytes_after
    finally:
        wh.close()
    if as_json:
        print_json(report.to_json())
    else:
        _print(report, compact_file, on_file)


_SHOWN = 20  # collected snapshots listed one per line; --json has every one


def _print(report: gc.GcReport, compact_file: bool, on_file: bool = True) -> None:
    out = console()

    def say(text: str) -> None:
        out.print(text, markup=False, highlight=False)

    dry = report.status == "dry_run"
    scope = f"branch {report.branch}" if report.branch else "all branches"
    say(f"gc ({scope}): runs older than {report.older_than} (before {report.cutoff}), "
        f"keeping the last {report.keep_last} runs of each branch")
    if report.status == "nothing_to_do":
        say("nothing to collect")
    if report.collected:
        say(f"{'would collect' if dry else 'collected'} {len(report.collected)} snapshot(s):")
        for c in report.collected[:_SHOWN]:
            say(f"  {c.snapshot}  ({c.model}; runs {', '.join(c.runs) or '-'})")
        if len(report.collected) > _SHOWN:
            say(f"  ... and {len(report.collected) - _SHOWN} more (--json lists them all)")
    if report.runs_affected:
        say(f"{'would make' if dry else 'made'} {len(report.runs_affected)} run(s) impossible "
            f"to roll back, replay or verify: {', '.join(report.runs_affected)}")
    if report.leftovers:
        say(f"{'would remove' if dry else 'removed'} {len(report.leftovers)} leftover(s) of "
            f"crashed runs: {', '.join(report.leftovers)}")
    if report.stale_files:
        say(f"{'would remove' if dry else 'removed'} the copy a crashed --compact-file left: "
            f"{', '.join(report.stale_files)}")
    if report.kept:
        say(f"kept {len(report.kept)} snapshot(s): {_kept_summary(report.kept)}")
    if report.dropped and report.estimated_bytes is None:
        say(f"{'would free' if dry else 'frees'}: not measured (the engine does not say how "
            "much storage a table uses)")
    elif report.dropped:
        say(f"{'would free' if dry else 'frees'} about {_size(report.estimated_bytes)} "
            "(estimate: " + ("storage blocks only the dropped tables use)" if on_file else
                             "the dropped tables' size)"))
    if report.freed_bytes is not None and on_file:
        say(f"measured after a checkpoint: {_size(report.freed_bytes)} fewer in use (net of "
            "the catalogue blocks the checkpoint rewrote); DuckDB reuses them")
    elif report.freed_bytes is not None:
        say(f"measured: {_size(report.freed_bytes)} fewer in use")
    if report.gc_id:
        say(f"recorded gc {report.gc_id} in history")
    if report.compacted:
        say(f"compacted the file: {_size(report.file_bytes)} -> "
            f"{_size(report.file_bytes_after or 0)}")
    elif dry and compact_file:
        say(f"--compact-file would rewrite the file ({_size(report.file_bytes)} now) to "
            f"about {_size(report.compactable_bytes or 0)}")
    elif on_file and (report.status != "nothing_to_do" or compact_file):
        say(f"the file stays {_size(report.file_bytes)}: DuckDB reuses freed blocks but does "
            "not shrink the file; add --compact-file to rewrite it smaller")
    if dry:
        say("dry run: nothing was changed")


def _kept_summary(kept: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for why in kept.values():
        key = ("live" if why.startswith("live") else "newer than the cutoff" if "newer" in why
               else "among the last runs" if "among the last" in why
               else "read by a kept snapshot" if why.startswith("read by the kept")
               else "read by a view" if why.startswith("read by the view")
               else "other branches (--branch)")
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in counts.items())


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"
