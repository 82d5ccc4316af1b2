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
import copy
import fcntl
import functools
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import random
import socket
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from quench.experiments.common import write_json_atomic
from quench.results import jain_index
from quench.scenario import load_scenario, run_scenario, validate_scenario

# One retry after a failure: two attempts in all (issue 8: "N attempts, default 2").
DEFAULT_RETRIES = 1
# 64 bits of SHA-256: by the birthday bound a collision needs ~4e9 points.
ID_HEX_CHARS = 16
# Directory names longer than this (table-valued parameters) use the value's hash instead.
MAX_PARTITION_VALUE_CHARS = 48
# Two-sided confidence level of the intervals over seeds.
CONFIDENCE = 0.95
# Simpson intervals for Student's t CDF: error far below the 4 digits of printed t tables.
SIMPSON_INTERVALS = 4000
# Bisection steps for the t quantile: 2^-60 of the bracket, below float resolution.
BISECTION_STEPS = 60
# Seconds to wait for the Dask scheduler before giving up with an error.
CONNECT_TIMEOUT_S = 30
# Local pool: keep this many points in flight per process (one running, one queued).
IN_FLIGHT_PER_JOB = 2
DEFAULT_METRICS = ["utilization", "goodput_bps", "mean_queue_packets", "loss_rate"]
SPEC_KEYS = {"name", "base", "set", "grid", "sample", "seeds", "metrics", "retries"}
SAMPLE_KEYS = {"points", "seed", "params"}
SAMPLE_KINDS = {"uniform", "log_uniform", "int", "choice"}
EXIT_POINTS_FAILED = 1


