"""Plan → SQLGlot trees (build), typed literals (literals), incremental rewrites."""
