-- model q22 (full)
WITH base AS (
  SELECT
    customer.c_custkey,
    customer.c_name,
    customer.c_address,
    customer.c_nationkey,
    customer.c_phone,
    customer.c_acctbal,
    customer.c_mktsegment,
    customer.c_comment,
    SUBSTRING(customer.c_phone, 1, 2) AS cntrycode
  FROM parquet.`file://<repo>/examples/tpch/data/customer.parquet` AS customer
  WHERE
    SUBSTRING(customer.c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17')
), base_2 AS (
  SELECT
    customer.c_custkey,
    customer.c_name,
    customer.c_address,
    customer.c_nationkey,
    customer.c_phone,
    customer.c_acctbal,
    customer.c_mktsegment,
    customer.c_comment
  FROM parquet.`file://<repo>/examples/tpch/data/customer.parquet` AS customer
  WHERE
    customer.c_acctbal > 0.00
    AND SUBSTRING(customer.c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17')
), average_2 AS (
  SELECT
    CAST(SUM(base_2.c_acctbal) AS DOUBLE) / CAST(COUNT(base_2.c_acctbal) AS DOUBLE) AS avg_balance
  FROM base_2
)
SELECT
  base.cntrycode,
  COUNT(*) AS numcust,
  SUM(base.c_acctbal) AS totacctbal
FROM base
CROSS JOIN average_2 AS average
WHERE
  base.c_acctbal > average.avg_balance
  AND NOT EXISTS(
    SELECT
      1
    FROM parquet.`file://<repo>/examples/tpch/data/orders.parquet` AS orders
    WHERE
      orders.o_custkey = base.c_custkey
  )
GROUP BY
  base.cntrycode
ORDER BY
  base.cntrycode ASC NULLS LAST;
