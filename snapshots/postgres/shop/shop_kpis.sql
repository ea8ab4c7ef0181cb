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
  __g.order_count,
  __g.buyers,
  __g.revenue,
  __g.first_order,
  __g.last_order,
  strata_internal.strata_round_4f9d850304(
    CASE
      WHEN CAST(__g.order_count AS DOUBLE PRECISION) = 0
      THEN SIGN(CAST(__g.revenue AS DOUBLE PRECISION)) * CASE
        WHEN SUBSTRING(CAST(CAST(__g.order_count AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
        THEN CAST('-Infinity' AS DOUBLE PRECISION)
        ELSE CAST('Infinity' AS DOUBLE PRECISION)
      END
      ELSE CAST(__g.revenue AS DOUBLE PRECISION) / CAST(__g.order_count AS DOUBLE PRECISION)
    END
  ) AS avg_order_value
FROM (
  SELECT
    COUNT(*) AS order_count,
    COUNT(DISTINCT base.customer_id) AS buyers,
    SUM(base.subtotal) AS revenue,
    MIN(base.order_date) AS first_order,
    MAX(base.order_date) AS last_order
  FROM base
) AS __g;
