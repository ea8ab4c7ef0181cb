-- model q06 (full)
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
    lineitem.l_shipdate >= CAST('1994-01-01' AS DATE)
    AND lineitem.l_shipdate < CAST(DATE_ADD(CAST('1994-01-01' AS DATE), INTERVAL 1 YEAR) AS DATE)
    AND lineitem.l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01
    AND lineitem.l_quantity < 24
)
SELECT
  SUM(base.l_extendedprice * base.l_discount) AS revenue
FROM base;
