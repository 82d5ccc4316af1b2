"""feng99-fairness — a study of the future work in W. Feng, D. Kandlur, D. Saha, K. Shin, "A
Self-Configuring RED Gateway", INFOCOM '99 (slides): "influence on fairness" and "tuning
additional RED parameters".

The slides show that adaptive RED keeps loss low and the link busy, and leave open how it
treats flows that differ: here flows of round-trip times from 20 to 200 ms, all ECN-capable or
half without ECN, share feng99's 45 Mb/s gateway under drop-tail, static RED and the two
adaptive REDs (Feng's and Floyd's). Jain's index of the flows' goodputs, each RTT class's share
and the ECN flows' share are compared over seeds. The second part varies RED's averaging
weight w_q and its thresholds one at a time under Feng's adaptive RED with 8 to 64 sources and
asks which setting loses least while the link stays busy, and whether that setting is the same
at every N.

What we chose (each a field of `Params`):
- The gateway is feng99's (docs/reproductions.md#feng99): r1 -> r2 at 45 Mb/s, 5 ms, RED in
  byte mode with min_th 20 KB, max_th 80 KB, w_q 0.002, ECN marks, forced drops, a 120 KB
  buffer; drop-tail has the same 120 KB. Static RED uses max_p 0.1 (ns-2 `queue/red.cc`'s
  default linterm 10); the adaptive ones start at feng99's 0.02.
- Fairness: 16 NewReno flows, four per RTT class (base RTT 20, 50, 100, 200 ms, set by the
  access link's delay; all access links 100 Mb/s). Starts drawn uniformly in the first second
  from the seed (the same starts for every gateway at one seed, so gateways are compared
  pair-wise by seed); drop-tail's outcome depends on these phases. In the mixed runs, two flows
  of every class use ECN and two do not. Goodput is over the whole run (slow start included).
- Tuning: feng99's topology (access links alternating 100 and 10 Mb/s, base RTT 22 ms), all
  flows ECN-capable, Feng's adaptive RED; one parameter varied at a time from feng99's setting:
  w_q in {Floyd et al. 2001's automatic value, 0.002, 0.02} and (min_th, max_th) in {(10, 40),
  (20, 80), (40, 160)} KB with the buffer at 1.5 max_th (feng99's 120 KB for 80 KB). Loss, the
  average queue and utilization after a warm-up. The best setting at each N is the one with the
  lowest mean loss among those keeping utilization at least feng99's 0.95 (then the lower mean
  queue); it is called distinguishable from the next only when their paired interval excludes
  zero.
- Not varied: the controller (NewReno), the bottleneck rate and delay, packet sizes (MSS 1460),
  delayed ACKs (on), the RED curve (classic) and the number of RTT classes.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from quench.experiments import feng99
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
from quench.network import Network
from quench.results import Results
from quench.units import parse_bytes, parse_duration

NAME = "feng99-fairness"
# The TCP this experiment was written for: the plain RFC sender, on which its controllers and
# timers are set explicitly (tcp.profile; the engine's default is Linux's).
TCP_PROFILE = "rfc"
# The source and the question, as the report shows them.
SOURCE = 'W. Feng, D. Kandlur, D. Saha, K. Shin, "A Self-Configuring RED Gateway", INFOCOM \'99 (slides), "Future work"'
QUESTION = (
    "Study, not a reproduction: how do adaptive RED (Feng's, Floyd's), static RED and drop-tail treat"
    " flows of different RTTs (20-200 ms) and ECN beside non-ECN flows (Jain's index, each class's "
    "share), and which w_q and thresholds suit 8 to 64 sources? The slides list both as future work "
    "and give no answer."
)
BOTTLENECK = feng99.BOTTLENECK
# ns-2 queue/red.cc: linterm_ = 10, max_p = 1/linterm.
STATIC_MAX_P = 0.1
# The gateways compared; None is drop-tail.
POLICIES: dict[str, dict | None] = {
    "droptail": None,
    "red": {"max_p": STATIC_MAX_P, "adapt": "none"},
    "feng": feng99.POLICIES["feng"],
    "floyd": feng99.POLICIES["floyd"],
}
ADAPTIVE = ("feng", "floyd")
# Which flows of a class use ECN: all, or every other one.
ECN_MIXES = ("all-ecn", "mixed")
# Feng99's bound on a busy link (feng99.MIN_UTILIZATION), the tuning's admissibility rule.
MIN_UTILIZATION = feng99.MIN_UTILIZATION
# The buffer over max_th in the tuning runs: feng99's 120 KB for max_th 80 KB.
BUFFER_OVER_MAX_TH = 1.5
# Tuning settings, one parameter changed at a time from feng99's (w_q 0.002, 20/80 KB).
# "auto" is Floyd et al. 2001's w_q = 1 - exp(-1/C), C the link's packets per second.
TUNING_SETTINGS: dict[str, dict[str, Any]] = {
    "feng99 (w_q 0.002, 20/80 KB)": {},
    "w_q auto": {"w_q": "auto"},
    "w_q 0.02": {"w_q": 0.02},
    "thresholds 10/40 KB": {"min_th": "10KB", "max_th": "40KB"},
    "thresholds 40/160 KB": {"min_th": "40KB", "max_th": "160KB"},
}
BASE_SETTING = next(iter(TUNING_SETTINGS))
# The independent check: under static RED every flow sees one marking probability, so the
# classes' shares should follow Mathis et al. 1997's 1/RTT; accepted within this (absolute).
MATHIS_SHARE_TOL = 0.05


@dataclass
class Params:
    bottleneck_rate: str = "45Mbps"
    bottleneck_delay: str = "5ms"
    sink_rate: str = "100Mbps"
    sink_delay: str = "1ms"
    access_rate: str = "100Mbps"
    mss: int = 1460
    buffer: str = "120KB"
    rtt_classes_ms: tuple[int, ...] = (20, 50, 100, 200)
    flows_per_class: int = 4
    start_spread_s: float = 1.0
    duration_s: float = 100.0
    seeds: int = 10
    # Tuning.
    tuning_sources: tuple[int, ...] = (8, 16, 32, 64)
    tuning_duration_s: float = 40.0
    tuning_warmup_s: float = 10.0
    tuning_seeds: int = 5
    red: dict = field(default_factory=lambda: dict(feng99.Params().red))
    min_th: str = "20KB"
    max_th: str = "80KB"


def quick_params() -> Params:
    return Params(
        duration_s=30.0, seeds=5, tuning_sources=(8, 64), tuning_duration_s=20.0, tuning_warmup_s=5.0, tuning_seeds=3
    )


def qdisc(p: Params, policy: str) -> dict:
    red = POLICIES[policy]
    if red is None:
        return {"kind": "droptail", "limit": p.buffer}
    return {"kind": "red", "min_th": p.min_th, "max_th": p.max_th, "limit": p.buffer, **p.red, **red}


def access_delay_ms(p: Params, rtt_ms: float) -> float:
    """The access link's one-way delay that makes a flow's base RTT `rtt_ms`."""
    fixed = parse_duration(p.bottleneck_delay) + parse_duration(p.sink_delay)
    return rtt_ms / 2 - fixed * 1e3


def fairness_run(p: Params, policy: str, mix: str, seed: int) -> Run:
    """Four flows per RTT class through the gateway `policy`; flow k of a class uses ECN unless
    `mix` is "mixed" and k is odd."""
    rng = random.Random(seed)
    net = Network(tcp_profile=TCP_PROFILE, seed=seed, name=NAME)
    net.routers("r1", "r2").hosts("sink")
    net.link("r1", "r2", rate=p.bottleneck_rate, delay=p.bottleneck_delay, qdisc=qdisc(p, policy))
    net.link("r2", "sink", rate=p.sink_rate, delay=p.sink_delay)
    for c, rtt in enumerate(p.rtt_classes_ms):
        for k in range(p.flows_per_class):
            host = f"s{c}-{k}"
            net.hosts(host)
            net.link(host, "r1", rate=p.access_rate, delay=f"{access_delay_ms(p, rtt):g}ms")
            ecn = mix == "all-ecn" or k % 2 == 0
            start = round(rng.uniform(0.0, p.start_spread_s), 6)
            net.tcp(host, "sink", name=f"c{c}-{k}", mss=p.mss, ecn=ecn, start=start)
    net.record(links=[BOTTLENECK], cwnd=False, queues=False, drops=False)
    return Run.of(net, p.duration_s, functools.partial(fairness_row, p=p, mix=mix))


def fairness_row(res: Results, p: Params, mix: str) -> dict:
    """Jain's index, each RTT class's share of the goodput, the ECN flows' share (mixed runs),
    and the bottleneck's utilization, loss and marks."""
    f = res.flows.set_index("name")
    goodput = f["goodput_bps"].astype(float)
    total = float(goodput.sum())
    shares = [
        float(sum(goodput[f"c{c}-{k}"] for k in range(p.flows_per_class))) / total for c in range(len(p.rtt_classes_ms))
    ]
    ecn_names = [f"c{c}-{k}" for c in range(len(p.rtt_classes_ms)) for k in range(0, p.flows_per_class, 2)]
    link = res.link(BOTTLENECK)
    return {
        "jain": res.jain_index(),
        "class_shares": shares,
        "ecn_share": float(goodput[ecn_names].sum()) / total if mix == "mixed" else float("nan"),
        "min_goodput_bps": float(goodput.min()),
        "utilization": float(link["utilization"]),
        "loss_rate": float(link["dropped_packets"] / link["arrived_packets"]),
        "marks": int(link["marked_packets"]),
        "mean_sojourn_s": float(link["mean_sojourn_s"]),
        "rtt_exponent": rtt_exponent(p, shares, float(link["mean_sojourn_s"])),
    }


