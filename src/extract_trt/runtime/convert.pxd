# C-level declarations for the compiled build of convert.py (Cython pure-Python mode; see compiled_core.py).

from cpython.exc cimport PyErr_CheckSignals
