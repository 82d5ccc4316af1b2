"""Shared by the experiments: pass criteria, the grid runner, the printed tables, the figures
and summary.json."""

from __future__ import annotations

import contextlib
import functools
import gzip
import itertools
import json
import math
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from quench.atomic import write_atomic, write_json_atomic
from quench.network import Network, Quantity
from quench.results import Results
from quench.scenario import active_journal, run_scenario
from quench.sweep import default_jobs, process_pool


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


@dataclass(frozen=True)
class Analysis:
    """Why a criterion fails where it does, for the report: one sentence, and the anchor of the
    heading in docs/reproductions.md whose section holds the evidence. An experiment lists its
    analyses in a module-level `FAILURES` dict keyed by criterion name; they live in the code
    rather than in summary.json, so that explaining a failure changes no recorded result."""

    why: str
    anchor: str


# ---------------------------------------------------------------------------------------
# The grid runner: an experiment's independent runs on the sweep engine's process pool.


@dataclass(frozen=True)
class Run:
    """One run of an experiment's grid: its scenario, and what of its Results the experiment
    keeps. `keep` runs where the simulation ran, so time series the experiment does not need
    never cross processes; it must pickle (a module-level function or a functools.partial of
    one). None keeps the whole Results."""

    scenario: dict[str, Any]
    keep: Callable[[Results], Any] | None = None

    @classmethod
    def of(cls, net: Network, duration: Quantity, keep: Callable[[Results], Any] | None = None) -> Run:
        return cls(net.to_dict(duration), keep)


@functools.cache
def _pool(jobs: int) -> ProcessPoolExecutor:
    """The grid runner's pool of `jobs` processes, started at the first grid and kept for the
    process's lifetime: an experiment runs several grids (a calibration step by step, a study
    row by row), and starting the workers takes longer than many of their runs."""
    return process_pool(jobs)


def _run(run: Run) -> tuple[dict[str, Any], Any]:
    """The resolved scenario and what the run keeps."""
    res = run_scenario(run.scenario, progress=False)
    return res.scenario, res if run.keep is None else run.keep(res)


# How long a grid in progress may go without a line on stderr when progress is reported: a
# reproduction's run can take minutes, and its user should never wait 30 s without news.
PROGRESS_INTERVAL_S = 10.0


@dataclass
class ExperimentProgress:
    """What an experiment's grids share when they report: its name, when it started, when it
    last said something (an experiment runs many short grids, which together must not go
    quiet either) and how many grids it has started."""

    label: str
    start: float
    last_line: float
    grids: int = 0


# The experiment whose grids report their progress (set by `progress_reports`); None: silent.
_reporting: ExperimentProgress | None = None


@contextlib.contextmanager
def progress_reports(label: str) -> Iterator[None]:
    """Within the block, every grid reports on stderr (stdout keeps the experiment's tables)."""
    global _reporting
    now = time.monotonic()
    previous, _reporting = _reporting, ExperimentProgress(label, now, now)
    try:
        yield
    finally:
        _reporting = previous


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}:{secs:02d}"


class GridProgress:
    """Lines on stderr about a grid in progress: which of the experiment's grids, its runs done
    of the total, the experiment's time so far and an estimate of the grid's time left. A line
    at a finished run when the experiment's last one is PROGRESS_INTERVAL_S old, and from a
    background thread when no run has finished for that long (a long run)."""

    def __init__(self, experiment: ExperimentProgress, total: int) -> None:
        self.experiment, self.total, self.done = experiment, total, 0
        experiment.grids += 1
        self.grid = experiment.grids
        self.start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self) -> GridProgress:
        self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._ticker.join()

    def advance(self) -> None:
        with self._lock:
            self.done += 1
            self._say_if_due()

    def _tick(self) -> None:
        while not self._stop.wait(PROGRESS_INTERVAL_S / 2):
            with self._lock:
                self._say_if_due()

    def _say_if_due(self) -> None:
        now, e = time.monotonic(), self.experiment
        if now - e.last_line < PROGRESS_INTERVAL_S:
            return
        per_run = (now - self.start) / self.done if self.done else None
        left = f", about {_clock(per_run * (self.total - self.done))} left in it" if per_run is not None else ""
        line = f"  {e.label}: grid {self.grid}, {self.done}/{self.total} runs, {_clock(now - e.start)} elapsed{left}"
        print(line, file=sys.stderr)
        sys.stderr.flush()
        e.last_line = now