def effective_rtts_s(p: Params, sojourn_s: float) -> list[float]:
    """Each class's base RTT plus the bottleneck's mean queueing delay."""
    return [rtt / 1e3 + sojourn_s for rtt in p.rtt_classes_ms]


def rtt_exponent(p: Params, shares: Sequence[float], sojourn_s: float) -> float:
    """a in share ~ RTT^-a, the least-squares slope over the classes on log-log axes (with
    the effective RTTs); Mathis et al. 1997 give a = 1 for flows that see the same loss or
    marking probability."""
    return -feng99.loglog_slope(effective_rtts_s(p, sojourn_s), shares)


def mathis_shares(p: Params, sojourn_s: float) -> list[float]:
    """The classes' shares if each flow's rate is C·MSS/(RTT·sqrt(q)) with one q for all
    (Mathis et al. 1997): proportional to 1/RTT."""
    inv = [1 / r for r in effective_rtts_s(p, sojourn_s)]
    return [v / sum(inv) for v in inv]


def tuning_params(p: Params, setting: str) -> feng99.Params:
    """feng99's parameters with one RED setting changed; the buffer follows max_th."""
    change = TUNING_SETTINGS[setting]
    red = {**p.red, **{k: v for k, v in change.items() if k == "w_q"}}
    min_th, max_th = change.get("min_th", p.min_th), change.get("max_th", p.max_th)
    return feng99.Params(
        min_th=min_th,
        max_th=max_th,
        red=red,
        mss=p.mss,
        bottleneck_rate=p.bottleneck_rate,
        bottleneck_delay=p.bottleneck_delay,
    )


