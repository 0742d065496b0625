"""Pages in and results out of batch extraction: input readers and output writers (records), the worker pool (batch)."""
