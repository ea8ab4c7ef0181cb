-- model latest_order_per_customer (full)
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
), step AS (
  SELECT
    base.order_id,
    base.customer_id,
    base.ordered_at,
    ROW_NUMBER() OVER (PARTITION BY base.customer_id ORDER BY base.ordered_at DESC, base.order_id DESC) AS __row
  FROM base
)
SELECT
  step.customer_id,
  step.order_id,
  step.ordered_at
FROM step
WHERE
  step.__row <= 1;
