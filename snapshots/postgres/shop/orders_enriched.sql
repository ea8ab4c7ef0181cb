-- model orders_enriched (full)
WITH base AS (
  SELECT
    clean_orders.order_id,
    clean_orders.customer_id,
    clean_orders.status,
    clean_orders.channel,
    clean_orders.order_date,
    clean_orders.updated_at
  FROM v_clean_orders AS clean_orders
)
SELECT
  base.order_id,
  base.customer_id,
  c.name AS customer_name,
  c.region,
  base.order_date,
  EXTRACT(MONTH FROM base.order_date) AS order_month,
  base.status,
  base.channel,
  t.lines,
  t.units,
  t.subtotal,
  t.subtotal >= 50 AS big_order
FROM base
JOIN v_order_totals AS t
  ON base.order_id = t.order_id
JOIN v_customer_profiles AS c
  ON base.customer_id = c.customer_id
WHERE
  NOT base.status IN ('cancelled', 'returned');
