-- model q07 (full)
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
    lineitem.l_shipdate BETWEEN CAST('1995-01-01' AS DATE) AND CAST('1996-12-31' AS DATE)
)
SELECT
  n1.n_name AS supp_nation,
  n2.n_name AS cust_nation,
  CAST(EXTRACT(YEAR FROM base.l_shipdate) AS BIGINT) AS l_year,
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) AS revenue
FROM base
JOIN supplier
  ON supplier.s_suppkey = base.l_suppkey
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
JOIN customer
  ON customer.c_custkey = orders.o_custkey
JOIN nation AS n1
  ON n1.n_nationkey = supplier.s_nationkey
JOIN nation AS n2
  ON n2.n_nationkey = customer.c_nationkey
WHERE
  n1.n_name = 'FRANCE'
  AND n2.n_name = 'GERMANY'
  OR n1.n_name = 'GERMANY'
  AND n2.n_name = 'FRANCE'
GROUP BY
  n1.n_name,
  n2.n_name,
  CAST(EXTRACT(YEAR FROM base.l_shipdate) AS BIGINT)
ORDER BY
  n1.n_name COLLATE "C" ASC,
  n2.n_name COLLATE "C" ASC,
  CAST(EXTRACT(YEAR FROM base.l_shipdate) AS BIGINT) ASC;
