-- model q19 (full)
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
  FROM parquet.`file://<repo>/examples/tpch/data/lineitem.parquet` AS lineitem
  WHERE
    lineitem.l_shipmode IN ('AIR', 'AIR REG')
    AND lineitem.l_shipinstruct = 'DELIVER IN PERSON'
)
SELECT
  SUM(base.l_extendedprice * (
    1 - base.l_discount
  )) AS revenue
FROM base
JOIN parquet.`file://<repo>/examples/tpch/data/part.parquet` AS part
  ON part.p_partkey = base.l_partkey
WHERE
  part.p_brand = 'Brand#12'
  AND part.p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
  AND base.l_quantity BETWEEN 1 AND 1 + 10
  AND part.p_size BETWEEN 1 AND 5
  OR part.p_brand = 'Brand#23'
  AND part.p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
  AND base.l_quantity BETWEEN 10 AND 10 + 10
  AND part.p_size BETWEEN 1 AND 10
  OR part.p_brand = 'Brand#34'
  AND part.p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
  AND base.l_quantity BETWEEN 20 AND 20 + 10
  AND part.p_size BETWEEN 1 AND 15;
