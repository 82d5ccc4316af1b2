"""Statistics over a window of one run, and time series, from its snapshots.

A scenario that records snapshots (`record.snapshots = "100ms"` or `["10s", "30s"]`; in Python
`net.record(snapshots=...)`) gets two tables, `link_snapshots` and `flow_snapshots`: every
link's and flow's counters at each instant (the engine's `snapshots.rs`). Any statistic over the
window between two instants is their difference, so a warm-up can be left out, or a run cut
into bins, without a second run:

    res = net.record(snapshots=["10s", "60s"]).run("60s")
    w = res.window("10s", "60s")          # w.links, w.flows over [10 s, 60 s]
    ts = res.timeseries()                 # ts.links, ts.flows: one row per bin and link/flow

The start of the run (0 s) is an instant of every run (all counters zero). A flow that starts
or ends inside a window counts what it did inside it; its goodput is over the whole window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# A window's tables are DataFrames, and this module is imported only when one is asked for
# (Results.window / timeseries), so pandas is no cost to `import quench`.
import pandas as pd

from quench.units import parse_duration

if TYPE_CHECKING:
    from quench.results import Results

LINK_COUNTERS = (
    "arrived_packets",
    "arrived_bytes",
    "departed_packets",
    "departed_bytes",
    "delivered_packets",
    "dropped_packets",
    "dropped_bytes",
    "marked_packets",
)
LINK_INTEGRALS = ("busy_s", "sojourn_sum_s", "backlog_packet_s", "backlog_byte_s")
FLOW_COUNTERS = (
    "bytes_sent",
    "bytes_delivered",
    "packets_sent",
    "packets_received",
    "retransmitted_segments",
    "timeouts",
    "fast_retransmits",
)
# Snapshot instants are float seconds of integer nanoseconds: two instants closer than this
# are the same one.
SAME_INSTANT_S = 0.5e-9
# Queue-delay quantiles of `timeseries` when the run records sojourn times.
DELAY_QUANTILES = (0.5, 0.95, 0.99)


@dataclass(frozen=True)
class Window:
    """Per-link and per-flow statistics over [t0_s, t1_s]."""

    t0_s: float
    t1_s: float
    links: pd.DataFrame
    flows: pd.DataFrame


@dataclass(frozen=True)
class TimeSeries:
    """One row per bin (t0_s, t1_s) and link / flow, with the columns of `Window`."""

    links: pd.DataFrame
    flows: pd.DataFrame


def instants(res: Results) -> list[float]:
    """The run's snapshot instants in seconds, 0 first."""
    import numpy as np

    times = np.unique(res.tables["link_snapshots"]["time_s"].to_numpy(dtype=float))
    return [0.0, *[float(t) for t in times if t > SAME_INSTANT_S]]


def _instant(res: Results, t: Any, key: str) -> float:
    s = parse_duration(t, key)
    known = instants(res)
    for k in known:
        if abs(k - s) <= SAME_INSTANT_S:
            return k
    shown = ", ".join(f"{k:g}" for k in known[:8]) + (", ..." if len(known) > 8 else "")
    hint = "" if len(known) > 1 else " (record.snapshots is not set)"
    raise ValueError(f"{key}: no snapshot at {s:g} s; the instants are {shown} s{hint}")


def _at(res: Results, table: str, key: str, t: float) -> pd.DataFrame:
    """The snapshot rows at instant `t`, indexed by `key`; the run's start is all zeros."""
    snaps = res.tables[table]
    rows = snaps[(snaps["time_s"] - t).abs() <= SAME_INSTANT_S] if t > 0 else snaps.iloc[0:0]
    return pd.DataFrame(rows).set_index(key)


def window(res: Results, t0: Any, t1: Any) -> Window:
    """Every link's and flow's statistics over the window [t0, t1] (instants of the run's
    snapshots, or 0; quantities like "10s" or seconds)."""
    a, b = _instant(res, t0, "t0"), _instant(res, t1, "t1")
    if not b > a:
        raise ValueError(f"t1: the window must end after it starts ({b:g} s is not after {a:g} s)")
    return Window(a, b, _link_window(res, a, b), _flow_window(res, a, b))


