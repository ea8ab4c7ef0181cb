-- model clean_orders (full)
WITH base AS (
  SELECT
    o.id,
    o.customer_id,
    o.status,
    o.channel,
    o.order_date,
    o.updated_at
  FROM READ_CSV(
    'examples/shop/data/orders.csv',
    types := {'id': 'BIGINT', 'customer_id': 'BIGINT', 'status': 'TEXT', 'channel': 'TEXT', 'order_date': 'DATE', 'updated_at': 'TIMESTAMP'}
  ) AS o
  WHERE
    o.status <> 'test' AND NOT o.customer_id IS NULL
)
SELECT
  base.id AS order_id,
  base.customer_id,
  base.status,
  base.channel,
  base.order_date,
  base.updated_at
FROM base;

-- model clean_orders (incremental: upsert, pushdown)
WITH base AS (
  SELECT
    o.id,
    o.customer_id,
    o.status,
    o.channel,
    o.order_date,
    o.updated_at
  FROM READ_CSV(
    'examples/shop/data/orders.csv',
    types := {'id': 'BIGINT', 'customer_id': 'BIGINT', 'status': 'TEXT', 'channel': 'TEXT', 'order_date': 'DATE', 'updated_at': 'TIMESTAMP'}
  ) AS o
  WHERE
    o.status <> 'test' AND NOT o.customer_id IS NULL AND o.updated_at > $watermark
), __delta AS (
  SELECT
    base.id AS order_id,
    base.customer_id,
    base.status,
    base.channel,
    base.order_date,
    base.updated_at
  FROM base
)
SELECT
  __prev.order_id,
  __prev.customer_id,
  __prev.status,
  __prev.channel,
  __prev.order_date,
  __prev.updated_at
FROM v_clean_orders AS __prev
WHERE
  NOT EXISTS(
    SELECT
      1
    FROM __delta
    WHERE
      __delta.order_id IS NOT DISTINCT FROM __prev.order_id
  )
UNION ALL
SELECT
  order_id,
  customer_id,
  status,
  channel,
  order_date,
  updated_at
FROM __delta;
