-- model q10 (full)
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
  FROM READ_PARQUET('examples/tpch/data/lineitem.parquet') AS lineitem
  WHERE
    lineitem.l_returnflag = 'R'
)
SELECT
  customer.c_custkey,
  customer.c_name,
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) AS revenue,
  customer.c_acctbal,
  nation.n_name,
  customer.c_address,
  customer.c_phone,
  customer.c_comment
FROM base
JOIN READ_PARQUET('examples/tpch/data/orders.parquet') AS orders
  ON orders.o_orderkey = base.l_orderkey
JOIN READ_PARQUET('examples/tpch/data/customer.parquet') AS customer
  ON customer.c_custkey = orders.o_custkey
JOIN READ_PARQUET('examples/tpch/data/nation.parquet') AS nation
  ON nation.n_nationkey = customer.c_nationkey
WHERE
  orders.o_orderdate >= CAST('1993-10-01' AS DATE)
  AND orders.o_orderdate < CAST(CAST('1993-10-01' AS DATE) + INTERVAL 3 MONTH AS DATE)
GROUP BY
  customer.c_custkey,
  customer.c_name,
  customer.c_acctbal,
  customer.c_phone,
  nation.n_name,
  customer.c_address,
  customer.c_comment
ORDER BY
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) DESC,
  customer.c_custkey ASC,
  customer.c_name ASC,
  customer.c_acctbal ASC,
  customer.c_phone ASC,
  nation.n_name ASC,
  customer.c_address ASC,
  customer.c_comment ASC
LIMIT 20;
