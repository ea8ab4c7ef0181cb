"""The impact of a change as text for a terminal, and as markdown for a pull-request
comment (a short table first, the details below). `--json` is `Impact.to_json`."""

from __future__ import annotations

from strata.impact.classify import STATUS_ORDER, UNCHANGED, Impact, ModelChange

_MAX_LISTED = 12  # downstream columns listed in a table cell before "and N more"


def _listed(names: list[str], limit: int = _MAX_LISTED) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def _ordered(impact: Impact) -> list[ModelChange]:
    rank = {s: i for i, s in enumerate(STATUS_ORDER)}
    return sorted((c for c in impact.changes.values() if c.status != UNCHANGED),
                  key=lambda c: rank[c.status])


def summary(impact: Impact) -> str:
    counts = impact.counts()
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no models"


def _reach(change: ModelChange) -> list[str]:
    """Every downstream model.column (and model, for rows) the change reaches."""
    columns = sorted({r for c in change.columns for r in c.readers})
    return [*columns, *(m for m in change.downstream
                        if not any(r.startswith(m + ".") for r in columns))]


def text_lines(impact: Impact, data: dict | None = None) -> list[str]:
    lines = [f"impact against {impact.base}: {summary(impact)}"]
    shown = _ordered(impact)
    if not shown:
        lines.append("  no model changed")
    width = max([len(c.model) for c in shown] or [0])
    for change in shown:
        rules = ", ".join(f.rule for f in change.findings)
        lines.append(f"  {change.status:<12} {change.model:<{width}}  {rules}")
    for change in shown:
        if change.status == "reached" and not data:
            continue
        lines.append("")
        lines.append(f"{change.model}: {change.status}")
        for finding in change.findings:
            lines.append(f"  rule {finding.rule}: {finding.text}")
        for col in change.columns:
            lines.append(f"  column {col.column}: {col.change} ({col.detail})")
            if col.readers:
                lines.append(f"    reaches {_listed(list(col.readers), 1000)}")
        if change.rows_reason and change.downstream:
            lines.append(f"  rows of every model downstream ({change.rows_reason}): "
                         + ", ".join(change.downstream))
        if data and change.model in data:
            lines += ["  " + line for line in data_lines(data[change.model])]
    unchanged = impact.by_status(UNCHANGED)
    if unchanged:
        lines.append("")
        lines.append("unchanged: " + ", ".join(c.model for c in unchanged))
        if data:
            ways = sorted({data[c.model]["how"] for c in unchanged if c.model in data
                           and data[c.model]["equal"]})
            unequal = [c.model for c in unchanged if c.model in data and not data[c.model]["equal"]]
            if ways:
                lines.append(f"  data equal: {'; '.join(ways)}")
            for model in unequal:  # the code is the same, the data is not (sources moved)
                lines.append(f"{model}: unchanged code")
                lines += ["  " + line for line in data_lines(data[model])]
    return lines


def data_lines(found: dict) -> list[str]:
    """One model's data diff (datadiff.ModelDiff.to_json) as lines."""
    if found.get("equal"):
        return [f"data: equal ({found['how']})"]
    lines = [f"data: {found['base_rows']} -> {found['head_rows']} rows ({found['how']})"]
    if found.get("key"):
        lines.append(f"  by key [{', '.join(found['key'])}]: {found['removed']} removed, "
                     f"{found['added']} added, {found['changed']} changed")
    else:
        lines.append(f"  no key (counts only, by row hash): {found['removed']} rows only "
                     f"in the base, {found['added']} only in the head")
    for column, n in found.get("columns", {}).items():
        if n:
            lines.append(f"  column {column}: {n} changed values")
    for note in found.get("notes", []):
        lines.append(f"  note: {note}")
    for kind, rows in found.get("samples", {}).items():
        for row in rows:
            lines.append(f"  {kind}: " + ", ".join(f"{k}={v}" for k, v in row.items()))
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(impact: Impact, data: dict | None = None) -> str:
    out = [f"### Strata: impact against `{_cell(impact.base)}`", "",
           f"{summary(impact)}", ""]
    shown = _ordered(impact)
    if not shown:
        out.append("No model changed.")
        return "\n".join(out) + "\n"
    head = "| model | change | rule | reaches |"
    rule = "|---|---|---|---|"
    if data:
        head += " data |"
        rule += "---|"
    out += [head, rule]
    for change in shown:
        row = [f"`{_cell(change.model)}`", f"**{change.status}**" if change.status == "breaking"
               else change.status, ", ".join(f.rule for f in change.findings),
               _cell(_listed(_reach(change)) or (f"(reads {_listed(change.reached_by, 4)})"
                                                 if change.reached_by else ""))]
        if data:
            found = data.get(change.model)
            row.append(data_cell(found) if found else "")
        out.append("| " + " | ".join(row) + " |")
    out += ["", "<details><summary>Details</summary>", ""]
    for change in shown:
        out.append(f"#### `{_cell(change.model)}`: {change.status}")
        out.append("")
        for finding in change.findings:
            out.append(f"- rule `{finding.rule}`: {_cell(finding.text)}")
        for col in change.columns:
            out.append(f"- column `{_cell(col.column)}`: {col.change} ({_cell(col.detail)})"
                       + (f"; reaches {_cell(', '.join(col.readers))}" if col.readers else ""))
        if change.rows_reason and change.downstream:
            out.append(f"- rows of every model downstream ({change.rows_reason}): "
                       + _cell(", ".join(change.downstream)))
        if data and change.model in data:
            out += ["", "```", *data_lines(data[change.model]), "```"]
        out.append("")
    out.append("</details>")
    return "\n".join(out) + "\n"


def data_cell(found: dict) -> str:
    if found.get("equal"):
        return "equal"
    if found.get("key"):
        return (f"{found['base_rows']} → {found['head_rows']} rows; −{found['removed']} "
                f"+{found['added']} ~{found['changed']}")
    return f"{found['base_rows']} → {found['head_rows']} rows (no key)"
