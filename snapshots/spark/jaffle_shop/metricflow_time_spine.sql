-- model metricflow_time_spine (full; run_date() = 2024-09-30)
WITH date_day AS (
  SELECT
    CAST(TIMESTAMPADD(DAY, date_day.__offset, CAST(DATE_ADD(CAST('2024-09-30' AS DATE), -3650) AS DATE)) AS DATE) AS date_day
  FROM RANGE(
    CAST(0 AS BIGINT),
    CAST(DATEDIFF(
      DAY,
      DATE_TRUNC('DAY', CAST(DATE_ADD(CAST('2024-09-30' AS DATE), -3650) AS DATE)),
      DATE_TRUNC('DAY', CAST(DATE_ADD(CAST('2024-09-30' AS DATE), 1) AS DATE))
    ) + 1 AS BIGINT),
    1
  ) AS date_day(__offset)
  WHERE
    CAST(TIMESTAMPADD(DAY, date_day.__offset, CAST(DATE_ADD(CAST('2024-09-30' AS DATE), -3650) AS DATE)) AS DATE) < CAST(DATE_ADD(CAST('2024-09-30' AS DATE), 1) AS DATE)
), base AS (
  SELECT
    date_day.date_day
  FROM date_day
)
SELECT
  base.date_day
FROM base;
