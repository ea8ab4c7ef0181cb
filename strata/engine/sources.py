"""Sources at run time: which table (or file) each one reads, through overrides;
their contract checked before anything is written; their data fingerprinted.

Everything runs through the warehouse's engine adapter (a DuckDB connection is
taken too: `_as_adapter`). A file the engine cannot read in place (PostgreSQL; a
CSV on Spark) is read here with an in-memory DuckDB, fingerprinted there, and loaded
once into `strata_internal.src_<source>_<fingerprint>` (`prepare`): the same data is
the same table, never loaded twice. The binding's `relation` stays the file (what
the replay recipe records and merges compare); `read` is the table the engine reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dialects import duckdb as duck
from strata.diagnostics import did_you_mean, fail
from strata.engine.adapters.base import INTERNAL, Adapter, Relation
from strata.engine.fingerprints import RowHash, row_hash
from strata.engine.markers import Recorded, files_marker, hash_key
from strata.semantics.checks import types_fit
from strata.semantics.module import Module, SourceInfo
from strata.semantics.types import Type
from strata.sqlgen.names import table
from strata.textsafe import (
    backticked,
    escape_unprintable,
    first_line,
    is_plain,
    lines,
    shown_name,
)


@dataclass(frozen=True)
class SourceBinding:
    name: str
    relation: exp.Expression  # FROM item, without alias
    shown: str  # what the user reads in messages: a table name or a file path
    override: str | None
    # the relation the engine reads, when not `relation` itself (a file loaded into a
    # table of the warehouse: see `prepare`)
    read: exp.Expression | None = None

    @property
    def engine_relation(self) -> exp.Expression:
        return self.read if self.read is not None else self.relation


def parse_overrides(values: list[str] | tuple[str, ...], module: Module,
                    code: str = "E078", flag: str = "--override") -> dict[str, str]:
    """`s=t` pairs → {source: table}. Malformed pairs and unknown sources are coded errors.

    A source's name may hold `=`: quoted as the language quotes it (`` `a=b`=t ``),
    or unquoted and split at the last `=` that leaves a known source on its left;
    when two places would, the pair is ambiguous and must be quoted."""
    out: dict[str, str] = {}
    for raw in values:
        source, target = _override_pair(raw, module, code, flag)
        if source not in module.sources:
            raise fail(code, f"{flag} names unknown source {backticked(source)}", None,
                       did_you_mean(source, module.sources) or
                       f"sources: {', '.join(map(shown_name, module.sources)) or '(none)'}")
        if source in out and out[source] != target:
            raise fail(code, f"{flag} points source {backticked(source)} at two tables: "
                       f"{backticked(out[source])} and {backticked(target)}", None,
                       "give one per source")
        out[source] = target
    return out


def _override_pair(raw: str, module: Module, code: str, flag: str) -> tuple[str, str]:
    """(source, table) of one `source=table`: the source may be quoted with backticks;
    unquoted, see `parse_overrides`."""
    malformed = fail(code, f"malformed {flag} {_shown_arg(raw)}", None,
                     f"write {flag} source=table, e.g. {flag} orders=orders_fixed; quote a "
                     f"source whose name holds `=` with backticks: {flag} '`a=b`=table'")
    text = raw.strip()
    if text.startswith("`"):
        end = text.find("`", 1)
        source, rest = text[1:end], text[end + 1:].lstrip()
        if end < 0 or not source or not rest.startswith("=") or not rest[1:].strip():
            raise malformed
        return source, rest[1:].strip()
    cuts = [i for i, ch in enumerate(text) if ch == "="]
    pairs = [(text[:i].strip(), text[i + 1:].strip()) for i in reversed(cuts)]
    pairs = [(s, t) for s, t in pairs if s and t]
    known = [(s, t) for s, t in pairs if s in module.sources]
    if len(known) > 1:
        readings = " or ".join(f"{flag} '`{s}`={t}'" for s, t in known)
        raise fail(code, f"ambiguous {flag} {_shown_arg(raw)}: more than one of its `=` "
                   "leaves a known source on its left", None,
                   f"quote the source with backticks: {readings}")
    if known:
        return known[0]
    if not pairs:
        raise malformed
    return pairs[-1]  # no known source at any `=`: the first one's left side is unknown


def _shown_arg(raw: str) -> str:
    """A flag's value in a message: between backticks, or quotes when it holds one."""
    return backticked(raw) if "`" not in raw else "'" + escape_unprintable(raw) + "'"