class SweepSpecError(ValueError):
    """A malformed sweep spec; the message starts with the offending key."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


# ---------------------------------------------------------------------------------------
# Per-point metrics, computed from a point's links and flows tables.


def _bottleneck(links: pd.DataFrame) -> pd.Series:
    return links.loc[links["utilization"].idxmax()]


def _loss_rate(links: pd.DataFrame) -> float:
    b = _bottleneck(links)
    return float(b["dropped_packets"]) / float(b["arrived_packets"]) if b["arrived_packets"] else math.nan


METRICS: dict[str, Callable[[pd.DataFrame, pd.DataFrame], float]] = {
    "utilization": lambda links, flows: float(_bottleneck(links)["utilization"]),
    "goodput_bps": lambda links, flows: float(flows["goodput_bps"].sum()),
    "mean_queue_packets": lambda links, flows: float(_bottleneck(links)["mean_backlog_packets"]),
    "mean_sojourn_s": lambda links, flows: float(_bottleneck(links)["mean_sojourn_s"]),
    "loss_rate": lambda links, flows: _loss_rate(links),
    "jain": lambda links, flows: jain_index(flows["goodput_bps"].to_numpy(dtype=float)),
    "retransmissions": lambda links, flows: float(flows["retransmitted_segments"].sum()),
}


# ---------------------------------------------------------------------------------------
# Student's t quantile, for confidence intervals without scipy.


def _t_density(x: np.ndarray, df: int) -> np.ndarray:
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return np.exp(log_norm - (df + 1) / 2 * np.log1p(x * x / df))


def t_cdf(x: float, df: int) -> float:
    """P(T <= x) for Student's t with df degrees of freedom (Simpson's rule from 0)."""
    if x < 0:
        return 1.0 - t_cdf(-x, df)
    ys = _t_density(np.linspace(0.0, x, SIMPSON_INTERVALS + 1), df)
    area = x / SIMPSON_INTERVALS / 3 * (ys[0] + ys[-1] + 4 * ys[1:-1:2].sum() + 2 * ys[2:-1:2].sum())
    return 0.5 + float(area)


@functools.cache
def t_quantile(p: float, df: int) -> float:
    """The x with P(T <= x) = p, for 0.5 < p < 1, by bisection."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2 * hi
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def confidence_interval(values: np.ndarray, level: float = CONFIDENCE) -> tuple[float, float]:
    """(mean, half-width) of the two-sided t interval; half-width NaN below two finite values."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    t = t_quantile(0.5 + level / 2, int(x.size - 1))
    return float(x.mean()), float(t * x.std(ddof=1) / math.sqrt(x.size))


# ---------------------------------------------------------------------------------------
# Dotted keys into a scenario: "links.1.qdisc.kind", "flows.*.cc", "seed".


def _step(node: Any, part: str, trail: str, where: str, last: bool) -> list[tuple[Any, Any]]:
    """The (container, key) pairs that `part` names inside `node`."""
    if isinstance(node, list):
        if part == "*":
            return [(node, i) for i in range(len(node))]
        if not part.isdigit():
            raise SweepSpecError(where, f"{trail} is a list: expected an index or '*', got {part!r}")
        if int(part) >= len(node):
            raise SweepSpecError(where, f"no such element: {trail} has {len(node)} elements")
        return [(node, int(part))]
    if isinstance(node, dict):
        if not last and part not in node:
            raise SweepSpecError(where, f"no such element: {trail} has no key {part!r}")
        return [(node, part)]
    raise SweepSpecError(where, f"{trail} is a value, not a table or list")


def _targets(scenario: dict, key: str, where: str) -> list[tuple[Any, Any]]:
    parts = key.split(".")
    found, trail = [(None, scenario)], "scenario"
    for i, part in enumerate(parts):
        nodes = [c[k] if c is not None else k for c, k in found]
        found = [t for n in nodes for t in _step(n, part, trail, where, i == len(parts) - 1)]
        trail = f"{trail}.{part}"
    return found


def apply(scenario: dict, key: str, value: Any, where: str = "sweep") -> None:
    """Set the scenario parameter named by the dotted key (every element for '*')."""
    for container, k in _targets(scenario, key, where):
        container[k] = copy.deepcopy(value)


# ---------------------------------------------------------------------------------------
# The spec.


@dataclass
class SweepSpec:
    base: dict
    grid: dict[str, list] = field(default_factory=dict)
    sample: dict[str, tuple[str, list]] = field(default_factory=dict)
    sample_points: int = 0
    sample_seed: int = 0
    seeds: list[int] = field(default_factory=list)
    metrics: list[str] = field(default_factory=lambda: list(DEFAULT_METRICS))
    retries: int = DEFAULT_RETRIES
    name: str = "sweep"

    def points(self) -> list[Point]:
        """Every point: grid x sample x seeds, in spec order, duplicates removed."""
        grid = [dict(zip(self.grid, values)) for values in itertools.product(*self.grid.values())]
        drawn = draw_sample(self.sample, self.sample_points, self.sample_seed) if self.sample else [{}]
        unique: dict[str, Point] = {}
        for g, s, seed in itertools.product(grid, drawn, self.seeds):
            point = Point({**g, **s, "seed": seed})
            unique.setdefault(point.id, point)
        return list(unique.values())

    def scenario(self, point: Point) -> dict:
        spec = copy.deepcopy(self.base)
        for key, value in point.params.items():
            apply(spec, key, value)
        # Sweeps keep only the links and flows tables; recording is passive, so dropping it
        # changes no result (checked in tests/test_sweep.py) and saves time and memory.
        spec.pop("record", None)
        return spec

    def text_keys(self) -> frozenset[str]:
        """Parameters stored as text: those whose values are not all numbers, all strings or
        all booleans."""
        values = {**self.grid, **{k: args for k, (kind, args) in self.sample.items() if kind == "choice"}}
        return frozenset(k for k, v in values.items() if len({_kind(x) for x in v}) > 1 or _kind(v[0]) == "table")

    def fingerprint(self) -> str:
        return _hash(self.base)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "str" if isinstance(value, str) else "table"


def _hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:ID_HEX_CHARS]


@dataclass(frozen=True)
class Point:
    params: dict[str, Any]

    @property
    def id(self) -> str:
        return _hash(self.params)

    def partition(self) -> Path:
        """<key>=<value>/... : hive-style, names percent-encoded, keys sorted so that the path,
        like the id, does not depend on the order of the spec's axes."""
        return Path(*[f"{quote(k, safe='')}={_partition_value(self.params[k])}" for k in sorted(self.params)])


