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
  CAST(CAST(base.amount_cents AS DOUBLE) / CAST(100 AS DOUBLE) AS DECIMAL(16, 2)) AS amount
FROM base;