def override_text(source: str, target: str) -> str:
    """`source=table` as `--override` and `--source` read it back: a source not plain
    (one holding `=`, a space, ...) between backticks."""
    return f"{source if is_plain(source) else '`' + source + '`'}={target}"


def bind_source(src: SourceInfo, override: str | None) -> SourceBinding:
    if override is not None:
        parts = override.split(".")
        return SourceBinding(src.name, table(*parts), override, override)
    if src.file is not None:
        path = str(src.file)
        relation = duck.DIALECT.file_source(path, src.name, src.file_types())
        return SourceBinding(src.name, relation, path, None)
    return SourceBinding(src.name, table(*src.physical), ".".join(src.physical), None)


def moved_relations(module: Module, read_then: dict[str, str]) -> dict[str, str]:
    """source -> what it reads now, for the sources whose relation (without overrides)
    differs from what a past run read (`read_then`, its replay recipe): a file source
    pointed at another path, say. Needs no data, so `plan` can say it."""
    moved = {}
    for name, then in read_then.items():
        src = module.sources.get(name)
        if src is not None:
            binding = bind_source(src, None)
            if relation_sql(binding) != then:
                moved[name] = binding.shown
    return moved


def relation_sql(binding: SourceBinding) -> str:
    """The relation as DuckDB text: what the replay recipe records and what merges
    compare with the relation an earlier run read (a loaded file is its file)."""
    return binding.relation.sql(dialect="duckdb")


def engine_relation_sql(binding: SourceBinding) -> str:
    """The relation the engine reads, as DuckDB text (pins parse it back to a tree)."""
    return relation_sql(binding) if binding.read is None else binding.read.sql(dialect="duckdb")


def _as_adapter(con) -> Adapter:
    """An adapter, or a DuckDB connection (backfill's callers) wrapped in one."""
    if isinstance(con, Adapter):
        return con
    from strata.engine.adapters.duckdb import DuckDBAdapter
    from strata.engine.locations import DuckDBFile

    return DuckDBAdapter(DuckDBFile(""), con)


def _describe(ad: Adapter, relation: exp.Expression) -> list[tuple[str, str]]:
    return ad.query_columns(exp.select(exp.Star()).from_(relation.copy()))


def local_reader(ad: Adapter, src: SourceInfo, binding: SourceBinding) -> Adapter | None:
    """An in-memory DuckDB for a file source the warehouse's engine cannot read in
    place (None when it can, or when an override points the source at a table)."""
    if src.file is None or binding.override is not None or ad.reads_file(str(src.file)):
        return None
    from strata.engine.adapters.duckdb import DuckDBAdapter

    return DuckDBAdapter.memory()


def reference_reader(ad: Adapter, src: SourceInfo, binding: SourceBinding) -> Adapter | None:
    """An in-memory DuckDB to fingerprint a file source with, on an engine whose own
    fingerprint of a file would differ (another row hash, other type names: Spark read
    examples/shop's Parquet file to another run id); None on DuckDB, and for a source
    that is a table. The same file then gives the same run id on every warehouse, at
    the cost of a second read of the file where the engine reads it in place."""
    if src.file is None or binding.override is not None or ad.dialect.fingerprints_files:
        return None
    from strata.engine.adapters.duckdb import DuckDBAdapter

    return DuckDBAdapter.memory()


def in_place(ad: Adapter, src: SourceInfo, binding: SourceBinding) -> SourceBinding:
    """The binding of a file the engine reads in place, spelled as the engine reads it
    (Spark: parquet.`file:/...`; DuckDB: the binding itself)."""
    if binding.read is not None or src.file is None or binding.override is not None \
            or not ad.reads_file(str(src.file)):
        return binding
    read = ad.dialect.file_source(str(src.file), src.name, src.file_types())
    if read == binding.relation:
        return binding
    return SourceBinding(binding.name, binding.relation, binding.shown, binding.override, read)


