-- model subscribers (full)
WITH base AS (
  SELECT
    newsletter.email,
    newsletter.subscribed_at,
    newsletter.confirmed
  FROM newsletter
  WHERE
    newsletter.confirmed
)
SELECT
  LOWER(TRIM('                　' FROM base.email)) AS email
FROM base;
