"""Exchange lives in union.py (both are pass-throughs in the local executor); this module
re-exports it under the name the operator table suggests."""

from runtime.operators.union import ExchangeOperator

__all__ = ["ExchangeOperator"]
