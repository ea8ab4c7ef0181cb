-- model active_bestsellers (full)
WITH base AS (
  SELECT
    products.id,
    products.sku,
    products.name,
    products.category,
    products.weight_kg,
    products.active,
    products.launched_on
  FROM READ_CSV(
    'examples/shop/data/products.csv',
    types := {'id': 'BIGINT', 'sku': 'TEXT', 'name': 'TEXT', 'category': 'TEXT', 'weight_kg': 'DOUBLE', 'active': 'BOOLEAN', 'launched_on': 'DATE'}
  ) AS products
  WHERE
    products.active
), combined AS (
  SELECT
    base.id AS product_id
  FROM base
  INTERSECT
  SELECT
    product_id
  FROM v_popular_products
)
SELECT
  combined.product_id
FROM combined;
