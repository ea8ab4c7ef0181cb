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
  (
    SELECT
      CASE
        WHEN ABS(__o) >= CAST('Infinity' AS FLOAT64)
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
            ) - TRUNC(__o * 100.0)) > 0.5
            THEN TRUNC(__o * 100.0) + SIGN(__o * 100.0)
            WHEN ABS((
              __o * 100.0
            ) - TRUNC(__o * 100.0)) < 0.5
            THEN TRUNC(__o * 100.0)
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
            THEN TRUNC(__o * 100.0) + SIGN(__o * 100.0)
            ELSE TRUNC(__o * 100.0)
          END
        END / 100.0
      END
    FROM (
      SELECT
        IEEE_DIVIDE(CAST(__g.revenue AS FLOAT64), CAST(__g.order_count AS FLOAT64)) AS __o
    ) AS __ro
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
