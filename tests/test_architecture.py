"""The dependency rule of the packages (docs/architecture.md), checked on the import graph of the source.

Every import counts: at module level, inside functions (lazy imports) and under ``if TYPE_CHECKING:``;
``.pyx``/``.pxd`` files count with their ``import``/``cimport`` lines. The rules:

* ``runtime`` (the hot path) never imports the packages built on it: ``export``, ``cli``, ``eval``,
  ``train``, ``job``;
* ``kernels`` imports nothing of ours;
* ``artifacts`` (what export writes and runtime reads) imports nothing of ours but ``kernels`` and the
  error types;
* no two modules of ``runtime`` import each other, directly or round a longer loop, at import time
  (module level, ``TYPE_CHECKING`` blocks included; a function-level import is the one sanctioned way
  for a registry to load what registers in it).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "extract_trt"
BUILT_ON_RUNTIME = ("export", "cli", "eval", "train", "job")
ERRORS_MODULE = "extract_trt.errors"  # the error types every package raises
_CYTHON_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+c?import\b|c?import[ \t]+([\w.]+))", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Import:
    importer: str  # dotted module name
    imported: str  # dotted module name (a package's name for names taken from its __init__)
    at_import_time: bool  # module level (TYPE_CHECKING blocks included), not inside a function
    line: int

    def __str__(self) -> str:
        when = "module level" if self.at_import_time else "in a function"
        return f"{self.importer} imports {self.imported} (line {self.line}, {when})"


def module_names(src: Path) -> dict[str, Path]:
    """Dotted name → file, for every module of the package under ``src`` (``.py``, ``.pyx``, ``.pxd``)."""
    names = {}
    for path in sorted((src / ROOT).rglob("*")):
        if path.suffix not in (".py", ".pyx", ".pxd") or "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if path.suffix == ".py" or name not in names:  # a compiled module is its .py (its .pxd is read with it)
            names[name] = path
    return names


def _resolve(name: str, modules: dict[str, Path], attribute: str | None = None) -> str:
    """``from name import attribute``: the submodule when ``attribute`` is one, else ``name``."""
    if attribute and f"{name}.{attribute}" in modules:
        return f"{name}.{attribute}"
    return name


def _python_imports(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST, at_import_time: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(module, alias.name, at_import_time, child.lineno)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    yield Import(module, _resolve(base, modules, alias.name), at_import_time, child.lineno)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, False)
            else:
                yield from visit(child, at_import_time)

    yield from visit(tree, True)


def _cython_imports(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    text = path.read_text(encoding="utf-8")
    for match in _CYTHON_IMPORT.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        statement = text[match.start() :].split("\n", 1)[0]
        if match.group(1):
            names = statement.split("import", 1)[1].replace("(", " ").replace(")", " ")
            for name in (n.split(" as ")[0].strip() for n in names.split(",")):
                yield Import(module, _resolve(match.group(1), modules, name), True, line)
        else:
            yield Import(module, match.group(2), True, line)


def ours(imports: Iterator[Import]) -> list[Import]:
    return [i for i in imports if i.imported == ROOT or i.imported.startswith(f"{ROOT}.")]


def import_graph(src: Path = SRC) -> list[Import]:
    """Every import of one of our modules by one of our modules."""
    modules = module_names(src)
    found: list[Import] = []
    for module, path in modules.items():
        reader = _python_imports if path.suffix == ".py" else _cython_imports
        found += ours(reader(module, path, modules))
        pxd = path.with_suffix(".pxd")
        if path.suffix == ".py" and pxd.exists():  # the C declarations beside a compiled module
            found += ours(_cython_imports(module, pxd, modules))
    return list(dict.fromkeys(found))  # one entry per statement and module imported


def package_of(module: str) -> str:
    """``extract_trt.runtime.html.dom`` → ``runtime``; a top-level module is its own package, and so are the
    error types (the bottom layer: every package raises them)."""
    if module == ERRORS_MODULE:
        return "errors"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def rule_violations(graph: list[Import]) -> list[str]:
    problems = []
    for imp in graph:
        here, there = package_of(imp.importer), package_of(imp.imported)
        if here == "runtime" and there in BUILT_ON_RUNTIME:
            problems.append(f"runtime must not import {there}: {imp}")
        if here == "kernels" and there != "kernels":
            problems.append(f"kernels imports nothing of ours: {imp}")
        if here == "artifacts" and there not in ("artifacts", "kernels") and imp.imported != ERRORS_MODULE:
            problems.append(f"artifacts imports only kernels and the error types: {imp}")
    return problems


def import_cycles(graph: list[Import], package: str) -> list[list[str]]:
    """Import-time cycles among the modules of ``package`` (each as a list of modules, first = last)."""
    prefix = f"{ROOT}.{package}"
    edges: dict[str, set[str]] = {}
    for imp in graph:
        inside = all(m == prefix or m.startswith(f"{prefix}.") for m in (imp.importer, imp.imported))
        if imp.at_import_time and inside and imp.importer != imp.imported:
            edges.setdefault(imp.importer, set()).add(imp.imported)
    return _cycles(edges)


def package_cycles(graph: list[Import]) -> list[list[str]]:
    """Cycles between packages through any imports (function-level included): the arrows between the
    packages all point one way."""
    edges: dict[str, set[str]] = {}
    for imp in graph:
        here, there = package_of(imp.importer), package_of(imp.imported)
        if here != there:
            edges.setdefault(here or "(top)", set()).add(there or "(top)")
    return _cycles(edges)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    cycles: list[list[str]] = []
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> None:
        if node in path:
            cycles.append(path[path.index(node) :] + [node])
            return
        if node in done:
            return
        for nxt in sorted(edges.get(node, ())):
            walk(nxt, path + [node])
        done.add(node)

    for start in sorted(edges):
        walk(start, [])
    return cycles


@pytest.fixture(scope="module")
def graph() -> list[Import]:
    return import_graph()


def test_the_graph_sees_every_kind_of_import(graph: list[Import]) -> None:
    edges = {(i.importer, i.imported, i.at_import_time) for i in graph}
    # plain, from-a-package, function-level and cimport edges that exist in the source today
    assert ("extract_trt", "extract_trt.runtime.extractor", True) in edges
    assert any(i.importer == "extract_trt.runtime.labelers" and not i.at_import_time for i in graph)
    assert any(i.importer.endswith("lexbor_walk") and i.imported.endswith("dom") for i in graph)
    assert len({i.importer for i in graph}) > 60


def test_packages_import_only_downward(graph: list[Import]) -> None:
    assert rule_violations(graph) == []


def test_runtime_has_no_import_cycles(graph: list[Import]) -> None:
    assert import_cycles(graph, "runtime") == []


def test_packages_have_no_import_cycles(graph: list[Import]) -> None:
    assert package_cycles(graph) == []


def test_the_checks_catch_what_they_forbid(tmp_path: Path) -> None:
    package = tmp_path / ROOT
    files = {
        "__init__.py": "",
        "errors.py": "",
        "kernels/__init__.py": "",
        "kernels/grammar.py": "from extract_trt.errors import X\n",
        "export/__init__.py": "",
        "export/trt.py": "from extract_trt.runtime import a\n",
        "artifacts/__init__.py": "",
        "artifacts/manifest.py": "from ..export import trt\n",
        "runtime/__init__.py": "",
        "runtime/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from extract_trt.runtime import b\n",
        "runtime/b.py": "import extract_trt.runtime.a\ndef f():\n    from extract_trt.export.trt import g\n",
        "runtime/c.pyx": "from extract_trt.runtime.b cimport Node\n",
    }
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    graph = import_graph(tmp_path)
    problems = rule_violations(graph)
    assert any(p.startswith("runtime must not import export") and "in a function" in p for p in problems)
    assert any(p.startswith("kernels imports nothing") for p in problems)
    assert any(p.startswith("artifacts imports only") and "extract_trt.export.trt" in p for p in problems)
    assert import_cycles(graph, "runtime") == [["extract_trt.runtime.a", "extract_trt.runtime.b", "extract_trt.runtime.a"]]
    assert package_cycles(graph) == [["export", "runtime", "export"]]
    assert Import("extract_trt.runtime.c", "extract_trt.runtime.b", True, 1) in graph
