"""Atomic file writes: a result file is either whole or absent. A write goes to a hidden
temporary beside its target ('.<name>.tmp<pid>', which a killed run may leave behind) and is
renamed over it, an atomic step on one file system."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Call `write` on a temporary path beside `path`, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_json_atomic(path: Path, data: Any) -> None:
    """Indented JSON; values JSON cannot hold (numpy scalars) are written as floats."""
    write_text_atomic(path, json.dumps(data, indent=2, default=float) + "\n")
