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
  ELEMENT_AT(
    ARRAY_AGG(base.order_id ORDER BY base.order_total DESC, base.order_id DESC) FILTER(WHERE
      NOT base.order_id IS NULL AND NOT base.order_total IS NULL),
    1
  ) AS biggest_order_id,
  ELEMENT_AT(
    ARRAY_AGG(base.order_id ORDER BY base.ordered_at ASC, base.order_id ASC) FILTER(WHERE
      NOT base.order_id IS NULL AND NOT base.ordered_at IS NULL),
    1
  ) AS first_order_id
FROM base
GROUP BY
  base.customer_id;
