"""Trino: no transactional DDL across catalogs; files via a connector's tables."""

from dialects.base import Dialect

DIALECT = Dialect(name="trino", sqlglot="trino", transactional_ddl=False,
                  create_or_replace_view=True, reads_files=False, row_hash="xxhash64")
