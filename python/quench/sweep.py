"""Parameter sweeps: a grid and/or a random sample over any scenario parameters and seeds.

A spec (TOML file or dict) names a base scenario and the axes to vary; every point is one
parameter assignment, identified by a stable hash of its parameters. Points run in a local
process pool (default) or on a Dask cluster; each point's `links` and `flows` tables, with the
parameters as columns, are written atomically as one Parquet file in a hive-style partitioned
dataset, so an interrupted sweep resumes without recomputing finished points. Format, resume
semantics, per-point limits and cluster use: docs/sweeps.md.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import contextlib
import ctypes
import fcntl
import json
import math
import multiprocessing
import multiprocessing.connection as mpc
import multiprocessing.forkserver
import os
import re
import resource
import signal
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
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
    "Limits",
    "default_point_memory_mb",
    "die_with_parent",
]

# One retry after a failure by default (`sweep.retries`): two attempts in all.
# Seconds to wait for the Dask scheduler before giving up with an error.
CONNECT_TIMEOUT_S = 30
EXIT_POINTS_FAILED = 1
MB = 2**20
# A point's failure causes: it raised ("error"), its worker died ("died"), or it ran past a
# limit. Points past a limit are not retried in the same run: the engine is deterministic.
LIMIT_CAUSES = frozenset({"timeout", "memory"})
# The last bytes of a point's stderr kept for its failure record.
STDERR_KEPT_BYTES = 8192
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_SIGNALS = {s.value for s in signal.Signals}


# A point's default time limit, from its scenario's budget (docs/sweeps.md, "Limits per point").
# The budget bounds the work a run may do: budget.packets packets from the sources that send at a
# rate of their own, each at least two events (sent; queued or dropped at the first link), and
# budget.flows flows, each at least ten (a handshake, a segment and its ACK, a teardown). The
# engine runs about 10^7 events a second (crates/quench-core/src/limits.rs); the limit allows
# that work at a tenth of it, for a slow or loaded machine, plus a minute for set-up and saving.
EVENTS_PER_BUDGET_PACKET = 2
EVENTS_PER_BUDGET_FLOW = 10
SLOWEST_EVENTS_PER_S = 1e6
POINT_SETUP_S = 60.0
# The engine's budget defaults (crates/quench-core/src/limits.rs), for a scenario that leaves
# its budget out.
DEFAULT_PACKET_BUDGET = 100_000_000
DEFAULT_FLOW_BUDGET = 10_000_000


def budget_timeout_s(scenario: dict) -> float:
    """The default wall-clock limit of a point running `scenario`: the work its budget allows
    at SLOWEST_EVENTS_PER_S, plus POINT_SETUP_S (360 s for the default budget). A budget value
    that is not a positive number counts as the default (the point then fails validation)."""
    budget = scenario.get("budget") if isinstance(scenario, dict) else None
    budget = budget if isinstance(budget, dict) else {}

    def allowed(key: str, default: int) -> float:
        v = budget.get(key)
        ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
        return float(v) if ok else float(default)

    events = EVENTS_PER_BUDGET_PACKET * allowed("packets", DEFAULT_PACKET_BUDGET)
    events += EVENTS_PER_BUDGET_FLOW * allowed("flows", DEFAULT_FLOW_BUDGET)
    return POINT_SETUP_S + events / SLOWEST_EVENTS_PER_S


@dataclass(frozen=True)
class Limits:
    """Per-point limits of a local sweep: wall-clock seconds, and MB (2^20 bytes) by which a
    point may grow its worker's address space; None for no limit. With `timeout_from_budget`
    and no `timeout_s`, each point's time limit is its budget's (`budget_timeout_s`)."""

    timeout_s: float | None = None
    memory_mb: float | None = None
    timeout_from_budget: bool = False

    def point_timeout_s(self, scenario: dict) -> float | None:
        """The time limit of a point running `scenario`."""
        if self.timeout_s is None and self.timeout_from_budget:
            return budget_timeout_s(scenario)
        return self.timeout_s

    def summary(self) -> dict[str, Any]:
        """The limits as summary.json records them."""
        timeout = "from each point's budget" if self.timeout_s is None and self.timeout_from_budget else self.timeout_s
        return {"point_timeout_s": timeout, "point_memory_mb": self.memory_mb}


def default_point_memory_mb(jobs: int) -> float:
    """The default memory limit per point: the machine's physical memory shared evenly by the
    pool's `jobs` workers, so that points at their limits together still fit in memory; never
    above the address-space limit this process inherited (`ulimit -v`), which a worker cannot
    raise."""
    shared = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / jobs // MB
    inherited = _inherited_address_space_limit()
    return shared if inherited is None else min(shared, inherited // MB)


def _inherited_address_space_limit() -> int | None:
    """The address-space limit (RLIMIT_AS, bytes) this process may not go past: its soft limit,
    or None when there is none."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def _point_address_space_limit(memory_mb: float) -> int:
    """The RLIMIT_AS soft limit that lets a point grow this worker by `memory_mb`: at most the
    hard limit, which only a privileged process may raise (setrlimit refuses a soft limit above
    it, and an inherited `ulimit -v` sets both)."""
    wanted = _address_space() + int(memory_mb * MB)
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


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
    except MemoryError as e:  # an allocation past the worker's memory limit (RLIMIT_AS)
        return {"error": f"{type(e).__name__}: {e}", "cause": "memory", "worker": _worker_name()}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}", "cause": "error", "worker": _worker_name()}
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
    return "error" in payload and payload.get("cause") not in LIMIT_CAUSES and attempt <= retries


