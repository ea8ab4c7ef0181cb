-- model q05 (full)
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
)
SELECT
  nation.n_name,
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) AS revenue
FROM base
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
JOIN customer
  ON customer.c_custkey = orders.o_custkey
JOIN supplier
  ON supplier.s_suppkey = base.l_suppkey
  AND supplier.s_nationkey = customer.c_nationkey
JOIN nation
  ON nation.n_nationkey = supplier.s_nationkey
JOIN region
  ON region.r_regionkey = nation.n_regionkey
WHERE
  region.r_name = 'ASIA'
  AND orders.o_orderdate >= CAST('1994-01-01' AS DATE)
  AND orders.o_orderdate < CAST(TIMESTAMPADD(YEAR, 1, CAST('1994-01-01' AS DATE)) AS DATE)
GROUP BY
  nation.n_name
ORDER BY
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) DESC NULLS LAST;
