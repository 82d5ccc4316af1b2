"""feng99 — W. Feng, D. Kandlur, D. Saha, K. Shin, "A Self-Configuring RED Gateway", INFOCOM '99
(slides).

The slides' argument: with ECN, RED's fixed max_p cannot suit every load. An aggressive max_p
(0.25) with few sources (8) pushes the average queue below min_th and under-uses the link; a
conservative one (0.016) with many (32) lets the average climb past max_th, so the buffer
overflows and packets are lost despite ECN; a larger buffer (120 KB) only partly helps. Feng's
self-configuring RED divides max_p by 3 when the average falls below min_th and doubles it when
it rises above max_th, so loss stays near zero and utilization high at either load. We add
Floyd et al.'s 2001 Adaptive RED (AIMD on max_p toward the middle of the thresholds), the run
whose load changes between 8 and 32 sources, and the loss model p = (N·MSS·C/(L·RTT))².

What the slides leave open, and what we chose (each a field of `Params`):
- Topology (unconfirmed wiring of the slide's 100 Mb/s, 10 Mb/s, 45 Mb/s links and 5/100/5/1/5
  ms delays): sources alternate between 100 Mb/s and 10 Mb/s access links of 5 ms to router r1;
  r1 -> r2 is the 45 Mb/s, 5 ms bottleneck with the RED queue; r2 -> sink 100 Mb/s, 1 ms. Base
  RTT 22 ms. The slide's 100 ms label we could not place; `bottleneck_delay` and the loss-model
  sweep vary the RTT.
- TCP: NewReno with ECN (RFC 3168), MSS 1460, delayed ACKs (RFC 1122), large windows.
- RED (docs/mechanisms.md#red) in byte mode (thresholds are in KB), mean packet size 1500 B, w_q
  0.002 (FJ93), the classic curve (gentle came in 2000), ns's "wait" spacing, ECN marks, forced
  drops above max_th.
- The adaptive runs start at max_p = 0.02 (ns-3's 1/LInterm) and use the 120 KB buffer of the
  slides' evaluation (with an 80 KB buffer the average can never exceed max_th = 80 KB, so
  Feng's rule could never raise max_p).
- Loss, the average queue and max_p are measured after a warm-up (the start-up slow start of all
  sources at once overflows any buffer); utilization is over the whole run.
- "Forced drops" in the slides' sense are losses RED did not choose early: forced-region drops
  plus buffer overflows (with an 80 KB buffer equal to max_th, all are overflows).
- The changing load: 8 long-lived sources throughout, 24 more during the middle third; those
  carry finite transfers sized to their fair share of that third, so they finish near its end
  (their completion times are reported).
- Loss model: the congestion-signal rate is ECN window reductions per packet (a window halves at
  most once per RTT however many of its packets are marked); we also report the raw marking rate.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from quench.experiments.common import Criterion, Figures, Run, output_folder, report, run_grid, text_table
from quench.network import Network
from quench.results import Results
from quench.units import parse_bytes, parse_rate

NAME = "feng99"
# The TCP this experiment was written for: the plain RFC sender, on which its controllers and
# timers are set explicitly (tcp.profile; the engine's default is Linux's).
TCP_PROFILE = "rfc"
BOTTLENECK = "r1->r2"
# Feng99 slides: aggressive and conservative early detection.
MAX_P_AGGRESSIVE = 0.25
MAX_P_CONSERVATIVE = 0.016
# ns-3 LInterm = 50: the adaptive runs' starting max_p.
MAX_P_INITIAL_ADAPTIVE = 0.02
# Pass criteria: the slides' claims for the adaptive gateway, as bounds.
MIN_UTILIZATION = 0.95
MAX_DROP_RATE = 0.001
MIN_FRACTION_BETWEEN = 0.75  # "most of the time": three quarters of the arrivals
# The loss model's exponent "about 2": accept 1.5..2.5.
EXPONENT_RANGE = (1.5, 2.5)
# Mathis et al. 1997: C = sqrt(3/2) per ACKed segment; sqrt(3/4) with delayed ACKs (b = 2).
MATHIS_C = math.sqrt(1.5)
MATHIS_C_DELAYED_ACK = math.sqrt(0.75)

POLICIES = {
    "aggressive": {"max_p": MAX_P_AGGRESSIVE, "adapt": "none"},
    "conservative": {"max_p": MAX_P_CONSERVATIVE, "adapt": "none"},
    "feng": {"max_p": MAX_P_INITIAL_ADAPTIVE, "adapt": "feng1999"},
    "floyd": {"max_p": MAX_P_INITIAL_ADAPTIVE, "adapt": "floyd2001"},
}
# (policy, sources, buffer): the slides' static cases, then the adaptive ones.
CASES = [
    ("aggressive", 8, "80KB"),
    ("aggressive", 32, "80KB"),
    ("conservative", 8, "80KB"),
    ("conservative", 32, "80KB"),
    ("conservative", 32, "120KB"),
    ("feng", 8, "120KB"),
    ("feng", 32, "120KB"),
    ("floyd", 8, "120KB"),
    ("floyd", 32, "120KB"),
]
# The policies whose static cases are plotted (the slides' two fixed max_p).
PLOTTED = ("aggressive", "conservative")
# What the slides say about each case (qualitative; their numbers are plots).
CLAIMS = {
    ("aggressive", 8): "avg below min_th, link under-used",
    ("aggressive", 32): "-",
    ("conservative", 8): "-",
    ("conservative", 32): "avg above max_th, loss despite ECN",
    ("feng", 8): "low loss, high utilization",
    ("feng", 32): "low loss, high utilization",
    ("floyd", 8): "(not in Feng99)",
    ("floyd", 32): "(not in Feng99)",
}


@dataclass
class Params:
    access_rates: tuple[str, ...] = ("100Mbps", "10Mbps")
    access_delay: str = "5ms"
    bottleneck_rate: str = "45Mbps"
    bottleneck_delay: str = "5ms"
    sink_rate: str = "100Mbps"
    sink_delay: str = "1ms"
    mss: int = 1460
    min_th: str = "20KB"
    max_th: str = "80KB"
    red: dict = field(
        default_factory=lambda: {
            "mode": "bytes",
            "mean_packet_size": "1500B",
            "w_q": 0.002,
            "curve": "classic",
            "spacing": "wait",
            "signal": "mark",
            "forced": "drop",
        }
    )
    duration_s: float = 60.0
    warmup_s: float = 10.0
    # Changing load: 8 sources, then 32, then 8, each phase this long.
    phase_s: float = 20.0
    low_sources: int = 8
    high_sources: int = 32
    # Loss-model sweep.
    sweep_sources: tuple[int, ...] = (2, 4, 8, 16, 32)
    sweep_rates: tuple[str, ...] = ("10Mbps", "45Mbps")
    sweep_delays: tuple[str, ...] = ("10ms", "40ms")
    sweep_duration_s: float = 40.0
    seed: int = 1


def red_qdisc(p: Params, policy: str, buffer: str) -> dict:
    return {"kind": "red", "min_th": p.min_th, "max_th": p.max_th, "limit": buffer, **p.red, **POLICIES[policy]}


def network(
    p: Params, qdisc: dict, sources: list[dict], *, rate: str | None = None, delay: str | None = None
) -> Network:
    """The topology with one flow per entry of `sources` ({start, bytes})."""
    net = Network(tcp_profile=TCP_PROFILE, seed=p.seed, name=NAME)
    net.routers("r1", "r2").hosts("sink")
    net.link("r1", "r2", rate=rate or p.bottleneck_rate, delay=delay or p.bottleneck_delay, qdisc=qdisc)
    net.link("r2", "sink", rate=p.sink_rate, delay=p.sink_delay)
    for i, src in enumerate(sources):
        net.hosts(f"s{i}")
        net.link(f"s{i}", "r1", rate=p.access_rates[i % len(p.access_rates)], delay=p.access_delay)
        net.tcp(f"s{i}", "sink", name=f"src{i}", mss=p.mss, ecn=True, **src)
    net.record(links=[BOTTLENECK], cwnd=False, rtt=True, queues=True)
    return net


def steady_sources(n: int) -> list[dict]:
    # Starts 10 ms apart so the handshakes do not collide.
    return [{"start": 0.01 * i} for i in range(n)]


def varying_sources(p: Params) -> list[dict]:
    """8 throughout, 24 more in the middle phase with transfers of their fair share of it."""
    extra = p.high_sources - p.low_sources
    share_bytes = int(parse_rate(p.bottleneck_rate) / 8 / p.high_sources * p.phase_s)
    first = steady_sources(p.low_sources)
    middle = [{"start": p.phase_s + 0.01 * i, "bytes": share_bytes} for i in range(extra)]
    return first + middle


@dataclass
class Measured:
    policy: str
    sources: int
    buffer: str
    utilization: float
    drop_rate: float
    drop_rate_whole_run: float
    early_drops: int
    forced_drops: int
    marks: int
    mark_rate: float
    avg_queue_bytes: float
    fraction_between: float
    fraction_below: float
    max_p_final: float


def series(res: Results, name: str, t0: float = 0.0, t1: float = math.inf) -> pd.DataFrame:
    m = res.monitors
    sel = (m["link_name"] == BOTTLENECK) & (m["name"] == name) & (m["time_s"] >= t0) & (m["time_s"] < t1)
    return m[sel]


def window_stats(res: Results, p: Params, t0: float, t1: float) -> dict:
    """Loss, marks and the average queue of arrivals in [t0, t1); one avg_queue row per arrival."""
    avg = series(res, "avg_queue", t0, t1)["value"]
    arrivals = max(len(avg), 1)
    d = res.drops
    d = d[(d["link_name"] == BOTTLENECK) & (d["time_s"] >= t0) & (d["time_s"] < t1)]
    lo, hi = parse_bytes(p.min_th), parse_bytes(p.max_th)
    maxp = series(res, "max_p", 0.0, t1)["value"]
    return {
        "drop_rate": len(d) / arrivals,
        "early_drops": int((d["reason"] == "early").sum()),
        "forced_drops": int(d["reason"].isin(["forced", "overflow"]).sum()),
        "avg_queue_bytes": float(avg.mean()) if len(avg) else math.nan,
        "fraction_between": float(((avg > lo) & (avg < hi)).mean()) if len(avg) else math.nan,
        "fraction_below": float((avg < lo).mean()) if len(avg) else math.nan,
        "max_p_final": float(maxp.iloc[-1]) if len(maxp) else math.nan,
    }


def case_run(p: Params, policy: str, n: int, buffer: str) -> Run:
    """A static case: `n` long-lived sources through RED with `policy` and `buffer`. The cases
    plotted keep their Results; the others only their Measured."""
    keep = None if policy in PLOTTED else functools.partial(measure_case, p=p, policy=policy, n=n, buffer=buffer)
    return Run.of(network(p, red_qdisc(p, policy, buffer), steady_sources(n)), p.duration_s, keep)


def measure_case(res: Results, p: Params, policy: str, n: int, buffer: str) -> Measured:
    link = res.link(BOTTLENECK)
    w = window_stats(res, p, p.warmup_s, p.duration_s)
    m = Measured(
        policy=policy,
        sources=n,
        buffer=buffer,
        utilization=float(link["utilization"]),
        drop_rate_whole_run=float(link["dropped_packets"] / link["arrived_packets"]),
        marks=int(link["marked_packets"]),
        mark_rate=float(link["marked_packets"] / link["arrived_packets"]),
        **w,
    )
    return m


def varying_run(p: Params, policy: str) -> Run:
    """The changing load (8 -> 32 -> 8 sources) through RED with `policy`, 120 KB buffer."""
    return Run.of(network(p, red_qdisc(p, policy, "120KB"), varying_sources(p)), 3 * p.phase_s)


def varying_phases(res: Results, p: Params) -> list[dict]:
    """Each phase's loss, utilization and average queue, then the extra sources' completion
    times."""
    phases = []
    for k, n in enumerate([p.low_sources, p.high_sources, p.low_sources]):
        # Skip the first quarter of each phase: the load change's transient.
        t0, t1 = k * p.phase_s + p.phase_s / 4, (k + 1) * p.phase_s
        w = window_stats(res, p, t0, t1)
        phases.append({"phase": k, "sources": n, "t0": t0, "t1": t1, "utilization": _utilization(res, p, t0, t1), **w})
    finished = res.flows["completion_s"].iloc[p.low_sources :].to_numpy(dtype=float)
    return phases + [{"extra_sources_finished_s": [float(x) for x in finished]}]


def _utilization(res: Results, p: Params, t0: float, t1: float) -> float:
    """Bytes accepted into the queue in [t0, t1) over what the link could send: every data
    packet is MSS + 40 bytes, and a full buffer drops what the link cannot carry."""
    arrivals = len(series(res, "avg_queue", t0, t1))
    d = res.drops
    drops = int(((d["link_name"] == BOTTLENECK) & (d["time_s"] >= t0) & (d["time_s"] < t1)).sum())
    return (arrivals - drops) * (p.mss + 40) * 8 / (parse_rate(p.bottleneck_rate) * (t1 - t0))


def loss_model_runs(p: Params, quick: bool) -> list[Run]:
    """The loss model's sweep over N, L and RTT; each run keeps its row (`_sweep_row`)."""
    sources = p.sweep_sources[1::2] + p.sweep_sources[-1:] if quick else p.sweep_sources
    duration = p.sweep_duration_s / 2 if quick else p.sweep_duration_s
    qdisc = {**red_qdisc(p, "floyd", "400KB"), "forced": "mark", "curve": "gentle"}
    runs = []
    for rate in p.sweep_rates:
        for delay in p.sweep_delays:
            for n in sorted(set(sources)):
                net = network(p, qdisc, steady_sources(n), rate=rate, delay=delay)
                net.record(queues=False)
                keep = functools.partial(
                    _sweep_row, p=p, n=n, rate=rate, delay=delay, warm=duration / 4, duration=duration
                )
                runs.append(Run.of(net, duration, keep))
    return runs


