-- model line_tags (full)
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
  base.order_id,
  base.line_no,
  base.product_id,
  LOWER(CAST(__expand_1.tag AS VARCHAR)) AS tag,
  base.line_total
FROM base
CROSS JOIN TABLE(FLATTEN(INPUT => base.tags)) AS __expand_1(seq, key, path, index, tag, this)
WHERE
  NOT CAST(__expand_1.tag AS VARCHAR) IS NULL;
