-- model popular_products (full)
WITH base AS (
  SELECT
    order_lines.order_id,
    order_lines.line_no,
    order_lines.product_id,
    order_lines.product_name,
    order_lines.category,
    order_lines.quantity,
    order_lines.unit_price,
    order_lines.line_total,
    order_lines.tags,
    order_lines.updated_at
  FROM v_order_lines AS order_lines
)
SELECT
  base.product_id
FROM base
GROUP BY
  base.product_id
HAVING
  SUM(CAST(base.quantity AS DECIMAL(38, 0))) >= 3;
