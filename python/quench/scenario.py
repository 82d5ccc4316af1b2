"""Scenario files (TOML) and the run loop around the engine."""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from quench import _core
from quench.atomic import OutputError
from quench.dist import resolve_files
from quench.errors import scenario_error
from quench.files import MAX_SCENARIO_BYTES, UnreadableFile, read_regular
from quench.results import Results
from quench.stream import RecordStream
from quench.traces import resolve_traces

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


# Scenario data nested deeper than this is refused (real scenarios nest about 5 levels).
MAX_DEPTH = 32
# Flows a scenario may list (`flows`). Each listed flow costs the Python side about 0.5 ms to
# validate from the command line (reading the TOML, writing the resolved scenario and where each
# TCP setting came from; 10⁴ flows: 5 s and 140 MB, 10⁵: 37 s and 1.2 GB, measured on two shared
# cores), so 10⁴ keeps `quench validate` to seconds; benchmarks/bench_scale.py lists that many.
# A larger population is a workload (`workloads`), whose flows are drawn as the run goes.
MAX_LISTED_FLOWS = 10_000
# Memory a workload arrival in progress holds, bytes: its endpoints, their connection state and
# its bookkeeping. Measured as the growth of the peak resident set between two overloaded runs
# stopped at budget.active_flows = 2·10⁴ and 1.2·10⁵ (50,000 arrivals/s of 1 MB TCP flows over a
# 10 Mbit/s link: 70.5 and 280.5 MB, so 2.1 KB per arrival); `limits::DEFAULT_ACTIVE_FLOW_BUDGET`
# says 2 KB.
ACTIVE_FLOW_BYTES = 2_100
# Memory kept per byte the arrivals in progress hold: as much again, for the engine's tables
# of flows and agents, which grow by doubling (both copies are held while one moves), and the
# rest of the process. Without it, the default budget lowered to the whole of a 1.5 GB
# `ulimit -v` ended in an allocator abort at 1.43 GB resident.
MEMORY_HEADROOM = 2
# The engine's default budget.active_flows (`limits::DEFAULT_ACTIVE_FLOW_BUDGET`).
DEFAULT_ACTIVE_FLOWS = 1_000_000
_TOML_AT = re.compile(r"(.*) \(at (line \d+, column \d+|end of document)\)", re.DOTALL)


# --- writing TOML ---------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dump(spec: dict[str, Any]) -> str:
    """A scenario dict as TOML text that `load_scenario` reads back to the same dict, so a
    scenario built in Python (`Network.to_toml`) or resolved by the engine (`quench validate
    --toml`) can be handed to the command line or to a colleague. Keys whose value is None are
    left out (TOML has no null; an absent key is the same default). Top-level tables become
    sections, lists of tables `[[...]]` blocks, deeper tables inline tables."""
    lines: list[str] = []
    scalars = {k: v for k, v in spec.items() if not _is_section(v)}
    for k, v in scalars.items():
        if v is not None:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    for k, v in spec.items():
        if isinstance(v, dict):
            lines += ["", f"[{_toml_key(k)}]", *_assignments(v)]
        elif _is_section(v):
            for item in v:
                lines += ["", f"[[{_toml_key(k)}]]", *_assignments(item)]
    return "\n".join(lines) + "\n"


def _is_section(v: Any) -> bool:
    """A table, or a non-empty list of tables: written as its own section."""
    return isinstance(v, dict) or (isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v))


def _assignments(table: dict[str, Any]) -> list[str]:
    return [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items() if v is not None]


def _toml_key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) else _toml_string(k)


def _toml_string(s: str) -> str:
    # JSON's escapes are TOML's, except that TOML has no raw DEL in a basic string.
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items() if x is not None) + " }"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} {v!r} as TOML")


def load_scenario(path: str | Path) -> dict[str, Any]:
    """Read a scenario file into a dict (not yet validated): TOML, or JSON for a name ending in
    .json (a run's `scenario.json`). A file that cannot be read (absent, not a regular file,
    larger than `quench.files.MAX_SCENARIO_BYTES`), is not UTF-8 or not TOML/JSON (a key given
    twice included) raises ScenarioError with a reason that starts with the file's name and,
    where one is known, the line and column. Empirical CDF files it names are read relative to
    its folder."""
    if not isinstance(path, str | Path):
        raise TypeError(f"load_scenario: expected the path of a scenario file, got {type(path).__name__}")
    p = Path(path)
    try:
        data = read_regular(p, MAX_SCENARIO_BYTES, "scenario file")
    except UnreadableFile as e:
        raise scenario_error("", str(e)) from None
    text = _utf8(data, p).removeprefix("\ufeff")
    spec = _load_json(text, p) if p.suffix == ".json" else _load_toml(text, p)
    check_listed_flows(spec)
    # Empirical size CDFs and capacity traces given as files are read relative to the scenario file.
    return resolve_traces(resolve_files(spec, p.parent), p.parent)


