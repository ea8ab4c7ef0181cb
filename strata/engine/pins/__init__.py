"""Pins and join cardinality, checked in SQL on the engine before anything publishes.

Semantics:
- `pin unique [cols]`: no two rows share the values of `cols`, NULL counted as a value
  (two rows whose `id` is NULL share it). This is the stricter reading, the one an
  upsert merge (null-safe key equality) and the join exemption below rely on. Add
  `pin not_null [cols]` to forbid the NULL itself.
- Join fan-out (`join`/`join_left` without `many`): no left row may match two right
  rows. Right rows with a NULL key never match (`=` on NULL is not true), so they
  cannot fan out; duplicated right keys no left row matches are harmless.
- `pin references` to a model that reads the pinned one (dbt's relationships test on
  a model downstream) is checked after both are built, still before publication
  (`check_pins_after`); a violation fails the run and holds back no model.
- The fan-out check is skipped when the right side is a model whose `pin unique` on
  exactly the join's key columns was verified (in this run, or recorded with the
  snapshot being read), or proven by the plan (one row per `group` key).

Cost (SPEC: "in SQL on the engine"): no rows reach Python except a sample of
offenders after a violation. `pin rows` reads the row count the run has anyway and
`pin columns` the table's DESCRIBE. Every `not_null` pin shares one query the engine
answers from column statistics when nothing is NULL. Every `unique` pin on integer
columns shares one scan: a unique integer key maps each row to a slot of a bitmap
(`bitstring_agg`), and the key is unique iff as many slots are set as there are rows. Other unique pins cost one hash aggregate each, grouping by the key. Only
after a violation do the slower queries run that count offenders and fetch a sample.

One module per job: `checks.py` (the pins of a model), `joins.py` (join cardinality),
`distinct.py` (the one-scan uniqueness test), `proofs.py` (uniqueness the plan proves),
`contracts.py` (`pin columns`), `planned.py` (what a run will check), `trees.py` (the
statements' building blocks), `results.py` (the log, violations, PinError).
"""
