"""An AQM over a device queue, over seeds: the liveness scenario of
crates/quench-core/tests/device_queue.rs (`every_qdisc_runs_over_a_device_queue`: two TCP flows,
NewReno and CUBIC 0.3 s later, and 2 Mb/s of Poisson UDP from three hosts into a 10 Mb/s, 10 ms
bottleneck for 10 s), with and without a device queue under the qdisc, each discipline at its
defaults and with the options given. That test runs seed 1 alone; this prints the means and
spread over seeds of what the bottleneck delivered, its utilization and drops, and for PIE its
mean estimated queue delay (the `qdelay` monitor).

    .venv/bin/python benchmarks/device_queue_aqm.py [--seeds 6] [--device-queue 5]
        [--qdisc red] [--qdisc pie] [--qdisc pie:delay_estimate=timestamp]
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from quench.scenario import run_scenario

BOTTLENECK = "r1->r2"


def scenario(qdisc: dict[str, Any], device_queue: int | None, seed: int) -> dict[str, Any]:
    """device_queue.rs's `scenario` (its `common::dumbbell(3, "100Mbps", "1ms", "10Mbps", "10ms")`)."""
    hosts = [f"s{i}" for i in range(3)]
    links: list[dict[str, Any]] = [{"from": h, "to": "r1", "rate": "100Mbps", "delay": "1ms"} for h in hosts]
    bottleneck: dict[str, Any] = {"from": "r1", "to": "r2", "rate": "10Mbps", "delay": "10ms", "qdisc": qdisc}
    if device_queue:
        bottleneck["device_queue"] = device_queue
    links += [bottleneck, {"from": "r2", "to": "d", "rate": "100Mbps", "delay": "1ms"}]
    return {
        "seed": seed,
        "duration": "10s",
        "hosts": [*hosts, "d"],
        "routers": ["r1", "r2"],
        "links": links,
        "flows": [
            {"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno", "tcp": {"profile": "rfc"}},
            {"kind": "tcp", "src": "s1", "dst": "d", "cc": "cubic", "start": "0.3s", "tcp": {"profile": "rfc"}},
            {"kind": "udp", "src": "s2", "dst": "d", "rate": "2Mbps", "pattern": "poisson"},
        ],
        "record": {"monitors": True, "links": [BOTTLENECK]},
    }


def parse_qdisc(text: str) -> dict[str, Any]:
    """`kind[:key=value,...]`, values as strings (quench parses quantities and names)."""
    kind, _, opts = text.partition(":")
    qdisc: dict[str, Any] = {"kind": kind}
    for pair in filter(None, opts.split(",")):
        key, _, value = pair.partition("=")
        qdisc[key] = value
    return qdisc


def figures(qdisc: dict[str, Any], device_queue: int | None, seed: int) -> dict[str, float]:
    res = run_scenario(scenario(qdisc, device_queue, seed), progress=False)
    link = res.link(BOTTLENECK)
    out = {
        "delivered_mbit": float(res.flows["bytes_delivered"].sum()) * 8 / 1e6,
        "utilization": float(link["utilization"]),
        "drops": float(link["dropped_packets"]),
    }
    qdelay = res.monitors[res.monitors["name"] == "qdelay"]["value"]
    if len(qdelay):
        out["qdelay_ms"] = float(qdelay.mean()) * 1e3
    return out


# The table's columns: each figure's key and its format.
FIGURES = (("delivered_mbit", ".1f"), ("utilization", ".3f"), ("drops", ".0f"), ("qdelay_ms", ".1f"))


def cell(runs: list[list[dict[str, float]]], key: str, fmt: str) -> str:
    """'mean (sd) / mean (sd)' of `key` over the seeds without and with the device queue."""
    parts = []
    for seeds in runs:
        values = [r[key] for r in seeds if key in r]
        if not values:
            return ""
        parts.append(f"{statistics.mean(values):{fmt}} ({statistics.stdev(values):{fmt}})")
    return " / ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--device-queue", type=int, default=5)
    ap.add_argument("--qdisc", action="append", help="kind[:key=value,...]; repeatable (default red, pie)")
    args = ap.parse_args()
    print(f"seeds 1-{args.seeds}, 10 s; mean (sd) over seeds, without / with a device queue of {args.device_queue}")
    print("| qdisc | delivered Mbit | utilization | drops | PIE qdelay, ms |")
    print("|---|---|---|---|---|")
    for text in args.qdisc or ["red", "pie"]:
        qdisc = parse_qdisc(text)
        runs = [[figures(qdisc, dq, seed) for seed in range(1, args.seeds + 1)] for dq in (None, args.device_queue)]
        cells = [cell(runs, key, fmt) for key, fmt in FIGURES]
        print(f"| {text} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
