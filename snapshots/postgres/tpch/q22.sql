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
    SUBSTRING(customer.c_phone FROM 1 FOR 2) AS cntrycode
  FROM customer
  WHERE
    SUBSTRING(customer.c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17')
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
  FROM customer
  WHERE
    customer.c_acctbal > 0.00
    AND SUBSTRING(customer.c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17')
), average_2 AS (
  SELECT
    CAST(SUM(base_2.c_acctbal) AS DOUBLE PRECISION) / CAST(COUNT(base_2.c_acctbal) AS DOUBLE PRECISION) AS avg_balance
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
    FROM orders
    WHERE
      orders.o_custkey = base.c_custkey
  )
GROUP BY
  base.cntrycode
ORDER BY
  base.cntrycode COLLATE "C" ASC;
