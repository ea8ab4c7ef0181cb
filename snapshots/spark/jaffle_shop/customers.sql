-- model customers (full)
WITH base AS (
  SELECT
    stg_customers.customer_id,
    stg_customers.customer_name
  FROM v_stg_customers AS stg_customers
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
), o_2 AS (
  SELECT
    base_2.customer_id,
    COUNT(*) AS n,
    MIN(base_2.ordered_at) AS first_ordered_at,
    MAX(base_2.ordered_at) AS last_ordered_at,
    SUM(base_2.order_total) AS spend
  FROM base_2
  GROUP BY
    base_2.customer_id
)
SELECT
  base.customer_id,
  base.customer_name,
  COALESCE(o.n, 0) AS count_lifetime_orders,
  o.first_ordered_at,
  o.last_ordered_at,
  COALESCE(o.spend, 0) AS lifetime_spend,
  CASE WHEN o.n > 1 THEN 'returning' WHEN o.n = 1 THEN 'new' ELSE 'none' END AS customer_type
FROM base
LEFT JOIN o_2 AS o
  ON o.customer_id = base.customer_id;
