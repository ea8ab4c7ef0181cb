"""Modules reusing modules: `import '../shared' as shared { name [as alias], ... }`.

An imported module's functions, sources and models join the importing module, as a
dbt package's models join a dbt project: its models are built by the importing
run, into the same warehouse, under their own names (so their SQL, and with it
their content identity, is the one they have in their own module). Its tests stay
its own. In the importing files its names are written `shared.name`, or bare when
the import lists them (`as` renames them there, not in the warehouse).

This stage sits between parsing and resolving: it reads the imported modules,
refuses a cycle of imports (E199) and names that would be one table or one function
(E200), and rewrites every file's references to the declared names, so the
resolver sees one module whose relations and calls name declarations directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from strata.diagnostics import Diagnostic, Span, did_you_mean
from strata.syntax import ast
from strata.syntax.ast import QualifiedName, _Name

# reads a module's files: (root) -> parsed files, or the diagnostics of reading them
ReadModule = Callable[[Path], "list[ast.ModuleFile] | list[Diagnostic]"]

_CYCLE_HINT = ("imports cannot go round in a circle: move what the modules share into a "
               "third module that each imports")


@dataclass
class _Loaded:
    """One module of the import tree: its files, and the modules it imports."""

    root: Path
    files: list[ast.ModuleFile]
    qualifiers: dict[str, _Loaded] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # qualifier -> path as written
    # a name the import lists -> (the module declaring it, its name there, the listing)
    listed: dict[str, tuple[_Loaded, str, Span]] = field(default_factory=dict)

    @cached_property
    def names(self) -> dict[str, ast.Declaration]:
        """Its own functions, sources and models by name (tests and imports excluded)."""
        return {_key(d): d for f in self.files for d in f.declarations
                if isinstance(d, (ast.SourceDecl, ast.ModelDecl, ast.FunctionDecl))}


def _key(decl: ast.Declaration) -> str:
    """Relations by case-folded name (one table to the engine); functions apart."""
    if isinstance(decl, ast.FunctionDecl):
        return f"fn {decl.name}"
    return decl.name.lower()


def _shown(root: Path) -> str:
    from strata.semantics.resolve import display_path

    return display_path(root)


def expand(files: list[ast.ModuleFile], diags: list[Diagnostic], read: ReadModule,
           base: Path) -> list[ast.ModuleFile]:
    """The files of a module and of every module it imports, with every reference
    rewritten to a declared name and the imports themselves dropped. Diagnostics go
    to `diags` (then the result is only the module's own files). `base`: where a
    module given as text lives (its imports are relative to it)."""
    uses = any(isinstance(d, ast.ImportDecl) for f in files for d in f.declarations) \
        or any(f.qualified for f in files)
    if not uses:
        return files
    before = len(diags)
    top = _Loaded(base, files)
    loaded = _Tree(diags, read)
    loaded.link(top, [])
    if len(diags) > before:
        return files
    modules = loaded.order(top)
    _clashes(modules, top, diags)
    if len(diags) > before:
        return files
    out: list[ast.ModuleFile] = []
    for module in modules:
        rewrite = _Rewriter(module, modules, diags)
        for file in module.files:
            decls = tuple(rewrite.decl(d) for d in file.declarations
                          if not isinstance(d, ast.ImportDecl)
                          and (module is top or not isinstance(d, ast.TestDecl)))
            out.append(ast.ModuleFile(file.path, decls))
    return files if len(diags) > before else out


class _Tree:
    """Reads the modules an import tree names, each once (a module two modules import
    is one module), and refuses a cycle."""

    def __init__(self, diags: list[Diagnostic], read: ReadModule):
        self.diags = diags
        self.read = read
        self.by_root: dict[Path, _Loaded] = {}

    def link(self, module: _Loaded, path: list[Path]) -> None:
        """Read what `module` imports; `path`: the modules importing it, outermost
        first (a target among them is a cycle)."""
        own = {Path(f.path).resolve() for f in module.files}
        for file in module.files:
            for decl in file.declarations:
                if isinstance(decl, ast.ImportDecl):
                    self._import(module, file, decl, [*path, module.root], own)

    def _import(self, module: _Loaded, file: ast.ModuleFile, decl: ast.ImportDecl,
                path: list[Path], own: set[Path]) -> None:
        target = _target(Path(file.path).parent, decl.path)
        if target in path:
            chain = " -> ".join(_shown(p) for p in [*path[path.index(target):], target])
            self.diags.append(Diagnostic("E199", f"import cycle: {chain}", decl.path_span,
                                         _CYCLE_HINT))
            return
        qualifier = decl.alias or _default_qualifier(target)
        if qualifier is None:
            self.diags.append(Diagnostic(
                "E204", f"`{decl.path}` gives no name to qualify its names with",
                decl.path_span, f"name it: `import '{decl.path}' as shared`"))
            return
        if qualifier in module.qualifiers:
            self.diags.append(Diagnostic(
                "E200", f"two imports are named `{qualifier}`", decl.alias_span or decl.span,
                f"name one otherwise: `import '{decl.path}' as other`"))
            return
        imported = self.by_root.get(target) or self._load(target, decl, own, path)
        if imported is None:
            return
        module.qualifiers[qualifier] = imported
        module.written[qualifier] = decl.path
        exported = imported.names
        for name in decl.names:
            found = [k for k in (name.name.lower(), f"fn {name.name}") if k in exported
                     and getattr(exported[k], "name", None) == name.name]
            if not found:
                self.diags.append(Diagnostic(
                    "E202", f"module `{decl.path}` declares no `{name.name}`", name.span,
                    did_you_mean(name.name, [d.name for d in exported.values()])))
                continue
            if name.local in module.listed:
                self.diags.append(Diagnostic(
                    "E200", f"`{name.local}` is imported twice", name.span,
                    "import it once, or rename one with `as`"))
                continue
            module.listed[name.local] = (imported, name.name, name.span)

    def _load(self, target: Path, decl: ast.ImportDecl, own: set[Path],
              path: list[Path]) -> _Loaded | None:
        read = self.read(target)
        if read and isinstance(read[0], Diagnostic):
            first = read[0]
            # a module that cannot be read is said where it is imported
            self.diags.append(Diagnostic("E201", f"cannot import `{decl.path}`: "
                                         f"{first.message}", decl.path_span, first.hint)
                              if first.span is None else first)
            self.diags.extend(read[1:])
            return None
        if any(Path(f.path).resolve() in own for f in read):
            self.diags.append(Diagnostic(
                "E201", f"`{decl.path}` is part of this module already", decl.path_span,
                "a module's folder holds its own files: keep an imported module beside "
                "it, not inside it"))
            return None
        loaded = _Loaded(target, read)
        self.by_root[target] = loaded
        self.link(loaded, path)
        return loaded

    def order(self, top: _Loaded) -> list[_Loaded]:
        """Every module of the tree once, each after the modules it imports (so their
        declarations come first, as a package's models come before a project's)."""
        done: list[_Loaded] = []

        def visit(module: _Loaded) -> None:
            if any(m is module for m in done):
                return
            for imported in module.qualifiers.values():
                visit(imported)
            done.append(module)

        visit(top)
        return done


def _target(folder: Path, written: str) -> Path:
    try:
        return (folder / written).resolve()
    except (OSError, RuntimeError):
        return (folder / written).absolute()


def _default_qualifier(target: Path) -> str | None:
    """`../shared` -> shared, `lib/money.strata` -> money; None when that is no name."""
    name = target.name.removesuffix(".strata")
    return name if name.isidentifier() and name.isascii() else None


def _label(module: _Loaded, top: _Loaded) -> str:
    return "this module" if module is top else f"`{_shown(module.root)}`"


def _clashes(modules: list[_Loaded], top: _Loaded, diags: list[Diagnostic]) -> None:
    """E200 for two modules declaring one name: their sources and models would be one
    table or view of the warehouse, their functions one name in a call."""
    first: dict[str, tuple[_Loaded, ast.Declaration]] = {}
    for module in reversed(modules):  # the importing module first
        for key, decl in module.names.items():
            if key not in first:
                first[key] = (module, decl)
                continue
            # said where the module closer to the importing one declares it: the
            # name its author can change
            other_module, other = first[key]
            span = decl.name_span
            what = "function" if key.startswith("fn ") else "name"
            diags.append(Diagnostic(
                "E200", f"{what} `{other.name}` of {_label(other_module, top)} clashes with "
                f"`{decl.name}` of {_label(module, top)}", other.name_span,
                f"that one is declared at {span.file}:{span.line}:{span.column}; imported "
                "sources and models are built into the same warehouse under their own "
                "names: rename one"))
    for alias, (module, name, span) in top.listed.items():
        local = top.names
        if alias.lower() in local or f"fn {alias}" in local:
            mine = local.get(alias.lower()) or local[f"fn {alias}"]
            where = mine.name_span
            diags.append(Diagnostic(
                "E200", f"imported `{alias}` clashes with `{mine.name}` of this module", span,
                f"declared at {where.file}:{where.line}:{where.column}; import it under "
                f"another name: `{name} as other`"))


# the nodes whose `relation` names a source or model (a `rel.*`'s names one in scope)
_NAMING = (ast.From, ast.Join, ast.SetOp, ast.Pin, ast.RowsBlock)


class _Rewriter:
    """One module's references, rewritten to the declared names: `shared.x` and a
    listed alias to the name `x` has in its own module; a bare name another module
    declares is E203 (the import must say which names come in bare)."""

    def __init__(self, module: _Loaded, modules: list[_Loaded], diags: list[Diagnostic]):
        self.module = module
        self.diags = diags
        self.own = module.names
        self.elsewhere = {k: m for m in modules if m is not module for k in m.names}
        self.withs: set[str] = set()

    def decl(self, decl: ast.Declaration) -> ast.Declaration:
        self.withs = {w.name for w in decl.withs} if isinstance(decl, ast.ModelDecl) else set()
        return self._node(decl)

    def _node(self, node):
        if isinstance(node, tuple):
            new = tuple(self._node(n) for n in node)
            return node if all(a is b for a, b in zip(new, node)) else \
                (type(node)(new) if type(node) is tuple else node)
        if not dataclasses.is_dataclass(node) or isinstance(node, type):
            return node
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if f.name == "relation" and isinstance(node, _NAMING) and isinstance(value, str):
                new = self._relation(value, node)
                if isinstance(node, (ast.From, ast.Join)) and new != value and \
                        node.alias is None and not isinstance(value, QualifiedName):
                    changes["alias"] = str(value)  # a listed alias names the relation here
            elif isinstance(node, ast.Call) and f.name == "name":
                new = self._call(node)
            elif f.name == "qualifier" and isinstance(node, ast.Call):
                new = None
            else:
                new = self._node(value)
            if new is not value:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node

    def _relation(self, name: str, node) -> str:
        span = name.span if isinstance(name, _Name) else getattr(node, "span", None)
        if isinstance(name, QualifiedName):
            return self._qualified(name.qualifier, name.member, span, relation=True)
        if name in self.withs:
            return name
        return self._bare(name, name.lower(), span)

    def _call(self, call: ast.Call) -> str:
        if call.qualifier is not None:
            return self._qualified(call.qualifier, call.name, call.span, relation=False)
        return self._bare(call.name, f"fn {call.name}", call.span)

    def _qualified(self, qualifier: str, member: str, span: Span | None, relation: bool) -> str:
        target = self.module.qualifiers.get(qualifier)
        if target is None:
            self.diags.append(Diagnostic(
                "E202", f"no module is imported as `{qualifier}`", span,
                did_you_mean(qualifier, self.module.qualifiers)
                or f"import it first: `import '../{qualifier}'`"))
            return member
        declared = target.names
        key = member.lower() if relation else f"fn {member}"
        if key not in declared:
            kinds = "source or model" if relation else "function"
            names = [d.name for k, d in declared.items() if k.startswith("fn ") != relation]
            self.diags.append(Diagnostic(
                "E202", f"module `{qualifier}` declares no {kinds} `{member}`", span,
                did_you_mean(member, names)))
            return member
        return _Name(declared[key].name, span) if span is not None else declared[key].name

    def _bare(self, name: str, key: str, span: Span | None) -> str:
        listed = self.module.listed.get(name)
        if listed is not None:
            _, member, _ = listed
            return _Name(member, span) if span is not None else member
        if key in self.own or key not in self.elsewhere:
            return name
        home = self.elsewhere[key]
        qualifier = next((q for q, m in self.module.qualifiers.items() if m is home), None)
        self.diags.append(Diagnostic(
            "E203", f"`{name}` is declared in another module, `{_shown(home.root)}`", span,
            f"write `{qualifier}.{name}`, or list it: "
            f"`import '{self.module.written[qualifier]}' as {qualifier} {{ {name} }}`"
            if qualifier else "import its module to use it"))
        return name
