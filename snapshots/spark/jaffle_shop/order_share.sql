-- model order_share (full)
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
), base_2 AS (
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
), t_2 AS (
  SELECT
    SUM(base_2.order_total) AS revenue
  FROM base_2
)
SELECT
  base.order_id,
  base.order_total,
  strata_internal.strata_div_a2fb1452bb(base.order_total, t.revenue) AS share
FROM base
CROSS JOIN t_2 AS t;