def check_contract(con, src: SourceInfo, binding: SourceBinding) -> list[tuple[str, str]]:
    """The source's real schema, after checking it holds every declared column with a
    fitting type (E071 missing table/file, E072 missing or mistyped column)."""
    ad = _as_adapter(con)
    if src.file is not None and binding.override is None and not src.file.exists():
        raise fail("E071", f"source `{src.name}`: file `{binding.shown}` does not exist",
                   src.decl.span, "fix the path; it is relative to the declaring .strata file")
    local = local_reader(ad, src, binding) if binding.read is None else None
    if local is not None:  # a file the engine cannot read: checked where it is read
        try:
            return check_contract(local, src, binding)
        finally:
            local.close()
    binding = in_place(ad, src, binding)
    try:
        schema = _describe(ad, binding.engine_relation)
    except ad.engine_errors() as err:
        if ad.missing_relation(err):
            raise fail("E071", f"source `{src.name}`: table `{binding.shown}` does not exist "
                       "in the warehouse", src.decl.span,
                       "load it first, or point the source elsewhere with "
                       f"--override {override_text(src.name, '<table>')}") from None
        # the warehouse file failing is E070, not the source
        schema = _untyped_schema(ad, src, binding)
        if schema is None or not _missing(src, schema):
            raise ad.file_failure(err) or fail(
                "E071", f"source `{src.name}`: cannot read `{binding.shown}`: "
                f"{_first_line(err)}", src.decl.span) from None
    real = {name: engine for name, engine in schema}
    problems = []
    for name, declared in src.columns:
        if name not in real:
            problems.append(f"column `{name}` is missing")
            continue
        if not _fits(ad.dialect, declared, real[name]):
            problems.append(f"column `{name}` is {real[name]}, declared {declared}")
    if problems:
        raise fail("E072", f"source `{src.name}` (`{binding.shown}`) does not match its "
                   f"declaration: {'; '.join(problems)}", src.decl.span,
                   _contract_hint(ad.dialect, problems[0], src, real))
    return schema


def _untyped_schema(ad: Adapter, src: SourceInfo, binding: SourceBinding):
    """A file read with the declared types forced fails in the engine's binder when a
    declared column is absent (CSV: "Columns with names ... do not exist"): read the
    file's own header instead, so a missing column is a contract problem (E072), as for
    a table or a Parquet file. None when that read fails too, or for a table."""
    if src.file is None or binding.override is not None or binding.read is not None:
        return None
    try:
        return _describe(ad, ad.dialect.file_source(str(src.file), src.name, None))
    except ad.engine_errors():
        return None


def _missing(src: SourceInfo, schema: list[tuple[str, str]]) -> bool:
    have = {name for name, _ in schema}
    return any(name not in have for name, _ in src.columns)


def _contract_hint(dialect, problem: str, src: SourceInfo, real: dict[str, str]) -> str:
    """A near name for a missing column; for a type no Strata type holds (a
    TIMESTAMP WITH TIME ZONE, a STRUCT), the way to read it anyway: a view that casts."""
    name = problem.split("`")[1]
    if "missing" in problem:
        return did_you_mean(name, real)
    if dialect.type_kind(real[name]).startswith("other:"):
        declared = dict(src.columns)[name].to_sqlglot().sql("duckdb")
        return (f"no Strata type holds {real[name]}: point the source at a view that casts "
                f"it, e.g. CREATE VIEW {src.name}_v AS SELECT * REPLACE (CAST({name} AS "
                f"{declared}) AS {name}) FROM ...")
    return "fix the data or the declared type"


def _fits(dialect, declared: Type, engine_type: str) -> bool:
    kind = dialect.type_kind(engine_type)
    if declared.kind == "list":
        return kind.startswith("list<") and _fits(dialect, declared.element,
                                                   dialect.element_type(engine_type))
    if declared.kind == "double" and kind in ("int", "decimal"):
        return True
    if declared.kind == "decimal" and kind == "int":
        return True
    if declared.kind == "decimal" and kind == "decimal":
        # decimal(12, 2) promises cents: a DECIMAL(18, 4) would carry 1.2555 through
        return dialect.keeps_scale(engine_type, declared.scale)
    if declared.kind == "timestamp" and kind == "date":
        return False
    return types_fit(declared, Type(kind)) if not kind.startswith("other") else False


