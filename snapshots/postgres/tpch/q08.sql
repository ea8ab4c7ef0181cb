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
  FROM lineitem
)
SELECT
  CAST(EXTRACT(YEAR FROM orders.o_orderdate) AS BIGINT) AS o_year,
  strata_internal.strata_div_71454579d9(
    SUM(
      CASE
        WHEN n2.n_name = 'BRAZIL'
        THEN base.l_extendedprice * (
          1 - base.l_discount
        )
        ELSE 0
      END
    ),
    SUM(base.l_extendedprice * (
      1 - base.l_discount
    ))
  ) AS mkt_share
FROM base
JOIN part
  ON part.p_partkey = base.l_partkey
JOIN supplier
  ON supplier.s_suppkey = base.l_suppkey
JOIN orders
  ON orders.o_orderkey = base.l_orderkey
JOIN customer
  ON customer.c_custkey = orders.o_custkey
JOIN nation AS n1
  ON n1.n_nationkey = customer.c_nationkey
JOIN region
  ON region.r_regionkey = n1.n_regionkey
JOIN nation AS n2
  ON n2.n_nationkey = supplier.s_nationkey
WHERE
  region.r_name = 'AMERICA'
  AND orders.o_orderdate BETWEEN CAST('1995-01-01' AS DATE) AND CAST('1996-12-31' AS DATE)
  AND part.p_type = 'ECONOMY ANODIZED STEEL'
GROUP BY
  CAST(EXTRACT(YEAR FROM orders.o_orderdate) AS BIGINT)
ORDER BY
  CAST(EXTRACT(YEAR FROM orders.o_orderdate) AS BIGINT) ASC;
