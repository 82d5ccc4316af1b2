"""PCP's open constants in pcp06: packets dropped and mean response time with one setting
changed at a time (docs/reproductions.md, "Rate compensation" and "Probe tolerance").

    .venv/bin/python studies/pcp06_pcp_variants.py compensation [--seeds 1-6]
    .venv/bin/python studies/pcp06_pcp_variants.py tolerance [--seeds 1-6]

Runs PCP alone (and, for reference, TCP) over FIFO and FQ at the six loads of pcp06, pooled
over the seeds; prints PCP's drops summed over loads and seeds and the mean response time at
the highest load, as a Markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses

from quench.experiments import pcp06
from quench.experiments.study import seed_range

# The paper's compensation (NSDI '06, section 3.2) taken literally: the base rate times
# 1 − d/RTT for good at the end of each epoch (docs/mechanisms.md#pcp).
PAPER_FORM = {"queue_alarm_rtts": 1e9, "compensate_growth": False, "drain_once": False}
STUDIES = {
    "compensation": {
        "literal (1 - d/RTT for good, no alarm, no growth term)": PAPER_FORM,
        "all three (default)": {},
        "without the alarms": {"queue_alarm_rtts": 1e9},
        "without the growth term": {"compensate_growth": False},
        "the drain kept for good": {"drain_once": False},
    },
    "tolerance": {
        f"slope tolerance {t:g}{' (default)' if t == 0.02 else ''}": {"slope_tolerance": t}
        for t in (0.0, 0.005, 0.01, 0.02, 0.05)
    },
}


def table_row(name: str, transport: str, overrides: dict, seeds: list[int]) -> str:
    """One variant at every load over FIFO and FQ, its runs on the experiments' grid runner."""
    p = dataclasses.replace(pcp06.Params(), pcp=overrides)
    points = [(transport, q, load) for q in pcp06.QDISCS for load in p.loads]
    rows = [row for row, _ in pcp06.run_points(p, points, seeds)]
    drops = {q: sum(r["drops"] for r in rows if r["qdisc"] == q) for q in pcp06.QDISCS}
    rt = {r["qdisc"]: r["mean_rt_s"] for r in rows if r["load"] == p.loads[-1]}
    return f"| {name} | {drops['fifo']} | {drops['fq']} | {rt['fifo']:.2f} s | {rt['fq']:.2f} s |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", choices=sorted(STUDIES))
    ap.add_argument("--seeds", default="1-6", help="first-last (default 1-6)")
    args = ap.parse_args()
    seeds = seed_range(args.seeds)
    top = pcp06.Params().loads[-1]
    print(f"| PCP | drops FIFO | drops FQ | RT {top:g} FIFO | RT {top:g} FQ |")
    print("|---|---|---|---|---|")
    for name, overrides in STUDIES[args.study].items():
        print(table_row(name, "pcp", overrides, seeds), flush=True)
    print(table_row("TCP (NewReno + SACK), for reference", "tcp", {}, seeds))


if __name__ == "__main__":
    main()
