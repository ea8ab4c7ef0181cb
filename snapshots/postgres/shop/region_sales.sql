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
  CASE
    WHEN ABS(
      CASE
        WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
        THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
          WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
          THEN CAST('-Infinity' AS DOUBLE PRECISION)
          ELSE CAST('Infinity' AS DOUBLE PRECISION)
        END
        ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
      END
    ) >= CAST('Infinity' AS DOUBLE PRECISION)
    THEN CASE
      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
      THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
        THEN CAST('-Infinity' AS DOUBLE PRECISION)
        ELSE CAST('Infinity' AS DOUBLE PRECISION)
      END
      ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
    END
    WHEN CASE
      WHEN ABS(
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
          THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE PRECISION)
            ELSE CAST('Infinity' AS DOUBLE PRECISION)
          END
          ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        END
      ) < 1
      THEN FALSE
      WHEN ABS(
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
          THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE PRECISION)
            ELSE CAST('Infinity' AS DOUBLE PRECISION)
          END
          ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        END
      ) / 16 > 1.7976931348623157e+308 / 100.0
      THEN TRUE
      ELSE (
        ABS(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END
        ) / 64
      ) * 100.0 >= 2.8088955232223686e+306
    END
    THEN CASE
      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
      THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
        THEN CAST('-Infinity' AS DOUBLE PRECISION)
        ELSE CAST('Infinity' AS DOUBLE PRECISION)
      END
      ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
    END
    ELSE CASE
      WHEN ABS(
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
          THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE PRECISION)
            ELSE CAST('Infinity' AS DOUBLE PRECISION)
          END
          ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        END * 100.0
      ) >= 4503599627370496.0
      THEN CASE
        WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
        THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
          WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
          THEN CAST('-Infinity' AS DOUBLE PRECISION)
          ELSE CAST('Infinity' AS DOUBLE PRECISION)
        END
        ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
      END * 100.0
      ELSE CASE
        WHEN ABS(
          (
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          ) - TRUNC(
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          )
        ) > 0.5
        THEN TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        ) + SIGN(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
        WHEN ABS(
          (
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          ) - TRUNC(
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          )
        ) < 0.5
        THEN TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
        WHEN SIGN(
          (
            (
              (
                (
                  CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END * 134217729.0
                ) - (
                  (
                    CASE
                      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                      THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                        THEN CAST('-Infinity' AS DOUBLE PRECISION)
                        ELSE CAST('Infinity' AS DOUBLE PRECISION)
                      END
                      ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                    END * 134217729.0
                  ) - CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END
                )
              ) * 100.0
            ) - (
              CASE
                WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                  WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                  THEN CAST('-Infinity' AS DOUBLE PRECISION)
                  ELSE CAST('Infinity' AS DOUBLE PRECISION)
                END
                ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
              END * 100.0
            )
          ) + (
            (
              CASE
                WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                  WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                  THEN CAST('-Infinity' AS DOUBLE PRECISION)
                  ELSE CAST('Infinity' AS DOUBLE PRECISION)
                END
                ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
              END - (
                (
                  CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END * 134217729.0
                ) - (
                  (
                    CASE
                      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                      THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                        THEN CAST('-Infinity' AS DOUBLE PRECISION)
                        ELSE CAST('Infinity' AS DOUBLE PRECISION)
                      END
                      ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                    END * 134217729.0
                  ) - CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END
                )
              )
            ) * 100.0
          )
        ) * SIGN(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        ) >= 0
        THEN TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        ) + SIGN(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
        ELSE TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(o.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(o.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
      END
    END / 100.0
  END AS avg_order_value
FROM base
JOIN v_orders_enriched AS o
  ON base.customer_id = o.customer_id
GROUP BY
  base.region
HAVING
  SUM(o.subtotal) >= 50;