class _Silent:
    """A grid's progress where nobody asked for it."""

    def advance(self) -> None:
        pass


def _run_all(runs: list[Run], jobs: int, progress: GridProgress | _Silent) -> list[tuple[dict[str, Any], Any]]:
    """Every run's resolved scenario and what it keeps, in the order given; runs in this process
    when `jobs` is 1, else on the pool."""
    if jobs <= 1 or len(runs) <= 1:
        done = []
        for run in runs:
            done.append(_run(run))
            progress.advance()
        return done
    try:
        futures = [_pool(jobs).submit(_run, run) for run in runs]
        for _ in as_completed(futures):
            progress.advance()
        return [f.result() for f in futures]
    except BrokenProcessPool:
        _pool.cache_clear()  # a worker died: the next grid starts a new pool
        raise


def run_grid(*grids: Sequence[Run], jobs: int | None = None) -> list[list[Any]]:
    """Run independent simulations on the sweep engine's process pool (`jobs` processes, default
    one per core) and return, per grid, what each run keeps, in the order given whatever order
    they finish in. Several grids run as one, so no core idles between them. Each resolved
    scenario joins the open journal (which `write_summary` writes) in the order given, as if
    the runs had been made one after another in this process; the engine is deterministic, so
    the results are those of that serial loop."""
    runs = [run for grid in grids for run in grid]
    jobs = default_jobs() if jobs is None else jobs
    in_pool = jobs > 1 and len(runs) > 1
    if _reporting is None:
        done = _run_all(runs, jobs, _Silent())
    else:
        with GridProgress(_reporting, len(runs)) as progress:
            done = _run_all(runs, jobs, progress)
    journal = active_journal()
    if in_pool and journal is not None:  # in this process, run_scenario journals them itself
        journal.extend(resolved for resolved, _ in done)
    kept = [k for _, k in done]
    it = iter(kept)
    return [list(itertools.islice(it, len(grid))) for grid in grids]


# ---------------------------------------------------------------------------------------
# Printed tables and figures.


def text_table(rows: Sequence[Sequence[str]], title: str | None = None, right: Collection[int] = ()) -> str:
    """Rows of text cells as columns two spaces apart, flush left except the columns in
    `right`, under an optional title line."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(row: Sequence[str]) -> str:
        cells = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
        return "  ".join(cells).rstrip()

    return "\n".join([*([title] if title else []), *map(line, rows)])


def pyplot() -> Any:
    """matplotlib.pyplot on its file-only backend, imported when an experiment first plots (a
    reproduction without plots, and the pool's workers, never load it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


class Figures:
    """The PNG figures an experiment writes into its folder, in order (summary.json lists them)."""

    def __init__(self, out: Path, dpi: int) -> None:
        self.out = out
        self.dpi = dpi
        self.names: list[str] = []

    @contextlib.contextmanager
    def new(self, name: str, *grid: int, **subplots: Any) -> Iterator[tuple[Any, Any]]:
        """`plt.subplots(*grid, **subplots)` for the block to draw on; laid out, written as
        `name` and closed when it ends (closed also when drawing fails)."""
        plt = pyplot()
        fig, axes = plt.subplots(*grid, **subplots)
        try:
            yield fig, axes
            fig.tight_layout()
            fig.savefig(self.out / name, dpi=self.dpi)
            self.names.append(name)
        finally:
            plt.close(fig)


# ---------------------------------------------------------------------------------------
# summary.json and the scenarios it references.

# Every scenario an experiment ran, as the engine read it (see `write_scenarios`).
SCENARIOS_FILE = "scenarios.json.gz"


def write_scenarios(out: Path, runs: list[dict]) -> dict:
    """Write the runs' resolved scenarios (every default filled in, in run order) as gzipped
    JSON (pcp06's 90 runs are 5 MB of text, 0.2 MB gzipped); returns summary.json's reference."""
    data = gzip.compress(json.dumps(runs).encode(), mtime=0)
    write_atomic(out / SCENARIOS_FILE, lambda tmp: tmp.write_bytes(data))
    return {"file": SCENARIOS_FILE, "runs": len(runs)}


def output_folder(out: str | Path) -> Path:
    """An experiment's output folder, created if absent."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_summary(out: Path, experiment: str, criteria: list[Criterion], seed: int, parameters: dict, **extra) -> dict:
    """summary.json; inside `scenario.journal()` (as `quench reproduce` runs every experiment)
    the scenarios run so far are written beside it first and referenced under "scenarios"."""
    from quench import __version__

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
    return text_table(rows)
