"""TCP over FQ against TCP over FIFO in pcp06, for TCP variants the paper might have used
(docs/reproductions.md, "TCP's mean response time over FQ").

    .venv/bin/python studies/pcp06_tcp_variants.py [--seeds 1-3] [--loads 0.75,0.9]

The paper says TCP does "slightly worse" over fair queueing than over FIFO at high load, and
does not say which TCP it ran. This runs TCP alone over both routers with one setting changed at
a time and prints, per load, the mean and median response time over each router and the mean's
difference (FQ - FIFO: the criterion wants it >= 0), pooled over the seeds, as a Markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses

from quench.experiments import pcp06
from quench.experiments.study import seed_range

VARIANTS = {
    "NewReno + SACK, delayed ACKs, min RTO 1 s (default)": {},
    "min RTO 200 ms (Linux)": {"tcp": {"rto": {"min": "200ms"}}},
    "limited transmit (RFC 3042)": {"tcp": {"limited_transmit": True}},
    "limited transmit, min RTO 200 ms": {"tcp": {"limited_transmit": True, "rto": {"min": "200ms"}}},
    "no delayed ACKs": {"tcp": {"delayed_ack": {"enabled": False}}},
    "initial RTO 3 s (RFC 2988, the paper's time)": {"tcp": {"rto": {"initial": "3s"}}},
    "NewReno without SACK": {"tcp_sack": False},
    "Reno without SACK": {"tcp_cc": "reno", "tcp_sack": False},
}


def table_row(name: str, overrides: dict, loads: list[float], seeds: list[int]) -> str:
    """One variant at `loads` over FIFO and FQ, its runs on the experiments' grid runner."""
    p = dataclasses.replace(pcp06.Params(), **overrides)
    points = [("tcp", q, load) for load in loads for q in pcp06.QDISCS]
    got = {
        (row["qdisc"], row["load"]): (row["mean_rt_s"], float(pooled["response_time_s"].median()))
        for row, pooled in pcp06.run_points(p, points, seeds)
    }
    cells = []
    for load in loads:
        (fifo, fifo_med), (fq, fq_med) = got[("fifo", load)], got[("fq", load)]
        cells.append(f"{fifo:.2f} / {fq:.2f} s ({fq - fifo:+.2f}); {fifo_med:.2f} / {fq_med:.2f} s")
    return f"| {name} | " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1-3", help="first-last (default 1-3, the reproduction's)")
    ap.add_argument("--loads", default="0.75,0.9", help="comma-separated offered loads")
    args = ap.parse_args()
    seeds = seed_range(args.seeds)
    loads = [float(x) for x in args.loads.split(",")]
    head = " | ".join(f"load {x:g}: mean FIFO / FQ (FQ - FIFO); median FIFO / FQ" for x in loads)
    print(f"| TCP | {head} |")
    print("|---|" + "---|" * len(loads))
    for name, overrides in VARIANTS.items():
        print(table_row(name, overrides, loads, seeds), flush=True)


if __name__ == "__main__":
    main()
