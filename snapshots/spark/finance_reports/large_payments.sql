-- model large_payments (full)
WITH base AS (
  SELECT
    stg_payments.id,
    stg_payments.order_id,
    stg_payments.method,
    stg_payments.amount
  FROM v_stg_payments AS stg_payments
  WHERE
    stg_payments.amount >= CAST(CAST(CAST(ELEMENT_AT(
      TRANSFORM(
        ARRAY((
          CAST(2000 AS DOUBLE) / CAST(100 AS DOUBLE)
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
    ) AS BIGINT) AS DECIMAL(19, 0)) * 0.01 AS DECIMAL(16, 2))
)
SELECT
  base.id,
  base.order_id,
  base.amount
FROM base;
