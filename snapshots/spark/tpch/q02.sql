-- model q02 (full)
WITH base AS (
  SELECT
    partsupp.ps_partkey,
    partsupp.ps_suppkey,
    partsupp.ps_availqty,
    partsupp.ps_supplycost,
    partsupp.ps_comment
  FROM parquet.`file://<repo>/examples/tpch/data/partsupp.parquet` AS partsupp
), base_2 AS (
  SELECT
    partsupp.ps_partkey,
    partsupp.ps_suppkey,
    partsupp.ps_availqty,
    partsupp.ps_supplycost,
    partsupp.ps_comment
  FROM parquet.`file://<repo>/examples/tpch/data/partsupp.parquet` AS partsupp
), cheapest_2 AS (
  SELECT
    base_2.ps_partkey,
    MIN(base_2.ps_supplycost) AS min_cost
  FROM base_2
  JOIN parquet.`file://<repo>/examples/tpch/data/supplier.parquet` AS supplier
    ON supplier.s_suppkey = base_2.ps_suppkey
  JOIN parquet.`file://<repo>/examples/tpch/data/nation.parquet` AS nation
    ON nation.n_nationkey = supplier.s_nationkey
  JOIN parquet.`file://<repo>/examples/tpch/data/region.parquet` AS region
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
JOIN parquet.`file://<repo>/examples/tpch/data/part.parquet` AS part
  ON part.p_partkey = base.ps_partkey
JOIN parquet.`file://<repo>/examples/tpch/data/supplier.parquet` AS supplier
  ON supplier.s_suppkey = base.ps_suppkey
JOIN parquet.`file://<repo>/examples/tpch/data/nation.parquet` AS nation
  ON nation.n_nationkey = supplier.s_nationkey
JOIN parquet.`file://<repo>/examples/tpch/data/region.parquet` AS region
  ON region.r_regionkey = nation.n_regionkey
JOIN cheapest_2 AS cheapest
  ON cheapest.ps_partkey = part.p_partkey AND cheapest.min_cost = base.ps_supplycost
WHERE
  part.p_size = 15 AND part.p_type LIKE '%BRASS' AND region.r_name = 'EUROPE'
ORDER BY
  supplier.s_acctbal DESC,
  nation.n_name ASC NULLS LAST,
  supplier.s_name ASC NULLS LAST,
  part.p_partkey ASC NULLS LAST,
  base.ps_partkey ASC NULLS LAST,
  base.ps_suppkey ASC NULLS LAST,
  base.ps_availqty ASC NULLS LAST,
  base.ps_supplycost ASC NULLS LAST,
  base.ps_comment ASC NULLS LAST,
  part.p_name ASC NULLS LAST,
  part.p_mfgr ASC NULLS LAST,
  part.p_brand ASC NULLS LAST,
  part.p_type ASC NULLS LAST,
  part.p_size ASC NULLS LAST,
  part.p_container ASC NULLS LAST,
  part.p_retailprice ASC NULLS LAST,
  part.p_comment ASC NULLS LAST,
  supplier.s_suppkey ASC NULLS LAST,
  supplier.s_address ASC NULLS LAST,
  supplier.s_nationkey ASC NULLS LAST,
  supplier.s_phone ASC NULLS LAST,
  supplier.s_comment ASC NULLS LAST,
  nation.n_nationkey ASC NULLS LAST,
  nation.n_regionkey ASC NULLS LAST,
  nation.n_comment ASC NULLS LAST,
  region.r_regionkey ASC NULLS LAST,
  region.r_name ASC NULLS LAST,
  region.r_comment ASC NULLS LAST,
  cheapest.ps_partkey ASC NULLS LAST,
  cheapest.min_cost ASC NULLS LAST
LIMIT 100;