def fingerprint(con, src: SourceInfo, binding: SourceBinding,
                schema: list[tuple[str, str]]) -> str:
    """Schema + order-independent row hash of the table actually read."""
    return counted_fingerprint(con, src, binding, schema)[0]


@dataclass
class Split:
    """Rows of one model to hash in the same scan as its source's fingerprint (drift
    detection, issue 17): `rows` and `keep` are SQL over `alias.column`. `found` is
    the row hash of the rows meeting `keep`, once the scan ran (None: not folded)."""

    model: str
    boundary: object
    alias: str
    rows: list[str]
    keep: str
    # the rows' column names when each is a plain source column: the declared columns
    # in order means the fingerprint's own per-row hash is the split's too
    row_columns: tuple[str, ...] | None
    # `cdc > boundary` when the model filters nothing: a model passing the declared
    # columns through then holds every row but those past it, and the scan sums only
    # the few past rows (the fingerprint less them), not the many settled ones
    past: str | None = None
    found: RowHash | None = None


@dataclass(frozen=True)
class SourceHash:
    """A source's row hash over its declared columns, as this run's fingerprint read
    it on the warehouse's engine (not a file hashed elsewhere), with the engine types
    of those columns: drift detection takes a passthrough model's settled rows as it
    less the rows past the watermark (incremental.detect_drift), instead of a scan."""

    rows: RowHash
    columns: tuple[tuple[str, str], ...]


def counted_fingerprint(con, src: SourceInfo, binding: SourceBinding,
                        schema: list[tuple[str, str]],
                        splits: list[Split] | None = None) -> tuple[str, int]:
    """The fingerprint and the number of rows it read; each of `splits` gets its
    rows' hash too (a query that fails with them is run without: the fingerprint
    must not fail because of what detection asks for)."""
    fp, rows, _ = engine_fingerprint(con, src, binding, schema, splits)
    return fp, rows


def engine_fingerprint(con, src: SourceInfo, binding: SourceBinding,
                       schema: list[tuple[str, str]], splits: list[Split] | None = None
                       ) -> tuple[str, int, SourceHash | None]:
    """`counted_fingerprint`, and the source's row hash where the engine read it."""
    ad = _as_adapter(con)
    reference = reference_reader(ad, src, binding)
    if reference is not None:  # a file: fingerprinted as DuckDB reads it, on any engine
        plain = SourceBinding(binding.name, binding.relation, binding.shown, binding.override)
        try:
            return (*counted_fingerprint(reference, src, plain,
                                         _describe(reference, plain.relation)), None)
        finally:
            reference.close()
    binding = in_place(ad, src, binding)
    declared = [n for n, _ in src.columns]
    if splits and ad.folds_split_scans:
        try:
            # the folded scan is DuckDB text (folds_split_scans), on its connection
            rows = _split_scan(ad.con, relation_sql(binding), declared, splits)
            return _hashed(rows, schema, declared)
        except ad.engine_errors():
            for split in splits:
                split.found = None
    try:
        rows: RowHash = ad.row_hash(binding.engine_relation, declared)
    except ad.engine_errors() as err:
        if ad.bad_value(err):
            # a file's value that its declared type cannot hold, past what the contract
            # check (a DESCRIBE) could see: the fingerprint is the first full read
            raise fail("E072", f"source `{src.name}` (`{binding.shown}`) holds a value its "
                       f"declaration does not fit: {_error_summary(err)}", src.decl.span,
                       "fix the data or the declared type") from None
        # the warehouse file failing is E070, not the source
        raise ad.file_failure(err) or fail(
            "E071", f"source `{src.name}`: cannot read `{binding.shown}`: "
            f"{_first_line(err)}", src.decl.span) from None
    return _hashed(rows, schema, declared)


def _hashed(rows: RowHash, schema: list[tuple[str, str]],
            declared: list[str]) -> tuple[str, int, SourceHash]:
    types = dict(schema)
    columns = tuple((n, types.get(n, "")) for n in declared)
    return (rows.digest([(n, t) for n, t in schema if n in set(declared)]), rows.count,
            SourceHash(rows, columns))


