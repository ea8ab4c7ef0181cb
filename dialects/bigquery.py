"""BigQuery: no multi-statement DDL transactions; `timestamp` is its DATETIME."""

from dialects.base import Dialect

DIALECT = Dialect(name="bigquery", sqlglot="bigquery", transactional_ddl=False,
                  create_or_replace_view=True, reads_files=False, row_hash="farm_fingerprint")
