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
  FROM lineitem
  WHERE
    lineitem.l_shipdate >= CAST('1995-09-01' AS DATE)
    AND lineitem.l_shipdate < CAST(CAST('1995-09-01' AS DATE) + INTERVAL '1 MONTH' AS DATE)
)
SELECT
  (
    SELECT
      CASE
        WHEN CAST(__g.__a2 AS DOUBLE PRECISION) = 0
        THEN SIGN(CAST(__o AS DOUBLE PRECISION)) * CASE
          WHEN SUBSTRING(CAST(CAST(__g.__a2 AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
          THEN CAST('-Infinity' AS DOUBLE PRECISION)
          ELSE CAST('Infinity' AS DOUBLE PRECISION)
        END
        ELSE CAST(__o AS DOUBLE PRECISION) / CAST(__g.__a2 AS DOUBLE PRECISION)
      END
    FROM (
      SELECT
        100.00 * __g.__a1 AS __o
      OFFSET 0
    ) AS __ro
  ) AS promo_revenue
FROM (
  SELECT
    SUM(
      CASE
        WHEN part.p_type LIKE 'PROMO%' ESCAPE '\'
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
  JOIN part
    ON part.p_partkey = base.l_partkey
) AS __g;
