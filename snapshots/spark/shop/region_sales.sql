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
  __g.region,
  __g.buyers,
  __g.order_count,
  __g.revenue,
  strata_internal.strata_round_7c5416e3fd(
    CASE
      WHEN CAST(__g.order_count AS DOUBLE) = 0
      THEN SIGN(CAST(__g.revenue AS DOUBLE)) * CASE
        WHEN SUBSTRING(CAST(CAST(__g.order_count AS DOUBLE) AS STRING), 1, 1) = '-'
        THEN CAST('-Infinity' AS DOUBLE)
        ELSE CAST('Infinity' AS DOUBLE)
      END
      ELSE CAST(__g.revenue AS DOUBLE) / CAST(__g.order_count AS DOUBLE)
    END
  ) AS avg_order_value
FROM (
  SELECT
    base.region,
    COUNT(DISTINCT base.customer_id) AS buyers,
    COUNT(*) AS order_count,
    SUM(o.subtotal) AS revenue
  FROM base
  JOIN v_orders_enriched AS o
    ON base.customer_id = o.customer_id
  GROUP BY
    base.region
  HAVING
    SUM(o.subtotal) >= 50
) AS __g;
