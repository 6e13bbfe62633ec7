"""Parallel execution on this machine: N worker processes joined by credit-based channels
(docs/parallel.md). Imported only when `parallelism.default` > 1, so a parallelism-1 job
never loads multiprocessing."""
