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
  IEEE_DIVIDE(CAST(CAST(ROUND(base.price, 2) AS NUMERIC) AS FLOAT64), CAST(100 AS FLOAT64)) AS price,
  base.type = 'beverage' AS is_drink
FROM base;
