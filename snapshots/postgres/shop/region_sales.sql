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
  strata_internal.strata_round_4f9d850304(
    CASE
      WHEN CAST(__g.order_count AS DOUBLE PRECISION) = 0
      THEN SIGN(CAST(__g.revenue AS DOUBLE PRECISION)) * CASE
        WHEN SUBSTRING(CAST(CAST(__g.order_count AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
        THEN CAST('-Infinity' AS DOUBLE PRECISION)
        ELSE CAST('Infinity' AS DOUBLE PRECISION)
      END
      ELSE CAST(__g.revenue AS DOUBLE PRECISION) / CAST(__g.order_count AS DOUBLE PRECISION)
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
