"""Physical operators, one module per operator kind or family; each declares its kinds'
typed params and `OperatorSpec` and registers the spec (runtime/operators/spec.py)."""