def _outcome(future: Any) -> dict:
    try:
        return future.result()
    except Exception as e:  # Dask gave up on a task (KilledWorker)
        return {"error": f"{type(e).__name__}: {e}", "cause": "died", "worker": None}


def process_pool(jobs: int) -> cf.ProcessPoolExecutor:
    """The experiments' grid runner's pool (forkserver: no fork of a process holding threads),
    its workers tied to this process's life (`die_with_parent`)."""
    return cf.ProcessPoolExecutor(max_workers=jobs, mp_context=_forkserver(), initializer=die_with_parent)


def _forkserver() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    # The server imports quench once; each worker forked from it starts with it loaded.
    ctx.set_forkserver_preload(["quench.sweep"])
    return ctx


def die_with_parent() -> None:
    """In a process forked by multiprocessing's fork server: die when the process that asked for
    it dies, even by SIGKILL, so that no worker outlives its sweep.

    A forked worker's parent is the fork server, which exits when every holder of its "alive"
    pipe has gone; every child inherits that pipe, so the server (and the workers, blocked on
    their parent's queue, and the resource tracker, reading a pipe they all hold) would live on
    after the parent. So the worker closes its copy: the server then exits with the parent, and
    PR_SET_PDEATHSIG has the kernel SIGKILL the worker when the server exits."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    alive_fd = getattr(server, "_forkserver_alive_fd", None)
    if alive_fd is not None and getattr(server, "_forkserver_pid", None) is None:  # a child, not the owner
        with contextlib.suppress(OSError):
            os.close(alive_fd)
        server._forkserver_alive_fd = None
    if sys.platform.startswith("linux"):
        parent = os.getppid()
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took hold
            os._exit(1)


def _address_space() -> int:
    """This process's virtual memory size in bytes (what RLIMIT_AS limits)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _worker_main(conn: Any, stderr: Any, memory_mb: float | None) -> None:
    """A pool worker: one point at a time from `conn`, its payload sent back. Its stderr goes to
    the sweep (which forwards it and keeps a point's last lines for its failure record); Ctrl-C
    is the sweep's to handle (it stops the workers). With a memory limit, each point may grow
    the worker's address space by at most `memory_mb` (RLIMIT_AS): past it an allocation fails,
    which aborts the engine ("memory allocation of N bytes failed") or raises MemoryError."""
    os.dup2(stderr.fileno(), 2)
    stderr.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    while True:
        try:
            scenario = conn.recv()
        except EOFError:  # the sweep closed the pool
            return
        if memory_mb:
            limit = _point_address_space_limit(memory_mb)
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        payload = run_point(scenario)
        try:
            conn.send(payload)
        except MemoryError as e:  # pickling the tables went past the limit
            del payload
            conn.send({"error": f"{type(e).__name__}: {e}", "cause": "memory", "worker": _worker_name()})


