"""Model artifacts as files describe them: the model-directory manifest (``extract-trt.json``) and the
TensorRT engine records in it. The exporters (:mod:`extract_trt.export`) write them and the runtime
(:mod:`extract_trt.runtime`) reads them; this package imports neither (stdlib, numpy-free, no torch).
"""