def tuning_buffer(fp: feng99.Params) -> str:
    return f"{round(parse_bytes(fp.max_th) * BUFFER_OVER_MAX_TH)}B"


def tuning_run(p: Params, setting: str, n: int, seed: int) -> Run:
    fp = dataclasses.replace(tuning_params(p, setting), seed=seed)
    q = {**feng99.red_qdisc(fp, "feng", "120KB"), "limit": tuning_buffer(fp)}
    rng = random.Random(seed)
    sources = [{"start": round(rng.uniform(0.0, p.start_spread_s), 6)} for _ in range(n)]
    net = feng99.network(fp, q, sources)
    net.record(rtt=False)
    keep = functools.partial(tuning_row, fp=fp, warm=p.tuning_warmup_s, end=p.tuning_duration_s)
    return Run.of(net, p.tuning_duration_s, keep)


def tuning_row(res: Results, fp: feng99.Params, warm: float, end: float) -> dict:
    w = feng99.window_stats(res, fp, warm, end)
    return {
        "loss_rate": w["drop_rate"],
        "avg_queue_kb": w["avg_queue_bytes"] / 1e3,
        "utilization": feng99._utilization(res, fp, warm, end),
        "max_p_final": w["max_p_final"],
        "jain": res.jain_index(),
    }


