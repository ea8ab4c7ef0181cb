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
  strata_internal.strata_round_4f9d850304(strata_internal.strata_div_bd813c66d7(SUM(base.subtotal), COUNT(*))) AS avg_order_value
FROM base;
