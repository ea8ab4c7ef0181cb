-- model customers_with_orders (full)
WITH base AS (
  SELECT
    stg_customers.customer_id,
    stg_customers.customer_name
  FROM v_stg_customers AS stg_customers
)
SELECT
  base.customer_id,
  base.customer_name
FROM base
WHERE
  EXISTS(
    SELECT
      1
    FROM v_stg_orders AS o
    WHERE
      o.customer_id = base.customer_id
  );
