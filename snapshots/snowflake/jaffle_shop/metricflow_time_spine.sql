-- model metricflow_time_spine (full; run_date() = 2024-09-30)
WITH date_day AS (
  SELECT
    CAST(TIMESTAMPADD(
      DAY,
      date_day.__offset,
      CAST(DATEADD(DAY, 3650 * -1, CAST('2024-09-30' AS DATE)) AS DATE)
    ) AS DATE) AS date_day
  FROM (
    SELECT
      CAST(value AS BIGINT) AS __offset
    FROM TABLE(
      FLATTEN(
        INPUT => ARRAY_GENERATE_RANGE(
          0,
          DATEDIFF(
            DAY,
            CAST(DATEADD(DAY, 3650 * -1, CAST('2024-09-30' AS DATE)) AS DATE),
            CAST(DATEADD(DAY, 1, CAST('2024-09-30' AS DATE)) AS DATE)
          ) + 1,
          1
        )
      )
    )
  ) AS date_day
  WHERE
    CAST(TIMESTAMPADD(
      DAY,
      date_day.__offset,
      CAST(DATEADD(DAY, 3650 * -1, CAST('2024-09-30' AS DATE)) AS DATE)
    ) AS DATE) < CAST(DATEADD(DAY, 1, CAST('2024-09-30' AS DATE)) AS DATE)
), base AS (
  SELECT
    date_day.date_day
  FROM date_day
)
SELECT
  base.date_day
FROM base;
