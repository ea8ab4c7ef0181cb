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
  COUNT(*) AS order_count,
  COUNT(DISTINCT base.customer_id) AS buyers,
  SUM(base.subtotal) AS revenue,
  MIN(base.order_date) AS first_order,
  MAX(base.order_date) AS last_order,
  (
    SELECT
      CASE
        WHEN ABS(__v) >= CAST('Infinity' AS DOUBLE PRECISION)
        THEN __v
        WHEN CASE
          WHEN ABS(__v) < 1
          THEN FALSE
          WHEN ABS(__v) / 16 > 1.7976931348623157e+308 / 100.0
          THEN TRUE
          ELSE (
            ABS(__v) / 64
          ) * 100.0 >= 2.8088955232223686e+306
        END
        THEN __v
        ELSE CASE
          WHEN ABS(__v * 100.0) >= 4503599627370496.0
          THEN __v * 100.0
          ELSE CASE
            WHEN ABS((
              __v * 100.0
            ) - TRUNC(__v * 100.0)) > 0.5
            THEN TRUNC(__v * 100.0) + SIGN(__v * 100.0)
            WHEN ABS((
              __v * 100.0
            ) - TRUNC(__v * 100.0)) < 0.5
            THEN TRUNC(__v * 100.0)
            WHEN SIGN(
              (
                (
                  (
                    (
                      __v * 134217729.0
                    ) - (
                      (
                        __v * 134217729.0
                      ) - __v
                    )
                  ) * 100.0
                ) - (
                  __v * 100.0
                )
              ) + (
                (
                  __v - (
                    (
                      __v * 134217729.0
                    ) - (
                      (
                        __v * 134217729.0
                      ) - __v
                    )
                  )
                ) * 100.0
              )
            ) * SIGN(__v * 100.0) >= 0
            THEN TRUNC(__v * 100.0) + SIGN(__v * 100.0)
            ELSE TRUNC(__v * 100.0)
          END
        END / 100.0
      END
    FROM (
      SELECT
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
          THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE PRECISION)
            ELSE CAST('Infinity' AS DOUBLE PRECISION)
          END
          ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        END AS __v
    ) AS __r
  ) AS avg_order_value
FROM base;
