"""What the compiled-core modules read from ``cython`` when Cython is not installed: they run interpreted."""

compiled = False
