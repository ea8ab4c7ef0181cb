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
  CAST(CAST(CAST((
    SELECT
      CASE
        WHEN ABS(__v) >= 4503599627370496.0
        THEN __v
        ELSE CASE
          WHEN ABS(__v - TRUNC(__v)) > 0.5
          THEN TRUNC(__v) + SIGN(__v)
          WHEN ABS(__v - TRUNC(__v)) = 0.5
          THEN TRUNC(__v) + SIGN(__v)
          ELSE TRUNC(__v)
        END
      END
    FROM (
      SELECT
        IEEE_DIVIDE(CAST(base.amount_cents AS FLOAT64), CAST(100 AS FLOAT64)) * 100.0 AS __v
    ) AS __r
  ) AS INT64) AS NUMERIC) * CAST('0.01' AS NUMERIC) AS NUMERIC) AS amount
FROM base;
