-- model order_lines (full)
WITH base AS (
  SELECT
    i.order_id,
    i.line_no,
    i.product_id,
    i.quantity,
    i.unit_price,
    i.tags,
    i.updated_at,
    i.quantity * i.unit_price AS line_total
  FROM parquet.`file://<repo>/examples/shop/data/order_items.parquet` AS i
  WHERE
    i.quantity > 0
)
SELECT
  base.order_id,
  base.line_no,
  base.product_id,
  p.name AS product_name,
  COALESCE(p.category, 'unknown') AS category,
  base.quantity,
  base.unit_price,
  base.line_total,
  base.tags,
  base.updated_at
FROM base
LEFT JOIN products AS p
  ON base.product_id = p.id;

-- model order_lines (incremental: upsert, full-then-filter)
WITH base AS (
  SELECT
    i.order_id,
    i.line_no,
    i.product_id,
    i.quantity,
    i.unit_price,
    i.tags,
    i.updated_at,
    i.quantity * i.unit_price AS line_total
  FROM parquet.`file://<repo>/examples/shop/data/order_items.parquet` AS i
  WHERE
    i.quantity > 0
), __full AS (
  SELECT
    base.order_id,
    base.line_no,
    base.product_id,
    p.name AS product_name,
    COALESCE(p.category, 'unknown') AS category,
    base.quantity,
    base.unit_price,
    base.line_total,
    base.tags,
    base.updated_at
  FROM base
  LEFT JOIN products AS p
    ON base.product_id = p.id
), __delta AS (
  SELECT
    *
  FROM __full
  WHERE
    __full.updated_at > :watermark
)
SELECT
  __prev.order_id,
  __prev.line_no,
  __prev.product_id,
  __prev.product_name,
  __prev.category,
  __prev.quantity,
  __prev.unit_price,
  __prev.line_total,
  __prev.tags,
  __prev.updated_at
FROM v_order_lines AS __prev
WHERE
  NOT EXISTS(
    SELECT
      1
    FROM __delta
    WHERE
      __delta.order_id IS NOT DISTINCT FROM __prev.order_id
      AND __delta.line_no IS NOT DISTINCT FROM __prev.line_no
  )
UNION ALL
SELECT
  order_id,
  line_no,
  product_id,
  product_name,
  category,
  quantity,
  unit_price,
  line_total,
  tags,
  updated_at
FROM __delta;