def loss_model(rows: list[dict]) -> dict:
    """Fit p = (N·MSS·C/(L·RTT))² to the sweep's measured congestion-signal rate."""
    fit = {}
    for key in ("signal_rate", "mark_rate"):
        xs = [r["x"] for r in rows if r[key] > 0]
        ys = [r[key] for r in rows if r[key] > 0]
        # The geometric mean of sqrt(p)/x (math, not numpy: the same digits on every machine).
        c = math.exp(math.fsum(math.log(math.sqrt(y) / x) for x, y in zip(xs, ys)) / len(xs))
        fit[key] = {"C": c, "exponent": loglog_slope(xs, ys)}
    fit["n_exponents"] = _n_exponents(rows)
    return {"rows": rows, "fit": fit}


def loglog_slope(xs: Iterable[float], ys: Iterable[float]) -> float:
    """The least-squares slope of log y on log x, in closed form with exactly rounded sums
    (math.fsum): the same digits on every machine, where numpy's polyfit goes through the
    installed LAPACK and changes in the last digits between builds."""
    lx = [math.log(v) for v in xs]
    ly = [math.log(v) for v in ys]
    mx, my = math.fsum(lx) / len(lx), math.fsum(ly) / len(ly)
    dx = [v - mx for v in lx]
    return math.fsum(d * (v - my) for d, v in zip(dx, ly)) / math.fsum(d * d for d in dx)


