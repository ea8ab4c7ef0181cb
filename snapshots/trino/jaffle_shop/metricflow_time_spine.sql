-- model metricflow_time_spine (full; run_date() = 2024-09-30)
WITH date_day AS (
  SELECT
    CAST(DATE_ADD(
      'DAY',
      date_day.__offset,
      CAST(DATE_ADD('DAY', 3650 * -1, CAST('2024-09-30' AS DATE)) AS DATE)
    ) AS DATE) AS date_day
  FROM UNNEST(IF(
    CAST(0 AS BIGINT) <= CAST((
      DATE_DIFF(
        'DAY',
        DATE_TRUNC('DAY', CAST(DATE_ADD('DAY', 3650 * -1, CAST('2024-09-30' AS DATE)) AS DATE)),
        DATE_TRUNC('DAY', CAST(DATE_ADD('DAY', 1, CAST('2024-09-30' AS DATE)) AS DATE))
      ) + 1
    ) - 1 AS BIGINT),
    SEQUENCE(
      CAST(0 AS BIGINT),
      CAST((
        DATE_DIFF(
          'DAY',
          DATE_TRUNC('DAY', CAST(DATE_ADD('DAY', 3650 * -1, CAST('2024-09-30' AS DATE)) AS DATE)),
          DATE_TRUNC('DAY', CAST(DATE_ADD('DAY', 1, CAST('2024-09-30' AS DATE)) AS DATE))
        ) + 1
      ) - 1 AS BIGINT),
      1
    ),
    ARRAY[]
  )) AS date_day(__offset)
  WHERE
    CAST(DATE_ADD(
      'DAY',
      date_day.__offset,
      CAST(DATE_ADD('DAY', 3650 * -1, CAST('2024-09-30' AS DATE)) AS DATE)
    ) AS DATE) < CAST(DATE_ADD('DAY', 1, CAST('2024-09-30' AS DATE)) AS DATE)
), base AS (
  SELECT
    date_day.date_day
  FROM date_day
)
SELECT
  base.date_day
FROM base;
