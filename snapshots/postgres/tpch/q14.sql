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
  strata_internal.strata_div_71454579d9(
    100.00 * SUM(
      CASE
        WHEN part.p_type LIKE 'PROMO%' ESCAPE '\'
        THEN base.l_extendedprice * (
          1 - base.l_discount
        )
        ELSE 0
      END
    ),
    SUM(base.l_extendedprice * (
      1 - base.l_discount
    ))
  ) AS promo_revenue
FROM base
JOIN part
  ON part.p_partkey = base.l_partkey;
