"""Expressions over Arrow batches: the IR (`ir`) and its vectorized evaluation (`evaluator`)."""