class _Worker:
    """One pool process, the point it runs (if any), and what the point wrote to stderr."""

    def __init__(self, ctx: Any, memory_mb: float | None) -> None:
        self.conn, child = ctx.Pipe()
        self.stderr, child_stderr = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_worker_main, args=(child, child_stderr, memory_mb), daemon=True)
        self.proc.start()
        child.close()
        child_stderr.close()
        os.set_blocking(self.stderr.fileno(), False)
        self.task: tuple[Point, int] | None = None
        self.started = 0.0
        self.timeout_s: float | None = None
        self.err = bytearray()
        self.stderr_open = True
        self.name = f"{socket.gethostname()}:{self.proc.pid}"

    def waitables(self) -> list:
        return [self.conn, self.proc.sentinel, *([self.stderr] if self.stderr_open else [])]

    def submit(self, point: Point, attempt: int, scenario: dict, timeout_s: float | None) -> None:
        self.task, self.started, self.err = (point, attempt), time.monotonic(), bytearray()
        self.timeout_s = timeout_s
        with contextlib.suppress(OSError):  # it died: its sentinel tells, and `lost` says why
            self.conn.send(scenario)

    def drain_stderr(self) -> None:
        """Forward what the worker wrote to stderr, keeping the current point's last lines."""
        while True:
            try:
                data = os.read(self.stderr.fileno(), 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                self.stderr_open = False
                return
            sys.stderr.write(data.decode(errors="replace"))
            sys.stderr.flush()
            self.err += data
            del self.err[:-STDERR_KEPT_BYTES]

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()
        self.stderr.close()

    def outcome(self, ready: set, limits: Limits) -> dict | None:
        """The payload of the worker's point if it has ended (returned, died, or ran past its
        time limit, in which case the worker is killed), else None."""
        if self.stderr in ready:
            self.drain_stderr()
        if self.conn in ready:
            try:
                payload = self.conn.recv()
            except (EOFError, OSError):  # the worker died
                return self.lost(limits)
            if payload.get("cause") == "memory" and limits.memory_mb:
                payload["error"] = f"exceeded {limits.memory_mb:g} MB ({payload['error']})"
            return payload
        if self.proc.sentinel in ready:
            return self.lost(limits)
        if self.timeout_s and time.monotonic() - self.started >= self.timeout_s:
            self.proc.kill()
            self.proc.join()
            self.drain_stderr()
            derived = " (the limit from its budget; --point-timeout sets another)" if limits.timeout_s is None else ""
            return {"error": f"exceeded {self.timeout_s:g} s{derived}", "cause": "timeout", "worker": self.name}
        return None

    def lost(self, limits: Limits) -> dict:
        """The payload of a point whose worker died: why, from its exit status and stderr."""
        self.proc.join()
        self.drain_stderr()
        text = self.err.decode(errors="replace")
        oom = re.search(r"memory allocation of \d+ bytes failed", text)
        if oom and limits.memory_mb:
            reason = f"exceeded {limits.memory_mb:g} MB ({oom.group(0)})"
            return {"error": reason, "cause": "memory", "worker": self.name, "stderr": text}
        code = self.proc.exitcode
        if code is not None and code < 0:
            how = f"signal {-code}" + (f" ({signal.Signals(-code).name})" if -code in _SIGNALS else "")
        else:
            how = f"exit status {code}"
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        # The first line (a panic, an abort's message), or a Python traceback's last.
        gist = (lines[-1] if lines[0].startswith("Traceback") else lines[0]) if lines else ""
        reason = f"worker died: {how}" + (f": {gist[:200]}" if gist else "")
        return {"error": reason, "cause": "died", "worker": self.name, "stderr": text}


def run_pool(spec: SweepSpec, todo: list[Point], jobs: int, limits: Limits) -> Iterator[tuple[Point, int, dict]]:
    """A local pool of `jobs` worker processes, one point each at a time. A point over its time
    limit has its worker killed; one over its memory limit, or whose worker dies, loses its
    worker; either way the point is recorded as failed with the reason, a new worker takes the
    old one's place, and the other points go on. No worker outlives the sweep: `die_with_parent`,
    and the `finally` below for every way out of this generator."""
    ctx = _forkserver()
    queue = collections.deque((point, 1) for point in todo)
    workers: list[_Worker] = []

    def hand_out() -> None:
        for w in [w for w in workers if w.task is None and not w.proc.is_alive()]:  # died idle
            w.stop()
            workers.remove(w)
        while queue:
            worker = next((w for w in workers if w.task is None), None)
            if worker is None:
                if len(workers) == jobs:
                    return
                worker = _Worker(ctx, limits.memory_mb)
                workers.append(worker)
            point, attempt = queue.popleft()
            scenario = spec.scenario(point)
            worker.submit(point, attempt, scenario, limits.point_timeout_s(scenario))

    try:
        while queue or any(w.task for w in workers):
            hand_out()
            busy = [w for w in workers if w.task]
            deadlines = [w.started + w.timeout_s for w in busy if w.timeout_s]
            wait_s = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready = set(mpc.wait([x for w in busy for x in w.waitables()], timeout=wait_s))
            finished = []
            for w in busy:
                payload = w.outcome(ready, limits)
                if payload is None:
                    continue
                if not w.proc.is_alive() or payload.get("cause") in LIMIT_CAUSES | {"died"}:
                    w.stop()
                    workers.remove(w)
                point, attempt = w.task
                w.task = None
                if _retry(payload, attempt, spec.retries):
                    queue.appendleft((point, attempt + 1))
                else:
                    finished.append((point, attempt, payload))
            hand_out()  # before the caller writes the finished points: no worker idles meanwhile
            yield from finished
    finally:
        for w in workers:
            w.stop()


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


def _limit(value: float | None, where: str) -> float | None:
    """A limit as given: a positive number, 0 for none, or None when not given (its default)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: must be a non-negative number (0: no limit), got {value!r}")
    return float(value)


def _limits(jobs: int, point_timeout: float | None, point_memory: float | None) -> Limits:
    """The limits of a local sweep; None for a limit not given: its default (the budget's time
    limit, the memory shared among the workers)."""
    if not sys.platform.startswith("linux"):  # the worker reads its size in /proc
        if point_memory:
            raise ValueError("--point-memory: needs Linux")
        point_memory = 0
    memory = default_point_memory_mb(jobs) if point_memory is None else point_memory
    return Limits(timeout_s=point_timeout or None, memory_mb=memory or None, timeout_from_budget=point_timeout is None)


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
    point_timeout: float | None = None,
    point_memory: float | None = None,
) -> dict:
    """Run every point not already in `out`; returns (and writes) the summary.

    Local sweeps run each point in a worker process with per-point limits: `point_timeout`
    wall-clock seconds (default: from each point's budget, `budget_timeout_s`, 360 s for the
    default budget) and `point_memory` MB of address space (default: physical memory / worker
    processes); 0 turns a limit off. A point past a limit, or whose worker dies,
    is recorded as failed with the reason while the others go on (docs/sweeps.md)."""
    spec = _as_spec(spec)
    if retries is not None:
        spec.retries = non_negative_int(retries, "--retries")
    point_timeout = _limit(point_timeout, "--point-timeout")
    point_memory = _limit(point_memory, "--point-memory")
    if cluster and (point_timeout or point_memory):
        raise ValueError("--point-timeout/--point-memory limit local sweeps; a Dask worker has its own --memory-limit")
    jobs = default_jobs() if jobs is None else jobs
    if not cluster and jobs < 1:
        raise ValueError(f"--jobs: must be at least 1, got {jobs}")
    if cluster:
        _distributed()  # before the folder is claimed or the progress bar drawn
    sdir = SweepDir(out)
    lock = sdir.claim(spec)
    try:
        return _run_claimed(spec, sdir, jobs, cluster, quiet, point_timeout, point_memory)
    finally:
        lock.close()


def _run_claimed(
    spec: SweepSpec,
    sdir: SweepDir,
    jobs: int,
    cluster: str | None,
    quiet: bool,
    point_timeout: float | None,
    point_memory: float | None,
) -> dict:
    sdir.clean_temporaries()
    points = spec.points()
    todo = [p for p in points if not sdir.done(p)]
    reused = len(points) - len(todo)
    for point in points:  # a run killed between a point's file and its status record
        if sdir.done(point) and not (sdir.status / f"{point.id}.json").is_file():
            sdir.write_status(point, "ok", attempts=None, recovered=True)
    if cluster:
        limits, executor = Limits(), run_dask(spec, todo, cluster)
    else:
        jobs = max(1, min(jobs, len(todo)))
        limits = _limits(jobs, point_timeout, point_memory)
        executor = run_pool(spec, todo, jobs, limits)
    failures, started = [], time.perf_counter()
    with _progress(len(todo), reused, quiet) as bar:
        for point, attempts, payload in executor:
            if "error" in payload:
                failure = {
                    "id": point.id,
                    "params": point.params,
                    "seed": point.params.get("seed"),
                    "attempts": attempts,
                    "cause": payload.get("cause", "error"),
                    "error": payload["error"],
                }
                failures.append(failure)
                extra = {k: failure[k] for k in ("cause", "error")}
                if payload.get("stderr"):
                    extra["stderr"] = payload["stderr"]
                sdir.write_status(point, "failed", attempts, **extra, worker=payload.get("worker"))
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
        "limits": limits.summary(),
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


def format_failures(summary: dict) -> list[str]:
    """One line per failed point: its id, parameters (the seed among them), attempts and reason."""
    return [
        f"  failed {f['id']} {f['params']} after {f['attempts']} attempts: {' '.join(f['error'].split())}"
        for f in summary["failures"]
    ]


def format_summary(summary: dict) -> str:
    """The printed summary: counts, failures, and mean ± half-width per combination."""
    lines = [
        f"sweep {summary['name']}: {summary['points']} points: {summary['succeeded']} succeeded, "
        f"{summary['reused']} reused, {summary['failed']} failed ({summary['wall_s']:.1f} s)"
    ]
    lines += format_failures(summary)
    stats: pd.DataFrame = summary["table"]
    if not stats.empty:
        shown = stats[[c for c in stats.columns if not c.endswith(("_mean", "_ci_low", "_ci_high"))]].copy()
        for m in summary["metrics"]:
            mean, half = stats[f"{m}_mean"], stats[f"{m}_ci_high"] - stats[f"{m}_mean"]
            shown[m] = [f"{a:.4g} ± {b:.2g}" if math.isfinite(b) else f"{a:.4g}" for a, b in zip(mean, half)]
        lines += [f"mean ± half-width of the {CONFIDENCE:.0%} t-interval over seeds:", shown.to_string(index=False)]
    return "\n".join(lines)
