-- model revenue0 (full)
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
    lineitem.l_shipdate >= CAST('1996-01-01' AS DATE)
    AND lineitem.l_shipdate < CAST(TIMESTAMPADD(MONTH, 3, CAST('1996-01-01' AS DATE)) AS DATE)
)
SELECT
  base.l_suppkey AS supplier_no,
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) AS total_revenue
FROM base
GROUP BY
  base.l_suppkey;
