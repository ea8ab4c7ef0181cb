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
  FROM parquet.`file://<repo>/examples/tpch/data/lineitem.parquet` AS lineitem
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
JOIN parquet.`file://<repo>/examples/tpch/data/orders.parquet` AS orders
  ON orders.o_orderkey = base.l_orderkey
JOIN parquet.`file://<repo>/examples/tpch/data/customer.parquet` AS customer
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
  orders.o_totalprice DESC,
  orders.o_orderdate ASC NULLS LAST,
  customer.c_name ASC NULLS LAST,
  customer.c_custkey ASC NULLS LAST,
  orders.o_orderkey ASC NULLS LAST
LIMIT 100;
