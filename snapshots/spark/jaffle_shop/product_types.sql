-- model product_types (full)
WITH base AS (
  SELECT
    stg_products.product_id,
    stg_products.product_name,
    stg_products.product_type,
    stg_products.price,
    stg_products.is_drink
  FROM v_stg_products AS stg_products
), step AS (
  SELECT DISTINCT
    base.product_type
  FROM base
)
SELECT
  step.product_type
FROM step;
