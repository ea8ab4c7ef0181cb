-- model q18 (full)
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
  FROM lineitem
), large_2 AS (
  SELECT
    base_2.l_orderkey,
    SUM(base_2.l_quantity) AS quantity
  FROM base_2
  GROUP BY
    base_2.l_orderkey
  HAVING
    SUM(base_2.l_quantity) > 300
)
SELECT
  customer.c_name,
  customer.c_custkey,
  orders.o_orderkey,
  orders.o_orderdate,
  orders.o_totalprice,
  SUM(base.l_quantity) AS sum_qty
FROM base
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
JOIN customer
  ON customer.c_custkey = orders.o_custkey
WHERE
  EXISTS(
    SELECT
      1
    FROM large_2 AS large
    WHERE
      large.l_orderkey = orders.o_orderkey
  )
GROUP BY
  customer.c_name,
  customer.c_custkey,
  orders.o_orderkey,
  orders.o_orderdate,
  orders.o_totalprice
ORDER BY
  orders.o_totalprice DESC NULLS LAST,
  orders.o_orderdate ASC,
  customer.c_name ASC,
  customer.c_custkey ASC,
  orders.o_orderkey ASC
LIMIT 100;
