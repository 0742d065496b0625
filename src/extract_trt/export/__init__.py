"""Building model artifacts: Hugging Face checkpoints → self-describing ONNX model directories (and
TensorRT engines for them).

The exporters need the ``export`` extra (torch, transformers, optimum-onnx) and are imported on use. What
they write and the runtime reads (the manifest, the engine records) lives in :mod:`extract_trt.artifacts`.
"""
