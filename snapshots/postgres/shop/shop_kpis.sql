-- model shop_kpis (full)
WITH base AS (
  SELECT
    orders_enriched.order_id,
    orders_enriched.customer_id,
    orders_enriched.customer_name,
    orders_enriched.region,
    orders_enriched.order_date,
    orders_enriched.order_month,
    orders_enriched.status,
    orders_enriched.channel,
    orders_enriched.lines,
    orders_enriched.units,
    orders_enriched.subtotal,
    orders_enriched.big_order
  FROM v_orders_enriched AS orders_enriched
)
SELECT
  COUNT(*) AS order_count,
  COUNT(DISTINCT base.customer_id) AS buyers,
  SUM(base.subtotal) AS revenue,
  MIN(base.order_date) AS first_order,
  MAX(base.order_date) AS last_order,
  CASE
    WHEN ABS(
      CASE
        WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
        THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
          WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
          THEN CAST('-Infinity' AS DOUBLE PRECISION)
          ELSE CAST('Infinity' AS DOUBLE PRECISION)
        END
        ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
      END
    ) >= CAST('Infinity' AS DOUBLE PRECISION)
    THEN CASE
      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
      THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
        THEN CAST('-Infinity' AS DOUBLE PRECISION)
        ELSE CAST('Infinity' AS DOUBLE PRECISION)
      END
      ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
    END
    WHEN CASE
      WHEN ABS(
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
          THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE PRECISION)
            ELSE CAST('Infinity' AS DOUBLE PRECISION)
          END
          ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        END
      ) < 1
      THEN FALSE
      WHEN ABS(
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
          THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE PRECISION)
            ELSE CAST('Infinity' AS DOUBLE PRECISION)
          END
          ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        END
      ) / 16 > 1.7976931348623157e+308 / 100.0
      THEN TRUE
      ELSE (
        ABS(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END
        ) / 64
      ) * 100.0 >= 2.8088955232223686e+306
    END
    THEN CASE
      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
      THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
        THEN CAST('-Infinity' AS DOUBLE PRECISION)
        ELSE CAST('Infinity' AS DOUBLE PRECISION)
      END
      ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
    END
    ELSE CASE
      WHEN ABS(
        CASE
          WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
          THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
            WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
            THEN CAST('-Infinity' AS DOUBLE PRECISION)
            ELSE CAST('Infinity' AS DOUBLE PRECISION)
          END
          ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
        END * 100.0
      ) >= 4503599627370496.0
      THEN CASE
        WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
        THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
          WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
          THEN CAST('-Infinity' AS DOUBLE PRECISION)
          ELSE CAST('Infinity' AS DOUBLE PRECISION)
        END
        ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
      END * 100.0
      ELSE CASE
        WHEN ABS(
          (
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          ) - TRUNC(
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          )
        ) > 0.5
        THEN TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        ) + SIGN(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
        WHEN ABS(
          (
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          ) - TRUNC(
            CASE
              WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
              THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                THEN CAST('-Infinity' AS DOUBLE PRECISION)
                ELSE CAST('Infinity' AS DOUBLE PRECISION)
              END
              ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
            END * 100.0
          )
        ) < 0.5
        THEN TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
        WHEN SIGN(
          (
            (
              (
                (
                  CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END * 134217729.0
                ) - (
                  (
                    CASE
                      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                      THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                        THEN CAST('-Infinity' AS DOUBLE PRECISION)
                        ELSE CAST('Infinity' AS DOUBLE PRECISION)
                      END
                      ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                    END * 134217729.0
                  ) - CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END
                )
              ) * 100.0
            ) - (
              CASE
                WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                  WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                  THEN CAST('-Infinity' AS DOUBLE PRECISION)
                  ELSE CAST('Infinity' AS DOUBLE PRECISION)
                END
                ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
              END * 100.0
            )
          ) + (
            (
              CASE
                WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                  WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                  THEN CAST('-Infinity' AS DOUBLE PRECISION)
                  ELSE CAST('Infinity' AS DOUBLE PRECISION)
                END
                ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
              END - (
                (
                  CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END * 134217729.0
                ) - (
                  (
                    CASE
                      WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                      THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                        WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                        THEN CAST('-Infinity' AS DOUBLE PRECISION)
                        ELSE CAST('Infinity' AS DOUBLE PRECISION)
                      END
                      ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                    END * 134217729.0
                  ) - CASE
                    WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
                    THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
                      WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
                      THEN CAST('-Infinity' AS DOUBLE PRECISION)
                      ELSE CAST('Infinity' AS DOUBLE PRECISION)
                    END
                    ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
                  END
                )
              )
            ) * 100.0
          )
        ) * SIGN(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        ) >= 0
        THEN TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        ) + SIGN(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
        ELSE TRUNC(
          CASE
            WHEN CAST(COUNT(*) AS DOUBLE PRECISION) = 0
            THEN SIGN(CAST(SUM(base.subtotal) AS DOUBLE PRECISION)) * CASE
              WHEN SUBSTRING(CAST(CAST(COUNT(*) AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
              THEN CAST('-Infinity' AS DOUBLE PRECISION)
              ELSE CAST('Infinity' AS DOUBLE PRECISION)
            END
            ELSE CAST(SUM(base.subtotal) AS DOUBLE PRECISION) / CAST(COUNT(*) AS DOUBLE PRECISION)
          END * 100.0
        )
      END
    END / 100.0
  END AS avg_order_value
FROM base;
