-- model q01 (full)
WITH base AS (
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
  FROM lineitem
  WHERE
    lineitem.l_shipdate <= CAST(CAST('1998-12-01' AS DATE) - INTERVAL '90 DAY' AS DATE)
)
SELECT
  base.l_returnflag,
  base.l_linestatus,
  SUM(base.l_quantity) AS sum_qty,
  SUM(base.l_extendedprice) AS sum_base_price,
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) AS sum_disc_price,
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  ) * (
    1 + base.l_tax
  )) AS sum_charge,
  CAST(SUM(base.l_quantity) AS DOUBLE PRECISION) / CAST(COUNT(base.l_quantity) AS DOUBLE PRECISION) AS avg_qty,
  CAST(SUM(base.l_extendedprice) AS DOUBLE PRECISION) / CAST(COUNT(base.l_extendedprice) AS DOUBLE PRECISION) AS avg_price,
  CAST(SUM(base.l_discount) AS DOUBLE PRECISION) / CAST(COUNT(base.l_discount) AS DOUBLE PRECISION) AS avg_disc,
  COUNT(*) AS count_order
FROM base
GROUP BY
  base.l_returnflag,
  base.l_linestatus
ORDER BY
  base.l_returnflag COLLATE "C" ASC,
  base.l_linestatus COLLATE "C" ASC;
