"""Size distributions for UDP payloads (`Network.udp(size=...)`) and workload flow sizes
(`Network.workload(size=...)`): helpers that write the engine's `{dist = ...}` tables, and the
reading of an empirical CDF from a CSV file.

The engine (crates/quench-core/src/dist.rs) draws every kind; its module header gives each
kind's keys and how a draw is rounded and bounded. A CSV file is read here, not in the engine:
`{dist = "empirical", file = "sizes.csv"}` is replaced by `{dist = "empirical", cdf = [...]}`,
the path taken relative to the scenario file (`quench.load_scenario`) or, for a scenario built
in Python, to the working directory. The recorded scenario then carries the points themselves,
so a run can be repeated without the file.

A CSV file has two columns, the size (bytes, or a size with a unit such as "10KB") and its
cumulative probability, separated by a comma or by white space; blank lines, lines starting
with '#', a byte order mark, and a first line that is a header (neither field a number) are
skipped. The file is read line by line and refused at the first bad line, named with the key,
the file as written and the line number (`flows[4].size.file: s.csv: line 2: size 100 B is
below the size before it, 200 B`); it must be a regular file of at most
`quench.files.MAX_CDF_BYTES`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quench.errors import scenario_error
from quench.files import MAX_CDF_BYTES, UnreadableFile, open_regular, text_lines
from quench.units import parse_bytes

Quantity = str | int | float


def fixed(value: Quantity) -> dict[str, Any]:
    """Always `value` bytes (the same as writing the size itself)."""
    return {"dist": "fixed", "value": value}


def uniform(min: Quantity, max: Quantity) -> dict[str, Any]:
    """Whole bytes from `min` to `max`, each equally likely."""
    return {"dist": "uniform", "min": min, "max": max}


def exponential(mean: Quantity) -> dict[str, Any]:
    """Exponential with this mean in bytes."""
    return {"dist": "exponential", "mean": mean}


def lognormal(mean: Quantity, sigma: float) -> dict[str, Any]:
    """Lognormal with this mean in bytes; `sigma` is the standard deviation of ln X."""
    return {"dist": "lognormal", "mean": mean, "sigma": sigma}


def pareto(mean: Quantity, shape: float) -> dict[str, Any]:
    """Pareto with this mean in bytes and shape α > 1 (scale mean·(α − 1)/α)."""
    return {"dist": "pareto", "mean": mean, "shape": shape}


def choice(values: list[Quantity], weights: list[float] | None = None) -> dict[str, Any]:
    """One of `values`, with probability proportional to `weights` (equal when absent)."""
    out: dict[str, Any] = {"dist": "choice", "values": list(values)}
    if weights is not None:
        out["weights"] = list(weights)
    return out


def empirical(cdf: list[tuple[Quantity, float]] | str | Path) -> dict[str, Any]:
    """A piecewise-linear CDF through (size, p) points, or read from a CSV file (a path)."""
    if isinstance(cdf, str | Path):
        return {"dist": "empirical", "file": str(cdf)}
    return {"dist": "empirical", "cdf": [[size, p] for size, p in cdf]}


def websearch() -> dict[str, Any]:
    """The web-search flow sizes of DCTCP (Alizadeh et al., SIGCOMM 2010)."""
    return {"dist": "websearch"}


def datamining() -> dict[str, Any]:
    """The data-mining flow sizes of VL2 (Greenberg et al., SIGCOMM 2009)."""
    return {"dist": "datamining"}


def _number(text: str) -> int | float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() else value


def _size(text: str) -> tuple[Any, int] | None:
    """A size field as the scenario will carry it (a number, or the text with its unit) and its
    bytes; None when it is neither."""
    number = _number(text)
    try:
        return (number, parse_bytes(number)) if number is not None else (text, parse_bytes(text))
    except (TypeError, ValueError):
        return None


class _Points:
    """The (size, p) points of a CSV file, checked as each line is read so that the first bad
    line is the one named: p in [0, 1], neither sizes nor p going down."""

    def __init__(self) -> None:
        self.points: list[list[Any]] = []
        self.last: tuple[int, float] | None = None
        self.last_line = 0

    def add(self, fields: list[str], number: int) -> str | None:
        """Take a line's fields; the reason it is not a point, if it is not."""
        if len(fields) != 2:
            return f"expected two fields, size and p; found {len(fields)}"
        size, prob = _size(fields[0]), _number(fields[1])
        if size is None:
            return f"size '{fields[0]}' is not a size in bytes (e.g. 1500 or 10KB)"
        if prob is None:
            return f"p '{fields[1]}' is not a finite number"
        if not 0 <= prob <= 1:
            return f"p {prob} is not in [0, 1]"
        if self.last is not None and size[1] < self.last[0]:
            return f"size {size[1]} B is below the size before it, {self.last[0]} B"
        if self.last is not None and prob < self.last[1]:
            return f"p {prob} is below the p before it, {self.last[1]}"
        self.points.append([size[0], prob])
        self.last = (size[1], prob)
        self.last_line = number
        return None