# ---------------------------------------------------------------------------------------
# Analysis: means and intervals over seeds, paired comparisons, the conclusion.


def fairness_stats(rows: dict[tuple[str, str], list[dict]], p: Params) -> dict:
    out: dict[str, Any] = {}
    for (policy, mix), runs in rows.items():
        classes = np.array([r["class_shares"] for r in runs])
        out[f"{policy}/{mix}"] = {
            "jain": mean_ci(r["jain"] for r in runs),
            "class_shares": {f"{rtt}ms": mean_ci(classes[:, c]) for c, rtt in enumerate(p.rtt_classes_ms)},
            "short_over_long": mean_ci(classes[:, 0] / classes[:, -1]),
            "rtt_exponent": mean_ci(r["rtt_exponent"] for r in runs),
            "mathis_shares": {
                f"{rtt}ms": mean_ci(mathis_shares(p, r["mean_sojourn_s"])[c] for r in runs)
                for c, rtt in enumerate(p.rtt_classes_ms)
            },
            "ecn_share": mean_ci(r["ecn_share"] for r in runs) if mix == "mixed" else None,
            "utilization": mean_ci(r["utilization"] for r in runs),
            "loss_rate": mean_ci(r["loss_rate"] for r in runs),
        }
    return out


def fairness_comparisons(rows: dict[tuple[str, str], list[dict]]) -> list[dict]:
    """Each adaptive RED's Jain's index and RTT exponent against drop-tail's and static RED's,
    by seed."""
    out = []
    for metric in ("jain", "rtt_exponent"):
        for mix in ECN_MIXES:
            for a in ADAPTIVE:
                for b in ("droptail", "red"):
                    c = compare([r[metric] for r in rows[(a, mix)]], [r[metric] for r in rows[(b, mix)]])
                    out.append({"mix": mix, "a": a, "b": b, "metric": metric, **c})
    return out


def ecn_verdicts(rows: dict[tuple[str, str], list[dict]]) -> list[dict]:
    """In the mixed runs: the ECN flows' share against the fair half, per gateway."""
    out = []
    for policy in POLICIES:
        shares = [r["ecn_share"] for r in rows[(policy, "mixed")]]
        out.append({"policy": policy, **compare(shares, [0.5] * len(shares))})
    return out


def tuning_stats(rows: dict[tuple[str, int], list[dict]], p: Params) -> dict:
    stats: dict[str, Any] = {}
    for n in p.tuning_sources:
        at_n = {}
        for setting in TUNING_SETTINGS:
            runs = rows[(setting, n)]
            at_n[setting] = {k: mean_ci(r[k] for r in runs) for k in ("loss_rate", "avg_queue_kb", "utilization")}
        admissible = [s for s in TUNING_SETTINGS if at_n[s]["utilization"]["mean"] >= MIN_UTILIZATION]
        ranked = sorted(admissible, key=lambda s: (at_n[s]["loss_rate"]["mean"], at_n[s]["avg_queue_kb"]["mean"]))
        best = ranked[0] if ranked else None
        runner_up = ranked[1] if len(ranked) > 1 else None
        versus = None
        if best is not None and runner_up is not None:
            versus = compare([r["loss_rate"] for r in rows[(best, n)]], [r["loss_rate"] for r in rows[(runner_up, n)]])
        # Each setting's average queue against feng99's, by seed.
        queue = {
            setting: compare(
                [r["avg_queue_kb"] for r in rows[(setting, n)]], [r["avg_queue_kb"] for r in rows[(BASE_SETTING, n)]]
            )
            for setting in TUNING_SETTINGS
            if setting != BASE_SETTING
        }
        stats[str(n)] = {
            "settings": at_n,
            "admissible": admissible,
            "best": best,
            "runner_up": runner_up,
            "best_minus_runner_up_loss": versus,
            "queue_minus_feng99": queue,
        }
    return stats


