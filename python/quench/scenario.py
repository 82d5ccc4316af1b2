"""Scenario files (TOML) and the run loop around the engine."""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quench import _core
from quench.results import Results

# Runs expected to take longer than this many wall seconds show a progress bar.
PROGRESS_AFTER_S = 2.0
PROGRESS_STEPS = 100

# Open journals (see `journal`): each run appends the scenario the engine read to every one.
_journals: list[list[dict[str, Any]]] = []


@contextlib.contextmanager
def journal() -> Iterator[list[dict[str, Any]]]:
    """Collect, in order, every scenario run inside the block as the engine read it (every
    default filled in), so an experiment can record exactly what it ran without threading a
    log through its code."""
    runs: list[dict[str, Any]] = []
    _journals.append(runs)
    try:
        yield runs
    finally:
        # By identity: list.remove would take the first *equal* journal (two empty ones are).
        _journals[:] = [j for j in _journals if j is not runs]


def active_journal() -> list[dict[str, Any]] | None:
    """The innermost open journal, if any."""
    return _journals[-1] if _journals else None


def load_scenario(path: str | Path) -> dict[str, Any]:
    """Read a TOML scenario file into a dict (not yet validated)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"scenario file not found: {p}")
    try:
        with p.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise _core.ScenarioError(f"{p}: not valid TOML: {e}") from None


def _scenario_error(path: str, reason: str) -> _core.ScenarioError:
    """A ScenarioError shaped like the engine's: `.path` names the key, `.reason` says why."""
    e = _core.ScenarioError(f"{path}: {reason}" if path else reason)
    e.path = path
    e.reason = reason
    return e


def _not_plain_data(value: Any, path: str = "") -> tuple[str, str] | None:
    """The key path of the first value JSON cannot carry (NaN, an infinity, a date, an object),
    with the reason, in the engine's spelling (`links[0].loss`); None when every value is data."""
    if isinstance(value, float) and not math.isfinite(value):
        return path, f"{value} is not a finite number"
    if isinstance(value, dict):
        for key, item in value.items():
            found = _not_plain_data(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _not_plain_data(item, f"{path}[{i}]")
            if found:
                return found
    elif value is not None and not isinstance(value, (str, int, float)):
        kind = type(value).__name__
        return path, f"a {kind} is not a scenario value (strings, numbers, booleans, lists, tables)"
    return None


def _to_json(spec: dict[str, Any]) -> str:
    try:
        return json.dumps(spec, allow_nan=False)
    except (TypeError, ValueError) as e:
        found = _not_plain_data(spec)
        if found:
            raise _scenario_error(*found) from None
        raise _scenario_error("", f"scenario is not plain data (strings, numbers, lists, tables): {e}") from None


def validate_scenario(spec: dict[str, Any]) -> dict[str, Any]:
    """Validate without running; returns the scenario with every default filled in."""
    return json.loads(_core.validate(_to_json(spec)))


class _ProgressBar:
    """A one-line bar on stderr, shown only once a run has lasted PROGRESS_AFTER_S."""

    def __init__(self, total_s: float, enabled: bool | None) -> None:
        self.total = total_s
        self.enabled = enabled
        self.started = time.perf_counter()
        self.shown = False

    def update(self, now_s: float) -> None:
        elapsed = time.perf_counter() - self.started
        if self.enabled is False or (self.enabled is None and (elapsed < PROGRESS_AFTER_S or not sys.stderr.isatty())):
            return
        frac = now_s / self.total if self.total > 0 else 1.0
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r[{bar:<30}] {frac:6.1%} sim {now_s:.1f}/{self.total:.1f} s, wall {elapsed:.1f} s")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def run_scenario(spec: dict[str, Any], *, progress: bool | None = None) -> Results:
    """Run a scenario dict; `progress` None shows a bar for long runs on a terminal."""
    # One parse, one validation, one build: the engine hands back the scenario it built.
    sim = _core.Simulation(_to_json(spec))
    resolved = json.loads(sim.scenario)
    bar = _ProgressBar(sim.end, progress)
    wall_start = time.perf_counter()
    step = sim.end / PROGRESS_STEPS
    for i in range(1, PROGRESS_STEPS + 1):
        sim.run_until(sim.end if i == PROGRESS_STEPS else i * step)
        bar.update(sim.now)
    bar.close()
    wall_run = time.perf_counter() - wall_start
    raw = sim.finish()
    for runs in _journals:
        runs.append(resolved)
    return Results.from_raw(raw, resolved, wall_run_s=wall_run)
