-- model stg_order_items (full)
WITH base AS (
  SELECT
    raw_items.id,
    raw_items.order_id,
    raw_items.sku
  FROM raw_items
)
SELECT
  base.id AS order_item_id,
  base.order_id,
  base.sku AS product_id
FROM base;
