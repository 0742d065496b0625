# C-level declarations for the compiled build of dom.py (Cython pure-Python mode; see compiled_core.py).
cimport cython
from cpython.exc cimport PyErr_CheckSignals

# The tree node is an extension type: typed locals read and write its fields without a dict lookup.

cdef class Node:
    cdef public str tag
    cdef public dict attrs
    cdef public str text, tail, ptext, ptail
    cdef public list children, pchildren
    cdef public Node parent
    cdef public object item_id
    cdef public bint block_type_mark
    cdef public str select
    cdef public Py_ssize_t index
    cdef public object lazy

cpdef str collapse_whitespace(str text)
cpdef str escape_text(str text)
cpdef str format_attr(str tag, str name, str value)

cdef void _init_node(Node node, str tag, dict attrs, Node parent)
cdef Node _new_node(str tag, dict attrs, Node parent)
cdef void _add_text(Node parent, list kids, str text)
cdef Node _add_element(str tag, dict attrs, Node parent, list kids, Py_ssize_t index, list nesting, list closing)
