"""pcp06-tcp — a study of PCP competing with TCP (T. Anderson, A. Collins, A. Krishnamurthy,
J. Zahorjan, "PCP: Efficient Endpoint Congestion Control", NSDI '06): the paper argues that with
fair queueing in the routers "the choice of endpoint algorithm is free", and gives PCP a
tit-for-tat rule (section 3.5: weaken the rate compensation tenfold after several ineffective
rounds) so that it is not starved by TCP through FIFO routers; it does not measure either.

A long-lived PCP flow and a long-lived TCP flow of the same RTT share pcp06's bottleneck with
a background of 250 KB flows, half PCP and half TCP, at several offered loads, through a FIFO
drop-tail and a fair-queued router, with and without tit-for-tat. Measured: the PCP flow's
share of the long pair's goodput (fair: one half) and the short flows' mean response time by
protocol.

What we chose (each a field of `Params`):
- pcp06's set-up (docs/reproductions.md#pcp06): 40 Mb/s, 2.5 ms bottleneck with a 100-packet
  buffer (FIFO drop-tail, or Demers-Keshav-Shenker fair queueing with that shared limit), 100
  source-destination pairs with RTTs 15-35 ms for the background, 1250-byte datagrams,
  NewReno with SACK for TCP, quench's PCP defaults. The long pair has its own hosts and a 25 ms
  RTT (the background's mean); the TCP flow starts at a time drawn in the first second from
  the seed, the background's arrivals are drawn from the seed too.
- Without tit-for-tat: `tit_for_tat_factor` 1 (compensation never weakened).
- Background load: the two workloads each offer half of it; arrivals stop `drain_s` before the
  end. Response times are those of background flows that finished (the unfinished are counted).
- Goodput over the whole run. Not varied: RTTs of the long pair, the buffer, the TCP variant,
  flow sizes.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from quench.experiments import pcp06
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
from quench.network import Network, droptail, fq
from quench.results import Results

NAME = "pcp06-tcp"
# The TCP this experiment was written for: the plain RFC sender, on which its controllers and
# timers are set explicitly (tcp.profile; the engine's default is Linux's).
TCP_PROFILE = "rfc"
# The source and the question, as the report shows them.
SOURCE = (
    'T. Anderson, A. Collins, A. Krishnamurthy, J. Zahorjan, "PCP: Efficient Endpoint Congestion '
    "Control\", NSDI '06 (sections 3.5, 4.3)"
)
QUESTION = (
    "Study, not a reproduction: how does PCP fare against TCP through FIFO and fair-queued routers at"
    " several loads, with and without its tit-for-tat rule, and does fair queueing make the "
    "endpoint's algorithm a free choice, as the paper argues without measuring?"
)
BOTTLENECK = pcp06.BOTTLENECK
QDISCS = ("fifo", "fq")
# Tit-for-tat on (PCP's default factor, paper section 3.5) or off (factor 1: no weakening).
TFT = {"on": {}, "off": {"tit_for_tat_factor": 1.0}}
FAIR_SHARE = 0.5


@dataclass
class Params:
    loads: tuple[float, ...] = (0.0, 0.15, 0.3, 0.45, 0.6)
    long_rtt_ms: float = 25.0
    duration_s: float = 60.0
    drain_s: float = 10.0
    start_spread_s: float = 1.0
    seeds: int = 5


def quick_params() -> Params:
    return Params(loads=(0.0, 0.3, 0.6), duration_s=30.0, drain_s=5.0, seeds=3)


def network(p: Params, qdisc: str, tft: str, load: float, seed: int) -> Network:
    base = pcp06.Params()
    net = Network(tcp_profile=TCP_PROFILE, seed=seed, name=f"{NAME}-{qdisc}-tft-{tft}-{load:g}")
    net.routers("r1", "r2")
    limit = f"{base.buffer_packets}p"
    net.link(
        "r1",
        "r2",
        rate=base.bottleneck_rate,
        delay=f"{base.bottleneck_delay_ms}ms",
        qdisc=droptail(limit) if qdisc == "fifo" else fq(limit),
    )

    def pair(src: str, dst: str, rtt_ms: float) -> None:
        access_ms = (rtt_ms / 2 - base.bottleneck_delay_ms) / 2
        net.hosts(src, dst)
        net.link(src, "r1", rate=base.access_rate, delay=f"{access_ms:.6f}ms", qdisc=droptail("1000p"))
        net.link("r2", dst, rate=base.access_rate, delay=f"{access_ms:.6f}ms", qdisc=droptail("1000p"))

    pairs = []
    for i, rtt in enumerate(base.rtts_s()):
        pair(f"s{i}", f"d{i}", rtt * 1e3)
        pairs.append((f"s{i}", f"d{i}"))
    pair("lps", "lpd", p.long_rtt_ms)
    pair("lts", "ltd", p.long_rtt_ms)
    pcp = {"kind": "pcp", "pcp": {**pcp06.flow_template(base, "pcp")["pcp"], **TFT[tft]}}
    tcp = pcp06.flow_template(base, "tcp")
    net.pcp("lps", "lpd", name="long-pcp", **pcp["pcp"])
    start = round(random.Random(seed).uniform(0.0, p.start_spread_s), 6)
    net.tcp("lts", "ltd", name="long-tcp", cc=tcp["cc"], start=start, **tcp["tcp"])
    if load > 0:
        stop = f"{p.duration_s - p.drain_s}s"
        # Each protocol offers half the load.
        rate = base.arrival_rate(load / 2)
        net.workload(pairs, arrival_rate=rate, size=f"{base.flow_bytes}B", flow=tcp, stop=stop, name="tcp")
        net.workload(pairs, arrival_rate=rate, size=f"{base.flow_bytes}B", flow=pcp, stop=stop, name="pcp")
    net.record(queues=False, cwnd=False, rtt=False, drops=False, links=[BOTTLENECK])
    return net


def measure(res: Results) -> dict:
    f = res.flows
    long = f.set_index("name")["goodput_bps"]
    total = float(long["long-pcp"] + long["long-tcp"])
    short = f[f["name"].str.contains(".", regex=False)]
    kind = short["name"].str.split(".").str[0]
    out = {"pcp_share": float(long["long-pcp"]) / total if total > 0 else float("nan")}
    for proto in ("pcp", "tcp"):
        rt = short.loc[kind == proto, "response_time_s"].to_numpy(dtype=float)
        done = rt[np.isfinite(rt)]
        out[f"{proto}_rt_s"] = float(done.mean()) if len(done) else float("nan")
        out[f"{proto}_flows"] = int(len(rt))
        out[f"{proto}_unfinished"] = int(len(rt) - len(done))
    link = res.link(BOTTLENECK)
    out["utilization"] = float(link["utilization"])
    out["drops"] = int(link["dropped_packets"])
    return out


def keys(p: Params) -> list[tuple[str, str, float]]:
    return [(q, t, load) for q in QDISCS for t in TFT for load in p.loads]


def analyse(p: Params, rows: dict) -> dict:
    cells = []
    for (q, t, load), runs in rows.items():
        share = [r["pcp_share"] for r in runs]
        cell = {
            "qdisc": q,
            "tft": t,
            "load": load,
            "pcp_share": mean_ci(share),
            "share_vs_fair": compare(share, [FAIR_SHARE] * len(share)),
            **{k: mean_ci(r[k] for r in runs) for k in ("utilization", "drops")},
        }
        if load > 0:
            pcp_rt, tcp_rt = [r["pcp_rt_s"] for r in runs], [r["tcp_rt_s"] for r in runs]
            cell |= {
                "pcp_rt_s": mean_ci(pcp_rt),
                "tcp_rt_s": mean_ci(tcp_rt),
                "rt_pcp_minus_tcp": compare(pcp_rt, tcp_rt),
                "unfinished": int(sum(r["pcp_unfinished"] + r["tcp_unfinished"] for r in runs)),
            }
        if q == "fq":
            fifo = [r["pcp_share"] for r in rows[("fifo", t, load)]]
            cell["share_fq_minus_fifo"] = compare(share, fifo)
        if t == "on":
            off = [r["pcp_share"] for r in rows[(q, "off", load)]]
            cell["share_tft_on_minus_off"] = compare(share, off)
        cells.append(cell)
    return {"cells": cells}


def conclusion(a: dict) -> str:
    parts = []
    for q in QDISCS:
        for t in TFT:
            cs = [c for c in a["cells"] if c["qdisc"] == q and c["tft"] == t]
            said = ", ".join(f"{c['load']:g}: {fmt_ci(c['pcp_share'])} ({c['share_vs_fair']['verdict']})" for c in cs)
            parts.append(f"{q.upper()}, tit-for-tat {t}: PCP's share by load (vs 1/2) {said}.")
    fq_on = [c for c in a["cells"] if c["qdisc"] == "fq"]
    free = all(c["share_vs_fair"]["verdict"] == "inconclusive" for c in fq_on)
    parts.append(
        "Under FQ the long PCP flow's share is "
        + ("not distinguishable from one half at any load" if free else "distinguishable from one half at some load")
        + "."
    )
    tft = [c for c in a["cells"] if c["qdisc"] == "fifo" and c["tft"] == "on"]
    parts.append(
        "Tit-for-tat's effect on PCP's FIFO share by load: "
        + ", ".join(
            f"{c['load']:g}: {c['share_tft_on_minus_off']['mean']:+.3f} ({c['share_tft_on_minus_off']['verdict']})"
            for c in tft
        )
        + "."
    )
    rts = [c for c in a["cells"] if "rt_pcp_minus_tcp" in c and c["tft"] == "on"]
    parts.append(
        "Background flows, PCP minus TCP mean response time (tit-for-tat on): "
        + "; ".join(
            f"{c['qdisc'].upper()} {c['load']:g}: {c['rt_pcp_minus_tcp']['mean'] * 1e3:+.0f} ms "
            f"({c['rt_pcp_minus_tcp']['verdict']})"
            for c in rts
        )
        + "."
    )
    return " ".join(parts)


def criteria(rows: dict, p: Params) -> list[Criterion]:
    every = [r for runs in rows.values() for r in runs]
    return [
        Criterion.at_least("runs per configuration (seeds)", p.seeds, min(len(v) for v in rows.values()), "-"),
        Criterion.at_least(
            "least utilization of any run (the pair loads the link)", 0.5, min(r["utilization"] for r in every), "-"
        ),
    ]


def tables(a: dict, p: Params) -> list[dict]:
    def v(d: dict | None, scale: float = 1.0, digits: int = 3) -> str:
        return "-" if d is None else f"{fmt_ci(d, digits, scale)} {d['verdict']}"

    rows = [
        [
            c["qdisc"],
            c["tft"],
            f"{c['load']:g}",
            fmt_ci(c["pcp_share"]),
            v(c.get("share_fq_minus_fifo")),
            v(c.get("share_tft_on_minus_off")),
            fmt_ci(c["pcp_rt_s"], 0, 1e3) if "pcp_rt_s" in c else "-",
            fmt_ci(c["tcp_rt_s"], 0, 1e3) if "tcp_rt_s" in c else "-",
            v(c.get("rt_pcp_minus_tcp"), 1e3, 0),
            fmt_ci(c["utilization"]),
            fmt_ci(c["drops"], 0),
        ]
        for c in a["cells"]
    ]
    return [
        result_table(
            f"long PCP vs long TCP (25 ms) over pcp06's bottleneck with a background of 250 KB flows, "
            f"{p.duration_s:g} s, mean ± 95 % CI over {p.seeds} seeds",
            [
                "queue",
                "tit-for-tat",
                "load",
                "PCP's share",
                "FQ - FIFO",
                "TFT on - off",
                "PCP RT ms",
                "TCP RT ms",
                "PCP - TCP RT ms",
                "util",
                "drops",
            ],
            rows,
        )
    ]


def plot(out: Path, a: dict, p: Params) -> list[str]:
    figures = Figures(out, dpi=110)
    with figures.new("pcp_share.png", 1, 2, figsize=(11, 4)) as (fig, axes):
        for q, style in (("fifo", "-"), ("fq", "--")):
            for t, marker in (("on", "o"), ("off", "s")):
                cs = [c for c in a["cells"] if c["qdisc"] == q and c["tft"] == t]
                axes[0].errorbar(
                    [c["load"] for c in cs],
                    [c["pcp_share"]["mean"] for c in cs],
                    yerr=[np.nan_to_num(c["pcp_share"]["half"]) for c in cs],
                    ls=style,
                    marker=marker,
                    capsize=3,
                    label=f"{q.upper()}, tit-for-tat {t}",
                )
                rt = [c for c in cs if "pcp_rt_s" in c]
                if t == "on":
                    for proto, m2 in (("pcp", "o"), ("tcp", "^")):
                        axes[1].errorbar(
                            [c["load"] for c in rt],
                            [c[f"{proto}_rt_s"]["mean"] for c in rt],
                            yerr=[np.nan_to_num(c[f"{proto}_rt_s"]["half"]) for c in rt],
                            ls=style,
                            marker=m2,
                            capsize=3,
                            label=f"{proto.upper()}, {q.upper()}",
                        )
        axes[0].axhline(FAIR_SHARE, color="black", lw=0.8, ls=":")
        axes[0].set(
            xlabel="background load",
            ylabel="long PCP flow's share",
            ylim=(0, 1),
            title="PCP's share against a long TCP flow",
        )
        axes[1].set(
            xlabel="background load", ylabel="mean response time (s)", title="250 KB background flows (tit-for-tat on)"
        )
        for ax in axes:
            ax.grid(alpha=0.3)
            ax.legend(fontsize="x-small")
    return figures.names


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = quick_params() if quick else Params()
    out = output_folder(out)
    seeds = seeds_from(seed, p.seeds)
    ks = keys(p)
    (rows,) = run_seeded(SeededGrid(ks, seeds, lambda key, s: Run.of(network(p, *key, s), p.duration_s, measure)))
    a = analyse(p, rows)
    result_tables = tables(a, p)
    plots = plot(out, a, p)
    return study_report(
        out,
        NAME,
        criteria(rows, p),
        result_tables,
        seed=seed,
        parameters={**dataclasses.asdict(p), "tit_for_tat": TFT, "seeds": seeds},
        quick=quick,
        source=SOURCE,
        claim=QUESTION,
        conclusion=conclusion(a),
        scope=(
            "Varied: the router (FIFO, FQ), tit-for-tat (on, off), the background load, the seed (arrivals, the "
            "TCP flow's start). Fixed: one long PCP and one long TCP flow of 25 ms RTT, pcp06's bottleneck and "
            "buffer, NewReno with SACK, 250 KB background flows."
        ),
        runs=seed_records(rows, seeds, ("qdisc", "tft", "load")),
        statistics=a,
        plots=plots,
    )
