"""Errors as data: one Diagnostic type, one catalogue of codes, rendering apart.

Every failure a user can cause ends here as `error[Ennn]` with a span and a hint,
never as a traceback. Library code raises `StrataError` carrying diagnostics;
the CLI renders them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """A place in a source file: 1-based line and column, end exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    @staticmethod
    def of_file(file: str) -> Span:
        return Span(file, 1, 1, 1, 1)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None = None
    hint: str | None = None
    severity: str = "error"
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.span.file if self.span else None,
            "line": self.span.line if self.span else None,
            "column": self.span.column if self.span else None,
            "end_line": self.span.end_line if self.span else None,
            "end_column": self.span.end_column if self.span else None,
            "hint": self.hint,
            "notes": list(self.notes),
        }


class StrataError(Exception):
    """Raised by the library with one or more diagnostics; the CLI renders them."""

    def __init__(self, diagnostics: Diagnostic | Iterable[Diagnostic]):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("; ".join(f"{d.code}: {d.message}" for d in self.diagnostics))

    # the history entry that records the failed run this error ended, when one was
    # written (strata/engine/failures.py); `run --json` reports it
    failed_entry: str | None = None

    @property
    def code(self) -> str:
        return self.diagnostics[0].code


def fail(code: str, message: str, span: Span | None = None, hint: str | None = None,
         notes: Iterable[str] = ()) -> StrataError:
    """Build (not raise) a StrataError with a single diagnostic."""
    return StrataError(Diagnostic(code, message, span, hint, notes=tuple(notes)))


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"did you mean `{matches[0]}`?" if matches else None