def _partition_value(v: Any) -> str:
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    return quote(text, safe="") if len(text) <= MAX_PARTITION_VALUE_CHARS else f"h{_hash(v)}"


def draw_sample(params: dict[str, tuple[str, list]], n: int, seed: int) -> list[dict]:
    """n points drawn from Python's Mersenne Twister. Only `random()` is used: its sequence for a
    given seed is guaranteed stable across Python versions (the `random` module's documentation)."""
    rng = random.Random(seed)
    return [{key: _draw(kind, args, rng.random()) for key, (kind, args) in params.items()} for _ in range(n)]


def _draw(kind: str, args: list, u: float) -> Any:
    if kind == "uniform":
        return args[0] + u * (args[1] - args[0])
    if kind == "log_uniform":
        return math.exp(math.log(args[0]) + u * (math.log(args[1]) - math.log(args[0])))
    if kind == "int":
        return int(args[0] + math.floor(u * (args[1] - args[0] + 1)))
    return args[min(int(u * len(args)), len(args) - 1)]


def load_spec(path: str | Path) -> SweepSpec:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"sweep spec not found: {p}")
    try:
        with p.open("rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise SweepSpecError(str(p), f"not valid TOML: {e}") from None
    return parse_spec(data, base_dir=p.parent)


def parse_spec(data: dict, base_dir: str | Path = ".") -> SweepSpec:
    """Check a spec (the dict of a TOML file: one `sweep` table) and resolve its base scenario."""
    _only_keys(data, {"sweep"}, "")
    s = data.get("sweep")
    if not isinstance(s, dict):
        raise SweepSpecError("sweep", "required: a table with `base` and `grid` and/or `sample`")
    _only_keys(s, SPEC_KEYS, "sweep.")
    base = _base(s.get("base"), Path(base_dir))
    for key, value in _table(s, "set").items():
        apply(base, key, value, where=f'sweep.set."{key}"')
    spec = SweepSpec(base=base, name=str(s.get("name", "sweep")))
    spec.grid = _grid(_table(s, "grid"), base)
    _sample(s.get("sample"), base, spec)
    if not spec.grid and not spec.sample and "seeds" not in s:
        raise SweepSpecError("sweep", "nothing to vary: give `grid`, `sample` or `seeds`")
    spec.seeds = _seeds(s.get("seeds"), base, spec)
    spec.metrics = _metrics(s.get("metrics", DEFAULT_METRICS))
    spec.retries = _non_negative_int(s.get("retries", DEFAULT_RETRIES), "sweep.retries")
    return spec


def _only_keys(table: dict, allowed: set[str], prefix: str) -> None:
    for key in table:
        if key not in allowed:
            raise SweepSpecError(f"{prefix}{key}", f"unknown key; expected one of {sorted(allowed)}")


def _table(s: dict, key: str) -> dict:
    value = s.get(key, {})
    if not isinstance(value, dict):
        raise SweepSpecError(f"sweep.{key}", "must be a table of dotted scenario keys")
    return value


def _base(value: Any, base_dir: Path) -> dict:
    if isinstance(value, str):
        path = Path(value) if Path(value).is_absolute() else base_dir / value
        if not path.is_file():
            raise SweepSpecError("sweep.base", f"scenario file not found: {path}")
        base = load_scenario(path)
    elif isinstance(value, dict):
        base = copy.deepcopy(value)
    else:
        raise SweepSpecError("sweep.base", "required: a scenario file path or an inline scenario table")
    try:
        validate_scenario(base)
    except Exception as e:
        raise SweepSpecError("sweep.base", f"invalid scenario: {e}") from None
    return base


def _grid(grid: dict, base: dict) -> dict[str, list]:
    for key, values in grid.items():
        where = f'sweep.grid."{key}"'
        if not isinstance(values, list) or not values:
            raise SweepSpecError(where, "must be a non-empty list of values")
        _targets(base, key, where)
    return dict(grid)


def _sample(s: Any, base: dict, spec: SweepSpec) -> None:
    if s is None:
        return
    if not isinstance(s, dict):
        raise SweepSpecError("sweep.sample", "must be a table with `points`, `seed` and `params`")
    _only_keys(s, SAMPLE_KEYS, "sweep.sample.")
    spec.sample_points = _non_negative_int(s.get("points"), "sweep.sample.points")
    spec.sample_seed = _non_negative_int(s.get("seed", 0), "sweep.sample.seed")
    params = s.get("params")
    if not isinstance(params, dict) or not params:
        raise SweepSpecError("sweep.sample.params", "required: a table of dotted keys to distributions")
    for key, dist in params.items():
        where = f'sweep.sample.params."{key}"'
        _targets(base, key, where)
        if key in spec.grid:
            raise SweepSpecError(where, "also a grid axis")
        spec.sample[key] = _distribution(dist, where)


def _distribution(dist: Any, where: str) -> tuple[str, list]:
    if not isinstance(dist, dict) or len(dist) != 1 or next(iter(dist)) not in SAMPLE_KINDS:
        raise SweepSpecError(where, f"must be one of {{{', '.join(sorted(SAMPLE_KINDS))}}} = [...]")
    kind, args = next(iter(dist.items()))
    if not isinstance(args, list) or not args:
        raise SweepSpecError(f"{where}.{kind}", "must be a non-empty list")
    if kind == "choice":
        return kind, args
    if len(args) != 2 or not all(isinstance(a, int | float) and not isinstance(a, bool) for a in args):
        raise SweepSpecError(f"{where}.{kind}", "must be [low, high], two numbers")
    if not args[0] <= args[1] or (kind == "log_uniform" and args[0] <= 0):
        raise SweepSpecError(f"{where}.{kind}", "needs low <= high (and low > 0 for log_uniform)")
    if kind == "int" and not all(isinstance(a, int) for a in args):
        raise SweepSpecError(f"{where}.{kind}", "bounds must be integers")
    return kind, args


def _seeds(value: Any, base: dict, spec: SweepSpec) -> list[int]:
    if "seed" in spec.grid or "seed" in spec.sample:
        raise SweepSpecError("sweep.seeds", "give seeds here only, not as a grid or sample axis")
    if value is None:
        return [int(validate_scenario(base)["seed"])]
    if isinstance(value, int) and not isinstance(value, bool):
        return list(range(1, _non_negative_int(value, "sweep.seeds") + 1))
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(dict.fromkeys(value))
    raise SweepSpecError("sweep.seeds", "must be a count (seeds 1..n) or a non-empty list of integers")


def _metrics(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise SweepSpecError("sweep.metrics", f"must be a list of metric names from {sorted(METRICS)}")
    for i, name in enumerate(value):
        if name not in METRICS:
            raise SweepSpecError(f"sweep.metrics[{i}]", f"unknown metric {name!r}; choose from {sorted(METRICS)}")
    return list(value)


def _non_negative_int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SweepSpecError(where, f"must be a non-negative integer, got {value!r}")
    return value


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


def _write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


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
        _write_atomic(self.point_path(point), lambda tmp: pq.write_table(table, tmp))
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


def run_pool(spec: SweepSpec, todo: list[Point], jobs: int) -> Iterator[tuple[Point, int, dict]]:
    """A local process pool (forkserver: no fork of a process holding threads)."""
    ctx = multiprocessing.get_context("forkserver")
    # The server imports quench once; each worker forked from it starts with it loaded.
    ctx.set_forkserver_preload(["quench.sweep"])
    queue = list(reversed(todo))
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
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
    from distributed import Client, as_completed

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except OSError as e:
        raise ValueError(f"--cluster {address}: cannot reach the Dask scheduler: {e}") from None
    with client:
        owner: dict[str, tuple[Point, int]] = {}

        def submit(point: Point, attempt: int) -> Any:
            future = client.submit(run_point, spec.scenario(point), key=f"quench-{point.id}-{attempt}")
            owner[future.key] = (point, attempt)
            return future

        completed = as_completed([submit(point, 1) for point in todo])
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
        spec.retries = _non_negative_int(retries, "--retries")
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
    _write_atomic(sdir.root / "stats.parquet", lambda tmp: stats.to_parquet(tmp, index=False))
    _write_atomic(sdir.root / "stats.csv", lambda tmp: stats.to_csv(tmp, index=False))
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
