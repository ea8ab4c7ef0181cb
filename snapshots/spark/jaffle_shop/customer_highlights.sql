-- model customer_highlights (full)
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
  base.customer_id,
  MAX_BY(base.order_id, STRUCT(base.order_total, base.order_id)) FILTER(WHERE
    NOT base.order_id IS NULL AND NOT base.order_total IS NULL) AS biggest_order_id,
  MIN_BY(base.order_id, STRUCT(base.ordered_at, base.order_id)) FILTER(WHERE
    NOT base.order_id IS NULL AND NOT base.ordered_at IS NULL) AS first_order_id
FROM base
GROUP BY
  base.customer_id;
