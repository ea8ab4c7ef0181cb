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
  CASE
    WHEN ABS(IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) >= CAST('Infinity' AS FLOAT64)
    THEN IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
    WHEN CASE
      WHEN ABS(IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) < 1
      THEN FALSE
      WHEN ABS(IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) / 16 > 1.7976931348623157e+308 / 100.0
      THEN TRUE
      ELSE (
        ABS(IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) / 64
      ) * 100.0 >= 2.8088955232223686e+306
    END
    THEN IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
    ELSE CASE
      WHEN ABS(
        IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
      ) >= 4503599627370496.0
      THEN IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
      ELSE CASE
        WHEN ABS(
          (
            IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
          ) - TRUNC(
            IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
          )
        ) > 0.5
        THEN TRUNC(
          IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
        ) + SIGN(
          IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
        )
        WHEN ABS(
          (
            IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
          ) - TRUNC(
            IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
          )
        ) < 0.5
        THEN TRUNC(
          IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
        )
        WHEN SIGN(
          (
            (
              (
                (
                  IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                ) - (
                  (
                    IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                  ) - IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
                )
              ) * 100.0
            ) - (
              IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
            )
          ) + (
            (
              IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) - (
                (
                  IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                ) - (
                  (
                    IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                  ) - IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
                )
              )
            ) * 100.0
          )
        ) * SIGN(
          IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
        ) >= 0
        THEN TRUNC(
          IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
        ) + SIGN(
          IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
        )
        ELSE TRUNC(
          IEEE_DIVIDE(CAST(SUM(base.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
        )
      END
    END / 100.0
  END AS avg_order_value
FROM base;
