"""wei05-pacing — a study of two open questions of D. X. Wei, S. Hegde, S. H. Low, "Burstiness
Control for High Speed Long Distance TCP", PFLDnet 2005 (slides, "Open Questions"): "Is
pacing/burstiness control too polite when competing with unpaced TCP?" and "Increase
txqueue? - only solves host problem".

A flow whose sender paces (or controls its burstiness) shares a bottleneck with an unpaced
flow of the same or another controller; its share of the goodput is compared, seed by seed,
with the share the same flow gets unpaced against the same competitor. "Too polite" is a
resolved drop in that share. Then two FAST flows on wei05's own path: host loss (the senders'
transmit queues) and router loss against txqueuelen, with and without control.

What we chose (each a field of `Params`):
- Shares: a 100 Mb/s, 100 ms bottleneck (BDP 833 packets of 1500 bytes), drop-tail buffers of
  0.1, 0.5, 1 and 2 BDP, or RED with a 1 BDP limit and the automatic thresholds and w_q of
  Floyd et al. 2001, static (max_p 0.1, ns-2's default) or adaptive, dropping (no ECN); quick
  mode runs 0.1 and 1 BDP and adaptive RED only. Each sender has its own 1 Gb/s NIC with a txqueuelen of 100
  (wei05's). SACK, MSS 1460, delayed ACKs on, 16 MB windows. Flow A (the one that may pace)
  starts at 0, its unpaced competitor B at a time drawn in the first second from the seed;
  goodput over the whole run. FAST's alpha is scaled to the path as wei05's 500 packets are to
  its 18,660-packet BDP (2.68 %): 22 packets.
- Controls: pacing (one segment every srtt/cwnd) for FAST, NewReno and CUBIC; burstiness
  control (threshold txqueuelen, X = cwnd/RTT capped at the NIC rate, as wei05) for FAST.
  Competitors: the same controller unpaced, and CUBIC for FAST and NewReno.
- txqueuelen: wei05's path with the smooth drop-tail bottleneck (622 Mb/s, 360 ms, 2000
  packets), FAST with alpha 500, two senders with their own 1 Gb/s NICs, the second starting in
  the first second; txqueuelen 100, 1000, 10000; both flows with the same control.
- Not varied: RTTs (the two flows share one), the NIC rate, more than two flows, ECN.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from quench.experiments import wei05
from quench.experiments.common import Criterion, Figures, Run, output_folder
from quench.experiments.study import (
    INCONCLUSIVE,
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
from quench.units import parse_rate

NAME = "wei05-pacing"
# The TCP this experiment was written for: the plain RFC sender, on which its controllers and
# timers are set explicitly (tcp.profile; the engine's default is Linux's).
TCP_PROFILE = "rfc"
# The source and the question, as the report shows them.
SOURCE = (
    'D. X. Wei, S. Hegde, S. H. Low, "Burstiness Control for High Speed Long Distance TCP", PFLDnet '
    '2005 (slides), "Open Questions"'
)
QUESTION = (
    'Study, not a reproduction: "Is pacing/burstiness control too polite when competing with unpaced '
    'TCP?" and "Increase txqueue? - only solves host problem". The slides leave both open.'
)
PACKET_BYTES = 1500
# wei05: alpha 500 packets on a 622 Mb/s x 360 ms path (18,660 packets of 1500 bytes).
_WEI05 = wei05.Params()
ALPHA_OVER_BDP = _WEI05.alpha / (parse_rate(_WEI05.bottleneck_rate) * _WEI05.rtt_ms / 1e3 / 8 / PACKET_BYTES)
NONE, PACING, BURSTINESS = "none", "pacing", "burstiness"
# (controller of A, its controls, competitors B)
PAIRS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("fast", (NONE, PACING, BURSTINESS), ("fast", "cubic")),
    ("newreno", (NONE, PACING), ("newreno", "cubic")),
    ("cubic", (NONE, PACING), ("cubic",)),
]
# The RED gateways: static RED with ns-2's default max_p (queue/red.cc: linterm_ = 10) and
# Floyd et al. 2001's adaptive RED, both with the automatic thresholds (docs/mechanisms.md#adaptive-red).
REDS: dict[str, dict[str, Any]] = {"red": {"adapt": "none", "max_p": 0.1}, "ared": {"adapt": "floyd2001"}}
HOST_A, HOST_B, ROUTER = "a->r", "b->r", "r->far"


@dataclass
class Params:
    rate: str = "100Mbps"
    rtt_ms: float = 100.0
    nic_rate: str = "1Gbps"
    txqueuelen: int = 100
    mss: int = 1460
    window: str = "16MB"
    buffers_bdp: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0)
    reds: tuple[str, ...] = ("red", "ared")
    red_limit_bdp: float = 1.0
    start_spread_s: float = 1.0
    duration_s: float = 60.0
    seeds: int = 5
    # txqueuelen part: wei05's path.
    txq_rate: str = "622Mbps"
    txq_rtt_ms: float = 360.0
    txq_buffer: int = 2000
    txq_alpha: float = 500.0
    txqueuelens: tuple[int, ...] = (100, 1000, 10000)
    txq_duration_s: float = 40.0
    txq_seeds: int = 5


def quick_params() -> Params:
    return Params(buffers_bdp=(0.1, 1.0), reds=("ared",), duration_s=20.0, seeds=3, txq_duration_s=20.0, txq_seeds=2)


def bdp_packets(rate: str, rtt_ms: float) -> int:
    return round(parse_rate(rate) * rtt_ms / 1e3 / 8 / PACKET_BYTES)


def gateways(p: Params) -> list[str]:
    return [f"{b:g} BDP" for b in p.buffers_bdp] + list(p.reds)


def qdisc(p: Params, gateway: str) -> dict:
    bdp = bdp_packets(p.rate, p.rtt_ms)
    if gateway in REDS:
        limit = max(1, round(p.red_limit_bdp * bdp))
        return {"kind": "red", "min_th": "auto", "max_th": "auto", "limit": f"{limit}p", **REDS[gateway]}
    return droptail(f"{max(1, round(float(gateway.split()[0]) * bdp))}p")


def tcp_params(p: Params, cc: str, control: str, txqueuelen: int, alpha: float, window: str) -> dict[str, Any]:
    t: dict[str, Any] = {"mss": p.mss, "sack": True, "send_buffer": window, "receive_window": window}
    if cc == "fast":
        t["rtt_sampling"] = "every_ack"  # FAST needs a sample per ACK
        t["cc"] = {"kind": "fast", "alpha": alpha}
    else:
        t["cc"] = cc
    if control == PACING:
        t["pacing"] = True
    elif control == BURSTINESS:
        t["burstiness_control"] = {"threshold": txqueuelen, "rate": "cwnd/rtt", "max_rate": p.nic_rate}
    return t


def two_senders(name: str, seed: int, nic: str, txqueuelen: int, rate: str, rtt_ms: float, q: dict) -> Network:
    """Senders a and b, each behind its own NIC queue, through router r over the bottleneck."""
    # As wei05: 0.1 ms on each access link, the rest of the RTT on the bottleneck.
    access_ms = 0.1
    net = Network(tcp_profile=TCP_PROFILE, seed=seed, name=name)
    net.hosts("a", "b", "rcv").routers("r", "far")
    for h in ("a", "b"):
        net.link(h, "r", nic, f"{access_ms}ms", qdisc=droptail(f"{txqueuelen}p"))
    net.link("r", "far", rate, f"{rtt_ms / 2 - 2 * access_ms:g}ms", qdisc=q)
    net.link("far", "rcv", nic, f"{access_ms}ms", qdisc=droptail("10000p"))
    net.record(queues=False, cwnd=False, rtt=False, drops=False)
    return net


def share_run(p: Params, cc: str, control: str, other: str, gateway: str, seed: int) -> Run:
    alpha = max(1, round(ALPHA_OVER_BDP * bdp_packets(p.rate, p.rtt_ms)))
    net = two_senders(
        f"{NAME}-{cc}-{control}-vs-{other}-{gateway}",
        seed,
        p.nic_rate,
        p.txqueuelen,
        p.rate,
        p.rtt_ms,
        qdisc(p, gateway),
    )
    start_b = round(random.Random(seed).uniform(0.0, p.start_spread_s), 6)
    a = tcp_params(p, cc, control, p.txqueuelen, alpha, p.window)
    b = tcp_params(p, other, NONE, p.txqueuelen, alpha, p.window)
    net.tcp("a", "rcv", name="A", start=0.0, **a)
    net.tcp("b", "rcv", name="B", start=start_b, **b)
    return Run.of(net, p.duration_s, measure)


def txq_run(p: Params, control: str, txqueuelen: int, seed: int) -> Run:
    net = two_senders(
        f"{NAME}-txqueuelen{txqueuelen}-{control}",
        seed,
        p.nic_rate,
        txqueuelen,
        p.txq_rate,
        p.txq_rtt_ms,
        droptail(f"{p.txq_buffer}p"),
    )
    start_b = round(random.Random(seed).uniform(0.0, p.start_spread_s), 6)
    t = tcp_params(p, "fast", control, txqueuelen, p.txq_alpha, "64MB")
    # wei05's receiver: delayed ACKs off.
    t["delayed_ack"] = {"enabled": False}
    net.tcp("a", "rcv", name="A", start=0.0, **t)
    net.tcp("b", "rcv", name="B", start=start_b, **t)
    return Run.of(net, p.txq_duration_s, measure)


def measure(res: Results) -> dict:
    g = res.flows.set_index("name")["goodput_bps"].astype(float)
    link = res.link(ROUTER)
    return {
        "share_a": float(g["A"] / g.sum()),
        "goodput_bps": float(g.sum()),
        "host_loss_a": int(res.link(HOST_A)["dropped_packets"]),
        "host_loss_b": int(res.link(HOST_B)["dropped_packets"]),
        "host_loss": int(res.link(HOST_A)["dropped_packets"] + res.link(HOST_B)["dropped_packets"]),
        "router_loss": int(link["dropped_packets"]),
        "utilization": float(link["utilization"]),
    }


# ---------------------------------------------------------------------------------------


def share_keys(p: Params) -> list[tuple[str, str, str, str]]:
    return [
        (cc, c, other, gw) for cc, controls, others in PAIRS for other in others for gw in gateways(p) for c in controls
    ]


def analyse(p: Params, rows: dict, txq_rows: dict) -> dict:
    cells = []
    for (cc, control, other, gw), runs in rows.items():
        cell = {
            "cc": cc,
            "control": control,
            "other": other,
            "gateway": gw,
            **{
                k: mean_ci(r[k] for r in runs)
                for k in ("share_a", "host_loss_a", "host_loss_b", "router_loss", "utilization")
            },
        }
        if control != NONE:
            base = rows[(cc, NONE, other, gw)]
            cell["share_vs_unpaced"] = compare([r["share_a"] for r in runs], [r["share_a"] for r in base])
        cells.append(cell)
    txq = []
    for (control, n), runs in txq_rows.items():
        row = {
            "control": control,
            "txqueuelen": n,
            **{k: mean_ci(r[k] for r in runs) for k in ("host_loss", "router_loss", "goodput_bps")},
        }
        if n != p.txqueuelens[0]:
            base = txq_rows[(control, p.txqueuelens[0])]
            for k in ("host_loss", "router_loss"):
                row[f"{k}_vs_{p.txqueuelens[0]}"] = compare([r[k] for r in runs], [r[k] for r in base])
        if control != NONE:
            base = txq_rows[(NONE, n)]
            for k in ("host_loss", "router_loss"):
                row[f"{k}_vs_none"] = compare([r[k] for r in runs], [r[k] for r in base])
        txq.append(row)
    return {"shares": cells, "txqueuelen": txq}


def conclusion(a: dict, p: Params) -> str:
    controlled = [c for c in a["shares"] if c["control"] != NONE]
    counts = {
        v: sum(c["share_vs_unpaced"]["verdict"] == v for c in controlled) for v in ("lower", "higher", INCONCLUSIVE)
    }
    polite = [c for c in controlled if c["share_vs_unpaced"]["verdict"] == "lower"]
    bold = [c for c in controlled if c["share_vs_unpaced"]["verdict"] == "higher"]

    def name(c: dict) -> str:
        d = c["share_vs_unpaced"]
        return f"{c['cc']} {c['control']} vs {c['other']}, {c['gateway']} ({d['mean']:+.3f} ± {d['half']:.3f})"

    parts = [
        f"Share of the controlled flow against its unpaced self, {len(controlled)} cases: lower (too polite) in "
        f"{counts['lower']}, higher in {counts['higher']}, inconclusive in {counts[INCONCLUSIVE]}.",
    ]
    if polite:
        parts.append("Lower: " + "; ".join(map(name, polite)) + ".")
    if bold:
        parts.append("Higher: " + "; ".join(map(name, bold)) + ".")
    for row in a["txqueuelen"]:
        n = row["txqueuelen"]
        if n == p.txqueuelens[-1]:
            h, r = row[f"host_loss_vs_{p.txqueuelens[0]}"], row[f"router_loss_vs_{p.txqueuelens[0]}"]
            parts.append(
                f"txqueuelen {n} vs {p.txqueuelens[0]}, {row['control']}: host loss {h['mean']:+.0f} ({h['verdict']}), "
                f"router loss {r['mean']:+.0f} ({r['verdict']})."
            )
    return " ".join(parts)


def criteria(a: dict, rows: dict, txq_rows: dict, p: Params) -> list[Criterion]:
    every = [r for runs in [*rows.values(), *txq_rows.values()] for r in runs]
    return [
        Criterion.at_least(
            "runs per configuration (seeds)",
            min(p.seeds, p.txq_seeds),
            min(len(v) for v in [*rows.values(), *txq_rows.values()]),
            "-",
        ),
        Criterion.at_least(
            "least total goodput of any run (bit/s; every run moved data)", 1, min(r["goodput_bps"] for r in every), "-"
        ),
        Criterion.at_least(
            "uncontrolled FAST, txqueuelen 100: host loss (the problem wei05 reports exists here)",
            1,
            next(
                row["host_loss"]["mean"]
                for row in a["txqueuelen"]
                if row["control"] == NONE and row["txqueuelen"] == p.txqueuelens[0]
            ),
            "> 0",
        ),
    ]


def tables(a: dict, p: Params) -> list[dict]:
    rows = []
    for c in a["shares"]:
        d = c.get("share_vs_unpaced")
        rows.append(
            [
                c["cc"],
                c["control"],
                c["other"],
                c["gateway"],
                fmt_ci(c["share_a"]),
                f"{fmt_ci(d)} {d['verdict']}" if d else "-",
                fmt_ci(c["host_loss_a"], 0),
                fmt_ci(c["host_loss_b"], 0),
                fmt_ci(c["router_loss"], 0),
                fmt_ci(c["utilization"]),
            ]
        )
    t1 = result_table(
        f"share of flow A against unpaced B, {p.rate}, {p.rtt_ms:g} ms, txqueuelen {p.txqueuelen}, "
        f"{p.duration_s:g} s, mean ± 95 % CI over {p.seeds} seeds",
        [
            "A",
            "control",
            "B",
            "gateway",
            "A's share",
            "vs A unpaced",
            "host loss A",
            "host loss B",
            "router loss",
            "util",
        ],
        rows,
    )
    rows2 = []
    for row in a["txqueuelen"]:

        def v(k: str, row: dict = row) -> str:
            d = row.get(k)
            return f"{d['mean']:+.0f} {d['verdict']}" if d else "-"

        rows2.append(
            [
                row["control"],
                row["txqueuelen"],
                fmt_ci(row["host_loss"], 0),
                fmt_ci(row["router_loss"], 0),
                fmt_ci(row["goodput_bps"], 1, 1e-6),
                v(f"host_loss_vs_{p.txqueuelens[0]}"),
                v(f"router_loss_vs_{p.txqueuelens[0]}"),
                v("host_loss_vs_none"),
                v("router_loss_vs_none"),
            ]
        )
    n0 = p.txqueuelens[0]
    t2 = result_table(
        f"two FAST flows on wei05's path ({p.txq_rate}, {p.txq_rtt_ms:g} ms, {p.txq_buffer}-packet drop-tail), "
        f"{p.txq_duration_s:g} s, mean ± 95 % CI over {p.txq_seeds} seeds",
        [
            "control",
            "txqueuelen",
            "host loss",
            "router loss",
            "goodput Mb/s",
            f"host vs {n0}",
            f"router vs {n0}",
            "host vs none",
            "router vs none",
        ],
        rows2,
    )
    return [t1, t2]


def plot(out: Path, a: dict, p: Params) -> list[str]:
    figures = Figures(out, dpi=110)
    combos = [(cc, c, other) for cc, controls, others in PAIRS for other in others for c in controls]
    gws = gateways(p)
    with figures.new("pacing_shares.png", 1, len(gws), figsize=(3.2 * len(gws) + 1, 5), sharey=True) as (fig, axes):
        axes = np.atleast_1d(axes)
        y = np.arange(len(combos))
        for ax, gw in zip(axes, gws):
            cells = {(c["cc"], c["control"], c["other"]): c for c in a["shares"] if c["gateway"] == gw}
            vals = [cells[k]["share_a"] for k in combos]
            colors = ["tab:gray" if k[1] == NONE else "tab:blue" if k[1] == PACING else "tab:green" for k in combos]
            ax.barh(
                y, [v["mean"] for v in vals], xerr=[np.nan_to_num(v["half"]) for v in vals], color=colors, capsize=2
            )
            ax.axvline(0.5, color="black", ls="--", lw=0.8)
            ax.set(xlim=(0, 1), title=gw, xlabel="A's share")
            ax.grid(alpha=0.3, axis="x")
        axes[0].set_yticks(y, [f"{cc} {c} vs {o}" for cc, c, o in combos], fontsize=7)
        fig.suptitle("flow A's share against an unpaced flow B (gray: A unpaced)")
    with figures.new("txqueuelen_loss.png", 1, 2, figsize=(10, 3.8)) as (fig, axes):
        for control, marker in ((NONE, "o"), (PACING, "s"), (BURSTINESS, "D")):
            rows = [r for r in a["txqueuelen"] if r["control"] == control]
            ns = [r["txqueuelen"] for r in rows]
            for ax, k in zip(axes, ("host_loss", "router_loss")):
                ax.errorbar(
                    ns,
                    [max(r[k]["mean"], 0.5) for r in rows],
                    yerr=[np.nan_to_num(r[k]["half"]) for r in rows],
                    marker=marker,
                    capsize=3,
                    label=control,
                )
        for ax, title in zip(axes, ("host loss (both NICs)", "router loss")):
            ax.set(xscale="log", yscale="log", xlabel="txqueuelen (packets)", ylabel="packets lost", title=title)
            ax.grid(alpha=0.3, which="both")
        axes[0].legend(fontsize="small")
        fig.suptitle("two FAST flows on wei05's path (zero drawn at 0.5)")
    return figures.names


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = quick_params() if quick else Params()
    out = output_folder(out)
    seeds, txq_seeds = seeds_from(seed, p.seeds), seeds_from(seed, p.txq_seeds)
    keys = share_keys(p)
    controls = (NONE, PACING, BURSTINESS)
    txq_keys = [(c, n) for c in controls for n in p.txqueuelens]
    rows, txq_rows = run_seeded(
        SeededGrid(keys, seeds, lambda key, s: share_run(p, *key, s)),
        SeededGrid(txq_keys, txq_seeds, lambda key, s: txq_run(p, *key, s)),
    )
    a = analyse(p, rows, txq_rows)
    result_tables = tables(a, p)
    plots = plot(out, a, p)
    return study_report(
        out,
        NAME,
        criteria(a, rows, txq_rows, p),
        result_tables,
        seed=seed,
        parameters={
            **dataclasses.asdict(p),
            "pairs": PAIRS,
            "alpha": max(1, round(ALPHA_OVER_BDP * bdp_packets(p.rate, p.rtt_ms))),
            "bdp_packets": bdp_packets(p.rate, p.rtt_ms),
            "seeds": seeds,
            "txq_seeds": txq_seeds,
        },
        quick=quick,
        source=SOURCE,
        claim=QUESTION,
        conclusion=conclusion(a, p),
        scope=(
            "Varied: the controller and its control, the competitor, the bottleneck buffer (0.1-2 BDP "
            "drop-tail, static and adaptive RED), the seed (B's start; RED's draws); txqueuelen for two FAST "
            "flows on wei05's path. "
            "Fixed: one RTT for both flows, 1 Gb/s NICs, two flows, no ECN."
        ),
        runs={
            "shares": seed_records(rows, seeds, ("cc", "control", "other", "gateway")),
            "txqueuelen": seed_records(txq_rows, txq_seeds, ("control", "txqueuelen")),
        },
        statistics=a,
        plots=plots,
    )
