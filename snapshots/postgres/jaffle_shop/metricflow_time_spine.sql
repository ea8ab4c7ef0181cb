-- model metricflow_time_spine (full; run_date() = 2024-09-30)
WITH date_day AS (
  SELECT
    CAST(CAST(CAST('2024-09-30' AS DATE) - INTERVAL '3650 DAY' AS DATE) + (
      INTERVAL '1 DAY' * date_day.__offset
    ) AS DATE) AS date_day
  FROM GENERATE_SERIES(
    CAST(0 AS BIGINT),
    CAST((
      (
        CAST(CAST('2024-09-30' AS DATE) + INTERVAL '1 DAY' AS DATE) - CAST(CAST('2024-09-30' AS DATE) - INTERVAL '3650 DAY' AS DATE)
      ) + 1
    ) - 1 AS BIGINT),
    1
  ) AS date_day(__offset)
  WHERE
    CAST(CAST(CAST('2024-09-30' AS DATE) - INTERVAL '3650 DAY' AS DATE) + (
      INTERVAL '1 DAY' * date_day.__offset
    ) AS DATE) < CAST(CAST('2024-09-30' AS DATE) + INTERVAL '1 DAY' AS DATE)
), base AS (
  SELECT
    date_day.date_day
  FROM date_day
)
SELECT
  base.date_day
FROM base;
