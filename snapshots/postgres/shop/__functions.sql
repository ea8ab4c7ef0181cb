-- functions Strata owns, created in strata_internal before a run
CREATE OR REPLACE FUNCTION strata_internal.strata_round_4f9d850304(a DOUBLE PRECISION) RETURNS DOUBLE PRECISION
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$
BEGIN
RETURN CASE
  WHEN ABS(a) >= CAST('Infinity' AS DOUBLE PRECISION)
  THEN a
  WHEN CASE
    WHEN ABS(a) < 1
    THEN FALSE
    WHEN ABS(a) / 16 > 1.7976931348623157e+308 / 100.0
    THEN TRUE
    ELSE (
      ABS(a) / 64
    ) * 100.0 >= 2.8088955232223686e+306
  END
  THEN a
  ELSE CASE
    WHEN ABS(a * 100.0) >= 4503599627370496.0
    THEN a * 100.0
    ELSE CASE
      WHEN ABS((
        a * 100.0
      ) - TRUNC(a * 100.0)) > 0.5
      THEN TRUNC(a * 100.0) + SIGN(a * 100.0)
      WHEN ABS((
        a * 100.0
      ) - TRUNC(a * 100.0)) < 0.5
      THEN TRUNC(a * 100.0)
      WHEN SIGN(
        (
          (
            (
              (
                a * 134217729.0
              ) - (
                (
                  a * 134217729.0
                ) - a
              )
            ) * 100.0
          ) - (
            a * 100.0
          )
        ) + (
          (
            a - (
              (
                a * 134217729.0
              ) - (
                (
                  a * 134217729.0
                ) - a
              )
            )
          ) * 100.0
        )
      ) * SIGN(a * 100.0) >= 0
      THEN TRUNC(a * 100.0) + SIGN(a * 100.0)
      ELSE TRUNC(a * 100.0)
    END
  END / 100.0
END;
END
$strata$;

CREATE OR REPLACE FUNCTION strata_internal.strata_div_bd813c66d7(a NUMERIC, b BIGINT) RETURNS DOUBLE PRECISION
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$
BEGIN
RETURN CASE
  WHEN CAST(b AS DOUBLE PRECISION) = 0
  THEN SIGN(CAST(a AS DOUBLE PRECISION)) * CASE
    WHEN SUBSTRING(CAST(CAST(b AS DOUBLE PRECISION) AS TEXT) FROM 1 FOR 1) = '-'
    THEN CAST('-Infinity' AS DOUBLE PRECISION)
    ELSE CAST('Infinity' AS DOUBLE PRECISION)
  END
  ELSE CAST(a AS DOUBLE PRECISION) / CAST(b AS DOUBLE PRECISION)
END;
END
$strata$;

