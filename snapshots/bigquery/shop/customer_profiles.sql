-- model customer_profiles (full)
WITH base AS (
  SELECT
    customers.id,
    customers.name,
    customers.email,
    customers.region,
    customers.signup_date,
    customers.updated_at,
    LOWER(TRIM(customers.email, '                　')) AS email_norm,
    COALESCE(customers.updated_at, CAST(customers.signup_date AS DATETIME)) AS changed_at
  FROM customers
)
SELECT
  base.id AS customer_id,
  base.name,
  base.email_norm AS email,
  COALESCE(base.region, 'unknown') AS region,
  base.signup_date,
  base.changed_at
FROM base;

-- model customer_profiles (incremental: upsert, pushdown)
WITH base AS (
  SELECT
    customers.id,
    customers.name,
    customers.email,
    customers.region,
    customers.signup_date,
    customers.updated_at,
    LOWER(TRIM(customers.email, '                　')) AS email_norm,
    COALESCE(customers.updated_at, CAST(customers.signup_date AS DATETIME)) AS changed_at
  FROM customers
  WHERE
    COALESCE(customers.updated_at, CAST(customers.signup_date AS DATETIME)) > @watermark
), __delta AS (
  SELECT
    base.id AS customer_id,
    base.name,
    base.email_norm AS email,
    COALESCE(base.region, 'unknown') AS region,
    base.signup_date,
    base.changed_at
  FROM base
)
SELECT
  __prev.customer_id,
  __prev.name,
  __prev.email,
  __prev.region,
  __prev.signup_date,
  __prev.changed_at
FROM v_customer_profiles AS __prev
WHERE
  NOT EXISTS(
    SELECT
      1
    FROM __delta
    WHERE
      __delta.customer_id IS NOT DISTINCT FROM __prev.customer_id
  )
UNION ALL
SELECT
  customer_id,
  name,
  email,
  region,
  signup_date,
  changed_at
FROM __delta;
