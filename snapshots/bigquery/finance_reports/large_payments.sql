-- model large_payments (full)
WITH base AS (
  SELECT
    stg_payments.id,
    stg_payments.order_id,
    stg_payments.method,
    stg_payments.amount
  FROM v_stg_payments AS stg_payments
  WHERE
    stg_payments.amount >= CAST(ROUND(IEEE_DIVIDE(CAST(2000 AS FLOAT64), CAST(100 AS FLOAT64)), 2) AS NUMERIC)
)
SELECT
  base.id,
  base.order_id,
  base.amount
FROM base;
