"""python/quench/_core.pyi names exactly what the extension exports, and each class's methods
and properties: read from the stub's source (ast), compared with the module itself."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from quench import _core

STUB = Path(__file__).resolve().parent.parent / "python" / "quench" / "_core.pyi"
# What every extension module has, exported or not.
MODULE_ATTRIBUTES = {"__doc__", "__file__", "__loader__", "__name__", "__package__", "__spec__", "__all__"}


def _stub() -> ast.Module:
    return ast.parse(STUB.read_text(), str(STUB))


def _defined(body: list[ast.stmt]) -> set[str]:
    """Names a stub body defines: classes, functions, annotated and assigned names."""
    names = set()
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    # The stub's own aliases (`_Column`) are not exports.
    return {n for n in names if not n.startswith("_") or n == "__version__"}


def test_the_stub_names_every_export_and_nothing_else():
    exported = set(dir(_core)) - MODULE_ATTRIBUTES
    assert _defined(_stub().body) == exported


def test_each_class_has_the_stubs_methods_and_properties():
    for node in _stub().body:
        if not isinstance(node, ast.ClassDef) or issubclass(getattr(_core, node.name), BaseException):
            continue
        cls = getattr(_core, node.name)
        own = {n for n in vars(cls) if not n.startswith("_")}
        assert _defined(node.body) == own, node.name


def test_the_stubs_parameters_are_the_extensions():
    """Where the extension reports a signature (pyo3 gives `__text_signature__`), the stub's
    parameter names are the same, in order."""
    checked = 0
    for node in ast.walk(_stub()):
        if not isinstance(node, ast.ClassDef | ast.Module):
            continue
        owner = _core if isinstance(node, ast.Module) else getattr(_core, node.name)
        for fn in node.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name == "__init__":
                continue
            target = getattr(owner, fn.name)
            if isinstance(target, property | type(_core.Simulation.now)) and not callable(target):
                continue
            try:
                params = list(inspect.signature(target).parameters)
            except (TypeError, ValueError):
                continue
            stub_params = [a.arg for a in fn.args.args]
            assert [p for p in stub_params if p != "self"] == [p for p in params if p != "self"], fn.name
            checked += 1
    assert checked >= 5
