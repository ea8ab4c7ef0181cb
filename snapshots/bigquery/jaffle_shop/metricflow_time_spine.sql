-- model metricflow_time_spine (full; run_date() = 2024-09-30)
WITH date_day AS (
  SELECT
    CAST(DATE_ADD(
      CAST(DATE_SUB(CAST('2024-09-30' AS DATE), INTERVAL 3650 DAY) AS DATE),
      INTERVAL date_day.__offset DAY
    ) AS DATE) AS date_day
  FROM (
    SELECT
      __offset
    FROM UNNEST(GENERATE_ARRAY(
      CAST(0 AS INT64),
      CAST((
        DATE_DIFF(
          CAST(DATE_ADD(CAST('2024-09-30' AS DATE), INTERVAL 1 DAY) AS DATE),
          CAST(DATE_SUB(CAST('2024-09-30' AS DATE), INTERVAL 3650 DAY) AS DATE),
          DAY
        ) + 1
      ) - 1 AS INT64),
      1
    )) AS __offset
  ) AS date_day
  WHERE
    CAST(DATE_ADD(
      CAST(DATE_SUB(CAST('2024-09-30' AS DATE), INTERVAL 3650 DAY) AS DATE),
      INTERVAL date_day.__offset DAY
    ) AS DATE) < CAST(DATE_ADD(CAST('2024-09-30' AS DATE), INTERVAL 1 DAY) AS DATE)
), base AS (
  SELECT
    date_day.date_day
  FROM date_day
)
SELECT
  base.date_day
FROM base;
