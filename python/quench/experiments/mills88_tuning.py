"""mills88-tuning — a study of D. L. Mills's closing remark in "Source-quench wrench"
(end2end-interest, 26 Feb 1988): "the system performance could be further improved by tuning
the various time constants and gain settings in both implementations".

The Fuzzball gateway's quench threshold, the gain of its mean-queue estimator and its rate law
(quenches per second per packet of excess mean queue, and the cap) are crossed with the host's
reaction to a quench (4.3BSD-Tahoe's cwnd = 1 segment, 4.3BSD's 1986 cut to 80 % of what is
outstanding, RFC 1122's "as if a timeout", SQuID's pacing), on mills88's network with 4, 8 and
16 connections. For each it records the mean queueing delay on the 9600 bit/s line, its
utilization and Jain's index of the connections' goodput, and asks which setting gives the
lowest delay while keeping the line busy and the connections equal, and whether the setting
best at 4 connections is still best at 16.

What we chose (each a field of `Params`):
- mills88's network and hosts (docs/reproductions.md#mills88): one Sun-3 with N connections,
  MSS 512, receive window 2048, send buffer 4096, 4.3BSD-Tahoe timers, a 100-packet Fuzzball
  pool, DDCMP framing. Connection i starts at 0.1 i s plus a jitter drawn from the seed in
  [0, 0.1) s: the only randomness, so seeds give small differences.
- The grid: threshold {0.5, 1.5, 4} packets, gain {1/32, 1/8, 1/2}, rate_per_excess {0.03, 0.1,
  0.3} quench/s per packet, max_rate {1, 4} quench/s (the qdisc's defaults are 1.5, 1/8, 0.1,
  1), and quench off for reference.
- "Best": the lowest mean delay among settings with utilization at least 0.95 and Jain's
  index at least 0.95 (mills88's own bounds), ranked by the means over seeds. "Holds at N":
  the best-at-4 setting is admissible at N and its delay is not resolvably above the best-at-N
  setting's (paired interval over seeds).
- Not varied: the single sending host (every quench reaches all its connections), MSS, windows,
  the pool size, the line rate.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from quench.experiments import mills88
from quench.experiments.common import Criterion, Figures, Run, output_folder
from quench.experiments.study import (
    IDENTICAL,
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
from quench.results import Results

NAME = "mills88-tuning"
# The source and the question, as the report shows them.
SOURCE = 'D. L. Mills, "Source-quench wrench", end2end-interest, 26 Feb 1988'
QUESTION = (
    'Study, not a reproduction: "the system performance could be further improved by tuning the '
    'various time constants and gain settings in both implementations": which gateway setting and '
    "host reaction give the lowest delay with the line busy and the connections equal, and does the "
    "best at 4 connections hold at 8 and 16?"
)
# The host reactions compared: 4.3BSD-Tahoe, 4.3BSD (1986), RFC 1122, SQuID.
REACTIONS = ("tahoe", "bsd43", "rfc1122", "squid")
OFF = "quench off"
# mills88's bounds on a busy line and equal connections.
MIN_UTILIZATION = mills88.MIN_UTILIZATION
MIN_JAIN = mills88.MIN_JAIN
# Mean delays closer than this count as the same queue: far below one packet's time on the
# line (562 bytes at 9600 bit/s, 0.47 s).
EQUAL_DELAY_S = 0.01
# The connections' start spacing in mills88 (0.1 s) and the jitter drawn within it.
START_SPACING_S = 0.1


@dataclass
class Params:
    flows: tuple[int, ...] = (4, 8, 16)
    thresholds: tuple[float, ...] = (0.5, 1.5, 4.0)
    gains: tuple[float, ...] = (1 / 32, 1 / 8, 1 / 2)
    rates_per_excess: tuple[float, ...] = (0.03, 0.1, 0.3)
    max_rates: tuple[float, ...] = (1.0, 4.0)
    duration_s: float = 1000.0
    warmup_s: float = 200.0
    seeds: int = 2


def quick_params() -> Params:
    return Params(
        flows=(4, 16),
        thresholds=(0.5, 4.0),
        gains=(1 / 8,),
        rates_per_excess=(0.03, 0.3),
        max_rates=(1.0,),
        duration_s=800.0,
        warmup_s=200.0,
    )


def settings(p: Params) -> list[dict | None]:
    """The gateway settings: None is quench off; each dict the Fuzzball's four parameters."""
    grid = itertools.product(p.thresholds, p.gains, p.rates_per_excess, p.max_rates)
    return [None] + [{"threshold": t, "gain": g, "rate_per_excess": r, "max_rate": m} for t, g, r, m in grid]