def _is_header(fields: list[str]) -> bool:
    """A first line of names, not numbers: neither field reads as a size or a number, so a data
    line, even a malformed one, is never skipped as a header."""
    return len(fields) == 2 and _size(fields[0]) is None and _number(fields[1]) is None


def read_cdf(path: str | Path, key: str = "file", shown: str | None = None) -> list[list[Any]]:
    """The (size, p) points of a CSV file, read line by line up to the first bad one; a file
    that cannot be read or a malformed line raises ScenarioError naming `key`, the file (as
    `shown`, by default the path) and the line."""
    name = str(path) if shown is None else shown
    try:
        with open_regular(path, MAX_CDF_BYTES, "CDF file") as f:
            return _read_points(f, name, key)
    except UnreadableFile as e:
        raise scenario_error(key, str(e).replace(str(path), name, 1)) from None


def _read_points(f: Any, name: str, key: str) -> list[list[Any]]:
    points = _Points()
    seen_content = False
    for number, line in text_lines(f, MAX_CDF_BYTES, name):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.replace(",", " ").split()
        first, seen_content = not seen_content, True
        if first and _is_header(fields):
            continue
        why = points.add(fields, number)
        if why is not None:
            raise scenario_error(key, f"{name}: line {number}: {why}")
    if not points.points:
        raise scenario_error(key, f"{name}: no (size, p) points")
    if points.points[-1][1] != 1:
        last = f"line {points.last_line}: the last p is {points.points[-1][1]}"
        raise scenario_error(key, f"{name}: {last}; a CDF ends at 1")
    return points.points


# Where a scenario holds sizes: each flow's and each workload's `size`.
_SIZED = ("flows", "workloads")


def _file_refs(spec: dict[str, Any]) -> list[tuple[str, int]]:
    """(section, index) of every size that is `{dist = "empirical", file = ...}`."""
    refs = []
    for section in _SIZED:
        entries = spec.get(section)
        if not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            size = entry.get("size") if isinstance(entry, dict) else None
            if isinstance(size, dict) and size.get("dist") == "empirical" and "file" in size:
                refs.append((section, i))
    return refs


def resolve_files(spec: dict[str, Any], base: str | Path) -> dict[str, Any]:
    """`spec` with every empirical CDF given by `file` read in (relative paths against `base`);
    the same object when there is none, a copy otherwise (the caller's spec is not changed)."""
    refs = _file_refs(spec) if isinstance(spec, dict) else []
    if not refs:
        return spec
    out = dict(spec)
    for section in {s for s, _ in refs}:
        out[section] = list(out[section])
    for section, i in refs:
        entry = out[section][i] = dict(out[section][i])
        table = entry["size"] = dict(entry["size"])
        key = f"{section}[{i}].size"
        file = table.pop("file")
        if not isinstance(file, str | Path) or not str(file):
            raise scenario_error(f"{key}.file", "must be the path of a CSV file")
        if "cdf" in table:
            raise scenario_error(f"{key}.file", "give either `cdf` or `file`, not both")
        target = Path(file)
        if not target.is_absolute():
            target = Path(base) / target
        table["cdf"] = read_cdf(target, key=f"{key}.file", shown=str(file))
    return out