def _sweep_row(res: Results, p: Params, n: int, rate: str, delay: str, warm: float, duration: float) -> dict:
    link = res.link(BOTTLENECK)
    arrivals = len(series(res, "avg_queue", warm, duration))
    ev = res.tcp_events
    signals = int(((ev["event"] == "ecn_reduction") & (ev["time_s"] >= warm)).sum())
    rtt = float(res.rtt[res.rtt["time_s"] >= warm]["rtt_s"].mean())
    bytes_per_s = parse_rate(rate) / 8
    return {
        "sources": n,
        "rate": rate,
        "delay": delay,
        "rtt_s": rtt,
        "x": n * p.mss / (bytes_per_s * rtt),
        "signal_rate": signals / max(arrivals, 1),
        "mark_rate": float(link["marked_packets"] / link["arrived_packets"]),
        "loss_rate": float(link["dropped_packets"] / link["arrived_packets"]),
        "utilization": float(link["utilization"]),
    }


def _n_exponents(rows: list[dict]) -> list[dict]:
    """The exponent of N in the signal rate at each fixed (L, delay)."""
    out = []
    for (rate, delay), g in pd.DataFrame(rows).groupby(["rate", "delay"], sort=False):
        g = g[g["signal_rate"] > 0]
        if len(g) >= 2:
            k = loglog_slope(g["sources"], g["signal_rate"])
            out.append({"rate": rate, "delay": delay, "exponent": k})
    return out


