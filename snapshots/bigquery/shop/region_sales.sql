-- model region_sales (full)
WITH base AS (
  SELECT
    c.customer_id,
    c.name,
    c.email,
    c.region,
    c.signup_date,
    c.changed_at
  FROM v_customer_profiles AS c
)
SELECT
  base.region,
  COUNT(DISTINCT base.customer_id) AS buyers,
  COUNT(*) AS order_count,
  SUM(o.subtotal) AS revenue,
  CASE
    WHEN ABS(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) >= CAST('Infinity' AS FLOAT64)
    THEN IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
    WHEN CASE
      WHEN ABS(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) < 1
      THEN FALSE
      WHEN ABS(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) / 16 > 1.7976931348623157e+308 / 100.0
      THEN TRUE
      ELSE (
        ABS(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))) / 64
      ) * 100.0 >= 2.8088955232223686e+306
    END
    THEN IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
    ELSE CASE
      WHEN ABS(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0) >= 4503599627370496.0
      THEN IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
      ELSE CASE
        WHEN ABS(
          (
            IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
          ) - TRUNC(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0)
        ) > 0.5
        THEN TRUNC(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0) + SIGN(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0)
        WHEN ABS(
          (
            IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
          ) - TRUNC(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0)
        ) < 0.5
        THEN TRUNC(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0)
        WHEN SIGN(
          (
            (
              (
                (
                  IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                ) - (
                  (
                    IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                  ) - IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
                )
              ) * 100.0
            ) - (
              IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0
            )
          ) + (
            (
              IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) - (
                (
                  IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                ) - (
                  (
                    IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 134217729.0
                  ) - IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64))
                )
              )
            ) * 100.0
          )
        ) * SIGN(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0) >= 0
        THEN TRUNC(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0) + SIGN(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0)
        ELSE TRUNC(IEEE_DIVIDE(CAST(SUM(o.subtotal) AS FLOAT64), CAST(COUNT(*) AS FLOAT64)) * 100.0)
      END
    END / 100.0
  END AS avg_order_value
FROM base
JOIN v_orders_enriched AS o
  ON base.customer_id = o.customer_id
GROUP BY
  base.region
HAVING
  SUM(o.subtotal) >= 50;
