"""The name to install (`pip install strata-models`): `strata` on the package index is
another project. The command and the import name are `strata`. A module of its own,
not the package's `__init__`: a folder named `strata` in the working directory can make
`strata` a namespace package whose `__init__` never runs (tests/test_hostile_env.py),
and the CLI must still start."""

DISTRIBUTION = "strata-models"