def conclusion(stats: dict, comparisons: list[dict], ecn: list[dict], tuning: dict, p: Params) -> str:
    parts = []
    for metric, label in (("jain", "Jain's index"), ("rtt_exponent", "RTT exponent a (share ~ RTT^-a)")):
        for mix in ECN_MIXES:
            said = [
                f"{c['a']} vs {c['b']} {c['verdict']} ({c['mean']:+.3f} ± {c['half']:.3f})"
                for c in comparisons
                if c["mix"] == mix and c["metric"] == metric
            ]
            parts.append(f"{label}, {mix}: " + "; ".join(said) + ".")
    exps = ", ".join(f"{policy} {fmt_ci(stats[f'{policy}/all-ecn']['rtt_exponent'], 2)}" for policy in POLICIES)
    parts.append(f"RTT exponent with all flows ECN (Mathis: 1): {exps}.")
    parts.append(
        "ECN flows' share when mixed (fair 0.5): "
        + "; ".join(f"{e['policy']} {0.5 + e['mean']:.3f} ± {e['half']:.3f} ({e['verdict']})" for e in ecn)
        + "."
    )
    bests = {n: t["best"] for n, t in tuning.items()}
    same = len(set(bests.values())) == 1 and None not in bests.values()
    said = []
    for n, t in tuning.items():
        v = t["best_minus_runner_up_loss"]
        if v is None:
            sep = ""
        elif v["verdict"] == INCONCLUSIVE:
            sep = f" (not separable from {t['runner_up']})"
        else:
            sep = f" (below {t['runner_up']})"
        said.append(f"N = {n}: {t['best']}{sep}")
    held = "the same setting at every N" if same else "the lowest-loss setting changes with N"
    if all(
        t["best_minus_runner_up_loss"] is None or t["best_minus_runner_up_loss"]["verdict"] == INCONCLUSIVE
        for t in tuning.values()
    ):
        held += ", but at no N is it separable from the next: which setting is best is inconclusive"
    parts.append(f"Tuning (lowest loss with utilization >= {MIN_UTILIZATION}): " + "; ".join(said) + f"; {held}.")
    queue = []
    for setting in (s for s in TUNING_SETTINGS if s != BASE_SETTING):
        verdicts = [tuning[n]["queue_minus_feng99"][setting] for n in tuning]
        text = ", ".join(f"{v['mean']:+.1f} KB {v['verdict']}" for v in verdicts)
        queue.append(f"{setting}: {text}")
    parts.append(f"Average queue against feng99's setting at N = {', '.join(tuning)}: " + "; ".join(queue) + ".")
    return " ".join(parts)


def criteria(rows: dict, tuning_rows: dict, stats: dict, p: Params) -> list[Criterion]:
    """Checks that the sweep measured what it claims, not its answer."""
    every = [r for runs in rows.values() for r in runs]
    n_min = min(len(runs) for runs in rows.values())
    tuning_every = [r for runs in tuning_rows.values() for r in runs]
    out = [
        Criterion.at_least("fairness: seeds per configuration", p.seeds, n_min, "-"),
        Criterion.at_least(
            "fairness: least goodput of any flow (bit/s; every flow ran)",
            1,
            min(r["min_goodput_bps"] for r in every),
            "-",
        ),
        Criterion.at_most(
            "drop-tail never marks (marks in drop-tail runs)",
            0,
            sum(r["marks"] for (policy, _), runs in rows.items() if policy == "droptail" for r in runs),
            "0",
        ),
        Criterion.at_least(
            "tuning: runs with an average-queue record",
            len(TUNING_SETTINGS) * len(p.tuning_sources) * p.tuning_seeds,
            sum(np.isfinite(r["avg_queue_kb"]) for r in tuning_every),
            "-",
        ),
    ]
    red = stats["red/all-ecn"]
    gap = max(abs(red["class_shares"][k]["mean"] - red["mathis_shares"][k]["mean"]) for k in red["class_shares"])
    out.append(
        Criterion.at_most(
            "static RED, all ECN: largest |class share - Mathis 1/RTT share|", MATHIS_SHARE_TOL, gap, "Mathis 1997"
        )
    )
    return out


# ---------------------------------------------------------------------------------------
# Tables and figures.


