-- model order_history (full)
WITH base AS (
  SELECT
    orders.id,
    orders.customer_id,
    orders.status,
    orders.channel,
    orders.order_date,
    orders.updated_at
  FROM READ_CSV(
    'examples/shop/data/orders.csv',
    types := {'id': 'BIGINT', 'customer_id': 'BIGINT', 'status': 'TEXT', 'channel': 'TEXT', 'order_date': 'DATE', 'updated_at': 'TIMESTAMP'}
  ) AS orders
  WHERE
    orders.status <> 'test'
), combined AS (
  SELECT
    base.id,
    base.customer_id,
    base.status,
    base.order_date
  FROM base
  UNION ALL
  SELECT
    id,
    customer_id,
    status,
    order_date
  FROM READ_CSV(
    'examples/shop/data/orders_archive.csv',
    types := {'id': 'BIGINT', 'customer_id': 'BIGINT', 'status': 'TEXT', 'order_date': 'DATE'}
  )
)
SELECT
  combined.id,
  combined.customer_id,
  combined.status,
  combined.order_date
FROM combined;
