"""Print what keeps strata/ and dialects/ from reading top-down: long modules and import circles.

A measurement, not a test (issue 37): it reports, it does not enforce. Imports are read
statically with `ast`, wherever they sit (module level, inside functions, under
`if TYPE_CHECKING:`), because a deferred import hides a circle from Python, not from
a reader. `from pkg import name` depends on the module `pkg.name` when there is one,
else on `pkg` itself; importing a submodule is not counted as depending on its parent
packages' `__init__`.

    .venv/bin/python bench/layering.py            # modules over 700 lines, then circles
    .venv/bin/python bench/layering.py --limit 500
"""
from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("strata", "dialects")


@dataclass(frozen=True)
class Edge:
    """`source` imports `target` at `line` of the source's file."""
    source: str
    target: str
    line: int


def module_files(root: Path = REPO) -> dict[str, Path]:
    """Every module of the packages by dotted name (`pkg/__init__.py` is `pkg`)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def imported_names(tree: ast.Module, module: str, is_package: bool
                   ) -> list[tuple[str, int]]:
    """The dotted names each import statement may mean, with its line: for
    `from a import b` both `a.b` and `a` (which one is a module is decided later)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = absolute_base(node, module, is_package)
            names += [(f"{base}.{alias.name}" if base else alias.name, node.lineno)
                      for alias in node.names]
    return names


def absolute_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute package a `from ... import` reads from, relative dots resolved."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    anchor = package[:len(package) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def import_edges(modules: dict[str, Path]) -> list[Edge]:
    """Each import of one of our modules by another, resolved to the module it loads."""
    edges = set()
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for name, line in imported_names(tree, module, path.name == "__init__.py"):
            target = nearest_module(name, modules)
            if target and target != module:
                edges.add(Edge(module, target, line))
    return sorted(edges, key=lambda e: (e.source, e.target, e.line))


def nearest_module(name: str, modules: dict[str, Path]) -> str | None:
    """`name` if it is one of our modules, else the longest dotted prefix that is."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def circles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted:
    every module in one can reach every other through imports."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def long_modules(modules: dict[str, Path], limit: int) -> list[tuple[int, str]]:
    """(line count, path) of every module longer than `limit`, longest first."""
    counts = [(len(path.read_text().splitlines()), str(path.relative_to(REPO)))
              for path in modules.values()]
    return sorted((c for c in counts if c[0] > limit), reverse=True)


def report(limit: int) -> list[str]:
    """The lines this script prints."""
    modules = module_files()
    edges = import_edges(modules)
    lines = [f"modules over {limit} lines:"]
    lines += [f"  {count:5d}  {path}" for count, path in long_modules(modules, limit)]
    found = circles(edges)
    lines.append(f"import circles: {len(found)}")
    for component in found:
        members = set(component)
        lines.append(f"  {len(component)} modules: {', '.join(component)}")
        lines += [f"    {e.source} -> {e.target} (line {e.line})" for e in edges
                  if e.source in members and e.target in members]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=700,
                        help="report modules longer than this many lines")
    print("\n".join(report(parser.parse_args().limit)))


if __name__ == "__main__":
    main()
