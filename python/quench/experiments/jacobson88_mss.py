"""jacobson88-mss — a study of the question V. Jacobson left open in "Re: Thinking about
Congestion" (to J. Crowcroft, 18 Jan 1988): the optimum segment size for a loss probability p.

"You lose more on an error with the large mss so for any given error rate there's an optimum
that balances the efficiency gain against the higher loss. [...] it's a simple function of the
network's max packet size and p [...] if the network packet size was reasonable (i.e., the
protocol header was <10% of the max packet size), it almost never paid to fragment." The
closed form is derived in docs/reproductions.md#jacobson88-mss; this study checks it against
a sweep of MSS and p on the email's fragmenting SATNET path, with the ACKs on a separate path
and on the echo path, where they take packet slots of the same bottleneck.

The model: the bottleneck passes a fixed number of packets per second (the email: "the queue
limit sets an upper bound on total packets/sec"); a segment of m user bytes travels as
k(m) fragments (docs/reproductions.md#jacobson88), each lost independently with probability p,
and is lost when any fragment is. User bytes delivered per packet slot:

    direct path:  eta(m) = m (1 - p)^k / k
    echo path:    eta(m) = m (1 - p)^k / (k + c (1 - p)^k)   (c ACKs per segment that arrives)

What we chose (each a field of `Params`):
- The path is jacobson88's: 250-byte MTU with the email's unaligned fragmentation, 64 kb/s, a
  limit of 9.1 packets/s (the email's figures imply it), 0.3 s one way; the fragment loss is
  Bernoulli on the SATNET hop out of the gateway (on the echo path ACKs cross it too and are
  lost alike). The queue before it holds 1000 packets, so loss comes only from p.
- TCP: NewReno with SACK, a 64 KB window, an ACK for every segment (c = 1; no delayed ACKs),
  an unlimited transfer for a fixed time. The measured efficiency is unique user bytes
  delivered over packets sent on the lossy hop (lost ones included): it does not depend on
  how long TCP's recovery idles the link, which the model leaves out; the goodput (bytes/s),
  which does, is recorded beside it.
- MSS at the teeth's right edges, m = k (MTU - 20) - 20 (the email's 210 + 230 n), k = 1..10;
  p in {0, 1 %, 3 %, 10 %}. Not varied: the MTU (the closed form is tabulated for others), the
  controller, the window, the packet rate.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from quench.experiments import jacobson88
from quench.experiments.common import Criterion, Figures, Run, output_folder
from quench.experiments.study import (
    SeededGrid,
    compare,
    fmt_ci,
    mean_ci,
    result_table,
    run_seeded,
    seed_records,
    seeds_from,
    study_report,
)
from quench.network import Network, droptail
from quench.results import Results

NAME = "jacobson88-mss"
# The TCP this experiment was written for: the plain RFC sender, on which its controllers and
# timers are set explicitly (tcp.profile; the engine's default is Linux's).
TCP_PROFILE = "rfc"
# The source and the question, as the report shows them.
SOURCE = 'V. Jacobson to J. Crowcroft, "Re: Thinking about Congestion", end2end-interest, 18 Jan 1988'
QUESTION = (
    "Study, not a reproduction: \"for any given error rate there's an optimum [MSS] ... a simple "
    "function of the network's max packet size and p\" (the derivation is lost). The closed form is "
    "derived in docs/reproductions.md#jacobson88-mss and checked here against a sweep of MSS and p, "
    "direct and echo path."
)
BOTTLENECK = jacobson88.BOTTLENECK
IP_HEADER = jacobson88.IP_HEADER
# The TCP header a first fragment carries beside the IP header (RFC 793 without options).
TCP_HEADER = jacobson88.TCP_IP_HEADERS - jacobson88.IP_HEADER
# The lossless case must match the model to this (relative). The model counts no packet
# that delivers nothing new; the handshake, and the start-up's timeouts (one or two per run,
# each resending up to a window), are such packets: 1.3 % at MSS 1820 in quick mode.
LOSSLESS_TOL = 0.02
# The fragments lost over the fragments sent must be p to this (relative): about 1000 to 5000
# fragments per run, so the binomial relative deviation at p = 0.01 is about 0.15.
LOSS_DRAW_TOL = 0.25
# The analytic table: MTUs (SATNET's 250, RFC 791's 576 minimum, Ethernet's 1500) and losses.
TABLE_MTUS = (250, 576, 1500)
TABLE_LOSSES = (0.001, 0.01, 0.03, 0.1)
# The largest k the discrete optimum searches (far past any optimum of the table).
K_SEARCH = 1000


@dataclass
class Params:
    mtu: int = 250
    satnet_rate: str = "64kbps"
    satnet_delay_s: float = 0.3
    packet_rate: float = jacobson88.DATA_PACKETS_PER_S
    lan_rate: str = "10Mbps"
    queue_packets: int = 1000
    # The window in segments (jacobson88's lossy runs use 8): a few slots beyond the path's
    # 9.1 packets/s x 0.6 s, so the queue stays short and the run's end leaves few ACKs queued.
    window_segments: int = 8
    # The LAN links' MTU: above the largest MSS, so only SATNET fragments.
    lan_mtu: int = 9000
    losses: tuple[float, ...] = (0.0, 0.01, 0.03, 0.1)
    fragments: tuple[int, ...] = tuple(range(1, 11))
    duration_s: float = 600.0
    seeds: int = 5
    acks_per_segment: float = 1.0
    tcp: dict = field(default_factory=lambda: {"cc": "newreno", "sack": True, "delayed_ack": {"enabled": False}})


def quick_params() -> Params:
    return Params(losses=(0.0, 0.03, 0.1), fragments=(1, 2, 3, 4, 6, 8), duration_s=300.0, seeds=3)


# ---------------------------------------------------------------------------------------
# The closed form.


def payload_per_fragment(mtu: int) -> int:
    """s: user bytes a fragment after the first carries (the first carries s - TCP_HEADER)."""
    return mtu - IP_HEADER


def mss_of(k: int, mtu: int) -> int:
    """The largest MSS that travels in k fragments: k s - T (the email's 210 + 230 n)."""
    return k * payload_per_fragment(mtu) - TCP_HEADER


def efficiency(mss: int, mtu: int, p: float, acks: float = 0.0) -> float:
    """User bytes delivered per packet slot: m q^k / (k + acks q^k), q = 1 - p."""
    k = jacobson88.fragments_per_segment(mss, mtu)
    q = (1.0 - p) ** k
    return mss * q / (k + acks * q)


def best_k(mtu: int, p: float, acks: float = 0.0) -> int:
    """The number of fragments of the best MSS (each k's best MSS is its tooth's edge)."""
    return max(range(1, K_SEARCH + 1), key=lambda k: efficiency(mss_of(k, mtu), mtu, p, acks))


def k_continuous(mtu: int, p: float, acks: float = 0.0) -> float:
    """The stationary point of the efficiency in k, to first order in L = -ln(1 - p): the
    root of s L k^2 - 2 L T k - (c s + T) = 0 (direct path: c = 0, k ~ sqrt(T / (s p)); echo
    path with one ACK per segment: k ~ sqrt((s + T) / (s p)))."""
    if p <= 0:
        return math.inf
    s, t, lam = payload_per_fragment(mtu), TCP_HEADER, -math.log1p(-p)
    return (lam * t + math.sqrt((lam * t) ** 2 + s * lam * (acks * s + t))) / (s * lam)


def fragmenting_pays_below(mtu: int) -> float:
    """The loss below which two fragments beat one (direct path): p < T / (2 s - T); the most
    fragmenting can ever gain is T / (s - T) (as k grows, at p = 0)."""
    s = payload_per_fragment(mtu)
    return TCP_HEADER / (2 * s - TCP_HEADER)


def analytic_table() -> list[dict]:
    rows = []
    for mtu in TABLE_MTUS:
        s = payload_per_fragment(mtu)
        for p in TABLE_LOSSES:
            for path, acks in (("direct", 0.0), ("echo", 1.0)):
                k = best_k(mtu, p, acks)
                rows.append(
                    {
                        "mtu": mtu,
                        "loss": p,
                        "path": path,
                        "best_k": k,
                        "best_mss": mss_of(k, mtu),
                        "k_continuous": k_continuous(mtu, p, acks),
                        "gain_over_one_packet": efficiency(mss_of(k, mtu), mtu, p, acks)
                        / efficiency(mss_of(1, mtu), mtu, p, acks)
                        - 1,
                        "header_fraction": TCP_HEADER / (s + IP_HEADER),
                    }
                )
    return rows


# ---------------------------------------------------------------------------------------
# The sweep.


def network(p: Params, mss: int, loss: float, echo: bool, seed: int) -> Network:
    net = Network(tcp_profile=TCP_PROFILE, seed=seed, name=f"{NAME}-mss{mss}-p{loss:g}-{'echo' if echo else 'direct'}")
    net.hosts("ucl", "ucl_sink").routers("gw", "echo", "gw_back")
    satnet = dict(
        rate=p.satnet_rate,
        delay=p.satnet_delay_s,
        mtu=f"{p.mtu}B",
        packet_rate=p.packet_rate,
        fragmentation="unaligned",
        duplex=False,
    )
    lan = dict(rate=p.lan_rate, delay="1ms", duplex=False, mtu=f"{p.lan_mtu}B")
    net.link("ucl", "gw", **lan)
    net.link("gw", "echo", qdisc=droptail(f"{p.queue_packets}p"), loss=loss, **satnet)
    net.link("echo", "gw_back", qdisc=droptail(f"{p.queue_packets}p"), **satnet)
    net.link("gw_back", "ucl_sink", **lan)
    if echo:
        net.link("ucl_sink", "gw", **lan)
        net.link("gw_back", "ucl", **lan)
    else:
        # The same satellite delay back, through no shared queue and no loss.
        net.routers("ret")
        net.link("ucl_sink", "ret", rate=p.satnet_rate, delay=2 * p.satnet_delay_s, duplex=False)
        net.link("ret", "ucl", **lan)
    window = p.window_segments * mss
    net.tcp("ucl", "ucl_sink", name=f"mss{mss}", mss=mss, send_buffer=window, receive_window=window, **p.tcp)
    net.record(cwnd=False, queues=False, drops=False)
    return net


def measure(res: Results) -> dict:
    f = res.flows.iloc[0]
    link = res.link(BOTTLENECK)
    slots = int(link["departed_packets"])
    delivered = int(f["bytes_delivered"])
    return {
        "efficiency": delivered / slots if slots else math.nan,
        "goodput_Bps": float(f["goodput_bps"]) / 8,
        "slots": slots,
        "fragment_loss": float(link["drops_link_loss"]) / slots if slots else math.nan,
        "timeouts": int(f["timeouts"]),
        "retransmitted_segments": int(f["retransmitted_segments"]),
    }


def sweep_keys(p: Params) -> list[tuple[bool, float, int]]:
    return [(echo, loss, k) for echo in (False, True) for loss in p.losses for k in p.fragments]


def sweep_run(p: Params, echo: bool, loss: float, k: int, seed: int) -> Run:
    return Run.of(network(p, mss_of(k, p.mtu), loss, echo, seed), p.duration_s, measure)


def analyse(p: Params, rows: dict[tuple[bool, float, int], list[dict]]) -> dict:
    points, optima = [], []
    for echo in (False, True):
        acks = p.acks_per_segment if echo else 0.0
        for loss in p.losses:
            at = {}
            for k in p.fragments:
                runs = rows[(echo, loss, k)]
                mss = mss_of(k, p.mtu)
                model = efficiency(mss, p.mtu, loss, acks)
                eff, good = mean_ci(r["efficiency"] for r in runs), mean_ci(r["goodput_Bps"] for r in runs)
                at[k] = runs
                points.append(
                    {
                        "path": "echo" if echo else "direct",
                        "loss": loss,
                        "k": k,
                        "mss": mss,
                        "model": model,
                        "efficiency": eff,
                        "relative_error": eff["mean"] / model - 1,
                        "goodput_Bps": good,
                        "fragment_loss": mean_ci(r["fragment_loss"] for r in runs),
                        "timeouts": mean_ci(r["timeouts"] for r in runs),
                    }
                )
            # The model's optimum within the swept k, the sweep's, and the paired test of the
            # sweep's best against each neighbour.
            swept_model = max(p.fragments, key=lambda k: efficiency(mss_of(k, p.mtu), p.mtu, loss, acks))
            means = {k: float(np.mean([r["efficiency"] for r in at[k]])) for k in p.fragments}
            swept_best = max(p.fragments, key=lambda k: means[k])
            goodputs = {k: float(np.mean([r["goodput_Bps"] for r in at[k]])) for k in p.fragments}
            neighbours = []
            i = p.fragments.index(swept_best)
            for j in (i - 1, i + 1):
                if 0 <= j < len(p.fragments):
                    other = p.fragments[j]
                    c = compare([r["efficiency"] for r in at[swept_best]], [r["efficiency"] for r in at[other]])
                    neighbours.append({"k": other, **c})
            optima.append(
                {
                    "path": "echo" if echo else "direct",
                    "loss": loss,
                    "model_best_k": best_k(p.mtu, loss, acks),
                    "model_best_k_swept": swept_model,
                    "sweep_best_k": swept_best,
                    "sweep_best_mss": mss_of(swept_best, p.mtu),
                    "best_vs_neighbours": neighbours,
                    "goodput_best_k": max(p.fragments, key=lambda k: goodputs[k]),
                    "k_continuous": k_continuous(p.mtu, loss, acks),
                }
            )
    return {"points": points, "optima": optima}


def criteria(a: dict, p: Params) -> list[Criterion]:
    """Checks of the set-up, not of the answer: without loss the model is exact arithmetic,
    and the drawn fragment loss is p."""
    lossless = [pt for pt in a["points"] if pt["loss"] == 0]
    worst = max((abs(pt["relative_error"]) for pt in lossless), default=math.nan)
    loss_err = max(abs(pt["fragment_loss"]["mean"] / pt["loss"] - 1) for pt in a["points"] if pt["loss"] > 0)
    return [
        Criterion.at_most("p = 0: largest |efficiency / model - 1|", LOSSLESS_TOL, worst, "m / k, m / (k + 1)"),
        Criterion.at_most("measured fragment loss: largest |rate / p - 1|", LOSS_DRAW_TOL, loss_err, "p"),
    ]


def conclusion(a: dict, p: Params) -> str:
    parts = []
    for o in a["optima"]:
        if o["loss"] == 0:
            continue
        sep = [f"k={n['k']} {n['verdict'].replace('higher', 'below it')}" for n in o["best_vs_neighbours"]]
        agree = "agrees" if o["sweep_best_k"] == o["model_best_k_swept"] else "differs"
        parts.append(
            f"{o['path']}, p = {o['loss']:g}: model best MSS {mss_of(o['model_best_k_swept'], p.mtu)} "
            f"(k = {o['model_best_k_swept']}), sweep best {o['sweep_best_mss']} ({agree}; against neighbours: "
            f"{', '.join(sep) or '-'}); goodput best k = {o['goodput_best_k']}"
        )
    lossy = [pt for pt in a["points"] if pt["loss"] > 0]
    worst = max(lossy, key=lambda pt: abs(pt["relative_error"]))
    mean_err = float(np.mean([pt["relative_error"] for pt in lossy]))
    return (
        "Efficiency (user bytes per packet slot) against the closed form: "
        + "; ".join(parts)
        + f". Lossy points: mean error {mean_err:+.1%}, worst {worst['relative_error']:+.1%} "
        f"({worst['path']}, p = {worst['loss']:g}, k = {worst['k']}, {worst['timeouts']['mean']:.1f} timeouts a run; "
        "the model counts no timeout)."
    )


def tables(a: dict, analytic: list[dict], p: Params) -> list[dict]:
    rows = [
        [
            pt["path"],
            f"{pt['loss']:g}",
            pt["k"],
            pt["mss"],
            f"{pt['model']:.1f}",
            fmt_ci(pt["efficiency"], 1),
            f"{pt['relative_error']:+.1%}",
            fmt_ci(pt["goodput_Bps"], 0),
            fmt_ci(pt["timeouts"], 1),
        ]
        for pt in a["points"]
    ]
    t1 = result_table(
        f"user bytes per packet slot, MTU {p.mtu}: model vs quench (mean ± 95 % CI over {p.seeds} seeds, "
        f"{p.duration_s:g} s each)",
        ["path", "p", "k", "MSS", "model", "quench", "error", "goodput B/s", "timeouts"],
        rows,
    )
    t2 = result_table(
        "optimum MSS (k fragments): model (all k; within the sweep) vs sweep (efficiency; goodput)",
        ["path", "p", "model k*", "k (continuous)", "model k* swept", "sweep k*", "vs neighbours", "goodput k*"],
        [
            [
                o["path"],
                f"{o['loss']:g}",
                o["model_best_k"],
                f"{o['k_continuous']:.2f}",
                o["model_best_k_swept"],
                o["sweep_best_k"],
                ", ".join(f"{n['k']}: {n['verdict']}" for n in o["best_vs_neighbours"]),
                o["goodput_best_k"],
            ]
            for o in a["optima"]
        ],
    )
    t3 = result_table(
        "the closed form elsewhere: best MSS by MTU and p (gain over one unfragmented packet)",
        ["MTU", "p", "path", "best k", "best MSS", "k (continuous)", "gain"],
        [
            [
                r["mtu"],
                f"{r['loss']:g}",
                r["path"],
                r["best_k"],
                r["best_mss"],
                f"{r['k_continuous']:.2f}",
                f"{r['gain_over_one_packet']:+.2%}",
            ]
            for r in analytic
        ],
    )
    return [t1, t2, t3]


def plot(out: Path, a: dict, p: Params) -> list[str]:
    figures = Figures(out, dpi=110)
    with figures.new("mss_efficiency.png", 1, 2, figsize=(12, 4.2), sharey=False) as (fig, axes):
        for ax, path in zip(axes, ("direct", "echo")):
            acks = p.acks_per_segment if path == "echo" else 0.0
            fine = np.arange(150, mss_of(max(p.fragments), p.mtu) + 1, 2)
            for i, loss in enumerate(p.losses):
                color = f"C{i}"
                ax.plot(
                    fine,
                    [efficiency(int(m), p.mtu, loss, acks) for m in fine],
                    color=color,
                    lw=0.8,
                    label=f"model, p = {loss:g}",
                )
                pts = [pt for pt in a["points"] if pt["path"] == path and pt["loss"] == loss]
                ax.errorbar(
                    [pt["mss"] for pt in pts],
                    [pt["efficiency"]["mean"] for pt in pts],
                    yerr=[np.nan_to_num(pt["efficiency"]["half"]) for pt in pts],
                    fmt="o",
                    color=color,
                    ms=4,
                    capsize=2,
                )
            ax.plot([], [], "ko", ms=4, label="quench (mean ± 95 % CI)")
            ax.set(
                xlabel="MSS (bytes)",
                ylabel="user bytes per packet slot",
                title=f"{path} path{' (ACKs share the bottleneck)' if path == 'echo' else ''}, MTU {p.mtu}",
            )
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize="x-small")
    with figures.new("mss_optimum.png", figsize=(7, 4.2)) as (fig, ax):
        ps = np.geomspace(1e-3, 0.3, 60)
        for path, acks, style in (("direct", 0.0, "-"), ("echo", 1.0, "--")):
            ax.plot(
                ps, [mss_of(best_k(p.mtu, x, acks), p.mtu) for x in ps], style, color="tab:blue", label=f"model, {path}"
            )
            ax.plot(
                ps,
                [k_continuous(p.mtu, x, acks) * payload_per_fragment(p.mtu) - TCP_HEADER for x in ps],
                style,
                color="tab:gray",
                lw=0.8,
                label=f"continuous k s - T, {path}",
            )
            opt = [o for o in a["optima"] if o["path"] == path and o["loss"] > 0]
            ax.plot(
                [o["loss"] for o in opt],
                [o["sweep_best_mss"] for o in opt],
                "o" if path == "direct" else "s",
                color="tab:red",
                label=f"quench sweep, {path}",
            )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="fragment loss probability p",
            ylabel="best MSS (bytes)",
            title=f"loss-optimal MSS, MTU {p.mtu}",
        )
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize="x-small")
    return figures.names


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = quick_params() if quick else Params()
    out = output_folder(out)
    seeds = seeds_from(seed, p.seeds)
    keys = sweep_keys(p)
    (rows,) = run_seeded(SeededGrid(keys, seeds, lambda key, s: sweep_run(p, *key, s)))
    a = analyse(p, rows)
    analytic = analytic_table()
    result_tables = tables(a, analytic, p)
    plots = plot(out, a, p)
    return study_report(
        out,
        NAME,
        criteria(a, p),
        result_tables,
        seed=seed,
        parameters={**dataclasses.asdict(p), "seeds": seeds},
        quick=quick,
        source=SOURCE,
        claim=QUESTION,
        conclusion=conclusion(a, p),
        scope=(
            "Varied: MSS (teeth edges k = 1..10), p, the path (ACKs apart or through the bottleneck), the seed "
            "(the loss draws). Fixed: MTU 250 with unaligned fragments, 9.1 packets/s, NewReno with SACK, one "
            "ACK per segment, a 64 KB window."
        ),
        runs=seed_records(
            {("echo" if e else "direct", loss, k): runs for (e, loss, k), runs in rows.items()},
            seeds,
            ("path", "loss", "k"),
        ),
        statistics=a,
        analytic=analytic,
        plots=plots,
    )