def criteria(cases: dict[tuple[str, int], Measured], model: dict) -> list[Criterion]:
    out = []
    for policy in ("feng", "floyd"):
        for n in (8, 32):
            m = cases[(policy, n)]
            tag = f"{policy}-adaptive, N = {n}"
            out.append(Criterion.at_least(f"{tag}: utilization", MIN_UTILIZATION, m.utilization, "high"))
            out.append(Criterion.at_most(f"{tag}: drop rate (< 0.1%)", MAX_DROP_RATE, m.drop_rate, "about 0"))
            out.append(
                Criterion.at_least(
                    f"{tag}: fraction of time min_th < avg < max_th", MIN_FRACTION_BETWEEN, m.fraction_between, "most"
                )
            )
    cons = cases[("conservative", 32)]
    out.append(
        Criterion.at_least("conservative, N = 32: forced drops (forced + overflow)", 1, cons.forced_drops, "> 0")
    )
    aggr = cases[("aggressive", 8)]
    out.append(
        Criterion.at_most("aggressive, N = 8: mean avg - min_th (bytes)", 0, aggr.avg_queue_bytes - 20_000, "< 0")
    )
    gap = cases[("feng", 8)].utilization - aggr.utilization
    out.append(Criterion.at_least("aggressive, N = 8: utilization below Feng-adaptive's (gap)", 1e-9, gap, "> 0"))
    lo, hi = EXPONENT_RANGE
    k = model["fit"]["signal_rate"]["exponent"]
    out.append(
        Criterion(
            f"loss model: exponent of x in signal rate ~ x^k, k in [{lo}, {hi}]", 2.0, k, f"[{lo}, {hi}]", lo <= k <= hi
        )
    )
    return out


