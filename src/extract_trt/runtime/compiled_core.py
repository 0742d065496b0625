"""The compiled core: which runtime modules are built with Cython, and whether the compiled ones run.

``setup.py`` compiles the modules named in :data:`COMPILED_MODULES` from their own ``.py`` sources (Cython's
pure-Python mode, C types in the ``.pxd`` beside each). An extension module is imported before a source
module of the same name, so once built it is what runs. The sources run instead (all of them: the compiled
modules share C-level types, so they are never mixed with interpreted ones) when

* nothing was compiled (no Cython or no C compiler at install time, or ``EXTRACT_TRT_PURE_PYTHON=1`` then);
* ``EXTRACT_TRT_PURE_PYTHON=1`` is set at run time;
* a source (``.py`` or ``.pxd``) is newer than its compiled module (an edited checkout: the edit runs, with
  a warning to rebuild).

This module is run by ``setup.py`` too, so it imports nothing outside the standard library.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import warnings
from pathlib import Path

# Runtime modules compiled by setup.py, in dependency order, named relative to the runtime package.
COMPILED_MODULES = (
    "html.dom", "html.simplify", "html.reconstruct", "html.markdown", "html.convert", "html.metadata",
    "labelers.features",
)  # fmt: skip
# Modules written in Cython proper (no interpreted twin; used only by the compiled core, when present),
# with the sources they are built from (paths relative to the runtime package's directory).
CYTHON_MODULES = {"html.lexbor_walk": ("html/lexbor_walk.pyx", "html/dom.pxd"), "labelers.feature_hash": ("labelers/feature_hash.pyx",)}
PURE_PYTHON_ENV = "EXTRACT_TRT_PURE_PYTHON"
_PACKAGE = "extract_trt.runtime"
_HERE = Path(__file__).resolve().parent
# An installer writes a module's .py and its compiled file moments apart, in either order.
_INSTALL_SKEW_S = 2.0


def compiled() -> bool:
    """Whether the compiled core is in use (every module of :data:`COMPILED_MODULES` loaded from an
    extension module)."""
    for name in COMPILED_MODULES:
        module = importlib.import_module(f"{_PACKAGE}.{name}")
        if not (module.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            return False
    return True


def _file(name: str, suffix: str) -> Path:
    """The file of the runtime module ``name`` (dotted, relative to the runtime package) with ``suffix``."""
    return _HERE / f"{name.replace('.', '/')}{suffix}"


def _built(name: str) -> Path | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = _file(name, suffix)
        if path.exists():
            return path
    return None


def fresh(name: str) -> bool:
    """Whether the Cython module ``name`` (of :data:`CYTHON_MODULES`) is built, from its current sources
    where they are present (a wheel installs only the built module)."""
    built = _built(name)
    if built is None:
        return False
    sources = [_HERE / source for source in CYTHON_MODULES[name]]
    newest = max((path.stat().st_mtime for path in sources if path.exists()), default=0.0)
    return built.stat().st_mtime + _INSTALL_SKEW_S >= newest


def _source_mtime(name: str) -> float:
    sources = [_file(name, ".py"), _file(name, ".pxd")]
    return max(path.stat().st_mtime for path in sources if path.exists())


class _SourceFinder:
    """Finds the ``.py`` source of the compiled modules, ahead of their extension modules."""

    @staticmethod
    def find_spec(fullname: str, path=None, target=None):
        name = fullname.removeprefix(f"{_PACKAGE}.")
        if name == fullname or name not in COMPILED_MODULES:
            return None
        return importlib.util.spec_from_file_location(fullname, _file(name, ".py"))


def use_sources_when_needed() -> None:
    """Called once by the package: route the compiled modules to their sources when the compiled core must
    not run (see the module docstring)."""
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        reason = None
    else:
        built = {name: _built(name) for name in COMPILED_MODULES}
        if not any(built.values()):
            return  # nothing compiled: the sources load anyway
        missing = [name for name, path in built.items() if path is None]
        stale = [
            name
            for name, path in built.items()
            if path is not None and path.stat().st_mtime + _INSTALL_SKEW_S < _source_mtime(name)
        ]
        if missing:
            reason = f"{', '.join(missing)} not compiled"
        elif stale:
            reason = f"{', '.join(stale)} changed since the compiled core was built"
        else:
            return
        reason = f"extract_trt: {reason}; running the .py sources (rebuild: pip install -e .)"
    if reason:
        warnings.warn(reason, RuntimeWarning, stacklevel=3)
    if not any(isinstance(f, _SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())
