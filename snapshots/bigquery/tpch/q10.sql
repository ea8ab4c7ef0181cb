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
  FROM lineitem
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
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
JOIN customer
  ON customer.c_custkey = orders.o_custkey
JOIN nation
  ON nation.n_nationkey = customer.c_nationkey
WHERE
  orders.o_orderdate >= CAST('1993-10-01' AS DATE)
  AND orders.o_orderdate < CAST(DATE_ADD(CAST('1993-10-01' AS DATE), INTERVAL 3 MONTH) AS DATE)
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
  customer.c_custkey ASC NULLS LAST,
  customer.c_name ASC NULLS LAST,
  customer.c_acctbal ASC NULLS LAST,
  customer.c_phone ASC NULLS LAST,
  nation.n_name ASC NULLS LAST,
  customer.c_address ASC NULLS LAST,
  customer.c_comment ASC NULLS LAST
LIMIT 20;
