-- model q11 (full)
WITH base AS (
  SELECT
    partsupp.ps_partkey,
    partsupp.ps_suppkey,
    partsupp.ps_availqty,
    partsupp.ps_supplycost,
    partsupp.ps_comment
  FROM partsupp
), aggregated AS (
  SELECT
    base.ps_partkey,
    SUM(base.ps_supplycost * base.ps_availqty) AS "value"
  FROM base
  JOIN supplier
    ON supplier.s_suppkey = base.ps_suppkey
  JOIN nation
    ON nation.n_nationkey = supplier.s_nationkey
  WHERE
    nation.n_name = 'GERMANY'
  GROUP BY
    base.ps_partkey
), base_2 AS (
  SELECT
    partsupp.ps_partkey,
    partsupp.ps_suppkey,
    partsupp.ps_availqty,
    partsupp.ps_supplycost,
    partsupp.ps_comment
  FROM partsupp
), german_2 AS (
  SELECT
    SUM(base_2.ps_supplycost * base_2.ps_availqty) AS total
  FROM base_2
  JOIN supplier
    ON supplier.s_suppkey = base_2.ps_suppkey
  JOIN nation
    ON nation.n_nationkey = supplier.s_nationkey
  WHERE
    nation.n_name = 'GERMANY'
)
SELECT
  aggregated.ps_partkey,
  aggregated."value"
FROM aggregated
CROSS JOIN german_2 AS german
WHERE
  aggregated."value" > german.total * 0.0001
ORDER BY
  aggregated."value" DESC NULLS LAST;
