# C-level declarations for the compiled build of markdown.py (Cython pure-Python mode; see compiled_core.py).

from extract_trt.runtime.html.dom cimport Node

# Extension types: the writer's many state fields are read and written as struct fields, not through an
# instance dict, on every open/text/close call of the tree walk.

cdef class _Mark:
    cdef public Node node
    cdef public str open, close
    cdef public bint shown, suspended, done
    cdef public str href

cdef class _Table:
    cdef public Node node
    cdef public list rows
    cdef public Node cell
    cdef public tuple saved

cdef class MarkdownWriter:
    cdef public bint links, images
    cdef public set keep
    cdef public list out
    cdef public bint written, space, col0, boundary, line_start, after_list, capture_raw
    cdef public int pending, bullets, heading, inline
    cdef public list prefix, line_owners, marks, lists, tables, capture
    cdef public Node capture_node
    cpdef void brk(self, int n)
    cdef void _line_break(self)
    cdef void _open_line(self)
    cdef str _blank_line(self)
    cdef void _close_marks(self, Py_ssize_t down_to=*)
    cdef void _begin(self, bint lead_space)
    cdef void _put(self, str text)
