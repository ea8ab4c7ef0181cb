-- model q13 (full)
WITH base AS (
  SELECT
    customer.c_custkey,
    customer.c_name,
    customer.c_address,
    customer.c_nationkey,
    customer.c_phone,
    customer.c_acctbal,
    customer.c_mktsegment,
    customer.c_comment
  FROM customer
), base_2 AS (
  SELECT
    orders.o_orderkey,
    orders.o_custkey,
    orders.o_orderstatus,
    orders.o_totalprice,
    orders.o_orderdate,
    orders.o_orderpriority,
    orders.o_clerk,
    orders.o_shippriority,
    orders.o_comment
  FROM orders
  WHERE
    NOT orders.o_comment LIKE '%special%requests%' ESCAPE '\\'
), o_2 AS (
  SELECT
    base_2.o_orderkey,
    base_2.o_custkey,
    base_2.o_orderstatus,
    base_2.o_totalprice,
    base_2.o_orderdate,
    base_2.o_orderpriority,
    base_2.o_clerk,
    base_2.o_shippriority,
    base_2.o_comment
  FROM base_2
), aggregated AS (
  SELECT
    COUNT(o.o_orderkey) AS c_count
  FROM base
  LEFT JOIN o_2 AS o
    ON o.o_custkey = base.c_custkey
  GROUP BY
    base.c_custkey
)
SELECT
  aggregated.c_count,
  COUNT(*) AS custdist
FROM aggregated
GROUP BY
  aggregated.c_count
ORDER BY
  COUNT(*) DESC NULLS LAST,
  aggregated.c_count DESC NULLS LAST;