def _utf8(data: bytes, p: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise scenario_error(
            "", f"{p}: line {line}, column {column}: not UTF-8 text (byte 0x{data[e.start]:02x})"
        ) from None


def _load_toml(text: str, p: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = _TOML_AT.fullmatch(str(e))
        where, what = (m[2], m[1]) if m else ("", str(e))
        raise scenario_error("", f"{p}: {where + ': ' if where else ''}not valid TOML: {what}") from None
    except RecursionError:
        raise scenario_error("", f"{p}: not valid TOML: arrays or tables nested too deeply") from None


def _load_json(text: str, p: Path) -> dict[str, Any]:
    # Each object given a key twice, by identity, with that key: json.loads would keep the last.
    twice: dict[int, str] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        table: dict[str, Any] = {}
        for k, v in items:
            if k in table:
                twice.setdefault(id(table), k)
            table[k] = v
        return table

    try:
        spec = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as e:
        raise scenario_error("", f"{p}: line {e.lineno}, column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise scenario_error("", f"{p}: not valid JSON: arrays or objects nested too deeply") from None
    if not isinstance(spec, dict):
        raise scenario_error("", f"{p}: a scenario is a JSON object, not {type(spec).__name__}")
    if twice:
        key = _first_key_given_twice(spec, twice)
        raise scenario_error(key, f"{p}: the key is given more than once (the last would silently win)")
    return spec


def _first_key_given_twice(spec: Any, twice: dict[int, str]) -> str:
    """The path of the first key (in document order) given twice in an object of `spec`."""
    stack: list[tuple[str, Any]] = [("", spec)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict) and id(value) in twice:
            return _key(path, twice[id(value)])
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend((_key(path, k), v) for k, v in reversed(list(items)))
    return ""


def _key(path: str, key: object) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key)


def _check_plain(spec: Any) -> None:
    """Refuse what the engine cannot read as plain data, naming the key: nesting deeper than
    MAX_DEPTH (or a table that holds itself), non-finite numbers, and values
    that are not strings, numbers, booleans, lists or tables (a TOML date, say)."""
    stack: list[tuple[str, Any, int]] = [("", spec, 0)]
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, dict | list | tuple):
            if depth >= MAX_DEPTH:
                shown = path if len(path) <= 80 else f"{path[:60]}...{path[-16:]}"
                raise scenario_error(shown, f"nested deeper than {MAX_DEPTH} levels")
            items = list(value.items() if isinstance(value, dict) else enumerate(value))
            stack.extend((_key(path, k), v, depth + 1) for k, v in reversed(items))
        elif isinstance(value, float) and not math.isfinite(value):
            raise scenario_error(path, f"{value} is not a finite number")
        elif not isinstance(value, str | int | float | bool | type(None)):
            raise scenario_error(path, f"a {type(value).__name__} is not plain data (strings, numbers, lists, tables)")


def check_listed_flows(spec: dict[str, Any]) -> None:
    """Refuse more listed flows than MAX_LISTED_FLOWS, naming `flows`, before they are read."""
    flows = spec.get("flows")
    if isinstance(flows, list) and len(flows) > MAX_LISTED_FLOWS:
        raise scenario_error(
            "flows",
            f"{len(flows)} listed flows, more than the {MAX_LISTED_FLOWS} a scenario may list; give a larger "
            "population as a workload (`workloads`), which draws its flows as the run goes",
        )


def available_memory() -> tuple[int, str] | None:
    """The memory a run may still take, bytes, and where that figure comes from: the kernel's
    estimate of what can be allocated without swapping (MemAvailable, /proc/meminfo), or, when
    lower, what the address-space limit (`ulimit -v`, RLIMIT_AS) leaves this process. None
    where neither is known."""
    found: list[tuple[int, str]] = []
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo", encoding="ascii") as f:
            line = next(x for x in f if x.startswith("MemAvailable:"))
        found.append((int(line.split()[1]) * 1024, "MemAvailable in /proc/meminfo"))
    with contextlib.suppress(OSError, ValueError, ImportError):
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm", encoding="ascii") as f:
                used = int(f.read().split()[0]) * resource.getpagesize()
            found.append((max(soft - used, 0), "the address-space limit (ulimit -v) less this process's size"))
    return min(found) if found else None


def check_budget_memory(spec: dict[str, Any], available: tuple[int, str] | None = None) -> dict[str, Any]:
    """The scenario with its `budget.active_flows` held to the memory available (see
    `available_memory`) when it has workloads: their arrivals in progress, at
    ACTIVE_FLOW_BYTES each, would otherwise end the run in an allocator abort instead of the
    budget's one-line error. A budget the scenario gives beyond that is refused with both
    figures; the default (DEFAULT_ACTIVE_FLOWS, about 2.1 GB) is lowered to what fits (with
    MEMORY_HEADROOM), which
    changes nothing but where an overloaded workload stops (on a machine with the memory, the
    scenario is returned as it is). `budget.flows` and `budget.packets` bound work, not memory
    held at once (finished arrivals are reclaimed, the flows table streams to disk, and a
    packet is held only while a queue, bounded by its own limit, holds it)."""
    budget = spec.get("budget", {})
    if not (isinstance(budget, dict) and spec.get("workloads")):
        return spec
    n = budget.get("active_flows", DEFAULT_ACTIVE_FLOWS)
    if isinstance(n, bool) or not isinstance(n, int | float) or not n > 0:
        return spec  # the engine refuses it, naming the key
    available = available or available_memory()
    if available is None or n * ACTIVE_FLOW_BYTES * MEMORY_HEADROOM <= available[0]:
        return spec
    free, source = available
    fit = max(int(free // (ACTIVE_FLOW_BYTES * MEMORY_HEADROOM)), 1)
    if "active_flows" not in budget:
        return {**spec, "budget": {**budget, "active_flows": fit}}
    raise scenario_error(
        "budget.active_flows",
        f"{_count(n)} workload arrivals in progress at once would take up to {_bytes(n * ACTIVE_FLOW_BYTES)} "
        f"(about {ACTIVE_FLOW_BYTES / 1000:.1f} KB each), more than half the {_bytes(free)} available ({source}; "
        f"the other half is kept for the engine's tables as they grow and the rest of the process); at most "
        f"{_count(fit)} fit",
    )


def _count(n: float) -> str:
    """A count to three digits, exponents as the engine writes them (1e9, 1.06e7)."""
    return re.sub(r"e\+0*", "e", f"{n:.3g}")


def _bytes(n: float) -> str:
    """A byte count in decimal units, as `quench` writes sizes."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def _to_json(spec: dict[str, Any]) -> str:
    if not isinstance(spec, dict):
        raise scenario_error("", f"a scenario is a table of keys, not a {type(spec).__name__}")
    check_listed_flows(spec)
    _check_plain(spec)
    spec = check_budget_memory(spec)
    # A file of a scenario built in Python is read relative to the working directory.
    spec = resolve_traces(resolve_files(spec, Path.cwd()), Path.cwd())
    try:
        return json.dumps(spec, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise scenario_error("", f"scenario is not plain data (strings, numbers, lists, tables): {e}") from None


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

    @property
    def possible(self) -> bool:
        """Whether the bar can appear at all: when it cannot, the run needs no steps."""
        return self.enabled is True or (self.enabled is None and sys.stderr.isatty())

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


def run_scenario(
    spec: dict[str, Any],
    *,
    progress: bool | None = None,
    before_run: Callable[[dict[str, Any]], None] | None = None,
    stream: RecordStream | None = None,
) -> Results:
    """Run a scenario dict; `progress` None shows a bar for long runs on a terminal;
    `before_run` is called with the resolved scenario once it is built, before it runs (the
    command line checks its output files there). Records and captures stream into `stream`'s
    folder as the run goes (quench.stream), by default a temporary one the Results own; a
    failed write is an OutputError naming that folder."""
    # One parse, one validation, one build: the engine hands back the scenario it built.
    sim = _core.Simulation(_to_json(spec))
    resolved = json.loads(sim.scenario)
    if before_run is not None:
        before_run(resolved)
    stream = stream or RecordStream.temporary()
    try:
        raw, wall_run = _run_streaming(sim, resolved, progress, stream)
    except OSError as e:
        stream.discard()
        raise OutputError(f"cannot write the results into {stream.label}: {e}") from None
    except BaseException:
        stream.discard()
        raise
    for runs in _journals:
        runs.append(resolved)
    return Results.from_raw(raw, resolved, wall_run_s=wall_run, stream=stream)


class SimulationFinished(ValueError, RuntimeError):
    """A call on a Simulation after its `finish`: the run is over and its Results were
    returned. A ValueError, as every refused call is, and a RuntimeError, as it was."""


class Simulation:
    """A scenario run in steps: `advance` it, look at it (`snapshot`: the links, flows and nodes
    tables as they stand), advance it again, and `finish` it for the Results of the whole run,
    the same as `run_scenario` gives. Records stream into a temporary folder the Results own,
    as with `run_scenario`.

        sim = quench.scenario.Simulation(net.to_dict("60s"))
        sim.advance("10s")
        warm = sim.snapshot().flows           # the flows table at 10 s
        res = sim.finish()                    # runs on to 60 s
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        self._finished = False
        self._sim = _core.Simulation(_to_json(spec))
        self._end: float = self._sim.end
        self.scenario: dict[str, Any] = json.loads(self._sim.scenario)
        self._stream = RecordStream.temporary()
        pcaps = self._stream.pcap_files(self.scenario.get("record", {}).get("pcap", []))
        self._sim.stream_to(str(self._stream.spill), [(link, str(path)) for link, path in pcaps.items()])
        self._wall_s = 0.0

    def _check_running(self, call: str) -> None:
        if self._finished:
            raise SimulationFinished(
                f"{call}: this Simulation has already finished (finish() returned its Results); build a new "
                "Simulation to run the scenario again"
            )

    @property
    def now(self) -> float:
        """Simulated seconds so far (the end, once finished)."""
        return self.end if self._finished else self._sim.now

    @property
    def end(self) -> float:
        """The scenario's duration, s."""
        return self._end

    def advance(self, until: str | float) -> Simulation:
        """Run every event up to `until` (a time like "10s", or seconds; at most the end)."""
        from quench.units import parse_duration

        self._check_running("advance")
        t = min(parse_duration(until, "until"), self.end)
        started = time.perf_counter()
        try:
            self._sim.run_until(t)
        except OSError as e:
            self._stream.discard()
            raise OutputError(f"cannot write the results into {self._stream.label}: {e}") from None
        self._wall_s += time.perf_counter() - started
        return self

    def snapshot(self) -> Results:
        """The links, flows and nodes tables as they stand now (`meta["simulated_s"]` is now);
        the simulation goes on."""
        self._check_running("snapshot")
        return Results.from_raw(self._sim.snapshot(), self.scenario, wall_run_s=self._wall_s)

    def finish(self) -> Results:
        """Run on to the scenario's end; the Results of the whole run."""
        self._check_running("finish")
        self.advance(self.end)
        self._finished = True
        try:
            raw = self._sim.finish()
        except OSError as e:
            self._stream.discard()
            raise OutputError(f"cannot write the results into {self._stream.label}: {e}") from None
        for runs in _journals:
            runs.append(self.scenario)
        return Results.from_raw(raw, self.scenario, wall_run_s=self._wall_s, stream=self._stream)


def _run_streaming(
    sim: _core.Simulation, resolved: dict[str, Any], progress: bool | None, stream: RecordStream
) -> tuple[dict[str, Any], float]:
    """Run `sim` to its end streaming into `stream`; the engine's raw results and the wall time."""
    pcaps = stream.pcap_files(resolved.get("record", {}).get("pcap", []))
    sim.stream_to(str(stream.spill), [(link, str(path)) for link, path in pcaps.items()])
    bar = _ProgressBar(sim.end, progress)
    wall_start = time.perf_counter()
    # Each step takes the GIL back, waiting on any other Python thread that holds it (a thread
    # importing pyarrow made the 4-flow run loop three times as long): a run whose bar cannot
    # appear runs in one call.
    steps = PROGRESS_STEPS if bar.possible else 1
    for i in range(1, steps + 1):
        sim.run_until(sim.end if i == steps else i * sim.end / steps)
        bar.update(sim.now)
    bar.close()
    wall_run = time.perf_counter() - wall_start
    return sim.finish(), wall_run
