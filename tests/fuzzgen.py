"""Inputs for the fuzz tests (issue 14, hostile input), derived from the language's
own definitions so that what the language grows, the fuzzing covers:

- `derive`: random derivations of strata/syntax/grammar.lark, read through Lark's
  compiled rules and terminals; every terminal's text comes from its own pattern
  (`sample_regex`), so a new rule, keyword or token is fuzzed without a change here;
- `mutate`: token- and character-level mutations of the valid and invalid modules
  the repository already holds (`corpus`: examples/, tests/golden/);
- `SHAPES`: inputs that grow along one axis (blank or comment runs before `}` `)`
  `,` `and`, deep nesting, long literals and names, huge integers, many models,
  steps, columns, rows, errors), for the linear-time checks;
- `budget` and `run_bounded`: the time every input is allowed, a + b*len(input),
  and one CLI call held to it (a forked `strata` process, tests/cli_forkserver.py).

Every generator takes `choose(n) -> int in [0, n)`: hypothesis drives it in the
tests (so failures shrink), `random.Random(seed).randrange` in the self-checks.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from re import _constants as c  # the stdlib's regex opcodes and parser
from re import _parser

from enginehelpers import strata
from lark import Lark

from strata.syntax.parser import GRAMMAR_PATH

ROOT = Path(__file__).resolve().parent.parent
Choose = Callable[[int], int]

# ---------------------------------------------------------------- the time bound
# Every input must end within BUDGET_BASE + BUDGET_PER_CHAR * len(input) seconds of
# CPU time (user + system: what the work costs, whatever else the machine runs).
# The base covers a process start and a first grammar load on a slow 2-core CI
# machine (~0.1 s here through the fork server, ~0.5 s as a fresh interpreter). The
# slowest linear work measured is a module of many models, ~36 us per character
# (parse, resolve, SQL); 150 us leaves 4x for a slow machine. A quadratic pass
# blows through it at scale: 20,000 comment lines before a `,` took 15 s when the
# lexer rescanned the run (budget: 2 + 0.15 * 100 KB = 17 s; at 50,000 lines the
# quadratic run needs ~90 s against a 40 s budget). Linear growth itself is checked
# separately, by the n-vs-8n ratio of the SHAPES.
BUDGET_BASE = 2.0
BUDGET_PER_CHAR = 150e-6


def budget(size: int) -> float:
    """CPU seconds an input of `size` characters may take, from start to exit."""
    return BUDGET_BASE + BUDGET_PER_CHAR * size


# ---------------------------------------------------------------- random regex text
# Characters a negated set or `.` may produce: the hostile ones a lexer must survive.
_POOL = "aZ_09 \t\n\r\x0b\x0c'`\"\\-;,{}()[]<>=!|.%*/+:é☃\u2028\u202e\ufeff\x1b\x7f𝔘"
_MANY = 3  # a `*` or `+` repeats up to this often, or (one draw in 8) up to 40 times
_CATEGORIES = {"CATEGORY_DIGIT": str.isdigit, "CATEGORY_SPACE": str.isspace,
               "CATEGORY_WORD": lambda c: c.isalnum() or c == "_"}


def _in_category(category, ch: str) -> bool:
    name = str(category)
    negate = name.startswith("CATEGORY_NOT_")
    test = _CATEGORIES.get(name.replace("NOT_", ""), lambda c: False)
    return test(ch) != negate


def _set_matches(items, ch: str) -> bool:
    negate, hit = False, False
    for op, arg in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            hit = hit or ord(ch) == arg
        elif op is c.RANGE:
            hit = hit or arg[0] <= ord(ch) <= arg[1]
        elif op is c.CATEGORY:
            hit = hit or _in_category(arg, ch)
    return hit != negate


_FITS: dict[int, tuple[list, list[str]]] = {}  # id(set) -> (the set, its characters)


def _set_char(items, choose: Choose) -> str:
    if id(items) not in _FITS:
        _FITS[id(items)] = (items, _set_chars(items))  # the set kept alive with its id
    fits = _FITS[id(items)][1]
    return fits[choose(len(fits))] if fits else ""


def _set_chars(items) -> list[str]:
    seeds = [chr(arg) for op, arg in items if op is c.LITERAL]
    seeds += [chr(arg[0]) for op, arg in items if op is c.RANGE]
    seeds += [chr(arg[1]) for op, arg in items if op is c.RANGE]
    return [ch for ch in dict.fromkeys(seeds + list(_POOL)) if _set_matches(items, ch)]


def _emit(parsed, choose: Choose, out: list[str]) -> None:
    for op, arg in parsed:
        if op is c.LITERAL:
            out.append(chr(arg))
        elif op is c.NOT_LITERAL:
            fits = [ch for ch in _POOL if ord(ch) != arg]
            out.append(fits[choose(len(fits))])
        elif op is c.ANY:
            out.append(_POOL[choose(len(_POOL))])
        elif op is c.IN:
            out.append(_set_char(arg, choose))
        elif op is c.BRANCH:
            branches = arg[1]
            _emit(branches[choose(len(branches))], choose, out)
        elif op is c.SUBPATTERN:
            _emit(arg[-1], choose, out)
        elif op is c.ATOMIC_GROUP:
            _emit(arg, choose, out)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, high, body = arg
            most = min(high, low + (40 if choose(8) == 0 else _MANY))
            for _ in range(low + choose(most - low + 1)):
                _emit(body, choose, out)
        # AT, ASSERT, ASSERT_NOT, GROUPREF: nothing to emit; the result may then not
        # match (a `_SEP` before `and`), which is one more hostile input.


@cache
def _parsed(pattern: str):
    return _parser.parse(pattern)


def sample_regex(pattern: str, choose: Choose) -> str:
    """Some text the regex `pattern` describes (zero-width assertions ignored)."""
    out: list[str] = []
    _emit(_parsed(pattern), choose, out)
    return "".join(out)


# ---------------------------------------------------------------- the grammar
@dataclass(frozen=True)
class Grammar:
    """grammar.lark as Lark compiles it: `?rule`s, `x*` and `[x]` become plain rules."""

    rules: dict[str, tuple[tuple[str, ...], ...]]  # nonterminal -> its expansions
    literals: dict[str, str]  # terminal -> its one spelling ("model", "{")
    patterns: dict[str, str]  # terminal -> its regex (NAME, STRING, _SEP, ...)
    ignored: tuple[str, ...]  # what may stand between tokens (comments, blank lines)
    shortest: dict[str, tuple[tuple[str, ...], ...]]  # the expansions of least height


def _heights(rules: dict[str, tuple[tuple[str, ...], ...]]) -> dict[str, int]:
    inf = 10**9
    height = dict.fromkeys(rules, inf)
    changed = True
    while changed:
        changed = False
        for name, expansions in rules.items():
            best = min(1 + max((height[s] for s in e if s in rules), default=0)
                       for e in expansions)
            if best < height[name]:
                height[name], changed = best, True
    return height


@lru_cache(maxsize=1)
def grammar() -> Grammar:
    lark = Lark(GRAMMAR_PATH.read_text(), parser="lalr", lexer="contextual")
    rules: dict[str, list[tuple[str, ...]]] = {}
    for rule in lark.rules:
        rules.setdefault(rule.origin.name, []).append(tuple(s.name for s in rule.expansion))
    literals, patterns = {}, {}
    for term in lark.terminals:
        if term.pattern.type == "str":
            literals[term.name] = term.pattern.value
        else:
            patterns[term.name] = term.pattern.value
    frozen = {k: tuple(v) for k, v in rules.items()}
    height = _heights(frozen)

    def of(e: tuple[str, ...]) -> int:
        return 1 + max((height[s] for s in e if s in frozen), default=0)

    shortest = {k: tuple(e for e in v if of(e) == height[k]) for k, v in frozen.items()}
    return Grammar(frozen, literals, patterns, tuple(lark.lexer_conf.ignore), shortest)


# Names the corpus uses, so a derivation's references sometimes resolve; a clean
# derivation takes only these, a noisy one also odd names and whatever NAME's and
# STRING's patterns allow.
VOCABULARY = ["s", "m", "x", "y", "id", "orders", "amount", "status", "int", "text",
              "double", "date", "timestamp", "decimal", "count", "sum", "upper", "file",
              "raw", "day", "merge_strategy", "upsert", "append", "merge_keys",
              "cdc_column", "`odd name`"]
ODD_NAMES = ["``", "from", "model", "é", "`\n`", "`\x1b[31m`", "_"]
CLEAN_STRINGS = ["'a'", "''", "'it''s'", "'2024-01-01'", "'2024-01-01 12:00:00'", "'day'"]
# Between two tokens: mostly a space; noisy derivations also get line ends, tabs and
# whatever the grammar ignores (comments, blank lines), which may end a statement.
_SPACES = [" ", " ", " ", " ", " ", "  ", "\t", "\n"]


def terminal_text(g: Grammar, name: str, noisy: bool, choose: Choose) -> str:
    if name in g.literals:
        return g.literals[name]
    if name == "NAME" and (not noisy or choose(2) == 0):
        return VOCABULARY[choose(len(VOCABULARY))]
    if name == "NAME" and choose(4) == 0:
        return ODD_NAMES[choose(len(ODD_NAMES))]
    if name == "STRING" and not noisy:
        return CLEAN_STRINGS[choose(len(CLEAN_STRINGS))]
    return sample_regex(g.patterns[name], choose)


def _gap(g: Grammar, noisy: bool, choose: Choose) -> str:
    if not noisy or choose(4):
        return " "
    if choose(3) == 0 and g.ignored:
        ignored = g.ignored[choose(len(g.ignored))]
        text = g.literals.get(ignored) or sample_regex(g.patterns[ignored], choose)
        return f" {text}\n"  # a comment ends at the line end
    return _SPACES[choose(len(_SPACES))]


def derive(choose: Choose, size: int = 60, start: str = "start",
           used: set | None = None) -> str:
    """A random derivation of `start` of about `size` tokens. Each rule hands its
    budget, less the tokens it writes itself, in equal shares to the rules it
    expands to, so the last declaration of a module gets choices as free as the
    first; a rule without budget (or past 20 * size expansions in all) takes its
    shortest way out, so every derivation ends. `used` collects the terminals and
    the (rule, expansion) pairs taken."""
    g = grammar()
    noisy = choose(2) == 0
    tokens: list[str] = []
    stack: list[tuple[str, float]] = [(start, size)]
    steps = 0
    while stack:
        symbol, share = stack.pop()
        if symbol not in g.rules:
            tokens.append(terminal_text(g, symbol, noisy, choose))
            if used is not None:
                used.add(symbol)
            continue
        options = g.rules[symbol]
        steps += 1
        if share <= 0 or steps >= 20 * size:
            options = g.shortest[symbol]
        expansion = options[choose(len(options))]
        if not expansion and len(options) > 1 and choose(8):
            expansion = next(e for e in options if e)  # `decl*`: seldom none at all
        if used is not None:
            used.add((symbol, expansion))
        rules = sum(1 for s in expansion if s in g.rules)
        child = (share - (len(expansion) - rules)) / max(1, rules)
        stack.extend((s, child) for s in reversed(expansion))
    out = []
    for token in tokens:
        out.append(token)
        out.append(_gap(g, noisy, choose))
    return "".join(out)


# ---------------------------------------------------------------- mutations of the corpus
TOKEN = re.compile(r"\s+|--[^\n]*|'(?:[^']|'')*'|`[^`]*`|\w+|\|\||[<>!]=|<>|.", re.DOTALL)
# Bytes and runs a mutation may drop anywhere: control and format characters, line
# ends of every kind, a BOM, deep brackets, long digit runs, blank and comment runs.
HOSTILE = ["\x00", "\x01", "\x1b[31m", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\u2028",
           "\ufeff", "\u202e", "\u200b", "\t", "\n" * 40, "\n-- c" * 40 + "\n", "(" * 40,
           ")" * 40, "[" * 40, "9" * 40, "1e999", "-0", "'", "`", "--", "\\", "é", "𝔘",
           "'" + "x" * 300 + "'", "a" * 300, "`" + "\n" * 3 + "`", ";" * 10, ",,", "{}"]


@lru_cache(maxsize=1)
def corpus() -> dict[str, str]:
    """Every .strata file of the repository's examples and golden tests, by path;
    plus each directory module as one text (its files joined)."""
    found: dict[str, str] = {}
    for base in (ROOT / "examples", ROOT / "tests" / "golden"):
        for path in sorted(base.rglob("*.strata")):
            found[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for example in sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir()):
        parts = [found[k] for k in sorted(found) if k.startswith(f"examples/{example.name}/")]
        found[f"examples/{example.name} (joined)"] = "\n".join(parts)
    return found


@lru_cache(maxsize=1)
def corpus_tokens() -> tuple[str, ...]:
    tokens = {t for text in corpus().values() for t in TOKEN.findall(text) if t.strip()}
    return tuple(sorted(tokens))


def mutate(text: str, choose: Choose, rounds: int = 3) -> str:
    """`text` with up to `rounds` edits: tokens deleted, inserted (from the corpus),
    swapped, replaced, duplicated as a span; a hostile run dropped in; one character
    replaced; the text cut short."""
    tokens = TOKEN.findall(text)
    donors = corpus_tokens()
    for _ in range(1 + choose(rounds)):
        if not tokens:
            tokens = [donors[choose(len(donors))]]
        i = choose(len(tokens))
        op = choose(8)
        if op == 0:
            del tokens[i]
        elif op == 1:
            tokens.insert(i, donors[choose(len(donors))])
        elif op == 2:
            j = choose(len(tokens))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == 3:
            tokens[i] = donors[choose(len(donors))]
        elif op == 4:
            j = min(len(tokens), i + 1 + choose(30))
            tokens[i:i] = tokens[i:j]
        elif op == 5:
            tokens.insert(i, HOSTILE[choose(len(HOSTILE))])
        elif op == 6 and tokens[i]:
            k = choose(len(tokens[i]))
            ch = _POOL[choose(len(_POOL))]
            tokens[i] = tokens[i][:k] + ch + tokens[i][k + 1:]
        else:
            tokens = tokens[:i]
    return "".join(tokens)


# ---------------------------------------------------------------- inputs that grow
@dataclass(frozen=True)
class Shape:
    """An input family: `build(n)` grows one feature linearly in n. `n` is the small
    size: n and 8n are compared, 8n sized so a quadratic pass shows plainly."""

    name: str
    build: Callable[[int], str]
    n: int


_HEAD = "source s { x: int, y: text }\n"


def _model(body: str) -> str:
    return f"{_HEAD}model m {{\n  from s\n{body}\n}}\n"


SHAPES = [
    # runs of blank or comment lines before a token that continues the statement
    Shape("blank_lines_before_rbrace", lambda n: _model("  select x" + "\n" * n), 2500),
    Shape("comment_lines_before_rbrace", lambda n: _model("  select x" + "\n  -- c" * n), 2500),
    Shape("comment_lines_before_rpar",
          lambda n: _model("  filter (x > 1" + "\n  -- c" * n + "\n  )"), 2500),
    Shape("blank_lines_before_comma", lambda n: _model("  select x" + "\n" * n + "  , y"), 2500),
    Shape("comment_lines_before_and",
          lambda n: _model("  filter x > 1" + "\n  -- c" * n + "\n  and y = 'a'"), 2500),
    Shape("blank_lines_between_models",
          lambda n: _HEAD + "model a { from s }" + "\n" * n + "model b { from a }\n", 2500),
    # deep nesting
    Shape("nested_parentheses", lambda n: _model("  derive z = " + "(" * n + "x" + ")" * n), 40),
    Shape("nested_lists", lambda n: _model("  derive z = " + "[" * n + "1" + "]" * n), 40),
    Shape("nested_case", lambda n: _model(
        "  derive z = " + "case when x > 1 then " * n + "1" + " else 0 end" * n), 40),
    Shape("long_and_chain", lambda n: _model("  filter " + " and ".join(["x > 1"] * n)), 400),
    # long literals and names
    Shape("long_string_literal", lambda n: _model(f"  derive z = '{'a' * n}'"), 200_000),
    Shape("long_string_with_quotes", lambda n: _model(f"  derive z = '{chr(39) * 2 * n}'"),
          100_000),
    Shape("long_quoted_name", lambda n: _model(f"  derive `{'n' * n}` = 1"), 100_000),
    Shape("long_identifier", lambda n: _model(f"  derive {'n' * n} = 1"), 100_000),
    Shape("long_comment_line", lambda n: _model("  -- " + "c" * n + "\n  select x"), 200_000),
    Shape("huge_integer", lambda n: _model(f"  derive z = {'9' * n}"), 2_000),
    Shape("huge_decimal", lambda n: _model(f"  derive z = 0.{'9' * n}"), 2_000),
    Shape("huge_exponent", lambda n: _model(f"  derive z = 1e{'9' * n}"), 2_000),
    Shape("huge_pin_rows", lambda n: _model(f"  pin rows >= {'9' * n}"), 2_000),
    Shape("huge_type_argument", lambda n: "source s { x: decimal(" + "9" * n + ", 2) }\n"
          "model m { from s }\n", 2_000),
    # many things
    Shape("many_models", lambda n: _HEAD + "".join(
        f"model m{i} {{ from s }}\n" for i in range(n)), 150),
    Shape("chain_of_models", lambda n: _HEAD + "model m0 { from s }\n" + "".join(
        f"model m{i} {{ from m{i - 1} }}\n" for i in range(1, n)), 150),
    Shape("many_steps", lambda n: _model("".join(
        f"  derive c{i} = x + {i}\n" for i in range(n))), 500),
    Shape("many_columns", lambda n: "source s {\n" + "".join(
        f"  c{i}: int\n" for i in range(n)) + "}\nmodel m { from s }\n", 500),
    Shape("many_select_items", lambda n: _model("  select " + ", ".join(
        f"x + {i} as c{i}" for i in range(n))), 300),
    Shape("many_test_rows", lambda n: _HEAD + "model m { from s }\ntest t {\n  given s {\n"
          "    x, y\n" + "".join(f"    {i}, 'a'\n" for i in range(n)) + "  }\n"
          "  expect m {\n    x\n    1\n  }\n}\n", 500),
    Shape("many_errors", lambda n: _HEAD + "".join(
        f"model m{i} {{ from s; select nope{i} }}\n" for i in range(n)), 150),
    Shape("many_syntax_errors", lambda n: _HEAD + "".join(
        f"model m{i} {{ from s; select , }}\n" for i in range(n)), 150),
    Shape("error_at_end_of_a_long_line", lambda n: _model(
        "  derive " + ", ".join(f"c{i} = x" for i in range(n)) + ", d = nope"), 300),
]


# ---------------------------------------------------------------- one CLI call, bounded
HANG_FACTOR = 10


@dataclass(frozen=True)
class Outcome:
    args: tuple[str, ...]
    code: int
    out: str
    err: str
    seconds: float  # CPU seconds, user + system
    limit: float

    def __str__(self) -> str:
        return (f"strata {' '.join(repr(a) if len(a) < 80 else repr(a[:80]) + '...' for a in self.args)}"
                f"\n exit {self.code} in {self.seconds:.2f} CPU s (budget {self.limit:.2f}s)"
                f"\n stdout: {self.out[-1500:]}\n stderr: {self.err[-1500:]}")


@cache
def _warm(cwd: Path) -> None:
    """Start the fork server (a one-off second of imports) outside any timed call."""
    strata("--version", cwd=cwd, check=True)


def run_bounded(args: list[str], cwd: Path, size: int, env: dict | None = None) -> Outcome:
    """`strata ARGS` in its own process, held to its budget in CPU seconds (user +
    system, the process's own: a loaded machine stretches the wall clock, not this).
    Killed when it has not answered after HANG_FACTOR times its budget of wall clock,
    so a hang ends the test instead of the CI job; that guard is generous, since a
    busy machine may run a healthy call at a fraction of a core."""
    _warm(cwd)
    limit = budget(size)
    try:
        proc = strata(*args, cwd=cwd, env=env, timeout=HANG_FACTOR * limit + 10)
    except subprocess.TimeoutExpired:
        return Outcome(tuple(args), -14, "", "(killed: no answer)", float("inf"), limit)
    return Outcome(tuple(args), proc.returncode, proc.stdout, proc.stderr,
                   proc.cpu_seconds, limit)


# a rendered diagnostic, or its --json form
CODED = re.compile(r"error\[E(\d{3})\]|\"code\": \"E(\d{3})\"")
# click's own refusals of an option value (exit 2): `Usage: ...` then `Error: ...`
USAGE = re.compile(r"^Error: ", re.MULTILINE)


def assert_coded(outcome: Outcome, usage_ok: bool = False) -> None:
    """Exit 0, or exit 1 with a catalogued `error[Ennn]` (never E000), or (for option
    values, `usage_ok`) click's exit-2 usage error; no traceback; within budget."""
    text = outcome.out + outcome.err
    assert "Traceback (most recent call last)" not in text, outcome
    codes = {a or b for a, b in CODED.findall(text)}
    assert "000" not in codes, outcome
    allowed = (0, 1, 2) if usage_ok else (0, 1)
    assert outcome.code in allowed, outcome
    if outcome.code == 1:
        assert codes, outcome
    if outcome.code == 2:
        assert USAGE.search(outcome.err), outcome
    assert outcome.seconds <= outcome.limit, outcome
