"""Aggregate functions (COUNT, SUM, AVG, MIN, MAX, LISTAGG, ...): type inference and
vectorized accumulation, shared by the window and group aggregate operators."""
