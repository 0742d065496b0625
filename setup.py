"""Build the compiled core: the hot-path runtime modules compiled with Cython from their own ``.py`` sources.

Project metadata lives in pyproject.toml; this file only adds the optional extension modules. Each module is
compiled from the same ``.py`` file that runs interpreted (Cython's pure-Python mode; C types come from the
``.pxd`` file beside it and from annotations), so there is one copy of the code. Compiling is optional:
without Cython or a C compiler, when a module fails to compile, or with ``EXTRACT_TRT_PURE_PYTHON=1`` at
install time, the package installs as plain Python and the same modules run interpreted.
``extract_trt.runtime.compiled()`` says which ones run. Modules written in Cython proper
(``CYTHON_MODULES``: the C tree walker ``lexbor_walk.pyx``) have no interpreted twin; they are built the same
optional way and used only by the compiled core.
"""

from __future__ import annotations

import os
import runpy
import warnings

from setuptools import Extension, setup

# One list for the build and the run time (compiled_core.py imports only the standard library).
_RUNTIME = runpy.run_path("src/extract_trt/runtime/compiled_core.py")
COMPILED_MODULES = _RUNTIME["COMPILED_MODULES"]
CYTHON_MODULES = _RUNTIME["CYTHON_MODULES"]
PURE_PYTHON_ENV = _RUNTIME["PURE_PYTHON_ENV"]


def _extensions() -> list[Extension]:
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        warnings.warn("Cython not installed: extract-trt installs without its compiled core", stacklevel=1)
        return []
    # names are dotted relative to the runtime package (html.dom → src/extract_trt/runtime/html/dom.py)
    modules = [
        Extension(f"extract_trt.runtime.{name}", [f"src/extract_trt/runtime/{name.replace('.', '/')}.py"])
        for name in COMPILED_MODULES
    ]
    modules += [
        Extension(f"extract_trt.runtime.{name}", [f"src/extract_trt/runtime/{sources[0]}"])
        for name, sources in CYTHON_MODULES.items()
    ]
    try:
        extensions = cythonize(
            modules,
            language_level=3,
            # nonecheck: a None where a node is expected raises AttributeError, as interpreted, not a crash
            compiler_directives={"binding": False, "boundscheck": False, "nonecheck": True},
            quiet=True,
        )
    except Exception as exc:  # Cython itself failing: install the pure-Python package
        warnings.warn(f"Cython failed ({exc}): extract-trt installs without its compiled core", stacklevel=1)
        return []
    for extension in extensions:  # (cythonize does not carry `optional` over from the modules given)
        extension.optional = True  # a failing C compiler leaves the module interpreted, not the install failed
    return extensions


setup(ext_modules=_extensions())
