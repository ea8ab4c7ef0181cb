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
  strata_internal.strata_round_4f9d850304(strata_internal.strata_div_bd813c66d7(SUM(o.subtotal), COUNT(*))) AS avg_order_value
FROM base
JOIN v_orders_enriched AS o
  ON base.customer_id = o.customer_id
GROUP BY
  base.region
HAVING
  SUM(o.subtotal) >= 50;
