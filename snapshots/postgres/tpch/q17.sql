-- model q17 (full)
WITH base AS (
  SELECT
    lineitem.l_orderkey,
    lineitem.l_partkey,
    lineitem.l_suppkey,
    lineitem.l_linenumber,
    lineitem.l_quantity,
    lineitem.l_extendedprice,
    lineitem.l_discount,
    lineitem.l_tax,
    lineitem.l_returnflag,
    lineitem.l_linestatus,
    lineitem.l_shipdate,
    lineitem.l_commitdate,
    lineitem.l_receiptdate,
    lineitem.l_shipinstruct,
    lineitem.l_shipmode,
    lineitem.l_comment
  FROM lineitem
), base_2 AS (
  SELECT
    lineitem.l_orderkey,
    lineitem.l_partkey,
    lineitem.l_suppkey,
    lineitem.l_linenumber,
    lineitem.l_quantity,
    lineitem.l_extendedprice,
    lineitem.l_discount,
    lineitem.l_tax,
    lineitem.l_returnflag,
    lineitem.l_linestatus,
    lineitem.l_shipdate,
    lineitem.l_commitdate,
    lineitem.l_receiptdate,
    lineitem.l_shipinstruct,
    lineitem.l_shipmode,
    lineitem.l_comment
  FROM lineitem
), usual_2 AS (
  SELECT
    base_2.l_partkey,
    CAST(SUM(base_2.l_quantity) AS DOUBLE PRECISION) / CAST(COUNT(base_2.l_quantity) AS DOUBLE PRECISION) AS avg_quantity
  FROM base_2
  GROUP BY
    base_2.l_partkey
)
SELECT
  CAST(SUM(base.l_extendedprice) AS DOUBLE PRECISION) / CAST(7.0 AS DOUBLE PRECISION) AS avg_yearly
FROM base
JOIN part
  ON part.p_partkey = base.l_partkey
JOIN usual_2 AS usual
  ON usual.l_partkey = part.p_partkey
WHERE
  (
    part.p_brand = 'Brand#23' AND part.p_container = 'MED BOX'
  )
  AND base.l_quantity < 0.2 * usual.avg_quantity;
