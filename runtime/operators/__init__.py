"""Physical operators, one module per operator family; each registers itself by the
JobGraph operator name it implements (see base.register_operator)."""