def label(s: dict | None) -> str:
    if s is None:
        return OFF
    return f"T {s['threshold']:g}, gain 1/{1 / s['gain']:g}, rate {s['rate_per_excess']:g}, max {s['max_rate']:g}"


def tuning_run(p: Params, n: int, reaction: str, setting: dict | None, seed: int) -> Run:
    mp = mills88.Params(
        flows=n,
        reaction=reaction,
        duration_s=p.duration_s,
        warmup_s=p.warmup_s,
        seed=seed,
        **(
            {}
            if setting is None
            else {"threshold": setting["threshold"], "gateway": {k: v for k, v in setting.items() if k != "threshold"}}
        ),
    )
    net = mills88.network(mp, quench=setting is not None)
    rng = random.Random(seed)
    # mills88 starts connection i at 0.1 i s; the jitter is the seeds' only randomness.
    for i, flow in enumerate(net._flows):
        flow["start"] = round(START_SPACING_S * i + rng.uniform(0.0, START_SPACING_S), 6)
    net.record(sojourn=True, queues=False, cwnd=False, rtt=False)
    return Run.of(net, p.duration_s, functools.partial(measure, mp=mp))


def measure(res: Results, mp: mills88.Params) -> dict:
    m = mills88.measure(res, mp)
    return {
        "mean_delay_s": m.mean_delay_s,
        "utilization": m.utilization,
        "jain": m.jain,
        "drops": m.drops,
        "quench_messages": m.quench_messages,
    }


def analyse(p: Params, rows: dict) -> dict:
    cells = {}
    for (n, reaction, lab), runs in rows.items():
        cells[(n, reaction, lab)] = {k: mean_ci(r[k] for r in runs) for k in ("mean_delay_s", "utilization", "jain")}

    def admissible(key: tuple) -> bool:
        c = cells[key]
        return c["utilization"]["mean"] >= MIN_UTILIZATION and c["jain"]["mean"] >= MIN_JAIN

    def delay_vs(a: tuple, b: tuple) -> dict:
        return compare([r["mean_delay_s"] for r in rows[a]], [r["mean_delay_s"] for r in rows[b]])

    labels = [label(s) for s in settings(p)]
    best, frontier, tied, equal = {}, {}, {}, {}
    for n in p.flows:
        keys = [(n, r, lab) for r in REACTIONS for lab in labels if admissible((n, r, lab))]
        best[n] = min(keys, key=lambda k: cells[k]["mean_delay_s"]["mean"]) if keys else None
        # The admissible settings whose delay is not resolvably above the best's: many settings
        # give the same queue (the line is window-limited), so "the best" is often a set.
        tied[n] = [k for k in keys if delay_vs(k, best[n])["verdict"] != "higher"] if keys else []
        equal[n] = [
            k
            for k in keys
            if abs(cells[k]["mean_delay_s"]["mean"] - cells[best[n]]["mean_delay_s"]["mean"]) < EQUAL_DELAY_S
        ]
        for r in REACTIONS:
            frontier[(n, r)] = pareto([(n, r, lab) for lab in labels], cells)
    n0 = p.flows[0]
    holds = []
    if best[n0] is not None:
        _, r0, lab0 = best[n0]
        for n in p.flows[1:]:
            mine = (n, r0, lab0)
            entry = {"flows": n, "best_at_n": best[n], "admissible": admissible(mine)}
            if best[n] is not None:
                d = delay_vs(mine, best[n])
                entry["delay_minus_best"] = d
                entry["holds"] = entry["admissible"] and d["verdict"] in (INCONCLUSIVE, IDENTICAL, "lower")
            holds.append(entry)
    return {
        "cells": [{"flows": k[0], "reaction": k[1], "setting": k[2], **v} for k, v in cells.items()],
        "best": {
            str(n): None
            if b is None
            else {
                "reaction": b[1],
                "setting": b[2],
                **cells[b],
                "not_separable": [{"reaction": k[1], "setting": k[2]} for k in tied[n]],
                "equal": [{"reaction": k[1], "setting": k[2]} for k in equal[n]],
            }
            for n, b in best.items()
        },
        "frontier": [{"flows": k[0], "reaction": k[1], "settings": [x[2] for x in v]} for k, v in frontier.items()],
        "best_at_first_n_elsewhere": holds,
    }


