"""Building model artifacts: Hugging Face checkpoints → self-describing ONNX model directories.

Only :mod:`extract_trt.export.manifest` is imported by the runtime (it is stdlib-only); the exporters
need the ``export`` extra (torch, transformers, optimum-onnx) and are imported on use.
"""