@dataclass(frozen=True)
class Prepared:
    """A source as a run reads it: its binding, its real schema, its fingerprint and
    rows; `hashed` False when its marker proved it unchanged since `recorded` was
    taken (the fingerprint is that record's); `recorded` is what this run records for
    the next one (None: no marker is proof of this source now)."""

    binding: SourceBinding
    schema: list[tuple[str, str]]
    fingerprint: str
    rows: int
    hashed: bool
    recorded: Recorded | None
    engine_hash: SourceHash | None = None  # where the engine hashed it this run


def prepare(ad: Adapter, src: SourceInfo, binding: SourceBinding,
            splits: list[Split] | None = None, known: Recorded | None = None) -> Prepared:
    """A source as a run reads it: its contract checked and its data fingerprinted
    where the engine reads it, unless its change marker equals `known`'s (the record
    of the run the staleness base is) and the same hash is asked of it: then `known`'s
    fingerprint is the source's, and no row is read. Drift detection's `splits` ride
    the scan, so a source with splits is always hashed. A file the engine cannot read
    in place is checked and fingerprinted locally and loaded into a table named by
    its fingerprint (once: the same data finds its table there)."""
    marker = source_marker(ad, src, binding)  # before anything is read
    local = local_reader(ad, src, binding)
    if local is None:
        binding = in_place(ad, src, binding)
        schema = check_contract(ad, src, binding)
        key = _hash_key(ad, src, binding, schema)
        if known is not None and not splits and _proven(known, marker, key):
            return Prepared(binding, schema, known.fingerprint, known.rows, False, known)
        fp, rows, engine_hash = engine_fingerprint(ad, src, binding, schema, splits)
        recorded = _record(ad, src, binding, marker, key, fp, rows)
        return Prepared(binding, schema, fp, rows, True, recorded, engine_hash)
    try:  # the same reads check_contract and counted_fingerprint do for such a file
        schema = check_contract(local, src, binding)
        key = _hash_key(local, src, binding, schema)
        hashed = known is None or not _proven(known, marker, key)
        fp, rows = (counted_fingerprint(local, src, binding, schema) if hashed
                    else (known.fingerprint, known.rows))
        target = Relation(INTERNAL, ad.physical_name(f"src_{src.name}_{fp[:12]}"))
        if target.name not in ad.relations(INTERNAL):
            _load(ad, local, src, binding, target)
    finally:
        local.close()
    loaded = SourceBinding(binding.name, binding.relation, binding.shown, binding.override,
                           target.table())
    recorded = _record(ad, src, binding, marker, key, fp, rows) if hashed else known
    return Prepared(loaded, schema, fp, rows, hashed, recorded)


def source_marker(ad: Adapter, src: SourceInfo, binding: SourceBinding) -> str | None:
    """The source's change marker now (strata.engine.markers), or None where nothing
    is proof: a file's own, where the engine reads the file this process sees (or it
    is read here); a table's, where its engine keeps one."""
    if src.file is not None and binding.override is None:
        if ad.reads_file(str(src.file)) and not ad.shares_files:
            return None
        return files_marker([src.file], (relation_sql(binding),))
    return ad.table_marker(binding.engine_relation)


def _hash_key(reader: Adapter, src: SourceInfo, binding: SourceBinding,
              schema: list[tuple[str, str]]) -> str:
    """What the fingerprint hashes besides the data (markers.hash_key): the relation,
    the declared columns and their engine types, and the row hash as the reading
    engine spells it."""
    declared = [n for n, _ in src.columns]
    return hash_key(relation_sql(binding), engine_relation_sql(binding), declared,
                    [(n, t) for n, t in schema if n in set(declared)],
                    reader.render(reader.row_hash_expr(declared)), reader.hash_sum_type)


def _proven(known: Recorded, marker: str | None, key: str) -> bool:
    return marker is not None and known.marker == marker and known.key == key


def _record(ad: Adapter, src: SourceInfo, binding: SourceBinding, marker: str | None,
            key: str, fp: str, rows: int) -> Recorded | None:
    """The record of a hash, when the marker taken before it is proof and still the
    same after it (a source that moved meanwhile records nothing: its next run hashes)."""
    if marker is None or source_marker(ad, src, binding) != marker:
        return None
    return Recorded(marker, key, fp, rows)


