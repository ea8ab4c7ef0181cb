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
  CAST(CAST(CAST(ELEMENT_AT(
    TRANSFORM(
      ARRAY((
        CAST(base.amount_cents AS DOUBLE) / CAST(100 AS DOUBLE)
      ) * 100.0),
      __v -> CASE
        WHEN ABS(__v) >= 4503599627370496.0
        THEN __v
        ELSE CASE
          WHEN ABS(__v - CAST(__v AS BIGINT)) > 0.5
          THEN CAST(__v AS BIGINT) + SIGN(__v)
          WHEN ABS(__v - CAST(__v AS BIGINT)) = 0.5
          THEN CAST(__v AS BIGINT) + SIGN(__v)
          ELSE CAST(__v AS BIGINT)
        END
      END
    ),
    1
  ) AS BIGINT) AS DECIMAL(19, 0)) * 0.01 AS DECIMAL(16, 2)) AS amount
FROM base;
