"""The tutorial notebooks in examples/ run from top to bottom (nbclient, a fresh kernel each),
and are kept in the repository without outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "examples").glob("*.ipynb"))
# Each notebook runs in well under a minute on the 2-core CI machine.
TIMEOUT_S = 300
# The backend Jupyter itself gives a kernel: it needs no display and puts each figure into the
# cell's outputs as a PNG, so the notebooks leave the backend to their kernel and show their
# figures inline in Jupyter and here alike (a notebook that chose Agg would show none).
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: strip its outputs"


def draws(nb: nbformat.NotebookNode) -> bool:
    return any("plt." in cell.source for cell in nb.cells if cell.cell_type == "code")


def images(nb: nbformat.NotebookNode) -> list[str]:
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    return [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_runs_and_shows_its_figures(path, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    monkeypatch.setenv("MPLBACKEND", INLINE_BACKEND)  # the kernel inherits it, headless
    # Run in a scratch folder: anything a notebook writes beside itself goes there.
    where = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3", resources=where).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert bool(images(nb)) == draws(nb), "a notebook that draws shows its figures inline, as image/png outputs"


def test_the_first_notebook_draws():
    assert draws(nbformat.read(NOTEBOOKS[0], as_version=4))
