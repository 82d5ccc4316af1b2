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


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: strip its outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    # Run in a scratch folder: anything a notebook writes beside itself goes there.
    where = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3", resources=where).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