def timeseries(res: Results) -> TimeSeries:
    """The run cut at every snapshot instant: one row per bin and link, and per bin and flow,
    with the window statistics of each bin; with sojourn times recorded, each link's queueing
    delay quantiles in each bin (`delay_p50_s`, ...; the packets that left in the bin)."""
    cuts = instants(res)
    links, flows = [], []
    for a, b in zip(cuts, cuts[1:]):
        links.append(_link_window(res, a, b))
        flows.append(_flow_window(res, a, b))
    link_ts = pd.concat(links, ignore_index=True) if links else _link_window(res, 0.0, 0.0).iloc[0:0]
    flow_ts = pd.concat(flows, ignore_index=True) if flows else _flow_window(res, 0.0, 0.0).iloc[0:0]
    return TimeSeries(_with_delay_quantiles(res, link_ts), flow_ts)


def _difference(res: Results, table: str, key: str, cols: tuple[str, ...], a: float, b: float) -> pd.DataFrame:
    end, start = _at(res, table, key, b), _at(res, table, key, a)
    d = end[list(cols)].sub(start[list(cols)].reindex(end.index).fillna(0), fill_value=0)
    return d.reset_index()


def _counters(
    res: Results, table: str, key: str, counters: tuple[str, ...], extra: tuple[str, ...], a: float, b: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The window's counters of `table` by `key` (link or flow), with its name, its bounds and
    the differences of `extra` columns (returned apart, for the rates derived from them)."""
    d = _difference(res, table, key, counters + extra, a, b)
    summary = res.links if key == "link" else res.flows
    out = d[[key]].copy()
    out.insert(0, "t1_s", b)
    out.insert(0, "t0_s", a)
    out["name"] = d[key].map(dict(zip(summary[key], summary["name"]))).astype("string")
    for c in counters:
        out[c] = d[c].astype("uint64")
    return out, d


def _link_window(res: Results, a: float, b: float) -> pd.DataFrame:
    import numpy as np

    width = b - a
    out, d = _counters(res, "link_snapshots", "link", LINK_COUNTERS, LINK_INTEGRALS, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["throughput_bps"] = d["departed_bytes"] * 8 / width
        out["utilization"] = d["busy_s"] / width
        out["mean_backlog_packets"] = d["backlog_packet_s"] / width
        out["mean_backlog_bytes"] = d["backlog_byte_s"] / width
        out["mean_sojourn_s"] = d["sojourn_sum_s"] / d["departed_packets"]
        out["drop_rate"] = d["dropped_packets"] / d["arrived_packets"]
    return out


def _flow_window(res: Results, a: float, b: float) -> pd.DataFrame:
    import numpy as np

    out, d = _counters(res, "flow_snapshots", "flow", FLOW_COUNTERS, (), a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["goodput_bps"] = d["bytes_delivered"] * 8 / (b - a)
    return out


def _with_delay_quantiles(res: Results, link_ts: pd.DataFrame) -> pd.DataFrame:
    """Add each bin's queueing-delay quantiles per link from the sojourn table, if recorded
    (NaN where no packet left the link in the bin)."""
    import numpy as np

    cols = [f"delay_p{round(q * 100)}_s" for q in DELAY_QUANTILES]
    soj = res.tables["sojourn"] if "sojourn" in res.tables else None
    if soj is None or soj.empty or link_ts.empty:
        return link_ts.assign(**{c: np.nan for c in cols})
    cuts = np.asarray(instants(res))
    times = soj["time_s"].to_numpy(dtype=float)
    # A departure at time t belongs to the bin (cuts[k-1], cuts[k]] with k = searchsorted(t).
    k = np.searchsorted(cuts, times, side="left")
    inside = (k >= 1) & (k < len(cuts))
    rows = pd.DataFrame(
        {
            "t1_s": cuts[k[inside]],
            "link": soj["link"].to_numpy()[inside],
            "sojourn_s": soj["sojourn_s"].to_numpy(dtype=float)[inside],
        }
    )
    q = rows.groupby(["t1_s", "link"])["sojourn_s"].quantile(list(DELAY_QUANTILES)).unstack()
    q.columns = cols
    q = q.reset_index().astype({"link": link_ts["link"].dtype})
    return link_ts.merge(q, on=["t1_s", "link"], how="left")
