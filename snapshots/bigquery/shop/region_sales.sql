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
  __g.region,
  __g.buyers,
  __g.order_count,
  __g.revenue,
  (
    SELECT
      CASE
        WHEN ABS(__o) >= CAST('Infinity' AS FLOAT64)
        THEN __o
        WHEN CASE
          WHEN ABS(__o) < 1
          THEN FALSE
          WHEN ABS(__o) / 16 > 1.7976931348623157e+308 / 100.0
          THEN TRUE
          ELSE (
            ABS(__o) / 64
          ) * 100.0 >= 2.8088955232223686e+306
        END
        THEN __o
        ELSE CASE
          WHEN ABS(__o * 100.0) >= 4503599627370496.0
          THEN __o * 100.0
          ELSE CASE
            WHEN ABS((
              __o * 100.0
            ) - TRUNC(__o * 100.0)) > 0.5
            THEN TRUNC(__o * 100.0) + SIGN(__o * 100.0)
            WHEN ABS((
              __o * 100.0
            ) - TRUNC(__o * 100.0)) < 0.5
            THEN TRUNC(__o * 100.0)
            WHEN SIGN(
              (
                (
                  (
                    (
                      __o * 134217729.0
                    ) - (
                      (
                        __o * 134217729.0
                      ) - __o
                    )
                  ) * 100.0
                ) - (
                  __o * 100.0
                )
              ) + (
                (
                  __o - (
                    (
                      __o * 134217729.0
                    ) - (
                      (
                        __o * 134217729.0
                      ) - __o
                    )
                  )
                ) * 100.0
              )
            ) * SIGN(__o * 100.0) >= 0
            THEN TRUNC(__o * 100.0) + SIGN(__o * 100.0)
            ELSE TRUNC(__o * 100.0)
          END
        END / 100.0
      END
    FROM (
      SELECT
        IEEE_DIVIDE(CAST(__g.revenue AS FLOAT64), CAST(__g.order_count AS FLOAT64)) AS __o
    ) AS __ro
  ) AS avg_order_value
FROM (
  SELECT
    base.region,
    COUNT(DISTINCT base.customer_id) AS buyers,
    COUNT(*) AS order_count,
    SUM(o.subtotal) AS revenue
  FROM base
  JOIN v_orders_enriched AS o
    ON base.customer_id = o.customer_id
  GROUP BY
    base.region
  HAVING
    SUM(o.subtotal) >= 50
) AS __g;
