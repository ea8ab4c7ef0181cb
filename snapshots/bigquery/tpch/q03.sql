-- model q03 (full)
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
    lineitem.l_shipdate > CAST('1995-03-15' AS DATE)
)
SELECT
  base.l_orderkey,
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) AS revenue,
  orders.o_orderdate,
  orders.o_shippriority
FROM base
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
JOIN customer
  ON customer.c_custkey = orders.o_custkey
WHERE
  customer.c_mktsegment = 'BUILDING'
  AND orders.o_orderdate < CAST('1995-03-15' AS DATE)
GROUP BY
  base.l_orderkey,
  orders.o_orderdate,
  orders.o_shippriority
ORDER BY
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) DESC,
  orders.o_orderdate ASC NULLS LAST,
  base.l_orderkey ASC NULLS LAST,
  orders.o_shippriority ASC NULLS LAST
LIMIT 10;
