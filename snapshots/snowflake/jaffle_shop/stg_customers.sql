-- model stg_customers (full)
WITH base AS (
  SELECT
    raw_customers.id,
    raw_customers.name
  FROM raw_customers
)
SELECT
  base.id AS customer_id,
  base.name AS customer_name
FROM base;
