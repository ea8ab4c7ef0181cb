-- model q21 (full)
WITH base AS (
  SELECT
    l1.l_orderkey,
    l1.l_partkey,
    l1.l_suppkey,
    l1.l_linenumber,
    l1.l_quantity,
    l1.l_extendedprice,
    l1.l_discount,
    l1.l_tax,
    l1.l_returnflag,
    l1.l_linestatus,
    l1.l_shipdate,
    l1.l_commitdate,
    l1.l_receiptdate,
    l1.l_shipinstruct,
    l1.l_shipmode,
    l1.l_comment
  FROM lineitem AS l1
  WHERE
    l1.l_receiptdate > l1.l_commitdate
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
  WHERE
    lineitem.l_receiptdate > lineitem.l_commitdate
), l3_2 AS (
  SELECT
    base_2.l_orderkey,
    base_2.l_partkey,
    base_2.l_suppkey,
    base_2.l_linenumber,
    base_2.l_quantity,
    base_2.l_extendedprice,
    base_2.l_discount,
    base_2.l_tax,
    base_2.l_returnflag,
    base_2.l_linestatus,
    base_2.l_shipdate,
    base_2.l_commitdate,
    base_2.l_receiptdate,
    base_2.l_shipinstruct,
    base_2.l_shipmode,
    base_2.l_comment
  FROM base_2
)
SELECT
  supplier.s_name,
  COUNT(*) AS numwait
FROM base
JOIN supplier
  ON supplier.s_suppkey = base.l_suppkey
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
JOIN nation
  ON nation.n_nationkey = supplier.s_nationkey
WHERE
  (
    orders.o_orderstatus = 'F' AND nation.n_name = 'SAUDI ARABIA'
  )
  AND EXISTS(
    SELECT
      1
    FROM lineitem AS l2
    WHERE
      l2.l_orderkey = base.l_orderkey AND l2.l_suppkey <> base.l_suppkey
  )
  AND NOT EXISTS(
    SELECT
      1
    FROM l3_2 AS l3
    WHERE
      l3.l_orderkey = base.l_orderkey AND l3.l_suppkey <> base.l_suppkey
  )
GROUP BY
  supplier.s_name
ORDER BY
  COUNT(*) DESC NULLS LAST,
  supplier.s_name COLLATE "C" ASC
LIMIT 100;
