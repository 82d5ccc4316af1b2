"""edge — congestion controllers on links that change (docs/reproductions.md, "edge").

Not a seed experiment: the controllers evaluated on today's edge links, on the paths those
evaluations use, with criteria stated as the papers' claims and computed from the recorded runs.

Paths (a -> r1 -> r2 -> b, the bottleneck r1->r2, 1 ms access links):
- `fixed`: 12 Mb/s, 20 ms one way, a deep drop-tail buffer of 250 packets (bufferbloat);
- `shallow`: the same with a quarter of a BDP of buffer (10 packets);
- `variable-<level>`: a cellular link whose delivery opportunities are drawn from Sprout's model
  (Winstein et al., NSDI 2013, section 3.1; `quench.traces.sprout_trace`) at three levels of
  variability σ (25, 100 and 200 packets/s per √s, the last the paper's), pulled back to a mean
  of 6 Mb/s (`REVERSION_PER_S`, our addition), 250 packets of buffer;
- `satellite`: 20 Mb/s whose one-way delay changes at every 15 s handover among 270, 300 and
  285 ms (a LEO/GEO-style path in one line of schedule), 1000 packets of buffer;
- `bursty`: the fixed path with Gilbert-Elliott loss on the bottleneck (p = 0.005, r = 0.5:
  about 1 % of packets, in bursts of 2 on average).

Controllers (each a flow of the linux profile, pinned) over drop-tail: CUBIC, BBR v1, BBRv3,
Copa, PCC Vivace, Vegas, and LEDBAT beside a CUBIC flow (the scavenger is judged beside what it
should yield to); CUBIC, BBR and Copa again over FQ-CoDel; Prague over DualPI2 (L4S), with CUBIC
over DualPI2 as its classic neighbour's baseline. The figure researchers read is Pantheon's:
each controller's throughput against its 95th-percentile delay, per path. Here the delay is the
flow's RTT samples' 95th percentile (RTT, not Pantheon's one-way delay: quench records RTT
per ACK; the forward queue dominates both on these paths, whose reverse direction never queues).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from quench.experiments.common import Criterion, Figures, Run, report, run_grid, text_table
from quench.network import Network, droptail, dualpi2, fq_codel
from quench.results import Results
from quench.traces import sprout_trace

NAME = "edge"
TCP_PROFILE = "linux"
# Configurations: name -> (controller, discipline); "ledbat" runs a CUBIC flow beside it.
CONFIGS = {
    "cubic": ("cubic", "droptail"),
    "bbr": ("bbr", "droptail"),
    "bbr3": ("bbr3", "droptail"),
    "copa": ("copa", "droptail"),
    "vivace": ("vivace", "droptail"),
    "vegas": ("vegas", "droptail"),
    "ledbat": ("ledbat", "droptail"),
    "cubic_fq_codel": ("cubic", "fq_codel"),
    "bbr_fq_codel": ("bbr", "fq_codel"),
    "copa_fq_codel": ("copa", "fq_codel"),
    "prague_dualpi2": ("prague", "dualpi2"),
    "cubic_dualpi2": ("cubic", "dualpi2"),
}
# Sprout's variability levels: σ of the rate's Brownian motion, packets/s per √s.
VARIABILITY = {"calm": 25.0, "moderate": 100.0, "wild": 200.0}
# The pull of the variable links' rate back to their mean (1/s), and that mean (packets/s, of
# 1504 bytes: 6 Mb/s): our addition to Sprout's model, so that the three levels share a mean
# rate and differ in variability (stationary deviations of 25, 100 and 200 packets/s); without
# it a Brownian rate's mean over a minute depends on the seed more than on σ. At σ = 200 the
# rate still reaches 0 often, and the model's outages hold it there until they end (at 1/s).
REVERSION_PER_S = 0.5
MEAN_PPS = 500.0
# Criteria's bounds.
COPA_QUEUE_PER_DELTA = 2.5  # Copa's standing queue at most 2.5/δ packets (the model's 1/δ, with its oscillation)
LEDBAT_SHARE = 0.5  # LEDBAT's share of the goodput beside CUBIC below the fair share (it yields)
DELAY_RATIO = 2.0  # CUBIC's p95 RTT at least twice Copa's on a variable link over a deep buffer
L4S_RATIO = 0.5  # Prague over DualPI2: p95 RTT at most half CUBIC's over the deep drop-tail


@dataclass
class Params:
    seed: int = 1
    rate: str = "12Mbps"
    one_way: str = "20ms"
    deep_buffer: int = 250
    shallow_buffer: int = 10
    levels: tuple[str, ...] = ("calm", "moderate", "wild")
    satellite_rate: str = "20Mbps"
    satellite_delays: tuple[str, ...] = ("270ms", "300ms", "285ms")
    handover_s: float = 15.0
    satellite_buffer: int = 1000
    loss_p: float = 0.005
    loss_r: float = 0.5
    duration_s: float = 60.0
    satellite_duration_s: float = 60.0
    # Copa's δ (its default): the standing queue the model keeps is 1/δ packets.
    copa_delta: float = 0.5


def quick_params(seed: int) -> Params:
    # The full runs' durations (LEDBAT yields over tens of seconds: see docs/reproductions.md#edge),
    # one variability level.
    return Params(seed=seed, levels=("moderate",))


def paths(p: Params) -> list[str]:
    return ["fixed", "shallow", *(f"variable-{lv}" for lv in p.levels), "satellite", "bursty"]


def qdisc(kind: str, buffer: int) -> dict:
    if kind == "fq_codel":
        return fq_codel()
    if kind == "dualpi2":
        return dualpi2(limit=f"{buffer}p")
    return droptail(f"{buffer}p")


def bottleneck(p: Params, path: str, kind: str) -> dict:
    """The bottleneck link's keywords for `Network.link`."""
    if path == "satellite":
        # Each handover moves to the next delay of the list, cycling.
        delays = [*p.satellite_delays[1:], p.satellite_delays[0]]
        schedule = [{"at": f"{p.handover_s}s", "every": f"{p.handover_s}s", "delay": delays}]
        buffer = qdisc(kind, p.satellite_buffer)
        return {"rate": p.satellite_rate, "delay": p.satellite_delays[0], "qdisc": buffer, "schedule": schedule}
    buffer = p.shallow_buffer if path == "shallow" else p.deep_buffer
    out: dict = {"rate": p.rate, "delay": p.one_way, "qdisc": qdisc(kind, buffer)}
    if path.startswith("variable-"):
        sigma = VARIABILITY[path.removeprefix("variable-")]
        out["capacity"] = {"opportunities_ms": trace(p, sigma), "source": f"sprout sigma={sigma:g} seed={p.seed}"}
    if path == "bursty":
        out["loss"] = {"model": "gilbert-elliott", "p": p.loss_p, "r": p.loss_r}
    return out


