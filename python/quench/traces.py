"""Capacity traces for links whose rate changes (the engine's crates/quench-core/src/capacity.rs):
reading them from files, and a generator of synthetic ones so that no download is needed.

A link direction takes `capacity = {mahimahi = "up.trace"}` (Mahimahi's format: one line per
delivery opportunity of one MTU-sized packet, the time in ms, non-decreasing, the trace
repeating with the period of its last line) or `capacity = {rates = "rates.csv"}` (a rate over
time, piecewise constant: a header `time_s,rate_mbps` or `time_s,rate_bps`, then one line per
step, the first at time 0; the last rate holds to the end of the run). The file is read here, as
an empirical CDF's is (`quench.dist`): the table becomes `{opportunities_ms = [...]}` or
`{rates = [[s, bit/s], ...]}` with `source` naming the file, relative paths taken against the
scenario file's folder or, for a scenario built in Python, the working directory. A file must
be a regular file of at most `MAX_TRACE_BYTES`; a bad line is refused with the key, the file as
written and the line number.

`sprout_trace` draws a trace from the cellular link model of Winstein, Sivaraman and Balakrishnan
("Stochastic Forecasts Achieve High Throughput and Low Delay over Cellular Networks", NSDI 2013,
section 3.1); `write_mahimahi` writes any list of opportunities as a Mahimahi file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quench.errors import scenario_error
from quench.files import MIB, UnreadableFile, open_regular, text_lines

# A trace file: a Mahimahi line is 2-8 bytes, so 64 MiB holds some 10⁷ opportunities (the
# engine's cap is 2^24): hours of a 12 Mb/s link; published traces (Sprout's, the Pantheon's)
# are one to a few minutes and under a megabyte.
MAX_TRACE_BYTES = 64 * MIB

# Mahimahi's trace times are whole milliseconds below 2^32 (the engine keeps them as u32).
_MAX_MS = 2**32 - 1

_RATE_UNITS = {"rate_bps": 1.0, "rate_mbps": 1e6}


def read_mahimahi(path: str | Path, key: str = "capacity", shown: str | None = None) -> list[int]:
    """The delivery opportunities (ms) of a Mahimahi trace file; a bad line raises
    ScenarioError naming `key`, the file (as `shown`) and the line."""
    name = str(path) if shown is None else shown
    out: list[int] = []
    try:
        with open_regular(path, MAX_TRACE_BYTES, "trace file") as f:
            for number, line in text_lines(f, MAX_TRACE_BYTES, name):
                text = line.strip()
                if not text:
                    continue
                if not text.isdigit() or int(text) > _MAX_MS:
                    raise scenario_error(key, f"{name}: line {number}: {text[:40]!r} is not a time in whole ms")
                ms = int(text)
                if out and ms < out[-1]:
                    raise scenario_error(key, f"{name}: line {number}: {ms} ms comes before {out[-1]} ms")
                out.append(ms)
    except UnreadableFile as e:
        raise scenario_error(key, str(e).replace(str(path), name, 1)) from None
    if not out:
        raise scenario_error(key, f"{name}: no delivery opportunities")
    return out


def read_rates(path: str | Path, key: str = "capacity", shown: str | None = None) -> list[list[float]]:
    """The (time s, rate bit/s) steps of a rate CSV file (see the module header)."""
    name = str(path) if shown is None else shown
    steps: list[list[float]] = []
    scale = None
    try:
        with open_regular(path, MAX_TRACE_BYTES, "rate file") as f:
            for number, line in text_lines(f, MAX_TRACE_BYTES, name):
                fields = [x.strip() for x in line.strip().split(",")]
                if fields == [""] or fields[0].startswith("#"):
                    continue
                if scale is None:
                    scale = _header(fields, name, number, key)
                    continue
                steps.append(_step(fields, scale, name, number, key))
    except UnreadableFile as e:
        raise scenario_error(key, str(e).replace(str(path), name, 1)) from None
    if not steps:
        raise scenario_error(key, f"{name}: no rate steps")
    return steps


def _header(fields: list[str], name: str, number: int, key: str) -> float:
    if len(fields) != 2 or fields[0] != "time_s" or fields[1] not in _RATE_UNITS:
        raise scenario_error(key, f"{name}: line {number}: the header must be time_s,rate_mbps or time_s,rate_bps")
    return _RATE_UNITS[fields[1]]


def _step(fields: list[str], scale: float, name: str, number: int, key: str) -> list[float]:
    try:
        t, r = (float(x) for x in fields) if len(fields) == 2 else (math.nan, math.nan)
    except ValueError:
        t = r = math.nan
    if not (math.isfinite(t) and math.isfinite(r) and t >= 0 and r >= 0):
        raise scenario_error(key, f"{name}: line {number}: expected a time and a rate, both non-negative numbers")
    return [t, round(r * scale)]


def resolve_traces(spec: dict[str, Any], base: str | Path) -> dict[str, Any]:
    """`spec` with every link's `capacity = {mahimahi = ...}` or `{rates = "file"}` read in
    (relative paths against `base`); the same object when there is none, a copy otherwise."""
    links = spec.get("links") if isinstance(spec, dict) else None
    if not isinstance(links, list):
        return spec
    refs = [
        (i, side)
        for i, ln in enumerate(links)
        if isinstance(ln, dict)
        for side in ("capacity", "reverse_capacity")
        if isinstance(ln.get(side), dict) and _names_a_file(ln[side])
    ]
    if not refs:
        return spec
    out = dict(spec)
    out["links"] = list(links)
    for i, side in refs:
        link = out["links"][i] = dict(out["links"][i])
        link[side] = _read_capacity(dict(link[side]), f"links[{i}].{side}", Path(base))
    return out


def _names_a_file(table: dict[str, Any]) -> bool:
    return "mahimahi" in table or isinstance(table.get("rates"), str | Path)


def _read_capacity(table: dict[str, Any], key: str, base: Path) -> dict[str, Any]:
    if "mahimahi" in table and "rates" in table:
        raise scenario_error(key, "give either `mahimahi` or `rates`, not both")
    field = "mahimahi" if "mahimahi" in table else "rates"
    file = table.pop(field)
    if not isinstance(file, str | Path) or not str(file):
        raise scenario_error(f"{key}.{field}", "must be the path of a trace file")
    target = Path(file) if Path(file).is_absolute() else base / file
    if field == "mahimahi":
        table["opportunities_ms"] = read_mahimahi(target, key=f"{key}.{field}", shown=str(file))
    else:
        table["rates"] = read_rates(target, key=f"{key}.{field}", shown=str(file))
    table.setdefault("source", str(file))
    return table


def sprout_trace(
    duration_s: float,
    seed: int,
    *,
    start_pps: float = 500.0,
    sigma_pps: float = 200.0,
    max_pps: float = 1000.0,
    outage_escape_per_s: float = 1.0,
    tick_ms: int = 1,
    reversion_per_s: float = 0.0,
    mean_pps: float | None = None,
) -> list[int]:
    """Delivery opportunities (ms) of a synthetic cellular link, from Sprout's model (Winstein et
    al., NSDI 2013, section 3.1): deliveries of MTU-sized packets are Poisson with rate λ, and λ
    moves as Brownian motion of σ packets/s per √s, held within [0, max_pps]; once at 0 (an
    outage) it stays there until it escapes, at `outage_escape_per_s`. The defaults are the
    paper's (σ = 200, λ_max = 1000, λ_z = 1). Brownian motion wanders: how far a trace's mean
    rate lands from `start_pps` depends on the seed. `reversion_per_s` > 0 adds a pull back
    towards `mean_pps` (default `start_pps`) of that rate (an Ornstein-Uhlenbeck drift, not in
    Sprout's model), so that traces of several σ share one mean rate and differ in variability
    alone; its stationary deviation is σ/√(2·reversion). Drawn per tick of `tick_ms` from a
    seeded stream: the same arguments give the same trace."""
    if not (0 < duration_s <= 86_400 and 1 <= tick_ms <= 1000):
        raise ValueError("sprout_trace: duration_s in (0, 86400] and tick_ms in [1, 1000]")
    mean = start_pps if mean_pps is None else mean_pps
    if not (0 <= start_pps <= max_pps and 0 <= mean <= max_pps and sigma_pps >= 0 and outage_escape_per_s >= 0):
        raise ValueError("sprout_trace: rates must satisfy 0 <= start_pps, mean_pps <= max_pps, sigma_pps >= 0")
    if reversion_per_s < 0:
        raise ValueError("sprout_trace: reversion_per_s must be >= 0")
    import numpy as np  # here, not at import: `import quench` loads no heavy module

    rng = np.random.default_rng(seed)
    dt = tick_ms / 1000.0
    ticks = int(round(duration_s / dt))
    rate = start_pps
    out: list[int] = []
    for k in range(1, ticks + 1):
        if rate <= 0.0:
            if rng.random() < outage_escape_per_s * dt:
                rate = sigma_pps * math.sqrt(dt)
        else:
            step = reversion_per_s * (mean - rate) * dt + sigma_pps * math.sqrt(dt) * rng.standard_normal()
            rate = min(max_pps, max(0.0, rate + step))
        out.extend([k * tick_ms] * int(rng.poisson(rate * dt)))
    if not out:
        raise ValueError("sprout_trace: the link was out for the whole duration; draw another seed")
    # Mahimahi's period is the last line: the trace repeats from its last opportunity.
    return out


def constant_trace(rate_bps: float, duration_ms: int = 1000) -> list[int]:
    """Opportunities of a constant rate: `rate_bps` in 1504-byte opportunities, spread evenly
    over `duration_ms` (as Mahimahi's own constant traces are written)."""
    per_ms = rate_bps / (1504 * 8 * 1000)
    count = max(1, round(per_ms * duration_ms))
    return [max(1, math.ceil((i + 1) * duration_ms / count)) for i in range(count)]


def write_mahimahi(path: str | Path, opportunities_ms: list[int]) -> Path:
    """Write opportunities as a Mahimahi trace file (one time in ms a line); returns the path."""
    p = Path(path)
    p.write_text("".join(f"{ms}\n" for ms in opportunities_ms))
    return p
