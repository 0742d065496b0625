# C-level declarations for the compiled build of convert.py (Cython pure-Python mode; see compiled_core.py).

from cpython.exc cimport PyErr_CheckSignals

cdef class _TextWriter:
    cdef public list parts, rows, lists
    cdef public int pending, pre
    cdef public bint space, boundary
    cdef public str marker
    cdef void _flush(self)
    cpdef void brk(self, int n)
    cpdef void line_break(self)
    cdef void _item_marker(self)
