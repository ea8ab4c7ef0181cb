-- model stg_orders (full)
WITH base AS (
  SELECT
    raw_orders.id,
    raw_orders.customer,
    raw_orders.ordered_at,
    raw_orders.store_id,
    raw_orders.subtotal,
    raw_orders.tax_paid,
    raw_orders.order_total,
    raw_orders.updated_at
  FROM raw_orders
), step AS (
  SELECT
    base.id,
    base.customer,
    base.ordered_at,
    base.store_id,
    base.subtotal,
    base.tax_paid,
    base.order_total,
    base.updated_at,
    ROW_NUMBER() OVER (
      PARTITION BY base.id
      ORDER BY base.updated_at DESC, base.customer ASC NULLS LAST, base.ordered_at ASC NULLS LAST, base.store_id ASC NULLS LAST, base.subtotal ASC NULLS LAST, base.tax_paid ASC NULLS LAST, base.order_total ASC NULLS LAST
    ) AS __row
  FROM base
)
SELECT
  step.id AS order_id,
  step.customer AS customer_id,
  step.ordered_at,
  step.store_id,
  CAST(CAST(step.subtotal AS DECIMAL(16, 2)) AS DOUBLE) / CAST(100 AS DOUBLE) AS subtotal,
  CAST(CAST(step.order_total AS DECIMAL(16, 2)) AS DOUBLE) / CAST(100 AS DOUBLE) AS order_total,
  step.updated_at
FROM step
WHERE
  step.__row <= 1;
