"""Snowflake: DDL commits implicitly, so view switches cannot share a transaction."""

from dialects.base import Dialect

DIALECT = Dialect(name="snowflake", sqlglot="snowflake", transactional_ddl=False,
                  create_or_replace_view=True, reads_files=False, row_hash="hash")
