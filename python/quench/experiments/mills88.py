"""mills88 — D. L. Mills, "Source-quench wrench", end2end-interest, 26 Feb 1988.

A Sun-3 sends four simultaneous FTP data connections over 10 Mb/s Ethernet to a Fuzzball
gateway, whose 9600 bit/s line leads to a Fuzzball sink. Each connection has a send window of
about 4000 octets and a receive window of about 2000; the gateway buffers enough that nothing
is lost. Mills measured the mean queueing delay on the 9600 bit/s side at about 6.3 s with
source quench disabled and 4.2 s with it enabled (threshold about 1.5), a one-third
reduction, with the four transfers at similar rates.

What the email leaves open, and what we chose (each a parameter of `Params`):
- MSS 512: 4.3BSD's TCP_MSS for destinations off the local network.
- Receive window 2048 and send buffer 4096 octets ("about 2000" / "about 4000").
- Line framing 10 bytes per packet: DDCMP's 8-byte header (with its CRC) and 2-byte data CRC,
  the link protocol of the Fuzzball's serial trunks.
- The host's TCP is 4.3BSD-Tahoe: slow start, `rto = srtt + 2·rttvar` in 500 ms ticks, and
  the June 1987 quench rule `cwnd = maxseg` applied to every connection to the quoted
  destination (tcp_ctlinput → in_pcbnotify).
- The gateway's estimator and rate law are the Fuzzball qdisc's documented defaults
  (docs/mechanisms.md#fuzzball-gateway).
- Run length 2000 s ("a couple of megabytes" at 1200 B/s is about 1700 s), the first 300 s
  discarded as start-up ("allowed to stabilize").
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from quench.experiments.common import Criterion, Figures, Run, output_folder, report, run_grid, text_table
from quench.network import Network, droptail
from quench.results import Results, jain_index
from quench.units import parse_rate

NAME = "mills88"
# The TCP this experiment was written for: the plain RFC sender, on which its controllers and
# timers are set explicitly (tcp.profile; the engine's default is Linux's).
TCP_PROFILE = "rfc"
# Mills 1988: "about 6.3 seconds", "about 4.2 seconds, or a reduction of about one-third".
SOURCE_DELAY_NO_QUENCH_S = 6.3
SOURCE_DELAY_QUENCH_S = 4.2
SOURCE_RATIO = 0.67
# Pass criteria: tolerances around the email's delays, and the bounds its set-up implies.
TOL_NO_QUENCH = 0.10
TOL_QUENCH = 0.15
TOL_RATIO = 0.08
MIN_UTILIZATION = 0.95
MIN_JAIN = 0.95

LINE = "gateway->sink"
REACTIONS = ["ignore", "tahoe", "bsd43", "rfc1122", "squid"]
THRESHOLDS = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0]
# The window plot shows this many seconds of steady state, where single steps are visible.
WINDOW_ZOOM_S = 120.0


@dataclass
class Params:
    flows: int = 4
    ether_rate: str = "10Mbps"
    ether_delay: str = "50us"
    line_rate: str = "9600bps"
    line_delay: str = "1ms"
    framing_overhead: int = 10
    mss: int = 512
    receive_window: int = 2048
    send_buffer: int = 4096
    pool_packets: int = 100
    threshold: float = 1.5
    gateway: dict = field(default_factory=dict)  # other fuzzball parameters (gain, rates)
    reaction: str = "tahoe"
    duration_s: float = 2000.0
    warmup_s: float = 300.0
    seed: int = 1


def network(p: Params, quench: bool) -> Network:
    fuzzball = {
        "kind": "fuzzball",
        "pool_limit": f"{p.pool_packets}p",
        "quench": quench,
        "threshold": p.threshold,
        **p.gateway,
    }
    net = Network(tcp_profile=TCP_PROFILE, seed=p.seed, name=NAME)
    net.hosts("sun3", "sink").routers("gateway")
    # The gateway's two output queues draw on its one Fuzzball buffer pool.
    net.link("sun3", "gateway", rate=p.ether_rate, delay=p.ether_delay, qdisc=droptail(), reverse_qdisc=fuzzball)
    net.link(
        "gateway",
        "sink",
        rate=p.line_rate,
        delay=p.line_delay,
        qdisc=fuzzball,
        reverse_qdisc=droptail(),
        framing_overhead=p.framing_overhead,
    )
    tcp = {
        "mss": p.mss,
        "send_buffer": p.send_buffer,
        "receive_window": p.receive_window,
        "rto": {"k": 2, "tick": "500ms", "initial": "3s", "max": "64s"},
        "source_quench": p.reaction,
    }
    for i in range(p.flows):
        net.tcp("sun3", "sink", cc="tahoe", name=f"ftp{i}", start=0.1 * i, **tcp)
    net.record(sojourn=True, segments=False, links=[LINE])
    return net


@dataclass
class Measured:
    mean_delay_s: float
    utilization: float
    drops: int
    retransmissions: int
    quench_messages: int
    goodput_bps: list[float]
    jain: float


def measure(res: Results, p: Params) -> Measured:
    s = res.sojourn
    steady = s[(s["link_name"] == LINE) & (s["time_s"] >= p.warmup_s)]
    flows = res.flows
    goodput = (flows["bytes_delivered"] * 8 / p.duration_s).to_list()
    events = res.tcp_events
    reactions = int((events["event"] == "source_quench").sum())
    return Measured(
        mean_delay_s=float(steady["sojourn_s"].mean()) if len(steady) else math.nan,
        utilization=float(res.link(LINE)["utilization"]),
        drops=int(res.links["dropped_packets"].sum()),
        retransmissions=int(flows["retransmitted_segments"].sum()),
        # One message quenches every connection to the sink, so each counts p.flows times.
        quench_messages=reactions // max(p.flows, 1),
        goodput_bps=goodput,
        jain=jain_index(np.array(goodput)),
    )


def run(p: Params, quench: bool, keep_measured: bool = False) -> Run:
    """The run of `p`, with or without quench; keeping its Measured, or the whole Results."""
    return Run.of(network(p, quench), p.duration_s, functools.partial(measure, p=p) if keep_measured else None)


def criteria(off: Measured, on: Measured, p: Params) -> list[Criterion]:
    ratio = on.mean_delay_s / off.mean_delay_s
    return [
        Criterion.within("mean delay without quench (s)", SOURCE_DELAY_NO_QUENCH_S, off.mean_delay_s, TOL_NO_QUENCH),
        Criterion.at_most(
            "mean delay without quench within the backlog bound (s)", backlog_bound_s(p), off.mean_delay_s
        ),
        Criterion.within("mean delay with quench (s)", SOURCE_DELAY_QUENCH_S, on.mean_delay_s, TOL_QUENCH),
        Criterion.within_abs("delay ratio quench / no quench", SOURCE_RATIO, ratio, TOL_RATIO),
        Criterion.at_most("drops, both runs", 0, off.drops + on.drops, source=0),
        Criterion.at_least("line utilization without quench", MIN_UTILIZATION, off.utilization),
        Criterion.at_least("line utilization with quench", MIN_UTILIZATION, on.utilization),
        Criterion.at_least("Jain index of goodput without quench", MIN_JAIN, off.jain, source="similar rates"),
        Criterion.at_least("Jain index of goodput with quench", MIN_JAIN, on.jain, source="similar rates"),
    ]


def backlog_bound_s(p: Params) -> float:
    """The delay bound: every connection's receive window queued at the line, in whole segments
    with their headers and framing."""
    segments = p.receive_window // p.mss
    per_packet = p.mss + 40 + p.framing_overhead
    return p.flows * segments * per_packet * 8 / parse_rate(p.line_rate)


def study_row(key: str, value: float | str, m: Measured) -> dict:
    """One point of the extra study: mean delay and fairness against the threshold (Tahoe
    hosts), or with each host reaction at the default threshold."""
    return {key: value, "mean_delay_s": m.mean_delay_s, "jain": m.jain, "utilization": m.utilization}


def plot(out: Path, runs: dict[str, Results], study: dict[str, list], p: Params) -> list[str]:
    figures = Figures(out, dpi=120)
    with figures.new("queue.png", 2, 1, figsize=(9, 6), sharex=True) as (fig, axes):
        for ax, (label, res) in zip(axes, runs.items()):
            q = res.queue[res.queue["link_name"] == LINE]
            ax.step(q["time_s"], q["packets"], where="post", lw=0.6)
            ax.set(ylabel="queue (packets)", title=f"9600 bit/s line queue, {label}")
            ax.grid(alpha=0.3)
        axes[-1].set_xlabel("time (s)")

    with figures.new("windows.png", 2, 1, figsize=(9, 6), sharex=True) as (fig, axes):
        for ax, (label, res) in zip(axes, runs.items()):
            for name, g in res.cwnd.groupby("flow_name", sort=False):
                window = np.minimum(g["cwnd"], p.receive_window) / p.mss
                ax.step(g["time_s"], window, where="post", lw=0.7, label=name)
            ax.set(ylabel="window (segments)", title=f"min(cwnd, rwnd) per connection, {label}")
            ax.set_xlim(p.warmup_s, p.warmup_s + WINDOW_ZOOM_S)
            ax.legend(fontsize="small", ncol=4)
            ax.grid(alpha=0.3)
        axes[-1].set_xlabel(f"time (s), {WINDOW_ZOOM_S:g} s after start-up")

    with figures.new("study.png", 1, 2, figsize=(11, 4)) as (fig, (a1, a2)):
        t = study["by_threshold"]
        a1.plot([r["threshold"] for r in t], [r["mean_delay_s"] for r in t], "o-", label="mean delay (s)")
        a1.axhline(SOURCE_DELAY_QUENCH_S, ls="--", color="gray", label="Mills 1988, T about 1.5")
        a1b = a1.twinx()
        a1b.plot([r["threshold"] for r in t], [r["jain"] for r in t], "s--", color="tab:green", label="Jain index")
        a1b.set_ylim(0, 1.05)
        a1.set(xlabel="quench threshold (packets of mean queue)", ylabel="mean queueing delay (s)")
        a1.set_title("delay and fairness vs threshold (Tahoe hosts)")
        a1.legend(loc="upper left", fontsize="small")
        a1b.legend(loc="lower right", fontsize="small")
        r = study["by_reaction"]
        a2.bar([x["reaction"] for x in r], [x["mean_delay_s"] for x in r], color="tab:blue")
        for i, x in enumerate(r):
            a2.text(i, x["mean_delay_s"], f"J={x['jain']:.2f}", ha="center", va="bottom", fontsize="small")
        a2.set(ylabel="mean queueing delay (s)", title=f"host reactions, threshold {p.threshold}")
    return figures.names


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = Params(seed=seed)
    if quick:
        p = dataclasses.replace(p, duration_s=800.0, warmup_s=200.0)
    out = output_folder(out)
    thresholds = THRESHOLDS[::2] if quick else THRESHOLDS
    (res_off, res_on), by_threshold, by_reaction = run_grid(
        [run(p, quench=False), run(p, quench=True)],
        [run(dataclasses.replace(p, threshold=t), quench=True, keep_measured=True) for t in thresholds],
        [run(dataclasses.replace(p, reaction=r), quench=True, keep_measured=True) for r in REACTIONS],
    )
    off, on = measure(res_off, p), measure(res_on, p)
    res_off.save(out / "no_quench", plots=False)
    res_on.save(out / "quench", plots=False)
    study = {
        "by_threshold": [study_row("threshold", t, m) for t, m in zip(thresholds, by_threshold)],
        "by_reaction": [study_row("reaction", r, m) for r, m in zip(REACTIONS, by_reaction)],
    }
    plots = plot(out, {"quench disabled": res_off, "quench enabled": res_on}, study, p)
    measured = {"no_quench": dataclasses.asdict(off), "quench": dataclasses.asdict(on)}
    return report(
        out,
        NAME,
        criteria(off, on, p),
        [comparison_table(off, on, p)],
        seed=p.seed,
        parameters=dataclasses.asdict(p),
        quick=quick,
        measured=measured,
        backlog_bound_s=backlog_bound_s(p),
        study=study,
        plots=plots,
    )


def comparison_table(off: Measured, on: Measured, p: Params) -> str:
    rows = [
        ("", "Mills 1988", "quench: no SQ", "quench: SQ"),
        ("mean queueing delay, 9600 side (s)", "6.3 -> 4.2", f"{off.mean_delay_s:.2f}", f"{on.mean_delay_s:.2f}"),
        ("delay ratio SQ / no SQ", "0.67", "", f"{on.mean_delay_s / off.mean_delay_s:.3f}"),
        ("drops", "0", f"{off.drops}", f"{on.drops}"),
        ("retransmissions", "a few", f"{off.retransmissions}", f"{on.retransmissions}"),
        ("line utilization", "-", f"{off.utilization:.3f}", f"{on.utilization:.3f}"),
        ("source quench messages", "-", f"{off.quench_messages}", f"{on.quench_messages}"),
        (
            "per-flow goodput (bit/s)",
            "similar",
            " ".join(f"{g:.0f}" for g in off.goodput_bps),
            " ".join(f"{g:.0f}" for g in on.goodput_bps),
        ),
        ("Jain index of goodput", "similar rates", f"{off.jain:.3f}", f"{on.jain:.3f}"),
    ]
    head = (
        f"mills88: {p.flows} FTP connections, Sun-3 -> Fuzzball gateway -> 9600 bit/s line -> sink, "
        f"{p.duration_s:g} s (first {p.warmup_s:g} s discarded)"
    )
    bound = f"backlog bound (4 receive windows at the line): {backlog_bound_s(p):.2f} s"
    return "\n".join([text_table(rows, head), bound])
