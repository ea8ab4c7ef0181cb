"""The subpipelines module on empty sources: aggregates over no rows, joins with nothing."""

TABLES = {"orders": [], "customers": [], "returns": []}
