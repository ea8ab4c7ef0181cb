-- model top_orders (full)
WITH base AS (
  SELECT
    orders.order_id,
    orders.customer_id,
    orders.ordered_at,
    orders.order_total,
    orders.count_order_items,
    orders.count_drinks,
    orders.order_cost,
    orders.customer_order_number,
    orders.is_repeat_buyer
  FROM v_orders AS orders
)
SELECT
  base.order_id,
  base.customer_id,
  base.order_total
FROM base
ORDER BY
  base.order_total DESC,
  base.order_id ASC NULLS LAST
LIMIT 3;
