-- model q20 (full)
WITH base AS (
  SELECT
    supplier.s_suppkey,
    supplier.s_name,
    supplier.s_address,
    supplier.s_nationkey,
    supplier.s_phone,
    supplier.s_acctbal,
    supplier.s_comment
  FROM parquet.`file://<repo>/examples/tpch/data/supplier.parquet` AS supplier
), base_2 AS (
  SELECT
    partsupp.ps_partkey,
    partsupp.ps_suppkey,
    partsupp.ps_availqty,
    partsupp.ps_supplycost,
    partsupp.ps_comment
  FROM parquet.`file://<repo>/examples/tpch/data/partsupp.parquet` AS partsupp
), base_3 AS (
  SELECT
    part.p_partkey,
    part.p_name,
    part.p_mfgr,
    part.p_brand,
    part.p_type,
    part.p_size,
    part.p_container,
    part.p_retailprice,
    part.p_comment
  FROM parquet.`file://<repo>/examples/tpch/data/part.parquet` AS part
  WHERE
    part.p_name LIKE 'forest%'
), forest_2 AS (
  SELECT
    base_3.p_partkey,
    base_3.p_name,
    base_3.p_mfgr,
    base_3.p_brand,
    base_3.p_type,
    base_3.p_size,
    base_3.p_container,
    base_3.p_retailprice,
    base_3.p_comment
  FROM base_3
), base_4 AS (
  SELECT
    lineitem.l_orderkey,
    lineitem.l_partkey,
    lineitem.l_suppkey,
    lineitem.l_linenumber,
    lineitem.l_quantity,
    lineitem.l_extendedprice,
    lineitem.l_discount,
    lineitem.l_tax,
    lineitem.l_returnflag,
    lineitem.l_linestatus,
    lineitem.l_shipdate,
    lineitem.l_commitdate,
    lineitem.l_receiptdate,
    lineitem.l_shipinstruct,
    lineitem.l_shipmode,
    lineitem.l_comment
  FROM parquet.`file://<repo>/examples/tpch/data/lineitem.parquet` AS lineitem
  WHERE
    lineitem.l_shipdate >= CAST('1994-01-01' AS DATE)
    AND lineitem.l_shipdate < CAST(TIMESTAMPADD(YEAR, 1, CAST('1994-01-01' AS DATE)) AS DATE)
), l_2 AS (
  SELECT
    base_4.l_partkey,
    base_4.l_suppkey,
    SUM(base_4.l_quantity) AS shipped
  FROM base_4
  GROUP BY
    base_4.l_partkey,
    base_4.l_suppkey
), stock_2 AS (
  SELECT
    base_2.ps_partkey,
    base_2.ps_suppkey,
    base_2.ps_availqty,
    base_2.ps_supplycost,
    base_2.ps_comment,
    l.l_partkey,
    l.l_suppkey,
    l.shipped
  FROM base_2
  JOIN l_2 AS l
    ON l.l_partkey = base_2.ps_partkey AND l.l_suppkey = base_2.ps_suppkey
  WHERE
    EXISTS(
      SELECT
        1
      FROM forest_2 AS forest
      WHERE
        forest.p_partkey = base_2.ps_partkey
    )
    AND base_2.ps_availqty > 0.5 * l.shipped
)
SELECT
  base.s_name,
  base.s_address
FROM base
JOIN parquet.`file://<repo>/examples/tpch/data/nation.parquet` AS nation
  ON nation.n_nationkey = base.s_nationkey
WHERE
  nation.n_name = 'CANADA'
  AND EXISTS(
    SELECT
      1
    FROM stock_2 AS stock
    WHERE
      stock.ps_suppkey = base.s_suppkey
  )
ORDER BY
  base.s_name ASC NULLS LAST;
