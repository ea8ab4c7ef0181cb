-- model large_payments (full)
WITH base AS (
  SELECT
    stg_payments.id,
    stg_payments.order_id,
    stg_payments.method,
    stg_payments.amount
  FROM v_stg_payments AS stg_payments
  WHERE
    stg_payments.amount >= CAST(CAST(CAST((
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
          (
            CAST(2000 AS DOUBLE PRECISION) / CAST(100 AS DOUBLE PRECISION)
          ) * 100.0 AS __v
        OFFSET 0
      ) AS __r
    ) AS BIGINT) AS DECIMAL(19, 0)) * 0.01 AS DECIMAL(16, 2))
)
SELECT
  base.id,
  base.order_id,
  base.amount
FROM base;
