-- model large_payments (full)
WITH base AS (
  SELECT
    stg_payments.id,
    stg_payments.order_id,
    stg_payments.method,
    stg_payments.amount
  FROM v_stg_payments AS stg_payments
  WHERE
    stg_payments.amount >= CAST(2000 / 100 AS DECIMAL(16, 2))
)
SELECT
  base.id,
  base.order_id,
  base.amount
FROM base;