def plot(out: Path, static: dict, varying: dict, model: dict, p: Params) -> list[str]:
    lo, hi = parse_bytes(p.min_th) / 1e3, parse_bytes(p.max_th) / 1e3

    def queue_panel(ax, res: Results, title: str) -> None:
        q = res.queue[res.queue["link_name"] == BOTTLENECK]
        a = series(res, "avg_queue")
        ax.step(q["time_s"], q["bytes"] / 1e3, where="post", lw=0.4, color="tab:blue", label="queue")
        ax.plot(a["time_s"], a["value"] / 1e3, lw=1.2, color="tab:red", label="average")
        for th in (lo, hi):
            ax.axhline(th, ls="--", lw=0.8, color="gray")
        ax.set(ylabel="KB", title=title)
        ax.grid(alpha=0.3)

    figures = Figures(out, dpi=110)
    with figures.new("queue_static.png", len(static), 1, figsize=(9, 2.2 * len(static)), sharex=True) as (fig, axes):
        for ax, ((policy, n, buffer), res) in zip(axes, static.items()):
            queue_panel(ax, res, f"{policy} (max_p {POLICIES[policy]['max_p']}), {n} sources, {buffer} buffer")
        axes[0].legend(fontsize="small", loc="upper right")
        axes[-1].set_xlabel("time (s)")

    size = (12, 2.4 * len(varying))
    with figures.new("adaptive_queue_and_max_p.png", len(varying), 2, figsize=size, sharex=True) as (fig, axes):
        for row, (policy, res) in zip(axes, varying.items()):
            title = f"{policy}: queue, {p.low_sources} -> {p.high_sources} -> {p.low_sources} sources"
            queue_panel(row[0], res, title)
            mp = series(res, "max_p")
            t = np.append(mp["time_s"].to_numpy(), 3 * p.phase_s)
            row[1].step(t, np.append(mp["value"].to_numpy(), mp["value"].iloc[-1]), where="post", color="tab:green")
            row[1].set(ylabel="max_p", yscale="log", title=f"{policy}: max_p")
            row[1].grid(alpha=0.3)
            for ax in row:
                for k in (1, 2):
                    ax.axvline(k * p.phase_s, color="black", lw=0.6, ls=":")
        for ax in axes[-1]:
            ax.set_xlabel("time (s)")

    with figures.new("loss_model.png", figsize=(6.5, 5)) as (fig, ax):
        df = pd.DataFrame(model["rows"])
        for (rate, delay), g in df.groupby(["rate", "delay"], sort=False):
            ax.loglog(g["x"] ** 2, g["signal_rate"], "o", label=f"{rate}, {delay}")
        xs = np.geomspace(df["x"].min() ** 2, df["x"].max() ** 2, 50)
        c = model["fit"]["signal_rate"]["C"]
        ax.loglog(xs, c**2 * xs, "k-", label=f"p = C²·x², C = {c:.2f}")
        ax.loglog(xs, MATHIS_C**2 * xs, "k:", label=f"C = sqrt(3/2) = {MATHIS_C:.2f}")
        ax.set(xlabel="(N·MSS/(L·RTT))²", ylabel="ECN window reductions per packet", title="loss model")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3, which="both")
    return figures.names


