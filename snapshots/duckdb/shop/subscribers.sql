-- model subscribers (full)
WITH base AS (
  SELECT
    newsletter.email,
    newsletter.subscribed_at,
    newsletter.confirmed
  FROM READ_CSV(
    'examples/shop/data/newsletter.csv',
    types := {'email': 'TEXT', 'subscribed_at': 'TIMESTAMP', 'confirmed': 'BOOLEAN'}
  ) AS newsletter
  WHERE
    newsletter.confirmed
)
SELECT
  LOWER(TRIM(base.email)) AS email
FROM base;
