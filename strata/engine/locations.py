"""Where a warehouse lives: what `-o` names, parsed into one dataclass per kind.

    w.duckdb                              an embedded DuckDB file (the default)
    postgresql://USER[:PASSWORD]@HOST[:PORT]/DB
                                          a PostgreSQL database; HOST may be a Unix
                                          socket folder, percent-encoded
                                          (`postgresql://u@%2Ftmp%2Fsock/db`) or given
                                          as `?host=/tmp/sock`
    spark:DIR                             a local Spark session whose catalog and
                                          tables live in DIR
    sc://HOST[:PORT][/;token=..;..]       Spark Connect (port 15002 by default)

Anything else that looks like a URL (`mysql://`, `spark://host`) is E070, as is a
PostgreSQL URL with a malformed port, or without a database when neither a service
(`?service=NAME`, PGSERVICE) nor PGDATABASE names one, and `spark:` without a folder.

Secrets: `redact` is the one function that decides what of a location is secret (a
URL's password, even with an unencoded `?` in it; any parameter whose name holds
pass, pwd, token, secret or key) and every text that shows a location goes through it
(`redacted()`), so errors, progress lines, history, JSON and the graph page carry
`***` instead. `secrets_of` gives the same pieces as values, for `scrub` to take out
of a text an engine wrote (an error may echo what it was given).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from strata.diagnostics import StrataError, fail

HIDDEN = "***"
SPARK_CONNECT_PORT = 15002  # Spark Connect's own default
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SECRET_WORDS = ("pass", "pwd", "token", "secret", "key")  # in a parameter's name
_PARAM_NAME = re.compile(r"(?<=[?&;])([^=&;?#/]*)=")  # a `name=` after a separator
_KINDS_HINT = ("-o takes a DuckDB file path, postgresql://USER[:PASSWORD]@HOST[:PORT]/DB, "
               "spark:DIR or sc://HOST:PORT")


@dataclass(frozen=True)
class DuckDBFile:
    """An embedded DuckDB database file (created on first write)."""

    path: str
    kind: str = field(default="duckdb", init=False)

    def redacted(self) -> str:
        return self.path


@dataclass(frozen=True)
class PostgresURL:
    """A PostgreSQL database. `host` is a name, an address or (starting with `/`) the
    folder holding the server's Unix socket; None lets libpq choose."""

    text: str  # as given: kept only to redact it, never shown as is
    database: str | None  # None: the service file's or PGDATABASE, libpq's choice
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    host: str | None = None
    port: int | None = None
    options: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    kind: str = field(default="postgres", init=False)

    @property
    def unix_socket(self) -> bool:
        return self.host is not None and self.host.startswith("/")

    def redacted(self) -> str:
        return redact(self.text)

    def secrets(self) -> tuple[str, ...]:
        """Every secret of the location, as written and as the engine is given it."""
        return tuple(filter(None, {*secrets_of(self.text), self.password or ""}))

    def connect_args(self) -> dict[str, str | int]:
        """Keyword arguments for psycopg.connect (libpq's names): the URL's own
        parameters first, then what its parts say."""
        args: dict[str, str | int] = dict(self.options)
        parts = {"dbname": self.database, "user": self.user, "password": self.password,
                 "host": self.host, "port": self.port}
        args.update({k: v for k, v in parts.items() if v is not None})
        return args


@dataclass(frozen=True)
class SparkDir:
    """A local Spark session; its warehouse folder and metastore live in `directory`
    (absolute), so tables and views outlive the process."""

    directory: str
    text: str = ""
    kind: str = field(default="spark", init=False)

    def redacted(self) -> str:
        return self.text or "spark:" + self.directory


@dataclass(frozen=True)
class SparkConnect:
    """A Spark Connect server; `params` are the URL's `;key=value` parameters."""

    text: str
    host: str
    port: int = SPARK_CONNECT_PORT
    params: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    kind: str = field(default="spark_connect", init=False)

    def redacted(self) -> str:
        return redact(self.text)

    def secrets(self) -> tuple[str, ...]:
        return secrets_of(self.text)

    def remote(self) -> str:
        """The URL pyspark's `SparkSession.builder.remote` takes (secrets included:
        for the client only, never for output)."""
        tail = "".join(f";{k}={v}" for k, v in self.params)
        return f"sc://{self.host}:{self.port}" + ("/" + tail if tail else "")


