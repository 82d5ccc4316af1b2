"""PCP's rate compensation in pcp06: drops and mean response time at 90 % load with each part of
session 4's compensation switched off (docs/reproductions.md, "Rate compensation").

    .venv/bin/python studies/pcp06_compensation.py [--seeds 1-6]

Runs PCP alone (no TCP, no ideal) over FIFO and FQ at the six loads of pcp06, pooled over the
seeds, for every variant below; prints drops summed over loads and seeds, and the mean
response time at the highest load.
"""

from __future__ import annotations

import argparse
import dataclasses
from concurrent.futures import ProcessPoolExecutor

from quench.experiments import pcp06

VARIANTS = {
    "ALGORITHMS.md 2a (1 - d/RTT for good, no alarm, no growth term)": {
        "queue_alarm_rtts": 1e9,
        "compensate_growth": False,
        "drain_once": False,
    },
    "all three (default)": {},
    "without the alarms": {"queue_alarm_rtts": 1e9},
    "without the growth term": {"compensate_growth": False},
    "the drain kept for good": {"drain_once": False},
}


def point(job: tuple[dict, str, float, list[int]]) -> dict:
    overrides, qdisc, load, seeds = job
    row, _ = pcp06.run_point(dataclasses.replace(pcp06.Params(), pcp=overrides), "pcp", qdisc, load, seeds)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1-6", help="first-last (default 1-6)")
    first, last = (int(x) for x in ap.parse_args().seeds.split("-"))
    seeds = list(range(first, last + 1))
    loads = pcp06.Params().loads
    print(f"| compensation | drops FIFO | drops FQ | RT {loads[-1]:g} FIFO | RT {loads[-1]:g} FQ |")
    print("|---|---|---|---|---|")
    with ProcessPoolExecutor() as pool:
        for name, overrides in VARIANTS.items():
            jobs = [(overrides, q, load, seeds) for q in pcp06.QDISCS for load in loads]
            rows = list(pool.map(point, jobs))
            drops = {q: sum(r["drops"] for r in rows if r["qdisc"] == q) for q in pcp06.QDISCS}
            rt = {r["qdisc"]: r["mean_rt_s"] for r in rows if r["load"] == loads[-1]}
            print(f"| {name} | {drops['fifo']} | {drops['fq']} | {rt['fifo']:.2f} s | {rt['fq']:.2f} s |")


if __name__ == "__main__":
    main()
