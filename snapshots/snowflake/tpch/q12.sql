-- model q12 (full)
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
    lineitem.l_shipmode IN ('MAIL', 'SHIP')
    AND lineitem.l_commitdate < lineitem.l_receiptdate
    AND lineitem.l_shipdate < lineitem.l_commitdate
    AND lineitem.l_receiptdate >= CAST('1994-01-01' AS DATE)
    AND lineitem.l_receiptdate < CAST(TIMESTAMPADD(YEAR, 1, CAST('1994-01-01' AS DATE)) AS DATE)
)
SELECT
  base.l_shipmode,
  COUNT(CASE WHEN orders.o_orderpriority IN ('1-URGENT', '2-HIGH') THEN 1 END) AS high_line_count,
  COUNT(CASE WHEN NOT orders.o_orderpriority IN ('1-URGENT', '2-HIGH') THEN 1 END) AS low_line_count
FROM base
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
GROUP BY
  base.l_shipmode
ORDER BY
  base.l_shipmode ASC;
