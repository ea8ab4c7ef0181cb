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
          CAST(SUM(o.subtotal) AS DOUBLE) / CAST(COUNT(*) AS DOUBLE)
        ) * POWER(CAST(10 AS DOUBLE), 2) - CAST((
          CAST(SUM(o.subtotal) AS DOUBLE) / CAST(COUNT(*) AS DOUBLE)
        ) * POWER(CAST(10 AS DOUBLE), 2) AS BIGINT)
      ) >= 0.5
      THEN CAST((
        CAST(SUM(o.subtotal) AS DOUBLE) / CAST(COUNT(*) AS DOUBLE)
      ) * POWER(CAST(10 AS DOUBLE), 2) AS BIGINT) + SIGN(
        (
          CAST(SUM(o.subtotal) AS DOUBLE) / CAST(COUNT(*) AS DOUBLE)
        ) * POWER(CAST(10 AS DOUBLE), 2)
      )
      ELSE CAST((
        CAST(SUM(o.subtotal) AS DOUBLE) / CAST(COUNT(*) AS DOUBLE)
      ) * POWER(CAST(10 AS DOUBLE), 2) AS BIGINT)
    END
  ) / POWER(CAST(10 AS DOUBLE), 2) AS avg_order_value
FROM base
JOIN v_orders_enriched AS o
  ON base.customer_id = o.customer_id
GROUP BY
  base.region
HAVING
  SUM(o.subtotal) >= 50;
