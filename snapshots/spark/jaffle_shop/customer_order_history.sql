-- model customer_order_history (full)
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
  WHERE
    NOT orders.customer_id IS NULL
)
SELECT
  base.order_id,
  base.customer_id,
  base.ordered_at,
  base.order_total,
  base.count_order_items,
  base.customer_order_number,
  LAG(base.ordered_at) OVER (
    PARTITION BY base.customer_id
    ORDER BY base.ordered_at ASC NULLS LAST, base.order_id ASC NULLS LAST
  ) AS previous_ordered_at,
  SUM(base.order_total) OVER (
    PARTITION BY base.customer_id
    ORDER BY base.ordered_at ASC NULLS LAST, base.order_id ASC NULLS LAST
    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS running_spend
FROM base;
