"""Parameter sweeps: a grid and/or a random sample over any scenario parameters and seeds.

A spec (TOML file or dict) names a base scenario and the axes to vary; every point is one
parameter assignment, identified by a stable hash of its parameters. Points run in a local
process pool (default) or on a Dask cluster; each point's `links` and `flows` tables, with the
parameters as columns, are written atomically as one Parquet file in a hive-style partitioned
dataset, so an interrupted sweep resumes without recomputing finished points. Format, resume
semantics and cluster use: docs/sweeps.md.
"""

from __future__ import annotations

import concurrent.futures as cf
import fcntl
import json
import math
import multiprocessing
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from quench.atomic import write_atomic, write_json_atomic
from quench.scenario import run_scenario
from quench.stats import CONFIDENCE, confidence_interval, t_quantile
from quench.sweep_spec import (
    METRICS,
    Point,
    SweepSpec,
    SweepSpecError,
    apply,
    load_spec,
    non_negative_int,
    parse_spec,
)

# The spec's names, re-exported: `quench.sweep` is the module scripts import.
__all__ = [
    "SweepSpec",
    "SweepSpecError",
    "Point",
    "apply",
    "parse_spec",
    "load_spec",
    "confidence_interval",
    "t_quantile",
    "run_sweep",
    "load",
    "format_summary",
    "default_jobs",
    "process_pool",
    "EXIT_POINTS_FAILED",
    "MissingExtraError",
]

# One retry after a failure by default (`sweep.retries`): two attempts in all.
# Seconds to wait for the Dask scheduler before giving up with an error.
CONNECT_TIMEOUT_S = 30
# Local pool: keep this many points in flight per process (one running, one queued).
IN_FLIGHT_PER_JOB = 2
EXIT_POINTS_FAILED = 1


CLUSTER_EXTRA_HINT = "--cluster needs dask.distributed: pip install 'quench[cluster]'"


class MissingExtraError(ImportError, ValueError):
    """An optional dependency (a pip extra of quench) is not installed. An ImportError for
    scripts, and a ValueError so the command line reports it as bad input (exit 2, one line)."""


def _distributed() -> Any:
    """The `distributed` module (Dask's cluster client), which the `cluster` extra installs."""
    try:
        import distributed
    except ImportError as e:
        hint = CLUSTER_EXTRA_HINT if e.name in ("dask", "distributed") else f"{CLUSTER_EXTRA_HINT} ({e})"
        raise MissingExtraError(hint, name=e.name) from e
    return distributed


# ---------------------------------------------------------------------------------------
# Running one point (in a pool process or a Dask worker) and writing it (in the client).


def run_point(scenario: dict) -> dict:
    """Run one point; returns its tables, or {"error": text}. Never raises, so a point's
    error text always reaches the client, whatever executor carried it."""
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        res = run_scenario(scenario, progress=False)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}", "worker": _worker_name()}
    return {
        "links": res.links,
        "flows": res.flows,
        "wall_s": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu_started,
        "events": res.meta["events_executed"],
        "worker": _worker_name(),
    }


def _worker_name() -> str:
    """The Dask worker's address inside a Dask worker (which has imported distributed; importing
    it here would cost 2 s per local process), else host:pid."""
    distributed = sys.modules.get("distributed")
    if distributed is not None:
        try:
            return distributed.get_worker().address
        except ValueError:  # not running in a worker
            pass
    return f"{socket.gethostname()}:{os.getpid()}"


def cell(value: Any, text: bool) -> Any:
    """A parameter's value as a table cell: itself, or text for a table/list value and for
    every value of a parameter whose values mix types (one column type per parameter)."""
    if not text and isinstance(value, bool | int | float | str):
        return value
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def point_table(point: Point, payload: dict, text_keys: frozenset[str] = frozenset()) -> pa.Table:
    """The links and flows rows of one point in one table (`table` says which), plus the
    parameters and the point id as columns."""
    parts = []
    for name in ("links", "flows"):
        t = pa.Table.from_pandas(payload[name], preserve_index=False)
        parts.append(t.append_column("table", pa.array([name] * t.num_rows)))
    table = pa.concat_tables(parts, promote_options="default")
    for key, value in point.params.items():
        table = table.append_column(key, pa.array([cell(value, key in text_keys)] * table.num_rows))
    table = table.append_column("point", pa.array([point.id] * table.num_rows))
    meta = {
        "id": point.id,
        "params": point.params,
        "columns": {n: list(payload[n].columns) for n in ("links", "flows")},
    }
    return table.replace_schema_metadata({b"quench.sweep": json.dumps(meta).encode()})