def pareto(keys: list[tuple], cells: dict) -> list[tuple]:
    """The keys no other key beats on both mean delay (lower) and utilization (higher)."""
    out = []
    for k in keys:
        d, u = cells[k]["mean_delay_s"]["mean"], cells[k]["utilization"]["mean"]
        dominated = any(
            cells[o]["mean_delay_s"]["mean"] <= d
            and cells[o]["utilization"]["mean"] >= u
            and (cells[o]["mean_delay_s"]["mean"] < d or cells[o]["utilization"]["mean"] > u)
            for o in keys
        )
        if not dominated:
            out.append(k)
    return sorted(out, key=lambda k: cells[k]["mean_delay_s"]["mean"])


def conclusion(a: dict, p: Params) -> str:
    parts = []
    for n, b in a["best"].items():
        if b is None:
            parts.append(f"N = {n}: no setting keeps utilization >= {MIN_UTILIZATION} and Jain >= {MIN_JAIN}.")
            continue
        same = ", ".join(f"{r} {c}" for r, c in collections.Counter(t["reaction"] for t in b["equal"]).items())
        parts.append(
            f"N = {n}: lowest delay {b['reaction']}, {b['setting']}: {fmt_ci(b['mean_delay_s'], 2)} s, "
            f"utilization {b['utilization']['mean']:.3f}, Jain {b['jain']['mean']:.3f}; the same delay (within "
            f"{EQUAL_DELAY_S:g} s) with {len(b['equal'])} admissible settings ({same}); "
            f"{len(b['not_separable'])} not separable from it over {p.seeds} seeds."
        )
    for h in a["best_at_first_n_elsewhere"]:
        d = h.get("delay_minus_best")
        diff = "" if d is None else f", delay {d['mean']:+.2f} ± {d['half']:.2f} s against N's best ({d['verdict']})"
        verdict = "holds" if h.get("holds") else "does not hold"
        parts.append(f"The N = {p.flows[0]} best at N = {h['flows']}: {verdict} (admissible: {h['admissible']}{diff}).")
    return " ".join(parts)


def criteria(rows: dict, p: Params) -> list[Criterion]:
    every = [r for runs in rows.values() for r in runs]
    return [
        Criterion.at_least("runs per configuration (seeds)", p.seeds, min(len(v) for v in rows.values()), "-"),
        Criterion.at_most(
            "drops in every run (the pool never overflows, as in mills88)", 0, sum(r["drops"] for r in every), "0"
        ),
        Criterion.at_most(
            "quench off: quench messages",
            0,
            sum(r["quench_messages"] for k, runs in rows.items() if k[2] == OFF for r in runs),
            "0",
        ),
    ]


