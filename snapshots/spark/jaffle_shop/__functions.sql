-- functions Strata owns, created in strata_internal before a run
CREATE FUNCTION IF NOT EXISTS strata_internal.strata_div_a2fb1452bb(a DOUBLE, b DOUBLE) RETURNS DOUBLE
RETURN CASE
  WHEN CAST(b AS DOUBLE) = 0
  THEN SIGN(CAST(a AS DOUBLE)) * CASE
    WHEN SUBSTRING(CAST(CAST(b AS DOUBLE) AS STRING), 1, 1) = '-'
    THEN CAST('-Infinity' AS DOUBLE)
    ELSE CAST('Infinity' AS DOUBLE)
  END
  ELSE CAST(a AS DOUBLE) / CAST(b AS DOUBLE)
END;