def _load(ad: Adapter, local: Adapter, src: SourceInfo, binding: SourceBinding,
          target: Relation) -> None:
    """The declared columns of a file, cast to their declared types, into `target`."""
    columns = [(n, t.to_sqlglot()) for n, t in src.columns]
    query = exp.select(*[exp.Cast(this=exp.column(exp.to_identifier(n, quoted=True)),
                                  to=t.copy()) .as_(exp.to_identifier(n, quoted=True))
                         for n, t in columns]).from_(binding.relation.copy())
    try:
        # a cursor of its own: the fingerprint's fetchone left a result open on the
        # connection, which DuckDB 2 will not stream another query beside
        reader = local.con.cursor().sql(local.render(query)).to_arrow_reader()
        ad.load_table(target, columns, reader)
    except local.engine_errors() as err:
        raise fail("E072", f"source `{src.name}` (`{binding.shown}`) holds a value its "
                   f"declaration does not fit: {_error_summary(err)}", src.decl.span,
                   "fix the data or the declared type") from None


def _split_scan(con, relation: str, declared: list[str], splits: list[Split]) -> RowHash:
    """The source's row hash, and each split's.

    A model that passes the declared columns through and filters nothing holds every
    row but those past the boundary: its hash is the fingerprint less theirs, read by
    a query of its own whose `WHERE cdc > boundary` the engine prunes by its zone maps
    (1e7 rows: 2 ms where evaluating that condition on every row of the fingerprint's
    scan cost 50 ms). Any other split rides the fingerprint's scan as FILTER'd
    aggregates over the same rows (one pass, not two)."""
    alone = [s for s in splits if s.past is not None and s.row_columns == tuple(declared)]
    folded = [s for s in splits if s not in alone]
    every = _folded_scan(con, relation, declared, folded) if folded else row_hash(
        con, relation, declared)
    for split in alone:
        past = row_hash(con, f"{relation} AS {duck.quoted(split.alias)}", declared,
                        split.past)
        split.found = every.minus(past)
    return every


def _folded_scan(con, relation: str, declared: list[str], splits: list[Split]) -> RowHash:
    """One pass over a source: its row hash, and each split's settled rows' hash as
    FILTER'd aggregates (a split whose rows are the declared columns in order reuses
    the fingerprint's per-row hash)."""
    items = [f"{duck.row_hash_expr(declared)} AS __h"]
    aggs = [duck.row_hash_parts("__h")]
    if len({s.alias for s in splits}) > 1:
        raise ValueError("splits of one scan read the source under one alias")
    for i, split in enumerate(splits):
        own = "__h" if split.row_columns == tuple(declared) else f"__h{i}"
        if own != "__h":
            items.append(f"hash({', '.join(split.rows)}) AS {own}")
        items.append(f"({split.keep}) AS __k{i}")
        f = f"FILTER (WHERE __k{i})"
        aggs.append(f"count(*) {f}, coalesce(sum({own}::HUGEINT) {f}, 0)::VARCHAR, "
                    f"coalesce(bit_xor({own}) {f}, 0)::VARCHAR")
    row = con.execute(f"SELECT {', '.join(aggs)} FROM (SELECT {', '.join(items)} "
                      f"FROM {relation} AS {duck.quoted(splits[0].alias)})").fetchone()
    for i, split in enumerate(splits):
        count, total, xor = row[3 + 3 * i: 6 + 3 * i]
        split.found = RowHash(int(count), int(total), int(xor))
    return RowHash(int(row[0]), int(row[1]), int(row[2]))


def _error_summary(err: Exception) -> str:
    """The engine's first line, and the line that quotes the offending row if any."""
    said = [line.strip() for line in lines(str(err)) if line.strip()]
    if not said:
        return type(err).__name__
    row = next((line for line in said[1:] if line.lower().startswith(("original line",
                                                                          "line:"))), None)
    return said[0] + (f" ({row})" if row else "")


def _first_line(err: Exception) -> str:
    return first_line(str(err), type(err).__name__)
