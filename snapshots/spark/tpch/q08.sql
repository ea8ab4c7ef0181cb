-- model q08 (full)
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
  __g.o_year,
  CASE
    WHEN CAST(__g.__a2 AS DOUBLE) = 0
    THEN SIGN(CAST(__g.__a1 AS DOUBLE)) * CASE
      WHEN SUBSTRING(CAST(CAST(__g.__a2 AS DOUBLE) AS STRING), 1, 1) = '-'
      THEN CAST('-Infinity' AS DOUBLE)
      ELSE CAST('Infinity' AS DOUBLE)
    END
    ELSE CAST(__g.__a1 AS DOUBLE) / CAST(__g.__a2 AS DOUBLE)
  END AS mkt_share
FROM (
  SELECT
    EXTRACT(YEAR FROM orders.o_orderdate) AS o_year,
    SUM(
      CASE
        WHEN n2.n_name = 'BRAZIL'
        THEN base.l_extendedprice * (
          1 - base.l_discount
        )
        ELSE 0
      END
    ) AS __a1,
    SUM(base.l_extendedprice * (
      1 - base.l_discount
    )) AS __a2
  FROM base
  JOIN parquet.`file://<repo>/examples/tpch/data/part.parquet` AS part
    ON part.p_partkey = base.l_partkey
  JOIN parquet.`file://<repo>/examples/tpch/data/supplier.parquet` AS supplier
    ON supplier.s_suppkey = base.l_suppkey
  JOIN parquet.`file://<repo>/examples/tpch/data/orders.parquet` AS orders
    ON orders.o_orderkey = base.l_orderkey
  JOIN parquet.`file://<repo>/examples/tpch/data/customer.parquet` AS customer
    ON customer.c_custkey = orders.o_custkey
  JOIN parquet.`file://<repo>/examples/tpch/data/nation.parquet` AS n1
    ON n1.n_nationkey = customer.c_nationkey
  JOIN parquet.`file://<repo>/examples/tpch/data/region.parquet` AS region
    ON region.r_regionkey = n1.n_regionkey
  JOIN parquet.`file://<repo>/examples/tpch/data/nation.parquet` AS n2
    ON n2.n_nationkey = supplier.s_nationkey
  WHERE
    region.r_name = 'AMERICA'
    AND orders.o_orderdate BETWEEN CAST('1995-01-01' AS DATE) AND CAST('1996-12-31' AS DATE)
    AND part.p_type = 'ECONOMY ANODIZED STEEL'
  GROUP BY
    EXTRACT(YEAR FROM orders.o_orderdate)
) AS __g
ORDER BY
  __g.o_year ASC NULLS LAST;