Location = DuckDBFile | PostgresURL | SparkDir | SparkConnect


def parse_location(text: str) -> Location:
    """The warehouse `-o` names. A plain path is a DuckDB file, as it always was."""
    scheme = _SCHEME.match(text)
    if scheme is None:
        if text.startswith("spark:"):
            return _spark_dir(text)
        return DuckDBFile(text)
    name = scheme.group(1).lower()
    if name in ("postgresql", "postgres"):
        return _postgres(text)
    if name == "sc":
        return _spark_connect(text)
    hint = ("a Spark master URL is not a warehouse: spark:DIR runs a local session, "
            "sc://HOST:PORT reaches a Spark Connect server" if name == "spark" else _KINDS_HINT)
    raise _bad(text, f"`{name}://` is not a kind of warehouse strata knows", hint)


def redact(text: str) -> str:
    """`text` with every secret (`secret_spans`) as ***. Works on malformed text too:
    the error about a bad location shows it redacted."""
    out, last = [], 0
    for start, end in secret_spans(text):
        out += [text[last:start], HIDDEN]
        last = end
    return "".join(out) + text[last:]


def secrets_of(text: str) -> tuple[str, ...]:
    """The secrets of a location's text, as written and percent-decoded (what an
    engine's message could echo), for `scrub`."""
    found = {piece for start, end in secret_spans(text)
             for piece in (text[start:end], unquote(text[start:end]))}
    return tuple(sorted(filter(None, found), key=len, reverse=True))


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """`text` (an engine's message) with each of `secrets` replaced by ***."""
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    return text


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets of a location's text are: the password of a URL's user info
    and the value of each parameter whose name says secret. A secret value runs to the
    separator that starts the next `name=` parameter, so a `;` or `&` inside it does
    not end it. A file path or `spark:DIR` has none."""
    scheme = _SCHEME.match(text)
    if scheme is None:
        return []
    start = scheme.end()
    spans = []
    at = userinfo_end(text, start)
    if at >= 0 and ":" in text[start:at]:
        spans.append((text.index(":", start, at) + 1, at))
    names = _param_names(text, at + 1 if at >= 0 else start, scheme.group(1).lower())
    for here, after in zip(names, [*names[1:], None], strict=False):
        if any(word in unquote(here.group(1)).lower() for word in _SECRET_WORDS):
            spans.append((here.end(), after.start() - 1 if after else len(text)))
    return _merged(spans)


def _param_names(text: str, begin: int, scheme: str) -> list[re.Match]:
    """Each `name=` that starts a parameter: after a `;` in Spark Connect's URL; after
    the query's `?` or a `&` in another (a `?` or `;` later on is inside a value)."""
    sep = ";" if scheme == "sc" else "&"
    query = -2 if scheme == "sc" else text.find("?", begin)
    return [m for m in _PARAM_NAME.finditer(text, begin)
            if text[m.start() - 1] == sep or m.start() - 1 == query]


def userinfo_end(text: str, start: int) -> int:
    """Where the user info of the URL whose authority starts at `start` ends: the
    index of its `@`, or -1. It is the last `@` before the query, so a password with an
    unencoded `/` or `@` stays whole. With no `@` there, a `user:pass` whose "port" is
    no number means a password with an unencoded `?`: its `@` is the last one before
    the `/` that follows the first `@` after the `?`."""
    query = text.find("?", start)
    at = text.rfind("@", start, len(text) if query < 0 else query)
    if at >= 0 or query < 0 or not _password_before(text[start:query]):
        return at
    first = text.find("@", query)
    slash = text.find("/", first) if first >= 0 else -1
    return text.rfind("@", query, len(text) if slash < 0 else slash)


def _password_before(head: str) -> bool:
    """Is `head` (up to a `?`, no `@` in it) `user:` and a piece of a password rather
    than `host:port`?"""
    netloc = head.split("/", 1)[0]
    if netloc.startswith("[") or ":" not in netloc:
        return False
    port = netloc.rsplit(":", 1)[1]
    return not port.isdigit() and port != ""


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


# ---------------------------------------------------------------- each kind
def _bad(text: str, why: str, hint: str = _KINDS_HINT) -> StrataError:
    return fail("E070", f"cannot use `{redact(text)}` as the warehouse: {why}", None, hint)


