-- model q15 (full)
WITH base AS (
  SELECT
    supplier.s_suppkey,
    supplier.s_name,
    supplier.s_address,
    supplier.s_nationkey,
    supplier.s_phone,
    supplier.s_acctbal,
    supplier.s_comment
  FROM supplier
), base_2 AS (
  SELECT
    revenue0.supplier_no,
    revenue0.total_revenue
  FROM v_revenue0 AS revenue0
), best_2 AS (
  SELECT
    MAX(base_2.total_revenue) AS top
  FROM base_2
)
SELECT
  base.s_suppkey,
  base.s_name,
  base.s_address,
  base.s_phone,
  revenue0.total_revenue
FROM base
JOIN v_revenue0 AS revenue0
  ON revenue0.supplier_no = base.s_suppkey
CROSS JOIN best_2 AS best
WHERE
  revenue0.total_revenue = best.top
ORDER BY
  base.s_suppkey ASC;
