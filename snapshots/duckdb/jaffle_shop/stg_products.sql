-- model stg_products (full)
WITH base AS (
  SELECT
    raw_products.sku,
    raw_products.name,
    raw_products.type,
    raw_products.price
  FROM READ_CSV(
    'examples/jaffle_shop/data/raw_products.csv',
    types := {'sku': 'TEXT', 'name': 'TEXT', 'type': 'TEXT', 'price': 'BIGINT'}
  ) AS raw_products
)
SELECT
  base.sku AS product_id,
  base.name AS product_name,
  base.type AS product_type,
  CAST(base.price AS DECIMAL(16, 2)) / 100 AS price,
  base.type = 'beverage' AS is_drink
FROM base;
