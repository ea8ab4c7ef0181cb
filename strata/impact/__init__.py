"""Review a change by its impact (`strata diff`): which models a change touches, how
(`classify`), where the base's files come from (`base`), and the report (`report`)."""
