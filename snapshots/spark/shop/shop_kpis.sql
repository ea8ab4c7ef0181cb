-- model shop_kpis (full)
WITH base AS (
  SELECT
    orders_enriched.order_id,
    orders_enriched.customer_id,
    orders_enriched.customer_name,
    orders_enriched.region,
    orders_enriched.order_date,
    orders_enriched.order_month,
    orders_enriched.status,
    orders_enriched.channel,
    orders_enriched.lines,
    orders_enriched.units,
    orders_enriched.subtotal,
    orders_enriched.big_order
  FROM v_orders_enriched AS orders_enriched
)
SELECT
  __g.order_count,
  __g.buyers,
  __g.revenue,
  __g.first_order,
  __g.last_order,
  ELEMENT_AT(
    TRANSFORM(
      ARRAY(
        CASE
          WHEN CAST(__g.order_count AS DOUBLE) = 0
          THEN SIGN(CAST(__g.revenue AS DOUBLE)) * CASE
            WHEN SUBSTRING(CAST(CAST(__g.order_count AS DOUBLE) AS STRING), 1, 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE)
            ELSE CAST('Infinity' AS DOUBLE)
          END
          ELSE CAST(__g.revenue AS DOUBLE) / CAST(__g.order_count AS DOUBLE)
        END
      ),
      __o -> CASE
        WHEN ABS(__o) >= CAST('Infinity' AS DOUBLE)
        THEN __o
        WHEN CASE
          WHEN ABS(__o) < 1
          THEN FALSE
          WHEN ABS(__o) / 16 > 1.7976931348623157e+308 / 100.0
          THEN TRUE
          ELSE (
            ABS(__o) / 64
          ) * 100.0 >= 2.8088955232223686e+306
        END
        THEN __o
        ELSE CASE
          WHEN ABS(__o * 100.0) >= 4503599627370496.0
          THEN __o * 100.0
          ELSE CASE
            WHEN ABS((
              __o * 100.0
            ) - CAST(__o * 100.0 AS BIGINT)) > 0.5
            THEN CAST(__o * 100.0 AS BIGINT) + SIGN(__o * 100.0)
            WHEN ABS((
              __o * 100.0
            ) - CAST(__o * 100.0 AS BIGINT)) < 0.5
            THEN CAST(__o * 100.0 AS BIGINT)
            WHEN SIGN(
              (
                (
                  (
                    (
                      __o * 134217729.0
                    ) - (
                      (
                        __o * 134217729.0
                      ) - __o
                    )
                  ) * 100.0
                ) - (
                  __o * 100.0
                )
              ) + (
                (
                  __o - (
                    (
                      __o * 134217729.0
                    ) - (
                      (
                        __o * 134217729.0
                      ) - __o
                    )
                  )
                ) * 100.0
              )
            ) * SIGN(__o * 100.0) >= 0
            THEN CAST(__o * 100.0 AS BIGINT) + SIGN(__o * 100.0)
            ELSE CAST(__o * 100.0 AS BIGINT)
          END
        END / 100.0
      END
    ),
    1
  ) AS avg_order_value
FROM (
  SELECT
    COUNT(*) AS order_count,
    COUNT(DISTINCT base.customer_id) AS buyers,
    SUM(base.subtotal) AS revenue,
    MIN(base.order_date) AS first_order,
    MAX(base.order_date) AS last_order
  FROM base
) AS __g;