def tables(stats: dict, comparisons: list[dict], tuning: dict, p: Params) -> list[dict]:
    cols = [
        "gateway",
        "ECN",
        "Jain",
        *[f"share {r} ms" for r in p.rtt_classes_ms],
        "RTT exp. a",
        "ECN share",
        "util",
        "loss",
    ]
    rows = []
    for key, s in stats.items():
        policy, mix = key.split("/")
        rows.append(
            [
                policy,
                mix,
                fmt_ci(s["jain"]),
                *[fmt_ci(v) for v in s["class_shares"].values()],
                fmt_ci(s["rtt_exponent"], 2),
                fmt_ci(s["ecn_share"]) if s["ecn_share"] else "-",
                fmt_ci(s["utilization"]),
                fmt_ci(s["loss_rate"], 4),
            ]
        )
    t1 = result_table(
        f"fairness: {len(p.rtt_classes_ms) * p.flows_per_class} NewReno flows, RTT "
        f"{', '.join(map(str, p.rtt_classes_ms))} ms, {p.bottleneck_rate} gateway, {p.duration_s:g} s, "
        f"mean ± 95 % CI over {p.seeds} seeds",
        cols,
        rows,
    )
    mathis = [
        [
            policy,
            *[
                f"{stats[f'{policy}/all-ecn']['class_shares'][k]['mean']:.3f} / "
                f"{stats[f'{policy}/all-ecn']['mathis_shares'][k]['mean']:.3f}"
                for k in stats[f"{policy}/all-ecn"]["class_shares"]
            ],
        ]
        for policy in POLICIES
    ]
    t2 = result_table(
        "RTT classes' shares, all ECN: measured / Mathis (1/RTT with RTT = base + mean queueing delay)",
        ["gateway", *[f"{r} ms" for r in p.rtt_classes_ms]],
        mathis,
    )
    t3 = result_table(
        "paired differences over seeds (a - b)",
        ["metric", "ECN", "a", "b", "a - b", "verdict"],
        [[c["metric"], c["mix"], c["a"], c["b"], fmt_ci(c), c["verdict"]] for c in comparisons],
    )
    rows4 = []
    for n, t in tuning.items():
        for setting, s in t["settings"].items():
            mark = "best" if setting == t["best"] else ("" if setting in t["admissible"] else "util < 0.95")
            rows4.append(
                [n, setting, fmt_ci(s["loss_rate"], 4), fmt_ci(s["avg_queue_kb"], 1), fmt_ci(s["utilization"]), mark]
            )
    t4 = result_table(
        f"tuning Feng's adaptive RED: after {p.tuning_warmup_s:g} s of {p.tuning_duration_s:g} s, "
        f"mean ± 95 % CI over {p.tuning_seeds} seeds",
        ["N", "setting", "loss", "avg queue KB", "util", ""],
        rows4,
    )
    return [t1, t2, t3, t4]


