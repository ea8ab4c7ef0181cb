-- model marketable_emails (full)
WITH base AS (
  SELECT
    customer_profiles.customer_id,
    customer_profiles.name,
    customer_profiles.email,
    customer_profiles.region,
    customer_profiles.signup_date,
    customer_profiles.changed_at
  FROM v_customer_profiles AS customer_profiles
  WHERE
    NOT customer_profiles.email IS NULL
), combined AS (
  SELECT
    base.email
  FROM base
  UNION
  SELECT
    email
  FROM v_subscribers
), combined_2 AS (
  SELECT
    combined.email
  FROM combined
  EXCEPT
  SELECT
    email
  FROM READ_CSV('examples/shop/data/unsubscribes.csv', types := {'email': 'TEXT'})
)
SELECT
  combined_2.email
FROM combined_2;
