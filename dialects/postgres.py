"""PostgreSQL: transactional DDL; files must be loaded into tables first."""

from dialects.base import Dialect

DIALECT = Dialect(name="postgres", sqlglot="postgres", transactional_ddl=True,
                  create_or_replace_view=True, reads_files=False, row_hash="md5")
