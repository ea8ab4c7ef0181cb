-- model q09 (full)
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
)
SELECT
  nation.n_name AS nation,
  EXTRACT(YEAR FROM orders.o_orderdate) AS o_year,
  SUM(
    base.l_extendedprice * (
      1 - base.l_discount
    ) - partsupp.ps_supplycost * base.l_quantity
  ) AS sum_profit
FROM base
JOIN parquet.`file://<repo>/examples/tpch/data/part.parquet` AS part
  ON part.p_partkey = base.l_partkey
JOIN parquet.`file://<repo>/examples/tpch/data/supplier.parquet` AS supplier
  ON supplier.s_suppkey = base.l_suppkey
JOIN parquet.`file://<repo>/examples/tpch/data/partsupp.parquet` AS partsupp
  ON partsupp.ps_partkey = base.l_partkey AND partsupp.ps_suppkey = base.l_suppkey
JOIN parquet.`file://<repo>/examples/tpch/data/orders.parquet` AS orders
  ON orders.o_orderkey = base.l_orderkey
JOIN parquet.`file://<repo>/examples/tpch/data/nation.parquet` AS nation
  ON nation.n_nationkey = supplier.s_nationkey
WHERE
  part.p_name LIKE '%green%'
GROUP BY
  nation.n_name,
  EXTRACT(YEAR FROM orders.o_orderdate)
ORDER BY
  nation.n_name ASC NULLS LAST,
  EXTRACT(YEAR FROM orders.o_orderdate) DESC;