class SweepDir:
    """The output folder: points/ (Parquet), status/ (JSON per point), sweep.json, summary."""

    def __init__(self, out: str | Path) -> None:
        self.root = Path(out)
        self.points = self.root / "points"
        self.status = self.root / "status"

    def point_path(self, point: Point) -> Path:
        return self.points / point.partition() / f"{point.id}.parquet"

    def done(self, point: Point) -> bool:
        return self.point_path(point).is_file()

    def write_ok(self, point: Point, payload: dict, attempts: int, text_keys: frozenset[str]) -> None:
        table = point_table(point, payload, text_keys)
        write_atomic(self.point_path(point), lambda tmp: pq.write_table(table, tmp))
        record = {k: payload[k] for k in ("wall_s", "cpu_s", "events", "worker")}
        self.write_status(point, "ok", attempts, **record)

    def write_status(self, point: Point, status: str, attempts: int | None, **extra: Any) -> None:
        record = {"id": point.id, "status": status, "params": point.params, "attempts": attempts, **extra}
        record["file"] = str(self.point_path(point).relative_to(self.root)) if status == "ok" else None
        write_json_atomic(self.status / f"{point.id}.json", record)

    def clean_temporaries(self) -> None:
        """Remove half-written files of a killed run: '.<name>.tmp<pid>' under points/, and
        every hidden file in status/ (write_json_atomic's temporaries)."""
        stale = [*self.points.rglob(".*.tmp*"), *self.status.glob(".*")]
        for tmp in stale:
            tmp.unlink(missing_ok=True)

    def claim(self, spec: SweepSpec) -> Any:
        """Lock the folder for this process and check it holds a sweep of the same base."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock = (self.root / ".lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"{self.root}: another sweep is writing this folder") from None
        meta = self.root / "sweep.json"
        if meta.is_file() and json.loads(meta.read_text()).get("base_fingerprint") != spec.fingerprint():
            raise ValueError(f"{self.root}: holds a sweep of a different base scenario (sweep.json); use another --out")
        write_json_atomic(meta, _describe(spec))
        return lock


def _describe(spec: SweepSpec) -> dict:
    return {
        "name": spec.name,
        "base_fingerprint": spec.fingerprint(),
        "base": spec.base,
        "grid": spec.grid,
        "sample": {"points": spec.sample_points, "seed": spec.sample_seed, "params": spec.sample},
        "seeds": spec.seeds,
        "metrics": spec.metrics,
        "retries": spec.retries,
    }


# ---------------------------------------------------------------------------------------
# Executors: each yields (point, attempts, payload) once per point, retries done.


def _retry(payload: dict, attempt: int, retries: int) -> bool:
    return "error" in payload and attempt <= retries


def _outcome(future: Any) -> dict:
    try:
        return future.result()
    except Exception as e:  # the pool broke, or Dask gave up on a task (KilledWorker)
        return {"error": f"{type(e).__name__}: {e}", "worker": None}


def run_serial(spec: SweepSpec, todo: list[Point]) -> Iterator[tuple[Point, int, dict]]:
    """In this process, one point after another."""
    for point in todo:
        attempt = 1
        payload = run_point(spec.scenario(point))
        while _retry(payload, attempt, spec.retries):
            attempt += 1
            payload = run_point(spec.scenario(point))
        yield point, attempt, payload


def process_pool(jobs: int) -> cf.ProcessPoolExecutor:
    """The local pool of `run_pool`, also used by the experiments' grid runner (forkserver: no
    fork of a process holding threads)."""
    ctx = multiprocessing.get_context("forkserver")
    # The server imports quench once; each worker forked from it starts with it loaded.
    ctx.set_forkserver_preload(["quench.sweep"])
    return cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def run_pool(spec: SweepSpec, todo: list[Point], jobs: int) -> Iterator[tuple[Point, int, dict]]:
    """A local process pool."""
    queue = list(reversed(todo))
    with process_pool(jobs) as pool:
        running: dict[cf.Future, tuple[Point, int]] = {}
        try:
            while queue or running:
                while queue and len(running) < IN_FLIGHT_PER_JOB * jobs:
                    point = queue.pop()
                    running[pool.submit(run_point, spec.scenario(point))] = (point, 1)
                done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    point, attempt = running.pop(future)
                    payload = _outcome(future)
                    if _retry(payload, attempt, spec.retries):
                        running[pool.submit(run_point, spec.scenario(point))] = (point, attempt + 1)
                    else:
                        yield point, attempt, payload
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def run_dask(spec: SweepSpec, todo: list[Point], address: str) -> Iterator[tuple[Point, int, dict]]:
    """A Dask cluster: one task per point, gathered as they complete. The scheduler reschedules
    the tasks of a worker that dies; the client alone writes results, once per point."""
    distributed = _distributed()
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S)
    except OSError as e:
        raise ValueError(f"--cluster {address}: cannot reach the Dask scheduler: {e}") from None
    with client:
        owner: dict[str, tuple[Point, int]] = {}

        def submit(point: Point, attempt: int) -> Any:
            future = client.submit(run_point, spec.scenario(point), key=f"quench-{point.id}-{attempt}")
            owner[future.key] = (point, attempt)
            return future

        completed = distributed.as_completed([submit(point, 1) for point in todo])
        for future in completed:
            point, attempt = owner.pop(future.key)
            payload = _outcome(future)
            future.release()
            if _retry(payload, attempt, spec.retries):
                completed.add(submit(point, attempt + 1))
            else:
                yield point, attempt, payload


# ---------------------------------------------------------------------------------------
# The sweep, its summary statistics and reading results back.


def _as_spec(spec: SweepSpec | dict | str | Path) -> SweepSpec:
    if isinstance(spec, SweepSpec):
        return spec
    if isinstance(spec, dict):
        return parse_spec(spec)
    return load_spec(spec)


def default_jobs() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0))


def _executor(spec: SweepSpec, todo: list[Point], jobs: int | None, cluster: str | None) -> Iterator:
    if cluster:
        return run_dask(spec, todo, cluster)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"--jobs: must be at least 1, got {jobs}")
    return run_serial(spec, todo) if jobs == 1 or len(todo) <= 1 else run_pool(spec, todo, min(jobs, len(todo)))


def _progress(total: int, reused: int, quiet: bool) -> Any:
    from tqdm import tqdm

    desc = f"sweep ({reused} reused)" if reused else "sweep"
    return tqdm(total=total, desc=desc, unit="pt", file=sys.stderr, disable=quiet, dynamic_ncols=True)


def run_sweep(
    spec: SweepSpec | dict | str | Path,
    out: str | Path,
    *,
    jobs: int | None = None,
    cluster: str | None = None,
    retries: int | None = None,
    quiet: bool = False,
) -> dict:
    """Run every point not already in `out`; returns (and writes) the summary."""
    spec = _as_spec(spec)
    if retries is not None:
        spec.retries = non_negative_int(retries, "--retries")
    if cluster:
        _distributed()  # before the folder is claimed or the progress bar drawn
    sdir = SweepDir(out)
    lock = sdir.claim(spec)
    try:
        return _run_claimed(spec, sdir, jobs, cluster, quiet)
    finally:
        lock.close()


def _run_claimed(spec: SweepSpec, sdir: SweepDir, jobs: int | None, cluster: str | None, quiet: bool) -> dict:
    sdir.clean_temporaries()
    points = spec.points()
    todo = [p for p in points if not sdir.done(p)]
    reused = len(points) - len(todo)
    for point in points:  # a run killed between a point's file and its status record
        if sdir.done(point) and not (sdir.status / f"{point.id}.json").is_file():
            sdir.write_status(point, "ok", attempts=None, recovered=True)
    failures, started = [], time.perf_counter()
    with _progress(len(todo), reused, quiet) as bar:
        for point, attempts, payload in _executor(spec, todo, jobs, cluster):
            if "error" in payload:
                failures.append(
                    {"id": point.id, "params": point.params, "attempts": attempts, "error": payload["error"]}
                )
                sdir.write_status(point, "failed", attempts, error=payload["error"], worker=payload["worker"])
            else:
                sdir.write_ok(point, payload, attempts, spec.text_keys())
            bar.update(1)
            bar.set_postfix(failed=len(failures))
    stats = summarize(sdir, [p for p in points if sdir.done(p)], spec)
    summary = {
        "name": spec.name,
        "points": len(points),
        "succeeded": len(todo) - len(failures),
        "reused": reused,
        "failed": len(failures),
        "wall_s": time.perf_counter() - started,
        "metrics": spec.metrics,
        "stats": ["stats.parquet", "stats.csv"],
        "failures": failures,
    }
    write_json_atomic(sdir.root / "summary.json", summary)
    summary["table"] = stats
    return summary


def load(out: str | Path, table: str | None = None, points: list[Point] | None = None) -> pd.DataFrame:
    """A sweep's results as one DataFrame: every point, or `points`; `table` "links" or "flows"
    keeps those rows and their columns (with the parameters and the point id)."""
    sdir = SweepDir(out)
    files = [sdir.point_path(p) for p in points] if points is not None else sorted(sdir.points.rglob("*.parquet"))
    if not files:
        return pd.DataFrame()
    tables = [pq.read_table(f) for f in files]
    try:
        df = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # an axis mixing types, e.g. ["20p", 30]
        df = pd.concat([t.to_pandas() for t in tables], ignore_index=True)
    if table is None:
        return df
    meta = json.loads(tables[0].schema.metadata[b"quench.sweep"])
    params = list(dict.fromkeys(k for t in tables for k in json.loads(t.schema.metadata[b"quench.sweep"])["params"]))
    rows = df[df["table"] == table]
    return rows[meta["columns"][table] + params + ["point"]].reset_index(drop=True)


def point_metrics(df: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """One row per point: its parameters and each metric."""
    rows = []
    for pid, rows_of_point in df.groupby("point", sort=False):
        links = rows_of_point[rows_of_point["table"] == "links"]
        flows = rows_of_point[rows_of_point["table"] == "flows"]
        rows.append({"point": pid, **{m: METRICS[m](links, flows) for m in metrics}})
    return pd.DataFrame(rows, columns=["point", *metrics])


def summarize(sdir: SweepDir, done: list[Point], spec: SweepSpec) -> pd.DataFrame:
    """Mean and 95% t-interval over seeds of each metric, per parameter combination; written
    as stats.parquet and stats.csv."""
    params = [k for k in (done[0].params if done else {}) if k != "seed"]
    per_point = point_metrics(load(sdir.root, points=done), spec.metrics) if done else pd.DataFrame()
    rows = []
    if done:
        by_id = {p.id: p for p in done}
        text = spec.text_keys()
        per_point[params] = [[cell(by_id[pid].params[k], k in text) for k in params] for pid in per_point["point"]]
        groups = per_point.groupby(params, sort=False, dropna=False) if params else [((), per_point)]
        for key, g in groups:
            rows.append({**dict(zip(params, key if isinstance(key, tuple) else (key,))), "seeds": len(g)})
            for m in spec.metrics:
                mean, half = confidence_interval(g[m].to_numpy())
                rows[-1] |= {f"{m}_mean": mean, f"{m}_ci_low": mean - half, f"{m}_ci_high": mean + half}
    stats = pd.DataFrame(rows)
    write_atomic(sdir.root / "stats.parquet", lambda tmp: stats.to_parquet(tmp, index=False))
    write_atomic(sdir.root / "stats.csv", lambda tmp: stats.to_csv(tmp, index=False))
    return stats


def format_summary(summary: dict) -> str:
    """The printed summary: counts, failures, and mean ± half-width per combination."""
    lines = [
        f"sweep {summary['name']}: {summary['points']} points: {summary['succeeded']} succeeded, "
        f"{summary['reused']} reused, {summary['failed']} failed ({summary['wall_s']:.1f} s)"
    ]
    lines += [
        f"  failed {f['id']} {f['params']} after {f['attempts']} attempts: {f['error']}" for f in summary["failures"]
    ]
    stats: pd.DataFrame = summary["table"]
    if not stats.empty:
        shown = stats[[c for c in stats.columns if not c.endswith(("_mean", "_ci_low", "_ci_high"))]].copy()
        for m in summary["metrics"]:
            mean, half = stats[f"{m}_mean"], stats[f"{m}_ci_high"] - stats[f"{m}_mean"]
            shown[m] = [f"{a:.4g} ± {b:.2g}" if math.isfinite(b) else f"{a:.4g}" for a, b in zip(mean, half)]
        lines += [f"mean ± half-width of the {CONFIDENCE:.0%} t-interval over seeds:", shown.to_string(index=False)]
    return "\n".join(lines)
