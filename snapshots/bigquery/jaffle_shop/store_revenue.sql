-- model store_revenue (full)
WITH base AS (
  SELECT
    stg_orders.order_id,
    stg_orders.customer_id,
    stg_orders.ordered_at,
    stg_orders.store_id,
    stg_orders.subtotal,
    stg_orders.order_total,
    stg_orders.updated_at
  FROM v_stg_orders AS stg_orders
)
SELECT
  base.store_id,
  base.customer_id,
  COUNT(*) AS orders,
  SUM(base.order_total) AS revenue,
  CAST(GROUPING(base.customer_id) AS INT64) AS is_store_total,
  CAST(GROUPING(base.store_id) AS INT64) AS is_grand_total
FROM base
GROUP BY
  ROLLUP (
    base.store_id,
    base.customer_id
  );