def _spark_dir(text: str) -> SparkDir:
    directory = text[len("spark:"):]
    if not directory.strip():
        raise _bad(text, "`spark:` names no folder",
                   "spark:DIR keeps the Spark catalog and tables in DIR, e.g. spark:./wh")
    return SparkDir(os.path.abspath(os.path.expanduser(directory)), text)


def _port(text: str, given: str | None) -> int | None:
    if given is None or given == "":
        return None
    if not given.isdigit() or not 0 < int(given) < 65536:
        raise _bad(text, f"the port `{redact(given)}` is not a number from 1 to 65535")
    return int(given)


def _split_netloc(text: str, netloc: str) -> tuple[str | None, str | None, str, str | None]:
    """(user, password, host, port text) of `user:password@host:port`, decoded; the
    host may be an IPv6 address in brackets."""
    user = password = None
    if "@" in netloc:
        info, netloc = netloc.rsplit("@", 1)
        user, sep, secret = info.partition(":")
        user = unquote(user) or None
        password = unquote(secret) if sep else None
    if netloc.startswith("["):
        close = netloc.find("]")
        if close < 0:
            raise _bad(text, "an IPv6 host lacks its closing `]`")
        host, rest = netloc[1:close], netloc[close + 1:]
        if rest and not rest.startswith(":"):
            raise _bad(text, "text after the IPv6 host is not `:PORT`")
        return user, password, host, rest[1:] if rest else None
    host, sep, port = netloc.rpartition(":")
    if not sep:
        host, port = netloc, None
    return user, password, unquote(host), port


def _postgres(text: str) -> PostgresURL:
    start = _SCHEME.match(text).end()
    # the user info ends where `redact` says: a password with an unencoded '/', '@' or
    # '?' stays in it, and no piece of it is taken for a port or a database
    at = userinfo_end(text, start)
    info, after = (text[start:at + 1], text[at + 1:]) if at >= 0 else ("", text[start:])
    head, _, query = after.partition("?")
    netloc, _, path = head.partition("/")
    user, password, host, port_text = _split_netloc(text, info + netloc)
    port = _port(text, port_text)
    database = unquote(path)
    options = _query(query)
    host = options.pop("host", None) or host or None
    port = _port(text, options.pop("port", None)) or port
    user = options.pop("user", None) or user
    password = options.pop("password", None) or password
    database = options.pop("dbname", None) or database
    if not database and not _named_elsewhere(options):
        raise _bad(text, "the URL names no database",
                   "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB: DB is the database (or "
                   "a service file's: ?service=NAME, PGSERVICE; or PGDATABASE)")
    if "#" in head or "#" in query:
        raise _bad(text, "a PostgreSQL URL has no `#` part")
    return PostgresURL(text, database or None, user, password, host, port,
                       tuple(sorted(options.items())))


def _query(query: str) -> dict[str, str]:
    """A PostgreSQL URL's parameters, percent-decoded as libpq decodes them (a `+` is
    a plus, not a space: it may be part of a password)."""
    options: dict[str, str] = {}
    for item in filter(None, query.split("&")):
        key, _, value = item.partition("=")
        options[unquote(key)] = unquote(value)
    return options


def _named_elsewhere(options: dict[str, str]) -> bool:
    """Does libpq get the database from a service file or the environment?"""
    return "service" in options or any(os.environ.get(name) for name in ("PGSERVICE",
                                                                         "PGDATABASE"))


def _spark_connect(text: str) -> SparkConnect:
    rest = text[len("sc://"):]
    netloc, _, tail = rest.partition("/")
    if "@" in netloc:
        raise _bad(text, "Spark Connect takes no user in the host part",
                   "sc://HOST:PORT/;user_id=NAME;token=SECRET")
    _, _, host, port_text = _split_netloc(text, netloc)
    if not host:
        raise _bad(text, "the URL names no host", "sc://HOST:PORT, e.g. sc://localhost:15002")
    params = []
    for item in filter(None, tail.split(";")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _bad(text, "one of its parameters is not a `;key=value` parameter")
        params.append((key, value))
    port = _port(text, port_text)
    return SparkConnect(text, host, SPARK_CONNECT_PORT if port is None else port, tuple(params))
