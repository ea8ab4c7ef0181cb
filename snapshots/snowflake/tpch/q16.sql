-- model q16 (full)
WITH base AS (
  SELECT
    partsupp.ps_partkey,
    partsupp.ps_suppkey,
    partsupp.ps_availqty,
    partsupp.ps_supplycost,
    partsupp.ps_comment
  FROM partsupp
), base_2 AS (
  SELECT
    supplier.s_suppkey,
    supplier.s_name,
    supplier.s_address,
    supplier.s_nationkey,
    supplier.s_phone,
    supplier.s_acctbal,
    supplier.s_comment
  FROM supplier
  WHERE
    supplier.s_comment LIKE '%Customer%Complaints%' ESCAPE '\\'
), complained_2 AS (
  SELECT
    base_2.s_suppkey,
    base_2.s_name,
    base_2.s_address,
    base_2.s_nationkey,
    base_2.s_phone,
    base_2.s_acctbal,
    base_2.s_comment
  FROM base_2
)
SELECT
  part.p_brand,
  part.p_type,
  part.p_size,
  COUNT(DISTINCT base.ps_suppkey) AS supplier_cnt
FROM base
JOIN part
  ON part.p_partkey = base.ps_partkey
WHERE
  (
    part.p_brand <> 'Brand#45'
    AND NOT part.p_type LIKE 'MEDIUM POLISHED%' ESCAPE '\\'
    AND part.p_size IN (49, 14, 23, 45, 19, 3, 36, 9)
  )
  AND NOT EXISTS(
    SELECT
      1
    FROM complained_2 AS complained
    WHERE
      complained.s_suppkey = base.ps_suppkey
  )
GROUP BY
  part.p_brand,
  part.p_type,
  part.p_size
ORDER BY
  COUNT(DISTINCT base.ps_suppkey) DESC NULLS LAST,
  part.p_brand ASC,
  part.p_type ASC,
  part.p_size ASC;
