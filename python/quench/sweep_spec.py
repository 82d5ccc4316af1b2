"""The sweep spec: parsing and validation (errors name the key), dotted keys into a scenario,
grid x sample x seeds points with stable ids and hive-style partitions, and the per-point
metrics a spec may summarise. Format: docs/sweeps.md."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import random
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd

from quench.results import jain_index
from quench.scenario import load_scenario, validate_scenario

DEFAULT_RETRIES = 1
# 64 bits of SHA-256: by the birthday bound a collision needs ~4e9 points.
ID_HEX_CHARS = 16
# Directory names longer than this (table-valued parameters) use the value's hash instead.
MAX_PARTITION_VALUE_CHARS = 48
DEFAULT_METRICS = ["utilization", "goodput_bps", "mean_queue_packets", "loss_rate"]
SPEC_KEYS = {"name", "base", "set", "grid", "sample", "seeds", "metrics", "retries"}
SAMPLE_KEYS = {"points", "seed", "params"}
SAMPLE_KINDS = {"uniform", "log_uniform", "int", "choice"}


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
        # The base's [record] table is kept: without it the engine records its defaults (cwnd,
        # RTT, queues, ...), which a base may have turned off to save time and memory. Recording
        # is passive: it changes no value of the links and flows tables a sweep keeps.
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
    spec.retries = non_negative_int(s.get("retries", DEFAULT_RETRIES), "sweep.retries")
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
    spec.sample_points = non_negative_int(s.get("points"), "sweep.sample.points")
    spec.sample_seed = non_negative_int(s.get("seed", 0), "sweep.sample.seed")
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
        return list(range(1, non_negative_int(value, "sweep.seeds") + 1))
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


def non_negative_int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SweepSpecError(where, f"must be a non-negative integer, got {value!r}")
    return value
