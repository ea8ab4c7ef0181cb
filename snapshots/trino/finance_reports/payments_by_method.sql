-- model payments_by_method (full)
WITH base AS (
  SELECT
    stg_payments.id,
    stg_payments.order_id,
    stg_payments.method,
    stg_payments.amount
  FROM v_stg_payments AS stg_payments
)
SELECT
  base.method,
  COUNT(*) AS payments,
  SUM(base.amount) AS total
FROM base
GROUP BY
  base.method;
