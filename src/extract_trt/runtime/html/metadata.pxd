# C-level declarations for the compiled build of metadata.py (Cython pure-Python mode; see compiled_core.py).

from extract_trt.runtime.html.dom cimport Node
