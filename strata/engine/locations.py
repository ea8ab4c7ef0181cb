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
PostgreSQL URL without a database or with a malformed port and `spark:` without a
folder. Every message and every `redacted()` text shows the location with its secrets
(a URL's password, a `password=` or `token=` parameter) replaced by `***`: a location
is echoed in errors, progress lines and history, and none of them may carry them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

from strata.diagnostics import StrataError, fail

HIDDEN = "***"
SPARK_CONNECT_PORT = 15002  # Spark Connect's own default
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SECRET_PARAMS = ("password", "token")
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
    database: str
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
    """`text` with a URL's password and any password/token parameter as ***. Works on
    malformed text too: the error about a bad location shows it redacted."""
    scheme = _SCHEME.match(text)
    if scheme is not None:
        start = scheme.end()
        # the user info ends at the last '@' before the query: a password with an
        # unencoded '/' or '#' is still hidden whole
        head_end = text.find("?", start)
        head = text[start:] if head_end < 0 else text[start:head_end]
        at = head.rfind("@")
        if at >= 0 and ":" in head[:at]:
            user = head[:at].split(":", 1)[0]
            text = text[:start] + user + ":" + HIDDEN + text[start + at:]
    secrets = "|".join(_SECRET_PARAMS)
    return re.sub(rf"(?i)([?&;/](?:{secrets})=)[^&;#]*", rf"\g<1>{HIDDEN}", text)


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
    rest = text[_SCHEME.match(text).end():]
    head, _, query = rest.partition("?")
    # the user info ends at the last '@' (as in `redact`): a password with an unencoded
    # '/' stays in it, and no piece of it is taken for a port or a database
    at = head.rfind("@")
    info, after = (head[:at + 1], head[at + 1:]) if at >= 0 else ("", head)
    netloc, _, path = after.partition("/")
    user, password, host, port_text = _split_netloc(text, info + netloc)
    port = _port(text, port_text)
    database = unquote(path)
    options: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        options[key] = value
    host = options.pop("host", None) or host or None
    port = _port(text, options.pop("port", None)) or port
    user = options.pop("user", None) or user
    password = options.pop("password", None) or password
    database = options.pop("dbname", None) or database
    if not database:
        raise _bad(text, "the URL names no database",
                   "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB: DB is the database")
    if "#" in after or "#" in query:
        raise _bad(text, "a PostgreSQL URL has no `#` part")
    return PostgresURL(text, database, user, password, host, port,
                       tuple(sorted(options.items())))


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
            raise _bad(text, f"`{redact(';' + item)}` is not a `;key=value` parameter")
        params.append((key, value))
    port = _port(text, port_text)
    return SparkConnect(text, host, SPARK_CONNECT_PORT if port is None else port, tuple(params))
