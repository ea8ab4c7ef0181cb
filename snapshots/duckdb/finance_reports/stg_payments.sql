-- model stg_payments (full)
WITH base AS (
  SELECT
    raw_payments.id,
    raw_payments.order_id,
    raw_payments.method,
    raw_payments.amount_cents,
    raw_payments.status
  FROM READ_CSV(
    'examples/finance_core/data/payments.csv',
    types := {'id': 'BIGINT', 'order_id': 'BIGINT', 'method': 'TEXT', 'amount_cents': 'BIGINT', 'status': 'TEXT'}
  ) AS raw_payments
  WHERE
    raw_payments.status = 'success'
)
SELECT
  base.id,
  base.order_id,
  base.method,
  CAST(base.amount_cents / 100 AS DECIMAL(16, 2)) AS amount
FROM base;
