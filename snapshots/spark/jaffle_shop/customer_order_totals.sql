-- model customer_order_totals (full)
WITH priced AS (
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
    orders.order_total > 0
), base_2 AS (
  SELECT
    priced.order_id,
    priced.customer_id,
    priced.ordered_at,
    priced.order_total,
    priced.count_order_items,
    priced.count_drinks,
    priced.order_cost,
    priced.customer_order_number,
    priced.is_repeat_buyer
  FROM priced
), base_3 AS (
  SELECT
    priced.order_id,
    priced.customer_id,
    priced.ordered_at,
    priced.order_total,
    priced.count_order_items,
    priced.count_drinks,
    priced.order_cost,
    priced.customer_order_number,
    priced.is_repeat_buyer
  FROM priced
), s_2 AS (
  SELECT
    base_3.customer_id,
    SUM(base_3.order_total) AS spend
  FROM base_3
  GROUP BY
    base_3.customer_id
)
SELECT
  c.customer_name,
  s.spend,
  base_2.order_id,
  base_2.customer_id,
  base_2.ordered_at,
  base_2.order_total,
  base_2.count_order_items,
  base_2.customer_order_number
FROM base_2
JOIN s_2 AS s
  ON s.customer_id = base_2.customer_id
JOIN v_stg_customers AS c
  ON c.customer_id = base_2.customer_id;
