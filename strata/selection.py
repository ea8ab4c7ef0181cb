"""dbt-style model selection: `--select` and `--exclude` selectors, resolved against
the module's dependency graph into the model names that `--models` would name.

    stg_orders          the model
    stg_orders+         it and every model downstream (`stg_orders+1`: one level)
    +orders             it and every model upstream (`2+orders`: two levels)
    +orders+            both
    path:models/staging every model defined in a .strata file under that path
                        (relative to the module's directory; models/staging also
                        names models/staging.strata)
    tag:nightly         every model with `tags: [nightly]` (E193: no model has it)

Several selectors are a union; `--exclude` selectors are removed from it. The
selection is pure data work on `Module` (no engine), so a command only swaps the
names it gives its library call; what a command does with them is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from strata.diagnostics import did_you_mean, fail
from strata.semantics import metadata
from strata.semantics.module import Module

UNLIMITED = -1  # a depth: follow the graph to its end
METHODS = ("path", "tag")  # `method:value`; a bare value names a model
# [n]+ value +[n]: the graph operators around a value that holds no `+`
SHAPE = re.compile(r"^(?:(?P<up>\d*)\+)?(?P<value>[^+]+?)(?:\+(?P<down>\d*))?$")
SPLIT = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class Selector:
    """One selector as written, split into what it picks and how far it reaches."""

    text: str  # as the user wrote it, for messages
    method: str  # "model" | "path" | "tag"
    value: str
    up: int = 0  # levels of upstream models to add; UNLIMITED for all
    down: int = 0  # levels of downstream models to add; UNLIMITED for all


def split_selectors(values: Iterable[str]) -> list[str]:
    """`--select 'a b,c' --select d` -> [a, b, c, d]: dbt takes spaces, we take commas
    too, since `--models` taught our users commas."""
    return [word for value in values for word in SPLIT.split(value) if word]


def parse_selector(text: str, option: str = "--select") -> Selector:
    """`2+orders+` -> Selector(model, orders, up=2, down=UNLIMITED); E190 when it
    cannot be read."""
    shape = SHAPE.match(text)
    if shape is None:
        raise fail("E190", f"cannot read the selector `{text}` in {option}", None,
                   "a selector is `model`, `model+`, `+model`, `+model+`, `2+model+1`, "
                   "`path:models/staging` or `tag:nightly`")
    value = shape.group("value")
    method, _, rest = value.partition(":") if ":" in value else ("model", "", value)
    if method not in ("model", *METHODS) or not rest:
        raise fail("E190", f"cannot read the selector `{text}` in {option}: "
                   f"`{method}:` is not a selector method", None,
                   "use a model name, `path:DIR` for the models defined under DIR, or "
                   "`tag:NAME` for the models tagged NAME")
    return Selector(text, method, rest, _depth(shape.group("up")), _depth(shape.group("down")))


def _selectors(module: Module, values: list[str], option: str) -> list[Selector]:
    """The option's selectors; given but empty (`--select ''`) is E190, not every model."""
    words = split_selectors(values)
    if values and not words:
        raise fail("E190", f"{option} names no selector", None,
                   f"give selectors, e.g. {option} 'stg_orders+'; or leave {option} out")
    return [_selector(module, word, option) for word in words]


def _selector(module: Module, text: str, option: str) -> Selector:
    """A word that is exactly a model's name is that model, even when the name holds
    `+` or `:` (a backticked name may); anything else is parsed."""
    if text in module.models:
        return Selector(text, "model", text)
    return parse_selector(text, option)


def _depth(digits: str | None) -> int:
    """No `+`: 0 levels; `+`: all of them; `2+`: two."""
    if digits is None:
        return 0
    return int(digits) if digits else UNLIMITED