@functools.cache
def trace_cached(duration_s: float, seed: int, sigma: float) -> tuple[int, ...]:
    pull = {"start_pps": MEAN_PPS, "mean_pps": MEAN_PPS, "reversion_per_s": REVERSION_PER_S}
    return tuple(sprout_trace(duration_s, seed=seed, sigma_pps=sigma, **pull))


def trace(p: Params, sigma: float) -> list[int]:
    """The variable link's opportunities: Sprout's model over the run, seeded by the experiment."""
    return list(trace_cached(p.duration_s, p.seed, sigma))


def network(p: Params, path: str, config: str) -> Network:
    cc, kind = CONFIGS[config]
    net = Network(seed=p.seed, name=f"{NAME}-{path}-{config}", tcp_profile=TCP_PROFILE)
    net.hosts("a", "b").routers("r1", "r2")
    net.link("a", "r1", "1Gbps", "1ms")
    net.link("r1", "r2", **bottleneck(p, path, kind))
    net.link("r2", "b", "1Gbps", "1ms")
    net.tcp("a", "b", cc=cc, name=config)
    if config == "ledbat":
        net.tcp("a", "b", cc="cubic", name="cubic_beside")
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=True, segments=False)
    return net


def flow_figures(res: Results) -> dict:
    """Per flow: goodput, p95 and median RTT, retransmissions per segment sent; the bottleneck's
    mean queue."""
    rtt = res.tables["rtt"]
    out: dict = {}
    for _, row in res.flows.iterrows():
        samples = rtt.loc[rtt["flow"] == row["flow"], "rtt_s"].to_numpy(dtype=float)
        sent = max(1, int(row["packets_sent"]))
        out[str(row["name"])] = {
            "goodput_bps": float(row["goodput_bps"]),
            "p95_rtt_s": float(np.percentile(samples, 95)) if len(samples) else math.nan,
            "p50_rtt_s": float(np.percentile(samples, 50)) if len(samples) else math.nan,
            "retransmit_share": int(row["retransmitted_segments"]) / sent,
        }
    link = res.links.set_index("name").loc["r1->r2"]
    out["_bottleneck"] = {"mean_backlog_packets": float(link["mean_backlog_packets"])}
    return out


