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
      ORDER BY base.updated_at DESC NULLS LAST, base.customer ASC, base.ordered_at ASC, base.store_id ASC, base.subtotal ASC, base.tax_paid ASC, base.order_total ASC
    ) AS __row
  FROM base
)
SELECT
  step.id AS order_id,
  step.customer AS customer_id,
  step.ordered_at,
  step.store_id,
  CAST(CAST(step.subtotal AS DECIMAL(16, 2)) AS DOUBLE PRECISION) / CAST(100 AS DOUBLE PRECISION) AS subtotal,
  CAST(CAST(step.order_total AS DECIMAL(16, 2)) AS DOUBLE PRECISION) / CAST(100 AS DOUBLE PRECISION) AS order_total,
  step.updated_at
FROM step
WHERE
  step.__row <= 1;
