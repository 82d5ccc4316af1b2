"""Plots researchers already know how to read: queue length, congestion window, and the
time-sequence graph of a flow (Jacobson 1988's figures). matplotlib, headless-safe."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    from matplotlib.axes import Axes

    from quench.results import Results


def _axes(ax: Axes | None) -> Axes:
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4))
    return ax


def queue_length(res: Results, link: str | None = None, ax: Axes | None = None) -> Axes:
    """Queue length in packets against time for `link` (default: the bottleneck)."""
    ax = _axes(ax)
    link = link or res.bottleneck()
    q = res.queue[res.queue["link_name"] == link]
    ax.step(q["time_s"], q["packets"], where="post", lw=0.8)
    ax.set(xlabel="time (s)", ylabel="queue (packets)", title=f"queue at {link}")
    ax.grid(alpha=0.3)
    return ax


def cwnd(res: Results, flows: list[str] | None = None, ax: Axes | None = None) -> Axes:
    """Congestion window in segments against time, one line per flow."""
    ax = _axes(ax)
    c = res.cwnd
    mss = _mss_by_flow(res)
    for name, g in c.groupby("flow_name", sort=False):
        if flows is None or name in flows:
            ax.step(g["time_s"], g["cwnd"] / mss.get(name, 1), where="post", lw=0.8, label=name)
    ax.set(xlabel="time (s)", ylabel="cwnd (segments)", title="congestion window")
    if c["flow_name"].nunique() <= 16:
        ax.legend(fontsize="small", ncol=2)
    ax.grid(alpha=0.3)
    return ax


def time_sequence(res: Results, flow: str, ax: Axes | None = None) -> Axes:
    """Sequence number against time: data sent (retransmissions in red) and ACKs received.
    Needs `record.segments = true`."""
    ax = _axes(ax)
    s = res.segments[res.segments["flow_name"] == flow]
    if s.empty:
        raise ValueError(f"no segments recorded for flow {flow!r}; run with record.segments = true")
    data, acks = s[s["is_ack"] == 0], s[s["is_ack"] == 1]
    fresh, again = data[data["retransmit"] == 0], data[data["retransmit"] == 1]
    ax.plot(fresh["time_s"], fresh["seq"] / 1e3, ".", ms=2, label="data")
    ax.plot(again["time_s"], again["seq"] / 1e3, "x", ms=4, color="tab:red", label="retransmission")
    ax.step(acks["time_s"], acks["seq"] / 1e3, where="post", lw=0.8, color="tab:green", label="ACK")
    ax.set(xlabel="time (s)", ylabel="sequence (KB)", title=f"time-sequence graph of {flow}")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def _mss_by_flow(res: Results) -> dict[str, int]:
    out = {}
    for i, f in enumerate(res.scenario.get("flows", [])):
        if f.get("kind") == "tcp":
            out[res.flows["name"].iloc[i]] = f["tcp"]["mss"]
    return out


def fct_slowdown(
    flows: Results | pd.DataFrame, ax: Axes | None = None, edges: Sequence[float] | None = None, label: str = ""
) -> Axes:
    """FCT slowdown against flow size (HPCC's and Homa's figure): every completed sized flow's
    slowdown as a faint point, and per size bucket (`Results.fct`) its median and 99th
    percentile, drawn at the bucket's median size. `flows`: a run's Results or a flows table;
    `label` names the series in the legend (several runs on one axes)."""
    import numpy as np
    import pandas as pd

    from quench.fct import FCT_SIZE_EDGES, fct_slowdown

    ax = _axes(ax)
    table = flows if isinstance(flows, pd.DataFrame) else flows.flows
    done = table[table["slowdown"].notna()]
    size = done["bytes_requested"].to_numpy(dtype=float)
    points = ax.scatter(size, done["slowdown"], s=3, alpha=0.25)
    color = points.get_facecolor()[0][:3]
    buckets = fct_slowdown(table, FCT_SIZE_EDGES if edges is None else edges)
    buckets = buckets[buckets["completed"] > 0]
    x = [float(np.median(size[(size > b["lo_bytes"]) & (size <= b["hi_bytes"])])) for _, b in buckets.iterrows()]
    tag = f"{label} " if label else ""
    ax.plot(x, buckets["p50"], "o-", color=color, label=f"{tag}p50")
    ax.plot(x, buckets["p99"], "s--", color=color, label=f"{tag}p99")
    ax.set(xscale="log", yscale="log", xlabel="flow size (bytes)", ylabel="FCT slowdown")
    ax.set_title("FCT slowdown by size (response time / the flow alone on the idle network)")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3, which="both")
    return ax


def save_standard_plots(res: Results, out_dir: Path) -> list[Path]:
    """queue.png, cwnd.png and, when segments were recorded, time_sequence.png."""
    written = []
    jobs = []
    if "queue" in res.tables and not res.queue.empty:
        jobs.append(("queue.png", lambda ax: queue_length(res, ax=ax)))
    if "cwnd" in res.tables and not res.cwnd.empty:
        jobs.append(("cwnd.png", lambda ax: cwnd(res, ax=ax)))
    if "segments" in res.tables and not res.segments.empty:
        first = str(res.segments["flow_name"].iloc[0])
        jobs.append(("time_sequence.png", lambda ax: time_sequence(res, first, ax=ax)))
    for filename, draw in jobs:
        fig, ax = plt.subplots(figsize=(8, 4))
        draw(ax)
        fig.tight_layout()
        path = Path(out_dir) / filename
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written
