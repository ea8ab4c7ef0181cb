-- model orders (full)
WITH base AS (
  SELECT
    stg_orders.order_id,
    stg_orders.customer_id,
    stg_orders.ordered_at,
    stg_orders.store_id,
    stg_orders.subtotal,
    stg_orders.order_total,
    stg_orders.updated_at
  FROM v_stg_orders AS stg_orders
), base_2 AS (
  SELECT
    stg_order_items.order_item_id,
    stg_order_items.order_id,
    stg_order_items.product_id
  FROM v_stg_order_items AS stg_order_items
), items_2 AS (
  SELECT
    base_2.order_id,
    COUNT(*) AS n_items,
    SUM(CAST(CASE WHEN p.is_drink THEN 1 ELSE 0 END AS DECIMAL(38, 0))) AS n_drinks,
    SUM(p.price) AS cost
  FROM base_2
  JOIN v_stg_products AS p
    ON base_2.product_id = p.product_id
  GROUP BY
    base_2.order_id
)
SELECT
  base.order_id,
  base.customer_id,
  base.ordered_at,
  base.order_total,
  COALESCE(items.n_items, 0) AS count_order_items,
  COALESCE(items.n_drinks, 0) AS count_drinks,
  COALESCE(items.cost, 0) AS order_cost,
  ROW_NUMBER() OVER (
    PARTITION BY base.customer_id
    ORDER BY base.ordered_at ASC NULLS LAST, base.order_id ASC NULLS LAST
  ) AS customer_order_number,
  ROW_NUMBER() OVER (
    PARTITION BY base.customer_id
    ORDER BY base.ordered_at ASC NULLS LAST, base.order_id ASC NULLS LAST
  ) > 1 AS is_repeat_buyer
FROM base
LEFT JOIN items_2 AS items
  ON items.order_id = base.order_id;
