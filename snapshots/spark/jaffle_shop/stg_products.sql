-- model stg_products (full)
WITH base AS (
  SELECT
    raw_products.sku,
    raw_products.name,
    raw_products.type,
    raw_products.price
  FROM raw_products
)
SELECT
  base.sku AS product_id,
  base.name AS product_name,
  base.type AS product_type,
  CAST(CAST(base.price AS DECIMAL(16, 2)) AS DOUBLE) / CAST(100 AS DOUBLE) AS price,
  base.type = 'beverage' AS is_drink
FROM base;
