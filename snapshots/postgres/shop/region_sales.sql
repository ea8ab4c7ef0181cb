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
  (
    CASE
      WHEN ABS(
        (
          CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        ) * POWER(CAST(10 AS DOUBLE PRECISION), 2) - TRUNC(
          (
            CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          ) * POWER(CAST(10 AS DOUBLE PRECISION), 2)
        )
      ) >= 0.5
      THEN TRUNC(
        (
          CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        ) * POWER(CAST(10 AS DOUBLE PRECISION), 2)
      ) + SIGN(
        (
          CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        ) * POWER(CAST(10 AS DOUBLE PRECISION), 2)
      )
      ELSE TRUNC(
        (
          CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        ) * POWER(CAST(10 AS DOUBLE PRECISION), 2)
      )
    END
  ) / POWER(CAST(10 AS DOUBLE PRECISION), 2) AS avg_order_value
FROM base
JOIN v_orders_enriched AS o
  ON base.customer_id = o.customer_id
GROUP BY
  base.region
HAVING
  SUM(o.subtotal) >= 50;
