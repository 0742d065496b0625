# cython: language_level=3
"""The tree build of :func:`extract_trt.runtime.html.dom.parse` in C, reading Lexbor directly.

selectolax's node API costs a Python object per step of the walk: a ``LexborNode`` for every ``child``
and ``next``, a property call for each ``tag_id``, a ``TextContainer`` per text node, a dict built through
codec lookups for the attributes. Converting a page's Lexbor tree into :class:`~extract_trt.runtime.html.dom.Node`
objects that way took about 40 % of the simplifier's time. This walker does the same conversion with
Lexbor's own accessor functions, which selectolax's extension module exports (the ``*_noi`` "no inline"
variants): it finds them in the already loaded module with ``dlsym`` and needs neither Lexbor's headers
nor its struct layouts, only the functions' documented signatures and node addresses (``LexborNode.mem_id``).

It is optional and checked: :mod:`dom` uses it only in the compiled build, after it produced the same tree
as the selectolax walk on a probe page; anything missing (a platform without ``dlopen``, a selectolax
without these symbols) leaves the selectolax walk in place. The walk mirrors ``dom._build`` step for step;
the rare part that needs a node's serialized HTML (``<template>`` content) gets it from Lexbor's
serializer by address (:func:`html`). Inside SVG/MathML it reads attributes by qualified name
(``xlink:href``), as selectolax >= 1.0 does, which the reference keeps from its serialized page.
"""

from cpython.exc cimport PyErr_CheckSignals
from cpython.unicode cimport PyUnicode_DecodeUTF8

from extract_trt.runtime.html.dom cimport Node, _add_element, _add_text

from extract_trt.runtime.html import dom

cdef str REFERENCE_UID_ATTR = dom.REFERENCE_UID_ATTR

