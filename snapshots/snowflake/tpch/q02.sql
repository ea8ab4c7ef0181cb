-- model q02 (full)
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
    partsupp.ps_partkey,
    partsupp.ps_suppkey,
    partsupp.ps_availqty,
    partsupp.ps_supplycost,
    partsupp.ps_comment
  FROM partsupp
), cheapest_2 AS (
  SELECT
    base_2.ps_partkey,
    MIN(base_2.ps_supplycost) AS min_cost
  FROM base_2
  JOIN supplier
    ON supplier.s_suppkey = base_2.ps_suppkey
  JOIN nation
    ON nation.n_nationkey = supplier.s_nationkey
  JOIN region
    ON region.r_regionkey = nation.n_regionkey
  WHERE
    region.r_name = 'EUROPE'
  GROUP BY
    base_2.ps_partkey
)
SELECT
  supplier.s_acctbal,
  supplier.s_name,
  nation.n_name,
  part.p_partkey,
  part.p_mfgr,
  supplier.s_address,
  supplier.s_phone,
  supplier.s_comment
FROM base
JOIN part
  ON part.p_partkey = base.ps_partkey
JOIN supplier
  ON supplier.s_suppkey = base.ps_suppkey
JOIN nation
  ON nation.n_nationkey = supplier.s_nationkey
JOIN region
  ON region.r_regionkey = nation.n_regionkey
JOIN cheapest_2 AS cheapest
  ON cheapest.ps_partkey = part.p_partkey AND cheapest.min_cost = base.ps_supplycost
WHERE
  part.p_size = 15
  AND part.p_type LIKE '%BRASS' ESCAPE '\\'
  AND region.r_name = 'EUROPE'
ORDER BY
  supplier.s_acctbal DESC NULLS LAST,
  nation.n_name ASC,
  supplier.s_name ASC,
  part.p_partkey ASC,
  base.ps_partkey ASC,
  base.ps_suppkey ASC,
  base.ps_availqty ASC,
  base.ps_supplycost ASC,
  base.ps_comment ASC,
  part.p_name ASC,
  part.p_mfgr ASC,
  part.p_brand ASC,
  part.p_type ASC,
  part.p_size ASC,
  part.p_container ASC,
  part.p_retailprice ASC,
  part.p_comment ASC,
  supplier.s_suppkey ASC,
  supplier.s_address ASC,
  supplier.s_nationkey ASC,
  supplier.s_phone ASC,
  supplier.s_comment ASC,
  nation.n_nationkey ASC,
  nation.n_regionkey ASC,
  nation.n_comment ASC,
  region.r_regionkey ASC,
  region.r_name ASC,
  region.r_comment ASC,
  cheapest.ps_partkey ASC,
  cheapest.min_cost ASC
LIMIT 100;