def comparison_table(cases: dict[tuple[str, int], Measured], p: Params) -> str:
    rows = [
        ("case", "Feng99 (slides)", "loss", "loss all", "forced", "util", "avg KB", "between", "below", "max_p end")
    ]
    for m in cases.values():
        rows.append(
            (
                f"{m.policy} N={m.sources} {m.buffer}",
                CLAIMS.get((m.policy, m.sources), "-")
                if not (m.policy == "conservative" and m.buffer == "120KB")
                else "120 KB partly helps",
                f"{m.drop_rate:.3%}",
                f"{m.drop_rate_whole_run:.3%}",
                f"{m.forced_drops}",
                f"{m.utilization:.3f}",
                f"{m.avg_queue_bytes / 1e3:.1f}",
                f"{m.fraction_between:.2f}",
                f"{m.fraction_below:.2f}",
                f"{m.max_p_final:.4f}",
            )
        )
    head = (
        f"feng99: ECN NewReno sources -> {p.bottleneck_rate} RED ({p.min_th}/{p.max_th}, byte mode) -> sink, "
        f"{p.duration_s:g} s; loss, avg and max_p after {p.warmup_s:g} s ('loss all': whole run)"
    )
    return text_table(rows, head)


def varying_table(varying: dict[str, list[dict]]) -> str:
    rows = [("policy", "phase", "sources", "loss", "util", "avg KB", "between", "max_p end")]
    for policy, phases in varying.items():
        for ph in phases:
            if "phase" not in ph:
                continue
            rows.append(
                (
                    policy,
                    f"{ph['t0']:.0f}-{ph['t1']:.0f} s",
                    str(ph["sources"]),
                    f"{ph['drop_rate']:.3%}",
                    f"{ph['utilization']:.3f}",
                    f"{ph['avg_queue_bytes'] / 1e3:.1f}",
                    f"{ph['fraction_between']:.2f}",
                    f"{ph['max_p_final']:.4f}",
                )
            )
    return text_table(
        rows, "changing load (8 -> 32 -> 8 sources, 120 KB buffer); Feng99: adaptive keeps loss low at both"
    )


def model_table(model: dict) -> str:
    f = model["fit"]
    lines = [
        "loss model p = (N·MSS·C/(L·RTT))², RTT = mean measured RTT:",
        f"  ECN reductions per packet: C = {f['signal_rate']['C']:.3f}, "
        f"exponent of x {f['signal_rate']['exponent']:.2f} "
        f"(Mathis: C = {MATHIS_C:.3f}; with delayed ACKs {MATHIS_C_DELAYED_ACK:.3f}; exponent 2)",
        f"  CE marks per packet:       C = {f['mark_rate']['C']:.3f}, exponent of x {f['mark_rate']['exponent']:.2f} "
        "(several marks per window count once)",
    ]
    for e in f["n_exponents"]:
        lines.append(f"  {e['rate']}, {e['delay']}: reductions per packet grow as N^{e['exponent']:.2f}")
    return "\n".join(lines)


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = Params(seed=seed)
    if quick:
        p = dataclasses.replace(p, duration_s=30.0, warmup_s=10.0, phase_s=12.0, sweep_duration_s=30.0)
    out = output_folder(out)
    static, by_policy, model_rows = run_grid(
        [case_run(p, *case) for case in CASES],
        [varying_run(p, policy) for policy in POLICIES],
        loss_model_runs(p, quick),
    )
    shown = {case: res for case, res in zip(CASES, static) if case[0] in PLOTTED}
    cases = {}
    for (policy, n, buffer), kept in zip(CASES, static):
        key = (policy, n) if buffer != "120KB" or policy in ("feng", "floyd") else (policy, n, buffer)
        cases[key] = measure_case(kept, p, policy, n, buffer) if policy in PLOTTED else kept
    varying_runs = dict(zip(POLICIES, by_policy))
    varying = {policy: varying_phases(res, p) for policy, res in varying_runs.items()}
    varying_runs["feng"].save(out / "varying_feng", plots=False)
    model = loss_model(model_rows)
    plots = plot(out, shown, varying_runs, model, p)
    return report(
        out,
        NAME,
        criteria(cases, model),
        [comparison_table(cases, p), varying_table(varying), model_table(model)],
        seed=p.seed,
        parameters=dataclasses.asdict(p) | {"policies": POLICIES, "cases": CASES},
        quick=quick,
        measured={f"{m.policy}-{m.sources}-{m.buffer}": dataclasses.asdict(m) for m in cases.values()},
        varying=varying,
        loss_model=model,
        plots=plots,
    )