cdef extern from "<dlfcn.h>" nogil:
    void *dlopen(const char *filename, int flags)
    void *dlsym(void *handle, const char *symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

ctypedef unsigned char lxb_char_t
ctypedef void *(*node_step_f)(void *) noexcept nogil
ctypedef size_t (*tag_id_f)(void *) noexcept nogil
ctypedef int (*node_type_f)(void *) noexcept nogil
ctypedef const lxb_char_t *(*name_f)(void *, size_t *) noexcept nogil
ctypedef lxb_char_t *(*text_f)(void *, size_t *) noexcept nogil
ctypedef lxb_char_t *(*destroy_text_f)(void *, lxb_char_t *) noexcept nogil
ctypedef struct lexbor_str_t:  # lexbor/core/str.h
    lxb_char_t *data
    size_t length
ctypedef lexbor_str_t *(*str_create_f)() noexcept nogil
ctypedef unsigned int (*serialize_f)(void *, lexbor_str_t *) noexcept nogil
ctypedef void *(*str_destroy_f)(lexbor_str_t *, void *, bint) noexcept nogil

# DOM nodeType values (Lexbor's lxb_dom_node_type_t follows the DOM standard).
cdef enum:
    ELEMENT_NODE = 1
    TEXT_NODE = 3

cdef node_step_f first_child = NULL
cdef node_step_f next_sibling = NULL
cdef tag_id_f tag_id_of = NULL
cdef node_type_f type_of = NULL
cdef node_step_f first_attribute = NULL
cdef node_step_f next_attribute = NULL
cdef name_f attribute_name = NULL
cdef name_f attribute_value = NULL
cdef name_f attribute_qualified_name = NULL
cdef name_f qualified_name = NULL
cdef text_f text_content = NULL
cdef destroy_text_f destroy_text = NULL
cdef str_create_f str_create = NULL
cdef serialize_f serialize_tree = NULL
cdef str_destroy_f str_destroy = NULL
cdef node_step_f text_memory = NULL


cdef void *_symbol(void *handle, str name) except NULL:
    address = dlsym(handle, name.encode())
    if address == NULL:
        raise ImportError(f"selectolax's Lexbor module does not export {name}")
    return address


def load(str library) -> None:
    """Find Lexbor's accessor functions in selectolax's extension module (already loaded, at ``library``)."""
    global first_child, next_sibling, tag_id_of, type_of, first_attribute, next_attribute
    global attribute_name, attribute_value, attribute_qualified_name, qualified_name, text_content, destroy_text
    global str_create, serialize_tree, str_destroy, text_memory
    handle = dlopen(library.encode(), RTLD_NOW | RTLD_NOLOAD)
    if handle == NULL:
        raise ImportError(f"cannot open {library}")
    first_child = <node_step_f>_symbol(handle, "lxb_dom_node_first_child_noi")
    next_sibling = <node_step_f>_symbol(handle, "lxb_dom_node_next_noi")
    tag_id_of = <tag_id_f>_symbol(handle, "lxb_dom_node_tag_id_noi")
    type_of = <node_type_f>_symbol(handle, "lxb_dom_node_type_noi")
    first_attribute = <node_step_f>_symbol(handle, "lxb_dom_element_first_attribute_noi")
    next_attribute = <node_step_f>_symbol(handle, "lxb_dom_element_next_attribute_noi")
    attribute_name = <name_f>_symbol(handle, "lxb_dom_attr_local_name_noi")
    attribute_value = <name_f>_symbol(handle, "lxb_dom_attr_value_noi")
    attribute_qualified_name = <name_f>_symbol(handle, "lxb_dom_attr_qualified_name")
    qualified_name = <name_f>_symbol(handle, "lxb_dom_element_qualified_name")
    text_content = <text_f>_symbol(handle, "lxb_dom_node_text_content")
    destroy_text = <destroy_text_f>_symbol(handle, "lxb_dom_document_destroy_text_noi")
    str_create = <str_create_f>_symbol(handle, "lexbor_str_create")
    serialize_tree = <serialize_f>_symbol(handle, "lxb_html_serialize_tree_str")
    str_destroy = <str_destroy_f>_symbol(handle, "lexbor_str_destroy")
    text_memory = <node_step_f>_symbol(handle, "lxb_html_document_mraw_text_noi")


def html(size_t address, size_t document):
    """selectolax's ``LexborNode.html`` of the node at ``address`` in ``document`` (None if Lexbor fails)."""
    cdef lexbor_str_t *out = str_create()
    if out == NULL:
        raise MemoryError
    try:
        if serialize_tree(<void *>address, out) != 0 or out.data == NULL:
            return None
        return _utf8(out.data, out.length).replace("<-undef>", "")
    finally:
        str_destroy(out, text_memory(<void *>document), True)


cdef inline str _utf8(const lxb_char_t *data, size_t length):
    return PyUnicode_DecodeUTF8(<const char *>data, length, NULL)


cdef dict _attributes(void *element, bint foreign):
    # dom._attrs: as selectolax's ``attributes``, with "" for a valueless attribute (libxml2 reads one back
    # so), without the attribute the reference strips. Lexbor's local names are lower-case already; in
    # SVG/MathML, qualified names (``xlink:href`` beside a plain ``href``), which libxml2 lower-cases.
    cdef dict attrs = {}
    cdef size_t length = 0
    cdef const lxb_char_t *name
    cdef const lxb_char_t *value
    cdef void *attr = first_attribute(element)
    while attr != NULL:
        name = attribute_qualified_name(attr, &length) if foreign else attribute_name(attr, &length)
        if name != NULL:
            key = _utf8(name, length).lower() if foreign else _utf8(name, length)
            if key != REFERENCE_UID_ATTR:
                value = attribute_value(attr, &length)
                attrs[key] = _utf8(value, length) if value != NULL else ""
        attr = next_attribute(attr)
    return attrs


cdef str _tag_name(void *node, size_t tag_id):
    # dom._tag_name for a node known by address: selectolax's ``tag`` of it, then the same naming and cache.
    cdef size_t length = 0
    cdef const lxb_char_t *data
    tag = None
    kind = type_of(node)
    if kind == TEXT_NODE:
        tag = "-text"
    elif kind == ELEMENT_NODE:
        data = qualified_name(node, &length)
        if data != NULL:
            tag = _utf8(data, length) or None
    else:
        tag = "-other"  # comments, doctypes: left out
    return dom.name_of_tag(tag, tag_id)


def build(tree, size_t first, Node top, Py_ssize_t templates, frozenset lazy_tags, dict names,
          frozenset foreign_roots, Py_ssize_t max_templates):
    """Convert the Lexbor node at address ``first`` and its following siblings (with their descendants)
    into children of ``top``; ``tree`` is the :class:`dom.LexborTree` they belong to.

    Returns ``(nesting, closing)`` for dom's fix-ups: the libxml2 nesting voids and the elements that
    libxml2 would not let start inside their parent, in document order.
    """
    cdef list nesting = []
    cdef list closing = []
    cdef list work = [(tree, first, top, templates, False)]
    cdef list kids
    cdef Py_ssize_t count = 0
    cdef Py_ssize_t inner
    cdef size_t tag_id
    cdef size_t length = 0
    cdef size_t document
    cdef void *lex
    cdef void *child
    cdef lxb_char_t *data
    cdef bint in_foreign, inner_foreign
    cdef Node parent, el
    cdef str tag, text
    while work:
        PyErr_CheckSignals()
        tree, address, parent, templates, in_foreign = work.pop()
        lex = <void *><size_t>address
        document = tree.document
        kids = parent.children
        while lex != NULL:
            if type_of(lex) == TEXT_NODE:
                data = text_content(lex, &length)
                if data != NULL:
                    text = _utf8(data, length) if length else None
                    destroy_text(<void *>document, data)
                    if text:
                        _add_text(parent, kids, text)
                lex = next_sibling(lex)
                continue
            tag_id = tag_id_of(lex)
            tag = names.get(tag_id)
            if tag is None:
                tag = _tag_name(lex, tag_id)
            if tag:
                count += 1
                inner_foreign = in_foreign or tag in foreign_roots
                el = _add_element(tag, _attributes(lex, inner_foreign), parent, kids, count, nesting, closing)
                if in_foreign and tag in dom.LIBXML2_NESTING_VOIDS:
                    dom.keep_foreign_closed(nesting, el, html(<size_t>lex, document))
                child = first_child(lex)
                inner = templates
                child_tree = tree
                if tag == "template":
                    inner += 1
                    if child == NULL and inner <= max_templates:
                        content = tree.template_content(<size_t>lex)
                        if content is not None:
                            child_tree, start = content
                            child = <void *><size_t>start
                if child != NULL:
                    if tag in lazy_tags and not in_foreign:
                        # as dom._build, which restores SVG/MathML attribute names from the whole subtree
                        el.lazy = (child_tree, <size_t>child, inner)
                    else:
                        work.append((tree, <size_t>next_sibling(lex), parent, templates, in_foreign))
                        work.append((child_tree, <size_t>child, el, inner, inner_foreign))
                        break
            lex = next_sibling(lex)
    return nesting, closing