# The catalogue: every code once, with what it means and an example that triggers it.
# `tests/test_error_codes.py` triggers every compile-time code and checks its span;
# docs/ERRORS.md documents every code (tests/test_errors_doc.py keeps the two equal).
CATALOGUE: dict[str, tuple[str, str]] = {
    "E001": ("unexpected token or character", "model m { from orders filter }"),
    "E002": ("the module is not valid UTF-8 text", "<binary bytes>"),
    "E003": ("unterminated string or quoted identifier", "model m { from orders filter s = 'x }"),
    "E004": ("the module declares nothing", "<empty file>"),
    "E005": ("the module path cannot be read", "strata check missing.strata"),
    "E010": ("unknown source or model", "model m { from ordrs }"),
    "E011": ("unknown column", "model m { from orders filter amont > 0 }"),
    "E012": ("ambiguous column", "two joined relations bring `name` and the left side does not"),
    "E013": ("dependency cycle between models", "model a { from b } model b { from a }"),
    "E014": ("duplicate declaration", "two models named `m`"),
    "E015": ("duplicate column name", "model m { from orders derive id = 1 }"),
    "E016": ("unknown function", "model m { from orders derive x = uper(status) }"),
    "E017": ("unknown relation qualifier", "model m { from orders filter c.id = 1 }"),
    "E018": ("duplicate property", "two `cdc_column:` lines in one model"),
    "E019": ("unknown property", "model m { from orders materialize: table }"),
    "E020": ("unknown type", "source s { id: integer }"),
    "E021": ("invalid property value", "compact_layers: many"),
    "E030": ("operand types do not fit the operator", "filter status + 1 > 0"),
    "E031": ("wrong arguments for a function", "derive x = upper(1, 2)"),
    "E032": ("non-deterministic function", "derive t = now()"),
    "E033": ("aggregate function outside `aggregate`", "derive s = sum(amount)"),
    "E034": ("a predicate must be boolean", "filter amount"),
    "E035": ("invalid cast", "derive x = cast(tags as int)"),
    "E036": ("invalid literal", "filter d > date '2024-13-45'"),
    "E037": ("`aggregate` needs an aggregate function in each item", "aggregate n = amount"),
    "E038": ("`expand` needs a list column", "expand status as s"),
    "E039": ("incompatible branch types", "case when x then 1 else 'a' end"),
    "E050": ("a model needs exactly one `from`, as its first step", "model m { select id }"),
    "E051": ("`let` after a join, expand, group, set operation or `select`",
             "join c on ... let x = 1"),
    "E052": ("set operation between relations with different columns", "union customers"),
    "E053": ("`group` without `aggregate`", "group region"),
    "E054": ("a computed `select` item needs a name", "select amount * 2"),
    "E055": ("a model reads itself", "model m { from m }"),
    "E060": ("`pin columns` contract does not match the model's output", "pin columns { id: text }"),
    "E061": ("pin unique violated", "pin unique [customer_id]"),
    "E062": ("pin not_null violated", "pin not_null [region]"),
    "E063": ("pin rows violated", "pin rows >= 1000000"),
    "E064": ("many-to-one join matched a left row more than once", "join orders on ..."),
    "E065": ("invalid pin", "pin rows between 10 and 1"),
    "E066": ("invalid test block", "a row with the wrong number of values"),
    "E067": ("pin references violated", "pin references [customer_id] -> customers [id]"),
    "E068": ("pin accepted violated", "pin accepted status in ('paid', 'void')"),
    "E069": ("pin holds violated", "pin holds amount >= 0"),
    "E070": ("the warehouse cannot be opened", "-o /nonexistent/dir/w.duckdb"),
    "E071": ("a source's table or file is missing", "source orders with no table `orders`"),
    "E072": ("a source's table does not match its declared columns", "missing or mistyped column"),
    "E073": ("unknown run id", "strata replay deadbeef"),
    "E074": ("unknown branch", "strata run --branch nope ... on a branch never created"),
    "E075": ("the warehouse is locked by another strata process", "two concurrent runs"),
    "E076": ("the run's snapshots were collected by gc", "rollback to a collected run"),
    "E077": ("verification failed: content differs from the recorded hash", "a tampered snapshot"),
    "E078": ("malformed override or unknown source in --override", "--override orders"),
    "E079": ("unknown model in --models", "--models nope"),
    "E080": ("the engine failed while executing a model", "a cast that fails on the data"),
    "E081": ("branch already exists", "strata branch create main"),
    "E082": ("invalid duration", "--older-than 30x"),
    "E083": ("the warehouse was written by an incompatible strata version", "schema version mismatch"),
    "E084": ("invalid command option value", "--watermark not-a-date on a date column"),
    "E085": ("backfill failed", "unknown run, unknown model, bad --source, pin violation"),
    "E086": ("unknown merge_strategy", "merge_strategy: merge"),
    "E087": ("append/upsert on a model with group/aggregate", "merge_strategy: append + aggregate"),
    "E088": ("cdc_column is not a real output column", "cdc_column: nope"),
    "E089": ("upsert or history without valid merge_keys",
             "merge_strategy: upsert without merge_keys"),
    "E090": ("unknown dialect", "--dialect oracle"),
    "E091": ("the dialect cannot express this", "a construct with no equivalent in the target"),
    "E092": ("an expression is nested too deeply to compile",
             "a chain of a thousand `and`s or `+`s in one expression"),
    "E093": ("build cannot write a model's file", "a directory named orders.sql in -o DIR"),
    "E094": ("an object strata did not create holds the name of a model's live view",
             "a table main.v_orders made by hand, then strata run"),
    "E096": ("the run's snapshot is quarantined: verify found it damaged",
             "rollback to a run whose snapshot's storage was altered"),
    "E097": ("a window function outside the derive of a window step",
             "row_number() in a plain derive"),
    "E098": ("a window step without a derive that computes over it",
             "window by customer_id, then select"),
    "E099": ("an ordered computation on a window without order",
             "row_number() or a rows frame on a window with no order"),
    "E100": ("take without sort", "take 10 with no sort before it"),
    "E101": ("distinct by without order", "distinct by id"),
    "E102": ("count_distinct over a window", "window ... derive n = count_distinct(x)"),
    "E103": ("a range frame with an offset needs one order key",
             "range between 1 preceding ... on two order keys"),
    "E104": ("a sub-pipeline joined without a name", "join (from orders | ...) on ..."),
    "E105": ("a window frame that starts after it ends",
             "rows between current row and 1 preceding"),
    "E106": ("a SQL clause where a Strata step goes",
             "left join, where, order by, limit, group by, select ... from"),
    "E107": ("`::` is not a cast", "amount::numeric(16,2)"),
    "E108": ("SQL's over (...) window clause", "row_number() over (partition by k order by t)"),
    "E109": ("count(distinct x) is written count_distinct(x)", "count(distinct customer_id)"),
    "E110": ("init's directory is not empty", "strata init DIR on a DIR holding files"),
    "E111": ("first_value/last_value over a range frame with an offset",
             "window order t range between 1 preceding and current row then first_value(x)"),
    "E112": ("join_cross with a condition", "join_cross customers on customers.id = customer_id"),
    "E113": ("a range frame offset on an order key that is not a number",
             "window order ts range between 1 preceding and current row"),
    "E114": ("unknown on_drift", "on_drift: retry"),
    "E115": ("a lookback that does not fit the cdc column", "lookback: 3 days on an int cdc"),
    "E116": ("delete_when that is not a row condition", "delete_when: count(id) > 0"),
    "E117": ("an incremental model drifted from a full refresh, with on_drift: fail",
             "a row changed at or below the watermark without moving its cdc column"),
    "E118": ("a merge property on a strategy it does not apply to",
             "lookback: 3 days with merge_strategy: append"),
    "E119": ("rollback to a failed run", "strata rollback ID of a run that failed on a model"),
    "E120": ("replay --execute of a failed run",
             "strata replay ID --execute of a run that failed on a model"),
    "E121": ("a live view cannot change its columns while another view reads it",
             "PostgreSQL: a user's view over main.v_orders when orders' columns change type"),
    "E130": ("a symbolic link where strata writes, reads back or deletes its files",
             "sql_snapshots/duckdb committed as a link to another folder"),
    "E140": ("publication waited too long for sessions reading the warehouse",
             "PostgreSQL: a session idle in a transaction after reading main.v_orders"),
    "E150": ("strata diff --base REF: the module is not in a git repository",
             "strata diff /tmp/models --base main, /tmp/models outside any repository"),
    "E151": ("strata diff --base REF: REF names no revision", "--base origin/mian"),
    "E152": ("strata diff --base REF: the module is not in that revision",
             "--base HEAD~3 for a module added since"),
    "E153": ("strata diff: the base does not compile", "--base a commit with an error"),
    "E154": ("strata diff: arguments that name no comparison",
             "strata diff models (no --base); strata diff a b (no -o)"),
    "E155": ("strata diff -o: the data of a module that does not compile",
             "strata diff models --base main -o w.duckdb with an unknown column"),
    "E156": ("strata diff -o: no published snapshot to compare with",
             "strata diff models --base main -o new.duckdb, nothing run there yet"),
    "E160": ("the editor stopped looking for the module's files",
             "strata lsp: a .strata file in a folder of more than 2,000 subfolders"),
    "E170": ("a `with` relation named twice, or like a source or model",
             "two `with paid = (...)` in one model"),
    "E171": ("a `with` relation the model never reads", "with paid = (...) and no `from paid`"),
    "E172": ("`with` relations that read each other", "with a = (from b) with b = (from a)"),
    "E173": ("a `with` relation after the model's first step", "from orders then with x = (...)"),
    "E174": ("a function named like a built-in function", "fn sum(x: int) -> int = x"),
    "E175": ("a function that calls itself, directly or through others",
             "fn f(x: int) -> int = f(x - 1)"),
    "E176": ("a function's body does not fit its declared return type",
             "fn f(x: int) -> int = 'a'"),
    "E177": ("a function's parameter declared twice", "fn f(x: int, x: text) -> int = 1"),
    # issue 40, round 2: rows from nothing, grouping sets, arg_min/arg_max
    "E180": ("a bound of range reads a column", "from range(1, id)"),
    "E181": ("a range step that is 0 or of the wrong kind",
             "range(1, 10, 0); range(date '2024-01-01', date '2024-02-01', 1)"),
    "E182": ("a range that gives no rows", "range(10, 1)"),
    "E183": ("a range of more than 10,000,000 rows", "range(0, 100000000)"),
    "E184": ("an interval that is not a range's step, or not an interval",
             "derive x = interval '1 day'; interval 'two days'"),
    "E185": ("a relation called like a function that is not range", "from generate_series(1, 3)"),
    "E186": ("grouping() outside a rollup or cube, or not of one of its keys",
             "group status then aggregate g = grouping(status)"),
    "E187": ("a grouping other than rollup or cube", "group grouping_sets(a, b)"),
    "E188": ("a recursive relation", "union (from this_model | join ...); with recursive"),
    "E189": ("arg_min/arg_max over a window",
             "window by k order t then derive a = arg_min(x, y)"),
    "E190": ("a selector that cannot be read", "--select '++orders'; --select 'owner:me'"),
    "E191": ("unknown model in --select or --exclude", "--select 'stg_order+'"),
    "E192": ("a selection that picks no model",
             "--select path:models/nowhere; --select orders --exclude orders"),
    "E193": ("a tag: selector no model carries", "--select tag:nightly"),
    "E194": ("--models with --select or --exclude", "--models orders --select 'orders+'"),
    "E195": ("a model with no live view on the branch", "strata show region_sale -o w.duckdb"),
    "E196": ("SQL that cannot be read", "strata sql -o w.duckdb 'select ('"),
    "E197": ("not one query that only reads", "strata sql -o w.duckdb 'delete from t'"),
    "E198": ("the warehouse refused the query", "strata sql -o w.duckdb 'select * from nope'"),
    # issue 40, item 6: modules importing modules; item 9: descriptions
    "E199": ("a cycle of imports", "a.strata: import '../b'; b.strata: import '../a'"),
    "E200": ("an imported name that clashes", ("import '../shared' (declares stg_orders) "
             "beside model stg_orders")),
    "E201": ("a module that cannot be imported", "import '../nowhere'"),
    "E202": ("a name an imported module does not declare", "from shared.nope"),
    "E203": ("an imported name written bare without being listed",
             "import '../shared' as shared; from stg_orders"),
    "E204": ("an import whose path gives no qualifier", "import '../my-shared'"),
    "E205": ("a description, owner or tags of the wrong kind", "description: orders; tags: x"),
    "E206": ("a column description naming no output column, or twice", "column nope { ... }"),
    # merge_strategy history (issue 40)
    "E210": ("a history with a cdc_column", "merge_strategy: history with cdc_column: updated_at"),
    "E211": ("a history model with its own valid_from or valid_to",
             "merge_strategy: history on a model that selects valid_to"),
    "E212": ("a full refresh that would start a history over",
             "strata run m.strata --full-refresh (without --reset-history)"),
    "E213": ("a backfill that would recompute a history", "strata backfill m.strata RUN ..."),
    "E214": ("a history whose columns changed", "a column added to a history model"),
    "E220": ("strata fmt given a file that is not a .strata file", "strata fmt notes.txt"),
    "E221": ("strata fmt would change a file's tokens (a bug: the file is kept)",
             "a layout that moved a line break"),
    "E222": ("strata fmt cannot write a file", "strata fmt read_only.strata"),
}
