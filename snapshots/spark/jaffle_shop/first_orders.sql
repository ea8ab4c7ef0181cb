-- model first_orders (full)
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
), windowed AS (
  SELECT
    base.order_id,
    base.customer_id,
    base.ordered_at,
    ROW_NUMBER() OVER (
      PARTITION BY base.customer_id
      ORDER BY base.ordered_at ASC NULLS LAST, base.order_id ASC NULLS LAST
    ) AS n
  FROM base
)
SELECT
  windowed.customer_id,
  windowed.order_id,
  windowed.ordered_at
FROM windowed
WHERE
  windowed.n = 1;
