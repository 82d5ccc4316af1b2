"""Shared by the experiments: pass criteria, summary.json, the printed comparison table."""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from quench.atomic import write_atomic, write_json_atomic


@dataclass
class Criterion:
    """One pass criterion: the source's value, ours, and the rule that judges them."""

    name: str
    source: float | str | None
    ours: float
    tolerance: str
    passed: bool

    def __post_init__(self) -> None:
        # Verdicts computed with numpy come as numpy.bool_, which JSON would write as 1.0.
        self.passed = bool(self.passed)
        self.ours = float(self.ours)

    @staticmethod
    def within(name: str, source: float, ours: float, rel: float) -> Criterion:
        ok = math.isfinite(ours) and abs(ours - source) <= rel * abs(source)
        return Criterion(name, source, ours, f"±{rel:.0%}", ok)

    @staticmethod
    def within_abs(name: str, source: float, ours: float, tol: float) -> Criterion:
        ok = math.isfinite(ours) and abs(ours - source) <= tol
        return Criterion(name, source, ours, f"±{tol:g}", ok)

    @staticmethod
    def at_least(name: str, bound: float, ours: float, source: float | str | None = None) -> Criterion:
        return Criterion(name, source, ours, f">= {bound:g}", math.isfinite(ours) and ours >= bound)

    @staticmethod
    def at_most(name: str, bound: float, ours: float, source: float | str | None = None) -> Criterion:
        return Criterion(name, source, ours, f"<= {bound:g}", math.isfinite(ours) and ours <= bound)


# Every scenario an experiment ran, as the engine read it (see `write_scenarios`).
SCENARIOS_FILE = "scenarios.json.gz"


def write_scenarios(out: Path, runs: list[dict]) -> dict:
    """Write the runs' resolved scenarios (every default filled in, in run order) as gzipped
    JSON (pcp06's 90 runs are 5 MB of text, 0.2 MB gzipped); returns summary.json's reference."""
    data = gzip.compress(json.dumps(runs).encode(), mtime=0)
    write_atomic(out / SCENARIOS_FILE, lambda tmp: tmp.write_bytes(data))
    return {"file": SCENARIOS_FILE, "runs": len(runs)}


def write_summary(out: Path, experiment: str, criteria: list[Criterion], seed: int, parameters: dict, **extra) -> dict:
    """summary.json; inside `scenario.journal()` (as `quench reproduce` runs every experiment)
    the scenarios run so far are written beside it first and referenced under "scenarios"."""
    from quench import __version__
    from quench.scenario import active_journal

    runs = active_journal()
    summary = {
        "experiment": experiment,
        "passed": all(c.passed for c in criteria),
        "criteria": [asdict(c) for c in criteria],
        "seed": seed,
        "quench_version": __version__,
        "parameters": parameters,
        **({"scenarios": write_scenarios(out, runs)} if runs else {}),
        **extra,
    }
    write_json_atomic(out / "summary.json", summary)
    return summary


def report(
    out: Path, experiment: str, criteria: list[Criterion], tables: list[str], seed: int, parameters: dict, **extra
) -> dict:
    """Print the experiment's comparison tables and its criteria, then write summary.json."""
    print("\n\n".join([*tables, criteria_table(criteria)]))
    return write_summary(out, experiment, criteria, seed=seed, parameters=parameters, **extra)


def criteria_table(criteria: list[Criterion]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "-" if v is None else str(v)

    rows = [("criterion", "source", "quench", "tolerance", "pass")]
    rows += [(c.name, fmt(c.source), fmt(c.ours), c.tolerance, "yes" if c.passed else "NO") for c in criteria]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)) for r in rows)
