-- model q04 (full)
WITH base AS (
  SELECT
    orders.o_orderkey,
    orders.o_custkey,
    orders.o_orderstatus,
    orders.o_totalprice,
    orders.o_orderdate,
    orders.o_orderpriority,
    orders.o_clerk,
    orders.o_shippriority,
    orders.o_comment
  FROM parquet.`file://<repo>/examples/tpch/data/orders.parquet` AS orders
  WHERE
    orders.o_orderdate >= CAST('1993-07-01' AS DATE)
    AND orders.o_orderdate < CAST(TIMESTAMPADD(MONTH, 3, CAST('1993-07-01' AS DATE)) AS DATE)
), base_2 AS (
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
    lineitem.l_commitdate < lineitem.l_receiptdate
), late_2 AS (
  SELECT
    base_2.l_orderkey,
    base_2.l_partkey,
    base_2.l_suppkey,
    base_2.l_linenumber,
    base_2.l_quantity,
    base_2.l_extendedprice,
    base_2.l_discount,
    base_2.l_tax,
    base_2.l_returnflag,
    base_2.l_linestatus,
    base_2.l_shipdate,
    base_2.l_commitdate,
    base_2.l_receiptdate,
    base_2.l_shipinstruct,
    base_2.l_shipmode,
    base_2.l_comment
  FROM base_2
)
SELECT
  base.o_orderpriority,
  COUNT(*) AS order_count
FROM base
WHERE
  EXISTS(
    SELECT
      1
    FROM late_2 AS late
    WHERE
      late.l_orderkey = base.o_orderkey
  )
GROUP BY
  base.o_orderpriority
ORDER BY
  base.o_orderpriority ASC NULLS LAST;