def duration(p: Params, path: str) -> float:
    return p.satellite_duration_s if path == "satellite" else p.duration_s


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = quick_params(seed) if quick else Params(seed=seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    grid = [(path, c) for path in paths(p) for c in CONFIGS]
    (done,) = run_grid([Run.of(network(p, path, c), duration(p, path), flow_figures) for path, c in grid])
    measured: dict = {path: {} for path in paths(p)}
    for (path, c), figures in zip(grid, done):
        measured[path][c] = figures
    plots = plot(out, p, measured)
    return report(
        out,
        NAME,
        criteria(p, measured),
        tables(p, measured),
        seed=p.seed,
        parameters=dataclasses.asdict(p),
        quick=quick,
        measured=measured,
        plots=plots,
    )


def main_flow(measured: dict, path: str, config: str) -> dict:
    return measured[path][config][config]


def criteria(p: Params, m: dict) -> list[Criterion]:
    copa_queue = m["fixed"]["copa"]["_bottleneck"]["mean_backlog_packets"]
    ledbat = m["fixed"]["ledbat"]
    share = ledbat["ledbat"]["goodput_bps"] / (ledbat["ledbat"]["goodput_bps"] + ledbat["cubic_beside"]["goodput_bps"])
    level = "variable-moderate" if "moderate" in p.levels else f"variable-{p.levels[0]}"
    out = [
        Criterion.at_most(
            "fixed path, deep drop-tail: Copa's mean queue (packets)",
            COPA_QUEUE_PER_DELTA / p.copa_delta,
            copa_queue,
            source=f"1/δ = {1 / p.copa_delta:g} packets (Arun & Balakrishnan 2018)",
        ),
        Criterion.at_most(
            "fixed path, deep drop-tail: LEDBAT's share of the goodput beside CUBIC",
            LEDBAT_SHARE,
            share,
            source="yields to standard TCP (RFC 6817)",
        ),
        Criterion.at_most(
            "shallow buffer (0.25 BDP): BBRv3's retransmitted share / BBR v1's",
            1.0,
            main_flow(m, "shallow", "bbr3")["retransmit_share"] / main_flow(m, "shallow", "bbr")["retransmit_share"],
            source="less loss than v1 in shallow buffers (draft-ietf-ccwg-bbr)",
        ),
        Criterion.at_least(
            f"{level}, deep drop-tail: CUBIC's p95 RTT / Copa's",
            DELAY_RATIO,
            main_flow(m, level, "cubic")["p95_rtt_s"] / main_flow(m, level, "copa")["p95_rtt_s"],
            source="buffer-filling TCP's delay on cellular links (Winstein et al. 2013)",
        ),
        Criterion.at_least(
            "bursty loss: Vivace's goodput / CUBIC's",
            1.0,
            main_flow(m, "bursty", "vivace")["goodput_bps"] / main_flow(m, "bursty", "cubic")["goodput_bps"],
            source="robust to random loss (Dong et al. 2018)",
        ),
        Criterion.at_most(
            "fixed path: Prague over DualPI2's p95 RTT / CUBIC's over deep drop-tail",
            L4S_RATIO,
            main_flow(m, "fixed", "prague_dualpi2")["p95_rtt_s"] / main_flow(m, "fixed", "cubic")["p95_rtt_s"],
            source="L4S: low queuing delay (RFC 9330)",
        ),
    ]
    return out


def tables(p: Params, m: dict) -> list[str]:
    out = []
    for path in paths(p):
        rows = [("controller", "goodput (Mb/s)", "p50 RTT (ms)", "p95 RTT (ms)", "retransmitted")]
        for c in CONFIGS:
            f = main_flow(m, path, c)
            rows.append(
                (
                    c,
                    f"{f['goodput_bps'] / 1e6:.2f}",
                    f"{f['p50_rtt_s'] * 1e3:.0f}",
                    f"{f['p95_rtt_s'] * 1e3:.0f}",
                    f"{f['retransmit_share']:.2%}",
                )
            )
        title = f"{path}: throughput and delay (ledbat: its own flow, beside a CUBIC flow)"
        out.append(text_table(rows, title, right=[1, 2, 3, 4]))
    return out


def plot(out: Path, p: Params, m: dict) -> list[str]:
    figures = Figures(out, dpi=110)
    names = paths(p)
    cols = 3
    rows = math.ceil(len(names) / cols)
    with figures.new("throughput_delay.png", rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False) as (fig, axes):
        for ax, path in zip(axes.flat, names):
            for c in CONFIGS:
                f = main_flow(m, path, c)
                ax.scatter(f["p95_rtt_s"] * 1e3, f["goodput_bps"] / 1e6, s=18)
                ax.annotate(c, (f["p95_rtt_s"] * 1e3, f["goodput_bps"] / 1e6), fontsize=6)
            ax.set(title=path, xlabel="p95 RTT (ms)", ylabel="throughput (Mb/s)", xscale="log")
            ax.invert_xaxis()  # Pantheon's convention: better is up and to the right
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(names) :]:
            ax.axis("off")
    with figures.new("capacity.png", 1, 1, figsize=(8, 3.5)) as (fig, ax):
        for level in p.levels:
            ms = np.array(trace(p, VARIABILITY[level]))
            per_s = np.bincount(ms // 1000, minlength=int(p.duration_s))[: int(p.duration_s)]
            ax.plot(np.arange(len(per_s)), per_s * 1504 * 8 / 1e6, label=f"{level} (σ = {VARIABILITY[level]:g})")
        ax.set(xlabel="time (s)", ylabel="capacity (Mb/s)", title="Sprout-model traces, 1-s bins")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
    return figures.names