def plot(out: Path, stats: dict, tuning: dict, p: Params) -> list[str]:
    figures = Figures(out, dpi=110)
    policies = list(POLICIES)
    x = np.arange(len(policies))

    def bars(ax, key_of, metric, offset, label, color):
        cis = [key_of(policy) for policy in policies]
        ax.bar(
            x + offset,
            [c["mean"] for c in cis],
            0.38,
            yerr=[np.nan_to_num(c["half"]) for c in cis],
            capsize=3,
            label=label,
            color=color,
        )

    with figures.new("fairness_jain_ecn.png", 1, 2, figsize=(10, 3.8)) as (fig, axes):
        bars(axes[0], lambda q: stats[f"{q}/all-ecn"]["jain"], "jain", -0.2, "all ECN", "tab:blue")
        bars(axes[0], lambda q: stats[f"{q}/mixed"]["jain"], "jain", 0.2, "half ECN", "tab:orange")
        axes[0].set(
            xticks=x,
            xticklabels=policies,
            ylabel="Jain's index",
            title="Jain's index of 16 flows' goodput",
            ylim=(0, 1),
        )
        axes[0].legend(fontsize="small")
        cis = [stats[f"{q}/mixed"]["ecn_share"] for q in policies]
        axes[1].bar(
            x, [c["mean"] for c in cis], 0.5, yerr=[np.nan_to_num(c["half"]) for c in cis], capsize=3, color="tab:green"
        )
        axes[1].axhline(0.5, color="black", ls="--", lw=0.8)
        axes[1].set(
            xticks=x, xticklabels=policies, ylabel="share of goodput", title="ECN flows' share (half ECN)", ylim=(0, 1)
        )
        for ax in axes:
            ax.grid(alpha=0.3, axis="y")

    with figures.new("fairness_rtt_shares.png", 1, 2, figsize=(11, 3.8), sharey=True) as (fig, axes):
        width = 0.8 / len(p.rtt_classes_ms)
        for ax, mix in zip(axes, ECN_MIXES):
            for c, rtt in enumerate(p.rtt_classes_ms):
                cis = [stats[f"{q}/{mix}"]["class_shares"][f"{rtt}ms"] for q in policies]
                ax.bar(
                    x + (c - (len(p.rtt_classes_ms) - 1) / 2) * width,
                    [v["mean"] for v in cis],
                    width,
                    yerr=[np.nan_to_num(v["half"]) for v in cis],
                    capsize=2,
                    label=f"{rtt} ms",
                )
            ax.axhline(1 / len(p.rtt_classes_ms), color="black", ls="--", lw=0.8)
            ax.set(xticks=x, xticklabels=policies, title=f"RTT classes' shares, {mix}")
            ax.grid(alpha=0.3, axis="y")
        axes[0].set_ylabel("share of goodput")
        axes[0].legend(fontsize="small", title="base RTT")

    with figures.new("tuning.png", 1, 3, figsize=(13, 3.8)) as (fig, axes):
        ns = [int(n) for n in tuning]
        for setting in TUNING_SETTINGS:
            for ax, metric in zip(axes, ("loss_rate", "avg_queue_kb", "utilization")):
                cis = [tuning[str(n)]["settings"][setting][metric] for n in ns]
                ax.errorbar(
                    ns,
                    [c["mean"] for c in cis],
                    yerr=[np.nan_to_num(c["half"]) for c in cis],
                    marker="o",
                    capsize=3,
                    label=setting,
                )
        for ax, label in zip(axes, ("loss rate after warm-up", "average queue (KB)", "utilization after warm-up")):
            ax.set(xscale="log", xlabel="sources N", ylabel=label, xticks=ns, xticklabels=[str(n) for n in ns])
            ax.grid(alpha=0.3)
        axes[2].axhline(MIN_UTILIZATION, color="black", ls="--", lw=0.8)
        axes[0].legend(fontsize="x-small")
        fig.suptitle("Feng's adaptive RED: one parameter at a time against N")
    return figures.names


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = quick_params() if quick else Params()
    out = output_folder(out)
    seeds, tuning_seeds = seeds_from(seed, p.seeds), seeds_from(seed, p.tuning_seeds)
    fair_keys = [(policy, mix) for mix in ECN_MIXES for policy in POLICIES]
    tune_keys = [(setting, n) for n in p.tuning_sources for setting in TUNING_SETTINGS]
    rows, tuning_rows = run_seeded(
        SeededGrid(fair_keys, seeds, lambda key, s: fairness_run(p, *key, s)),
        SeededGrid(tune_keys, tuning_seeds, lambda key, s: tuning_run(p, *key, s)),
    )
    stats = fairness_stats(rows, p)
    comparisons = fairness_comparisons(rows)
    ecn = ecn_verdicts(rows)
    tuning = tuning_stats(tuning_rows, p)
    result_tables = tables(stats, comparisons, tuning, p)
    plots = plot(out, stats, tuning, p)
    return study_report(
        out,
        NAME,
        criteria(rows, tuning_rows, stats, p),
        result_tables,
        seed=seed,
        parameters={
            **dataclasses.asdict(p),
            "policies": POLICIES,
            "tuning_settings": TUNING_SETTINGS,
            "seeds": seeds,
            "tuning_seeds": tuning_seeds,
        },
        quick=quick,
        source=SOURCE,
        claim=QUESTION,
        conclusion=conclusion(stats, comparisons, ecn, tuning, p),
        scope=(
            "Varied: the gateway, ECN (all or half), the seed (RED's draws, the flows' start times); for tuning "
            "N, w_q and the thresholds one at a time. Fixed: NewReno, the 45 Mb/s 5 ms bottleneck, MSS 1460, "
            "four RTT classes, the classic RED curve."
        ),
        runs={
            "fairness": seed_records(rows, seeds, ("policy", "ecn")),
            "tuning": seed_records(tuning_rows, tuning_seeds, ("setting", "sources")),
        },
        statistics={"fairness": stats, "jain_comparisons": comparisons, "ecn_share": ecn, "tuning": tuning},
        plots=plots,
    )
