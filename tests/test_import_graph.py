"""The package's modules import one another without a circle: read from the source (ast), every
`import quench.x` and `from quench.x import y`, at module level or inside a function, is an
edge; the graph must have no cycle. Imports under `if TYPE_CHECKING:` never run and are left
out. A circle through an import inside a function works only while that function runs after
both modules finished loading; an edge that must stay so is listed in DELIBERATE with why."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "quench"
# Compiled modules: no Python source, and they import nothing of the package.
EXTENSIONS = {"quench._core"}
# (importer, imported) edges allowed to close a circle, each with its reason; none today.
DELIBERATE: dict[tuple[str, str], str] = {}


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> list[tuple[str, str]]:
    """(name, fallback) for each name `node` imports: `from a import b` gives (`a.b`, `a`), b
    being a module of its own or a name defined in a."""
    if isinstance(node, ast.Import):
        return [(alias.name, alias.name) for alias in node.names]
    base = node.module or ""
    if node.level:
        parent = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*parent, *([node.module] if node.module else [])])
    return [(f"{base}.{alias.name}", base) for alias in node.names]


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, for every .py file under `root`."""
    modules = {_module_name(root, p): p for p in sorted(root.rglob("*.py"))}

    def known(name: str) -> str | None:
        """`name` or the nearest enclosing module of the package; None outside it."""
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        stack: list[ast.AST] = [ast.parse(path.read_text(), str(path))]
        while stack:
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    stack.extend(child.orelse)
                    continue
                if isinstance(child, ast.Import | ast.ImportFrom):
                    for target, fallback in _imported(child, package):
                        if target in EXTENSIONS or fallback in EXTENSIONS:
                            continue
                        found = target if target in modules else known(fallback)
                        if found is not None and found != name:
                            graph[name].add(found)
                stack.append(child)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of modules (Tarjan's strongly connected components larger than one)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_imports_without_a_circle():
    graph = import_graph(PACKAGE)
    for importer, imported in DELIBERATE:
        graph[importer].discard(imported)
    assert len(graph) > 20  # every module was read
    assert cycles(graph) == []


def test_the_deliberate_exceptions_are_still_edges():
    graph = import_graph(PACKAGE)
    stale = [edge for edge in DELIBERATE if edge[1] not in graph.get(edge[0], set())]
    assert stale == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "quench"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # A circle closed by a lazy import inside a function is still a circle.
        (
            {
                "quench/__init__.py": "",
                "quench/a.py": "from quench.b import f\n",
                "quench/b.py": "def f():\n    from quench import a\n",
            },
            [["quench.a", "quench.b"]],
        ),
        # Relative imports, and a circle of three.
        (
            {
                "quench/__init__.py": "",
                "quench/a.py": "from . import b\n",
                "quench/b.py": "from .c import x\n",
                "quench/c.py": "import quench.a\nx = 1\n",
            },
            [["quench.a", "quench.b", "quench.c"]],
        ),
        # Imports only a type checker sees never run; the extension is not a module here.
        (
            {
                "quench/__init__.py": "",
                "quench/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from quench.b import f\n",
                "quench/b.py": "from quench import _core\nfrom quench.a import g\n",
            },
            [],
        ),
    ],
)
def test_the_walk_finds_circles_by_hand(tmp_path, files, expected):
    assert cycles(import_graph(_write(tmp_path, files))) == expected


def test_the_circles_that_were_split_would_be_found(tmp_path):
    """dist.py taking the scenario error from scenario.py, which reads CDF files through
    dist.py: the shape errors.py keeps apart."""
    root = _write(
        tmp_path,
        {
            "quench/__init__.py": "",
            "quench/dist.py": "from quench.scenario import scenario_error\n",
            "quench/scenario.py": "def load():\n    from quench.dist import resolve_files\n",
        },
    )
    assert cycles(import_graph(root)) == [["quench.dist", "quench.scenario"]]