def resolve(module: Module, select: Iterable[str] = (),
            exclude: Iterable[str] = ()) -> list[str] | None:
    """The models `--select` minus `--exclude` pick, upstream first; None when
    neither was given (the command then means every model, as without --models).
    An unknown model is E191, a selection left empty E192."""
    select, exclude = list(select), list(exclude)
    if not select and not exclude:
        return None
    chosen = _selectors(module, select, "--select")
    dropped = _selectors(module, exclude, "--exclude")
    graph = ModelGraph.of(module)
    picked = set().union(*(graph.pick(s, "--select") for s in chosen)) if chosen \
        else set(module.order)
    picked -= set().union(*(graph.pick(s, "--exclude") for s in dropped))
    if not picked:
        raise fail("E192", "the selection picks no model: --exclude removed every model "
                   "--select picked", None,
                   "exclude fewer models, or select more; `strata graph MODULE --format "
                   "mermaid` shows what reads what")
    return [name for name in module.order if name in picked]


@dataclass
class ModelGraph:
    """What each model reads and is read by, and where it is defined: the little a
    selector needs from the module."""

    module: Module
    readers: dict[str, list[str]]  # model -> the models that read it directly

    @staticmethod
    def of(module: Module) -> ModelGraph:
        readers: dict[str, list[str]] = {name: [] for name in module.models}
        for name in module.order:
            for parent in module.models[name].models_read:
                readers.setdefault(parent, []).append(name)
        return ModelGraph(module, readers)

    def pick(self, selector: Selector, option: str) -> set[str]:
        """The selector's own models, then as far up and down as it asks."""
        seeds = self._seeds(selector, option)
        picked = set(seeds)
        picked |= self._walk(seeds, selector.up, lambda m: self.module.models[m].models_read)
        picked |= self._walk(seeds, selector.down, lambda m: self.readers.get(m, []))
        return picked

    def _seeds(self, selector: Selector, option: str) -> set[str]:
        if selector.method == "path":
            return self._under_path(selector, option)
        if selector.method == "tag":
            return self._tagged(selector, option)
        if selector.value not in self.module.models:
            raise fail("E191", f"unknown model `{selector.value}` in {option} "
                       f"`{selector.text}`", None,
                       did_you_mean(selector.value, self.module.models) or
                       f"models: {', '.join(self.module.order)}")
        return {selector.value}

    def _under_path(self, selector: Selector, option: str) -> set[str]:
        """Models whose defining file is the path or lies under it. Display paths are
        relative to the working directory, as the module was loaded."""
        root = self.module.root if self.module.root.is_dir() else self.module.root.parent
        target = (root / selector.value).resolve()
        found = {name for name, info in self.module.models.items()
                 if _within(Path(info.decl.span.file).resolve(), target)}
        if not found:
            raise fail("E192", f"`{selector.text}` in {option} picks no model: no model is "
                       f"defined under {selector.value}", None,
                       "the path is relative to the module's directory, e.g. "
                       "path:models/staging or path:models/staging.strata")
        return found

    def _tagged(self, selector: Selector, option: str) -> set[str]:
        """Models whose `tags: [...]` holds the tag; E193 when none does (a typo must
        not select nothing, nor, under --exclude, exclude nothing)."""
        found = metadata.tagged(self.module, selector.value)
        if not found:
            tags = metadata.all_tags(self.module)
            raise fail("E193", f"no model is tagged `{selector.value}` ({option} "
                       f"`{selector.text}`)", None,
                       did_you_mean(selector.value, tags)
                       or (f"tags: {', '.join(tags)}" if tags else
                           "no model has tags: give a model `tags: [nightly]`"))
        return found

    @staticmethod
    def _walk(seeds: set[str], depth: int, next_of) -> set[str]:
        """Models reached from `seeds` in at most `depth` steps (UNLIMITED: any)."""
        reached: set[str] = set()
        frontier, level = set(seeds), 0
        while frontier and (depth == UNLIMITED or level < depth):
            frontier = {n for m in frontier for n in next_of(m)} - reached - seeds
            reached |= frontier
            level += 1
        return reached


def _within(file: Path, target: Path) -> bool:
    """The file is the path, or lies under it; `models/staging` also names
    models/staging.strata (a file is a module's folder of models)."""
    return file in (target, target.with_name(target.name + ".strata")) or target in file.parents
