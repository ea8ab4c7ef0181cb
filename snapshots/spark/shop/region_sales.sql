-- model region_sales (full)
WITH base AS (
  SELECT
    c.customer_id,
    c.name,
    c.email,
    c.region,
    c.signup_date,
    c.changed_at
  FROM v_customer_profiles AS c
)
SELECT
  base.region,
  COUNT(DISTINCT base.customer_id) AS buyers,
  COUNT(*) AS order_count,
  SUM(o.subtotal) AS revenue,
  ELEMENT_AT(
    TRANSFORM(
      ARRAY(
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE) = 0
          THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE) AS STRING), 1, 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE)
            ELSE CAST('Infinity' AS DOUBLE)
          END
          ELSE CAST(SUM(o.subtotal) AS DOUBLE) / CAST(COUNT(*) AS DOUBLE)
        END
      ),
      __v -> CASE
        WHEN ABS(__v) >= CAST('Infinity' AS DOUBLE)
        THEN __v
        WHEN CASE
          WHEN ABS(__v) < 1
          THEN FALSE
          WHEN ABS(__v) / 16 > 1.7976931348623157e+308 / 100.0
          THEN TRUE
          ELSE (
            ABS(__v) / 64
          ) * 100.0 >= 2.8088955232223686e+306
        END
        THEN __v
        ELSE CASE
          WHEN ABS(__v * 100.0) >= 4503599627370496.0
          THEN __v * 100.0
          ELSE CASE
            WHEN ABS((
              __v * 100.0
            ) - CAST(__v * 100.0 AS BIGINT)) > 0.5
            THEN CAST(__v * 100.0 AS BIGINT) + SIGN(__v * 100.0)
            WHEN ABS((
              __v * 100.0
            ) - CAST(__v * 100.0 AS BIGINT)) < 0.5
            THEN CAST(__v * 100.0 AS BIGINT)
            WHEN SIGN(
              (
                (
                  (
                    (
                      __v * 134217729.0
                    ) - (
                      (
                        __v * 134217729.0
                      ) - __v
                    )
                  ) * 100.0
                ) - (
                  __v * 100.0
                )
              ) + (
                (
                  __v - (
                    (
                      __v * 134217729.0
                    ) - (
                      (
                        __v * 134217729.0
                      ) - __v
                    )
                  )
                ) * 100.0
              )
            ) * SIGN(__v * 100.0) >= 0
            THEN CAST(__v * 100.0 AS BIGINT) + SIGN(__v * 100.0)
            ELSE CAST(__v * 100.0 AS BIGINT)
          END
        END / 100.0
      END
    ),
    1
  ) AS avg_order_value
FROM base
JOIN v_orders_enriched AS o
  ON base.customer_id = o.customer_id
GROUP BY
  base.region
HAVING
  SUM(o.subtotal) >= 50;
