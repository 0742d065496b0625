"""Everything on the hot path: decoding, simplification, labelers, reconstruction, conversion, I/O."""

from extract_trt.runtime.compiled_core import compiled, use_sources_when_needed

use_sources_when_needed()  # before any compiled module is imported

__all__ = ["compiled"]
