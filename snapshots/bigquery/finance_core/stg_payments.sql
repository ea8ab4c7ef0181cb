-- model stg_payments (full)
WITH base AS (
  SELECT
    raw_payments.id,
    raw_payments.order_id,
    raw_payments.method,
    raw_payments.amount_cents,
    raw_payments.status
  FROM raw_payments
  WHERE
    raw_payments.status = 'success'
)
SELECT
  base.id,
  base.order_id,
  base.method,
  CAST(ROUND(IEEE_DIVIDE(CAST(base.amount_cents AS FLOAT64), CAST(100 AS FLOAT64)), 2) AS NUMERIC) AS amount
FROM base;
