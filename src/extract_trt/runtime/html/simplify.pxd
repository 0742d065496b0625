# C-level declarations for the compiled build of simplify.py (Cython pure-Python mode; see compiled_core.py).

cimport cython
from cpython.exc cimport PyErr_CheckSignals
from extract_trt.runtime.html.dom cimport Node, collapse_whitespace, escape_text

@cython.final
cdef class _Paragraph:
    cdef public Node container
    cdef public str text
    cdef public list elements
    cdef public str content_type

@cython.final
cdef class _Run:
    cdef public list pieces, elements
    cdef public set sources
    cpdef add_text(self, str text, str source)
    cpdef add_element(self, Node node)
    cpdef reset(self)

cdef class _Frag(Node):
    pass

cpdef dict _clean_attrs(Node node)
