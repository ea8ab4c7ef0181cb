"""Names, types and the dependency graph: syntax tree → Module of per-model Plans.

Declarations and the graph here, each model's steps in `steps.py` (names in
`scopes.py`), compile-time rules in `checks.py`; problems are collected
as diagnostics so one pass reports all of them. A model whose upstream failed is
skipped quietly (its own error was already said).
"""

from __future__ import annotations

import heapq
import os
from collections import deque
from dataclasses import replace
from pathlib import Path

from strata.diagnostics import Diagnostic, Span, StrataError, did_you_mean
from strata.semantics import checks, imports, metadata
from strata.semantics import functions as F
from strata.semantics import types as T
from strata.semantics import windows as W
from strata.semantics.expressions import ERROR, resolve_type
from strata.semantics.module import ModelInfo, Module, SourceInfo
from strata.semantics.scopes import ModuleScope, duplicate
from strata.semantics.steps import ModelResolver
from strata.semantics.userfunctions import KEYWORD_CALLS
from strata.syntax import ast
from strata.syntax.cache import parse_many
from strata.syntax.text import TOO_DEEP_HINT, read_text


# ---------------------------------------------------------------- loading
def display_path(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)


def module_files(root: Path) -> list[Path]:
    """The files a module path names. Under a directory, every `*.strata` that is not
    a directory itself: a FIFO or device of that name is listed, so that reading it
    says E005 (it is never opened in a way that blocks) instead of skipping it.

    The walk skips what it cannot list (a folder without permission, an entry that
    vanished mid-walk, as under /proc) and follows each linked folder once, so a loop
    of links ends."""
    if not root.is_dir():
        return [root]
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    for folder, dirs, names in os.walk(root, followlinks=True):
        try:
            info = os.stat(folder)
        except OSError:
            dirs[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        found.extend(Path(folder, name) for name in names if name.endswith(".strata"))
        found.extend(Path(folder, name) for name in dirs
                     if name.endswith(".strata") and not os.path.isdir(Path(folder, name)))
    return sorted(p for p in found if p.exists() and not p.is_dir())


def _unusable_path(root: Path, path: str | os.PathLike) -> Diagnostic | None:
    """Why the module path cannot be read at all, or None. Asked before anything else
    touches it: the OS refuses some paths outright (too long, a loop of links), which
    pathlib raised as OSError (an internal error)."""
    try:
        exists = root.exists()
    except OSError as err:
        return Diagnostic("E005", f"cannot read `{path}`: {err.strerror or err}", None,
                          "give the path of a .strata file or of a directory holding "
                          ".strata files")
    if not exists:
        return Diagnostic("E005", f"no such file or directory: `{path}`", None,
                          "give the path of a .strata file or of a directory holding "
                          ".strata files")
    return None


def load_module(path: str | os.PathLike, parse_cache: Path | None = None) -> Module:
    """Parse and resolve a module (a file or a directory). Never raises for bad input:
    problems are in `module.diagnostics`. `parse_cache`: a directory where parsed
    files are kept by content (see strata/syntax/cache.py); None parses afresh."""
    root = Path(path)
    unusable = _unusable_path(root, path)
    if unusable is not None:
        module = Module(root=root, files={})
        module.diagnostics.append(unusable)
        return module
    module = Module(root=root.resolve(), files={})
    parsed = _read_module(root, path, module, parse_cache)
    if parsed and isinstance(parsed[0], Diagnostic):
        module.diagnostics.extend(parsed)
        return module
    first = parsed[0].path if parsed else display_path(root)
    if not module.diagnostics:
        parsed = imports.expand(parsed, module.diagnostics,
                                _importer(module, parse_cache), module.root)
    return _resolve(module, parsed, first)


def _read_module(root: Path, path: str | os.PathLike, module: Module,
                 parse_cache: Path | None) -> list[ast.ModuleFile] | list[Diagnostic]:
    """Parse every file of the module at `root`, keeping their texts in `module.files`
    and their syntax errors in its diagnostics; the E004 of a folder without .strata
    files instead of trees."""
    files = module_files(root)
    if root.is_dir() and not files:
        return [Diagnostic("E004", f"no .strata files under `{path}`", None,
                           "a module is a .strata file or a directory of them")]
    read: list[tuple[str, str] | StrataError] = []
    for file in files:
        shown = display_path(file)
        try:
            text = read_text(file, shown)
            module.files[shown] = text
            read.append((text, shown))
        except StrataError as err:
            read.append(err)
    trees = iter(parse_many([r for r in read if not isinstance(r, StrataError)], parse_cache))
    parsed: list[ast.ModuleFile] = []
    for item in read:  # diagnostics in file order, as files are listed
        result = item if isinstance(item, StrataError) else next(trees)
        if isinstance(result, StrataError):
            module.diagnostics.extend(result.diagnostics)
        else:
            parsed.append(result)
    return parsed


def _importer(module: Module, parse_cache: Path | None) -> imports.ReadModule:
    """How imports.py reads an imported module: as this one, its texts kept in
    `module.files` (diagnostics are rendered from them; the code cache keys on them)."""
    def read(root: Path) -> list[ast.ModuleFile] | list[Diagnostic]:
        unusable = _unusable_path(root, display_path(root))
        if unusable is not None:
            return [unusable]
        module.imported.append(root)
        return _read_module(root, display_path(root), module, parse_cache)
    return read


def load_text(text: str, file: str = "<string>") -> Module:
    """Resolve a module given as text (for tests and the library API)."""
    module = Module(root=Path.cwd(), files={file: text})
    try:
        from strata.syntax.parser import parse_text  # Lark: only when parsing

        parsed = [parse_text(text, file)]
    except StrataError as err:
        module.diagnostics.extend(err.diagnostics)
        parsed = []
    if not module.diagnostics:
        parsed = imports.expand(parsed, module.diagnostics, _importer(module, None),
                                Path.cwd())
    return _resolve(module, parsed, file)


def _resolve(module: Module, parsed: list[ast.ModuleFile], first_file: str) -> Module:
    # After a syntax error, names declared in the broken file are unknown: resolving
    # the rest would only add false "unknown source or model" errors.
    if module.diagnostics:
        return module
    if not any(f.declarations for f in parsed):
        module.diagnostics.append(Diagnostic(
            "E004", "the module declares nothing", Span.of_file(first_file),
            "declare a `source`, a `model` or a `test`"))
        return module
    Resolver(module, parsed).run()
    return module


def _file_path(base_dir: Path, written: str) -> Path:
    path = base_dir / written
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop, an unreadable directory: run says
        return path.absolute()


def _dependency_order(module: Module) -> list[str]:
    """Models upstream first (Kahn's algorithm); among models ready at once, the one
    declared first. Models on or behind a cycle are left out.

    A heap of declaration positions picks the next model: sorting the ready list and
    popping its head at every step, and testing membership in the order list, made
    resolving 40,000 models take 98 s (quadratic)."""
    names = list(module.models)
    position = {n: i for i, n in enumerate(names)}
    indegree = [len(module.models[n].models_read) for n in names]
    readers: list[list[int]] = [[] for _ in names]
    for i, name in enumerate(names):
        for up in module.models[name].models_read:
            readers[position[up]].append(i)
    ready = [i for i, d in enumerate(indegree) if d == 0]  # ascending: already a heap
    order: list[str] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(names[i])
        for reader in readers[i]:
            indegree[reader] -= 1
            if indegree[reader] == 0:
                heapq.heappush(ready, reader)
    return order


# E188: a model reading its own rows to make more of them (SQL's WITH RECURSIVE)
RECURSIVE_HINT = ("Strata has no recursive relations: each model's rows are computed once, "
                  "from relations that do not depend on them. For a hierarchy of known depth, "
                  "join the relation to itself that many times (`join_left many employees as "
                  "boss on boss.id = manager_id`); for a sequence of numbers or dates, use "
                  "`range(a, b, step)`")


class Resolver(ModuleScope):
    """Resolves a module: its declarations, the graph of which model reads which, then
    each model's steps (steps.ModelResolver) in dependency order, then its tests."""

    def __init__(self, module: Module, files: list[ast.ModuleFile]):
        super().__init__(module)
        self.files = files

    def run(self) -> None:
        self._collect()
        self.module.functions = self.functions.all()
        order = self._graph()
        for name in order:
            info = self.module.models[name]
            if any(self.module.models[m].plan is None for m in info.models_read):
                continue
            before = len(self.diags)
            try:
                plan = ModelResolver(self, info.decl).run()
            except RecursionError:
                self.error("E092", f"model `{name}` nests an expression too deeply to compile",
                           info.decl.name_span, TOO_DEEP_HINT)
                continue
            if len(self.diags) == before:
                self.diags.extend(metadata.check_columns(info.decl, plan))
            if len(self.diags) == before:
                info.plan = plan
        self.deferred_pins(order)
        self.module.order = order
        checks.check_tests(self.module)

    def deferred_pins(self, order: list[str]) -> None:
        """The pins checked after their relation, which reads their model, is built
        (ModelInfo.pins_after): resolved once every model is (checks.deferred_pins)."""
        for name in order:
            info = self.module.models[name]
            if info.pins_after and info.plan is not None:
                checks.deferred_pins(self, info)

    # ------------------------------------------------------------ declarations
    def _collect(self) -> None:
        seen: dict[str, tuple[str, Span]] = {}
        for file in self.files:
            base_dir = Path(file.path).parent
            for decl in file.declarations:
                kind = type(decl).__name__.replace("Decl", "").lower()
                # sources and models name tables and views: SQL engines compare those
                # without case, so `Totals` and `totals` would be one table
                key = decl.name.lower() if kind not in ("test", "function") else \
                    f"{kind} {decl.name}"
                if kind == "function" and self._shadows(decl):
                    continue
                if key in seen:
                    name, first = seen[key]
                    what = (f"`{decl.name}` is declared twice" if name == decl.name else
                            f"`{decl.name}` clashes with `{name}`: SQL engines compare table "
                            "names without case")
                    self.error("E014", what, decl.name_span,
                               f"first declared at {first.file}:{first.line}:{first.column}")
                    continue
                seen[key] = (decl.name, decl.name_span)
                if isinstance(decl, ast.SourceDecl):
                    self._source(decl, base_dir)
                elif isinstance(decl, ast.ModelDecl):
                    self.module.models[decl.name] = ModelInfo(decl.name, decl, None, [], [])
                elif isinstance(decl, ast.FunctionDecl):
                    self.functions.decls[decl.name] = decl
                else:
                    self.module.tests[decl.name] = decl

    def _shadows(self, decl: ast.FunctionDecl) -> bool:
        """E174 when a `fn` takes the name of a built-in function: every call of that
        name would mean one of the two."""
        name = decl.name
        builtin = name in F.CATALOGUE or name in W.WINDOW_FUNCTIONS or \
            name in F.NON_DETERMINISTIC or name in KEYWORD_CALLS
        if builtin:
            self.error("E174", f"function `{name}` has the name of a built-in function",
                       decl.name_span, f"name it otherwise, e.g. `my_{name}`")
        return builtin

    def _source(self, decl: ast.SourceDecl, base_dir: Path) -> None:
        columns: list[tuple[str, T.Type]] = []
        names: dict[str, str] = {}
        for col in decl.columns:
            if col.name.lower() in names:
                message, hint = duplicate(col.name, names[col.name.lower()],
                                           "is declared twice", f" in source `{decl.name}`")
                self.error("E015", message, col.span, hint)
                continue
            names[col.name.lower()] = col.name
            before = len(self.diags)
            typ = resolve_type(col.type, self.diags)
            if typ is None and col.name in ("description", "owner") and \
                    len(self.diags) > before and self.diags[-1].code == "E020":
                # `owner: finance` reads as a column of type `finance`: say what was meant
                self.diags[-1] = replace(self.diags[-1], hint=(
                    f"a column `{col.name}` needs a type; to describe the source, "
                    f"quote it: `{col.name}: '{col.type.name}'`"))
            columns.append((col.name, typ or ERROR))
        if not decl.columns:
            self.error("E050", f"source `{decl.name}` declares no columns", decl.name_span,
                       "list its columns: `source orders { id: int ... }`")
        file = _file_path(base_dir, decl.file) if decl.file else None
        self.module.sources[decl.name] = SourceInfo(decl.name, columns, decl.table, file, decl)

    # ------------------------------------------------------------ graph
    def _relations(self, decl: ast.ModelDecl) -> list[tuple[str, Span]]:
        """Every relation the model reads by name, sub-pipelines' and `with`s'
        included (a `with`'s own name is the model's, not the module's)."""
        out = []
        withs = {w.name for w in decl.withs}
        stack = list(reversed([*(s for w in decl.withs for s in w.pipeline.steps),
                               *decl.steps]))
        while stack:
            step = stack.pop()
            if isinstance(step, (ast.From, ast.Join, ast.SetOp)):
                if isinstance(step.relation, ast.Pipeline):
                    stack.extend(reversed(step.relation.steps))
                elif isinstance(step.relation, ast.RelationCall):
                    continue  # rows made from nothing read no relation
                elif step.relation not in withs:
                    out.append((step.relation, step.span))
        return out

    @staticmethod
    def _pin_relations(decl: ast.ModelDecl) -> list[tuple[str, Span]]:
        """The relations the model's `pin references` read (not the model itself)."""
        return [(p.relation, p.span) for p in decl.pins
                if p.relation is not None and p.relation != decl.name]

    @staticmethod
    def _combined(decl: ast.ModelDecl) -> set[Span]:
        """The spans of the steps that read a relation for a set operation (the set
        operation itself, or the steps of its sub-pipeline): a model reading itself
        there is SQL's recursive CTE."""
        out = set()
        stack = [(step, False) for step in decl.steps]
        while stack:
            step, combined = stack.pop()
            if not isinstance(step, (ast.From, ast.Join, ast.SetOp)):
                continue
            combined = combined or isinstance(step, ast.SetOp)
            if combined:
                out.add(step.span)
            if isinstance(step.relation, ast.Pipeline):
                stack.extend((inner, combined) for inner in step.relation.steps)
        return out

    def _graph(self) -> list[str]:
        module = self.module
        broken: set[str] = set()
        for name, info in module.models.items():
            for rel, span in self._relations(info.decl):
                if rel == name and span in self._combined(info.decl):
                    self.error("E188", f"model `{name}` combines its own rows with a set "
                               "operation: a recursive relation", span, RECURSIVE_HINT)
                    broken.add(name)
                elif rel == name:
                    self.error("E055", f"model `{name}` reads itself", span,
                               "an incremental model merges with its previous snapshot by "
                               "itself; it does not read its own output")
                    broken.add(name)
                elif not self._known(rel, span, broken, name):
                    continue
                elif rel in module.models:
                    if rel not in info.models_read:
                        info.models_read.append(rel)
                elif rel not in info.sources_read:
                    info.sources_read.append(rel)
        pinned = self._pin_edges(broken)
        order = _dependency_order(module)
        placed = set(order)
        cyclic = [n for n in module.models if n not in placed]
        for cycle in self._cycles(cyclic):
            info = module.models[cycle[0]]
            pins = [f"`{a}` reads `{b}` by its `pin references`"
                    for a, b in zip(cycle, cycle[1:] + cycle[:1]) if (a, b) in pinned]
            self.error("E013", "dependency cycle: " + " -> ".join(cycle + [cycle[0]])
                       + (f" ({'; '.join(pins)})" if pins else ""), info.decl.name_span,
                       "a model cannot read, directly or not, itself" + (
                           "; a pin's relation is built before the model, unless that "
                           "relation reads the model: then the pin is checked once both are "
                           "built" if pins else ""))
        return [n for n in order if n not in broken]

    def _known(self, rel: str, span: Span, broken: set[str], name: str) -> bool:
        if rel in self.module.models or rel in self.module.sources:
            return True
        self.error("E010", f"unknown source or model `{rel}`", span,
                   did_you_mean(rel, [*self.module.models, *self.module.sources]))
        broken.add(name)
        return False

    def _pin_edges(self, broken: set[str]) -> set[tuple[str, str]]:
        """Place each `pin references` to another model: after the model it reads when
        that model reads the pinned model back through its steps (dbt's relationships
        test on a model downstream: ModelInfo.pins_after), else before, as an input.
        Returns the (model, relation) edges only a pin made, for cycle messages."""
        module = self.module
        pinned: dict[tuple[str, str], None] = {}  # in declaration order (a set's is not)
        upstream: dict[str, set[str]] = {}  # through the models' steps only
        for name, info in module.models.items():
            for rel, span in self._pin_relations(info.decl):
                if not self._known(rel, span, broken, name):
                    continue
                if rel in module.sources:
                    if rel not in info.sources_read:
                        info.sources_read.append(rel)
                elif rel in info.models_read or rel in info.pins_after:
                    continue
                elif name in upstream.setdefault(rel, module.upstream([rel])):
                    info.pins_after.append(rel)
                else:
                    pinned[(name, rel)] = None
        for name, rel in pinned:
            module.models[name].models_read.append(rel)
        return set(pinned)

    def _cycles(self, cyclic: list[str]) -> list[list[str]]:
        """One cycle per group of models that read each other (in declaration order).

        Models left out of the topological order either sit on a cycle or only read
        one; the latter get no error of their own (their upstream's says it), and
        each cycle is reported once, as a real path through its models."""
        inside = set(cyclic)

        def reads(name: str) -> list[str]:
            return [m for m in self.module.models[name].models_read if m in inside]

        reach: dict[str, set[str]] = {}

        def reachable(name: str) -> set[str]:
            if name not in reach:
                seen: set[str] = set()
                stack = reads(name)
                while stack:
                    m = stack.pop()
                    if m not in seen:
                        seen.add(m)
                        stack.extend(reads(m))
                reach[name] = seen
            return reach[name]

        done: set[str] = set()
        cycles = []
        for name in cyclic:
            if name in done or name not in reachable(name):
                continue
            group = {m for m in reachable(name) if name in reachable(m)}
            done |= group
            # shortest way from `name` back to itself, inside its group (BFS)
            parent: dict[str, str] = {}
            queue = deque([name])
            while queue and name not in parent:
                node = queue.popleft()
                for m in reads(node):
                    if m in group and m not in parent:
                        parent[m] = node
                        queue.append(m)
            path = [name]
            node = parent[name]
            while node != name:
                path.append(node)
                node = parent[node]
            cycles.append([path[0], *reversed(path[1:])])
        return cycles
