"""Build quench's API reference with pdoc from the docstrings: `python tests/build_api_docs.py
OUT` (what `make docs` runs, into docs/api/, which git ignores). Every public module of the
package is documented (quench.ns3_child runs inside the ns-3 environment only); exit status 1,
with the warnings listed, when pdoc warns (a module that does not import, a docstring or
annotation it cannot read), as tests/test_api_docs.py checks."""

from __future__ import annotations

import pkgutil
import sys
import warnings
from pathlib import Path

import pdoc

import quench

# Modules pdoc cannot import in quench's own environment.
SKIP = {"quench.ns3_child"}


def modules() -> list[str]:
    """quench and each public module and package in it, in name order (quench's `__all__` lists
    names, not modules, so pdoc would not find them itself; it does find a package's own)."""
    names = [
        m.name for m in pkgutil.iter_modules(quench.__path__, "quench.") if not m.name.split(".")[-1].startswith("_")
    ]
    return ["quench", *sorted(n for n in names if n not in SKIP)]


def build(out: Path) -> list[str]:
    """Write the reference into `out`; the warnings pdoc gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*modules(), output_directory=out)
    return [str(w.message) for w in caught]


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/api")
    problems = build(out)
    for p in problems:
        print(f"pdoc: {p}", file=sys.stderr)
    print(f"API reference in {out}/index.html ({len(modules())} modules)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
