-- model q14 (full)
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
  WHERE
    lineitem.l_shipdate >= CAST('1995-09-01' AS DATE)
    AND lineitem.l_shipdate < CAST(TIMESTAMPADD(MONTH, 1, CAST('1995-09-01' AS DATE)) AS DATE)
)
SELECT
  ELEMENT_AT(
    TRANSFORM(
      ARRAY(100.00 * __g.__a1),
      __o -> CASE
        WHEN CAST(__g.__a2 AS DOUBLE) = 0
        THEN SIGN(CAST(__o AS DOUBLE)) * CASE
          WHEN SUBSTRING(CAST(CAST(__g.__a2 AS DOUBLE) AS STRING), 1, 1) = '-'
          THEN CAST('-Infinity' AS DOUBLE)
          ELSE CAST('Infinity' AS DOUBLE)
        END
        ELSE CAST(__o AS DOUBLE) / CAST(__g.__a2 AS DOUBLE)
      END
    ),
    1
  ) AS promo_revenue
FROM (
  SELECT
    SUM(
      CASE
        WHEN part.p_type LIKE 'PROMO%'
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
) AS __g;
