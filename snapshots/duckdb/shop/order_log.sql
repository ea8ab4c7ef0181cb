-- model order_log (full)
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
)
SELECT
  base.id AS order_id,
  base.customer_id,
  base.order_date,
  YEAR(base.order_date) AS order_year,
  CAST(DATE_TRUNC('MONTH', base.order_date) AS DATE) AS order_month,
  CAST(base.order_date + INTERVAL 30 DAY AS DATE) AS review_on,
  base.status
FROM base;

-- model order_log (incremental: append, pushdown)
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
    orders.status <> 'test' AND orders.order_date > $watermark
), __delta AS (
  SELECT
    base.id AS order_id,
    base.customer_id,
    base.order_date,
    YEAR(base.order_date) AS order_year,
    CAST(DATE_TRUNC('MONTH', base.order_date) AS DATE) AS order_month,
    CAST(base.order_date + INTERVAL 30 DAY AS DATE) AS review_on,
    base.status
  FROM base
)
SELECT
  __prev.order_id,
  __prev.customer_id,
  __prev.order_date,
  __prev.order_year,
  __prev.order_month,
  __prev.review_on,
  __prev.status
FROM v_order_log AS __prev
UNION ALL
SELECT
  order_id,
  customer_id,
  order_date,
  order_year,
  order_month,
  review_on,
  status
FROM __delta;
