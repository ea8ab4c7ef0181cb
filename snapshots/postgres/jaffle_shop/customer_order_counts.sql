-- model customer_order_counts (full)
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
  WHERE
    NOT orders.customer_id IS NULL
), o_2 AS (
  SELECT
    base_2.customer_id,
    COUNT(*) AS n
  FROM base_2
  GROUP BY
    base_2.customer_id
)
SELECT
  COALESCE(base.customer_id, o.customer_id) AS id,
  base.customer_name,
  COALESCE(o.n, 0) AS orders
FROM base
FULL JOIN o_2 AS o
  ON o.customer_id = base.customer_id;
