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
  CASE
    WHEN CAST(t.revenue AS DOUBLE PRECISION) = 0
    THEN SIGN(CAST(base.order_total AS DOUBLE PRECISION)) * CASE
      WHEN SUBSTRING(CAST(CAST(t.revenue AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
      THEN CAST('-Infinity' AS DOUBLE PRECISION)
      ELSE CAST('Infinity' AS DOUBLE PRECISION)
    END
    ELSE CAST(base.order_total AS DOUBLE PRECISION) / CAST(t.revenue AS DOUBLE PRECISION)
  END AS share
FROM base
CROSS JOIN t_2 AS t;
