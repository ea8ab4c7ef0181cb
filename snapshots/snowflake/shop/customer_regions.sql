-- model customer_regions (full; run_timestamp() = 2024-09-30 12:00:00)
WITH base AS (
  SELECT
    customers.id,
    customers.name,
    customers.email,
    customers.region,
    customers.signup_date,
    customers.updated_at
  FROM customers
)
SELECT
  base.id AS customer_id,
  base.name,
  COALESCE(base.region, 'unknown') AS region,
  CAST('2024-09-30 12:00:00' AS TIMESTAMP) AS valid_from,
  CAST(NULL AS TIMESTAMP) AS valid_to
FROM base;

-- model customer_regions (incremental: history; run_timestamp() = 2024-09-30 12:00:00)
WITH base AS (
  SELECT
    customers.id,
    customers.name,
    customers.email,
    customers.region,
    customers.signup_date,
    customers.updated_at
  FROM customers
), __cur AS (
  SELECT
    base.id AS customer_id,
    base.name,
    COALESCE(base.region, 'unknown') AS region,
    CAST('2024-09-30 12:00:00' AS TIMESTAMP) AS valid_from,
    CAST(NULL AS TIMESTAMP) AS valid_to
  FROM base
)
SELECT
  __prev.customer_id,
  __prev.name,
  __prev.region,
  __prev.valid_from,
  __prev.valid_to
FROM v_customer_regions AS __prev
WHERE
  NOT __prev.valid_to IS NULL
UNION ALL
SELECT
  __prev.customer_id,
  __prev.name,
  __prev.region,
  __prev.valid_from,
  __prev.valid_to
FROM v_customer_regions AS __prev
WHERE
  __prev.valid_to IS NULL
  AND EXISTS(
    SELECT
      1
    FROM __cur
    WHERE
      __cur.customer_id IS NOT DISTINCT FROM __prev.customer_id
      AND __cur.name IS NOT DISTINCT FROM __prev.name
      AND __cur.region IS NOT DISTINCT FROM __prev.region
  )
UNION ALL
SELECT
  __prev.customer_id,
  __prev.name,
  __prev.region,
  __prev.valid_from,
  CAST('2024-09-30 12:00:00' AS TIMESTAMP) AS valid_to
FROM v_customer_regions AS __prev
WHERE
  __prev.valid_to IS NULL
  AND NOT EXISTS(
    SELECT
      1
    FROM __cur
    WHERE
      __cur.customer_id IS NOT DISTINCT FROM __prev.customer_id
      AND __cur.name IS NOT DISTINCT FROM __prev.name
      AND __cur.region IS NOT DISTINCT FROM __prev.region
  )
UNION ALL
SELECT
  __cur.customer_id,
  __cur.name,
  __cur.region,
  __cur.valid_from,
  __cur.valid_to
FROM __cur
WHERE
  NOT EXISTS(
    SELECT
      1
    FROM v_customer_regions AS __prev
    WHERE
      __prev.valid_to IS NULL
      AND __cur.customer_id IS NOT DISTINCT FROM __prev.customer_id
      AND __cur.name IS NOT DISTINCT FROM __prev.name
      AND __cur.region IS NOT DISTINCT FROM __prev.region
  );
