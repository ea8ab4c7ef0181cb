-- model stg_customers (full)
WITH base AS (
  SELECT
    raw_customers.id,
    raw_customers.name
  FROM READ_CSV(
    'examples/jaffle_shop/data/raw_customers.csv',
    types := {'id': 'BIGINT', 'name': 'TEXT'}
  ) AS raw_customers
)
SELECT
  base.id AS customer_id,
  base.name AS customer_name
FROM base;
