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
with '#', and a first line that is a header (its second field not a number) are skipped.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quench.scenario import scenario_error

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


def read_cdf(path: str | Path, key: str = "file") -> list[list[Any]]:
    """The (size, p) points of a CSV file; a file that cannot be read or a malformed line
    raises ScenarioError naming `key`, the file and the line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise scenario_error(key, f"{p}: cannot read the CDF file: {reason}") from None
    points: list[list[Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.replace(",", " ").split()]
        if len(fields) != 2:
            raise scenario_error(key, f"{p}: line {number}: expected two fields, size and p; found {len(fields)}")
        prob = _number(fields[1])
        if prob is None:
            if not points and number == _first_content_line(text):
                continue  # a header
            raise scenario_error(key, f"{p}: line {number}: p '{fields[1]}' is not a finite number")
        size = _number(fields[0])
        points.append([size if size is not None else fields[0], prob])
    if not points:
        raise scenario_error(key, f"{p}: no (size, p) points")
    return points


def _first_content_line(text: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.strip().startswith("#"):
            return number
    return 0


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
        table["cdf"] = read_cdf(target, key=f"{key}.file")
    return out