def tables(a: dict, p: Params) -> list[dict]:
    best = [
        [
            n,
            b["reaction"],
            b["setting"],
            len(b["equal"]),
            len(b["not_separable"]),
            fmt_ci(b["mean_delay_s"], 2),
            fmt_ci(b["utilization"]),
            fmt_ci(b["jain"]),
        ]
        if b
        else [n, "-", "none admissible", 0, 0, "-", "-", "-"]
        for n, b in a["best"].items()
    ]
    t1 = result_table(
        f"lowest delay per N with utilization >= {MIN_UTILIZATION} and Jain >= {MIN_JAIN} (and how many admissible "
        f"settings give the same delay, or are not separable from it), mean ± 95 % CI over {p.seeds} seeds",
        ["N", "reaction", "gateway", "same delay", "not separable", "delay s", "utilization", "Jain"],
        best,
    )
    cells = {(c["flows"], c["reaction"], c["setting"]): c for c in a["cells"]}
    rows = []
    for f in a["frontier"]:
        # Settings with equal means are one point of the frontier: shown once, with their count.
        points: dict[tuple[float, float], list[str]] = {}
        for lab in f["settings"]:
            c = cells[(f["flows"], f["reaction"], lab)]
            points.setdefault((c["mean_delay_s"]["mean"], c["utilization"]["mean"]), []).append(lab)
        for labs in points.values():
            c = cells[(f["flows"], f["reaction"], labs[0])]
            more = f" (+{len(labs) - 1} equal)" if len(labs) > 1 else ""
            rows.append(
                [
                    f["flows"],
                    f["reaction"],
                    labs[0] + more,
                    fmt_ci(c["mean_delay_s"], 2),
                    fmt_ci(c["utilization"]),
                    fmt_ci(c["jain"]),
                ]
            )
    t2 = result_table(
        "delay-utilization frontier per N and host reaction (settings no other beats on both)",
        ["N", "reaction", "gateway", "delay s", "utilization", "Jain"],
        rows,
    )
    return [t1, t2]


def plot(out: Path, a: dict, p: Params) -> list[str]:
    figures = Figures(out, dpi=110)
    with figures.new("tuning_frontier.png", 1, len(p.flows), figsize=(4.5 * len(p.flows), 4), sharey=True) as (
        fig,
        axes,
    ):
        axes = np.atleast_1d(axes)
        for ax, n in zip(axes, p.flows):
            for i, r in enumerate(REACTIONS):
                cs = [c for c in a["cells"] if c["flows"] == n and c["reaction"] == r]
                ax.scatter(
                    [c["mean_delay_s"]["mean"] for c in cs],
                    [c["utilization"]["mean"] for c in cs],
                    s=10,
                    color=f"C{i}",
                    alpha=0.6,
                    label=r,
                )
                front = next(f["settings"] for f in a["frontier"] if f["flows"] == n and f["reaction"] == r)
                fc = [next(c for c in cs if c["setting"] == lab) for lab in front]
                ax.plot(
                    [c["mean_delay_s"]["mean"] for c in fc],
                    [c["utilization"]["mean"] for c in fc],
                    "-",
                    color=f"C{i}",
                    lw=1,
                )
            b = a["best"][str(n)]
            if b:
                ax.plot(b["mean_delay_s"]["mean"], b["utilization"]["mean"], "k*", ms=12, label="best")
            ax.axhline(MIN_UTILIZATION, color="gray", ls="--", lw=0.8)
            ax.set(xscale="log", xlabel="mean queueing delay on the line (s)", title=f"{n} connections")
            ax.grid(alpha=0.3, which="both")
        axes[0].set_ylabel("line utilization")
        axes[0].legend(fontsize="x-small")
        fig.suptitle("Fuzzball settings x host reactions (lines: each reaction's frontier)")
    return figures.names


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = quick_params() if quick else Params()
    out = output_folder(out)
    seeds = seeds_from(seed, p.seeds)
    keys = [(n, r, s) for n in p.flows for r in REACTIONS for s in settings(p)]
    (rows,) = run_seeded(
        SeededGrid(keys, seeds, lambda key, sd: tuning_run(p, *key, sd), label=lambda key: (*key[:2], label(key[2])))
    )
    a = analyse(p, rows)
    result_tables = tables(a, p)
    plots = plot(out, a, p)
    return study_report(
        out,
        NAME,
        criteria(rows, p),
        result_tables,
        seed=seed,
        parameters={**dataclasses.asdict(p), "reactions": REACTIONS, "seeds": seeds},
        quick=quick,
        source=SOURCE,
        claim=QUESTION,
        conclusion=conclusion(a, p),
        scope=(
            "Varied: the Fuzzball's threshold, gain, rate law and cap, the host reaction, the number of "
            "connections (one host), the seed (start jitter). Fixed: mills88's network, windows, MSS, pool."
        ),
        runs=seed_records(rows, seeds, ("flows", "reaction", "setting")),
        statistics=a,
        plots=plots,
    )
