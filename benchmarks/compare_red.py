"""Cross-check quench's RED against ns-3's RedQueueDisc on one shared scenario, through the
translator (quench.ns3): the same scenario dict runs in both simulators.

    QUENCH_NS3_VENV=... .venv/bin/python benchmarks/compare_red.py [--duration 60] [--warmup 10]
        [--seeds 4] [--out benchmarks/results/red.json]

Scenario: the dumbbell of quench.scenarios with N = 16 NewReno flows and ns-3's TCP (SACK,
limited transmit, PRR, IW 10, one segment per ACK in slow start, 16 MiB buffers, 1500-byte
packets), 10 Mb/s bottleneck, 50 ms base RTT; RED in packet mode on r1->r2: min_th 10, max_th
30, limit 60 packets, w_q 0.002, max_p 0.1, gentle, wait, no adaptation, mean packet size
1500 B, forced drops even with ECN. Run with drops (ECN off) and with marks (ECN on). Figures
cover [warmup, duration], from the runs' snapshots at both instants (quench.windows); RED's
average is its `avg_queue` monitor (one value per arrival, held until the next; ns-3's is
read from the queue disc at each arrival), time-averaged over the window. Prints the means over
seeds and writes benchmarks/results/red.json atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from typing import Any

import ns3_aqm
import numpy as np

from quench import ns3
from quench.scenario import run_scenario
from quench.scenarios import dumbbell

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 0.10
BOTTLENECK = "r1->r2"
FLOWS = 16
# The RED of the AQM cross-check (benchmarks/ns3_aqm.py), no adaptation, packet mode.
RED = {**ns3_aqm.RED, "mode": "packets", "adapt": "none"}
# ns-3's TCP (as in tests/test_ns3.py).
TCP = {"mss": 1460, "send_buffer": "16MiB", "receive_window": "16MiB", "sack": True, "limited_transmit": True}
CC = {"kind": "newreno", "initial_window": 10, "abc_limit": 1}

# (key, label, compared against the 10% target?)
METRICS = [
    ("red_avg", "RED average queue (time mean), pkts", True),
    ("queue", "queue (time mean), pkts", False),
    ("early_rate", "early drop/mark rate per arrival", True),
    ("forced_overflow", "forced + overflow drops (whole run)", False),
    ("utilization", "bottleneck utilization", True),
    ("goodput_mbps", "aggregate goodput, Mb/s", False),
    ("rate_vs_curve", "early rate / (pb(mean avg)/1.5)", False),
    ("timeouts", "TCP timeouts (all flows)", False),
    ("recoveries", "TCP fast recoveries (all flows)", False),
]


def scenario(ecn: bool, seed: int, warmup: float, duration: float) -> dict[str, Any]:
    net = dumbbell(
        FLOWS,
        rate="10Mbps",
        rtt="50ms",
        cc=CC,
        tcp={**TCP, "ecn": ecn, "recovery": "prr"},
        seed=seed,
        tcp_profile="rfc",
    )
    window = [warmup, duration]
    net.record(queues=False, drops=False, cwnd=False, rtt=False, monitors=True, links=[BOTTLENECK], snapshots=window)
    spec = net.to_dict(duration)
    spec["links"][0]["qdisc"] = {**RED, "signal": "mark" if ecn else "drop"}
    spec["name"] = f"red-xcheck-ecn{'on' if ecn else 'off'}-seed{seed}"
    return spec


def time_mean(times: np.ndarray, values: np.ndarray, a: float, b: float) -> float:
    """The mean over [a, b] of a value that holds from each time to the next."""
    inside = (times > a) & (times < b)
    before = np.flatnonzero(times <= a)
    t = np.concatenate([[a], times[inside]])
    v = np.concatenate([[values[before[-1]] if len(before) else 0.0], values[inside]])
    return float(np.sum(v * np.diff(np.concatenate([t, [b]]))) / (b - a))


def figures(res: Any, ecn: bool, warmup: float, duration: float) -> dict[str, float]:
    w = res.window(warmup, duration)
    b = w.links[w.links["name"] == BOTTLENECK].iloc[0]
    whole = res.link(BOTTLENECK)
    m = res.monitors
    m = m[(m["name"] == "avg_queue") & (m["link_name"] == BOTTLENECK)]
    red_avg = time_mean(m["time_s"].to_numpy(float), m["value"].to_numpy(float), warmup, duration)
    early = float(b["marked_packets"] if ecn else 0) + float(b["dropped_packets"])
    n = float(b["arrived_packets"])
    forced_overflow = float(whole["drops_forced"] + whole["drops_overflow"])
    # RED's own law, independent of TCP: with `wait` spacing the gaps between early signals are
    # uniform on 1/pb..2/pb arrivals, so the rate is about pb/1.5 at the average's mean (linear
    # region; ignores the restart of count on entering the region and the average's spread).
    pb = RED["max_p"] * (red_avg - 10) / (30 - 10)
    return {
        "red_avg": red_avg,
        "queue": float(b["mean_backlog_packets"]),
        "early_rate": early / n,
        "forced_overflow": forced_overflow,
        "utilization": float(b["utilization"]),
        "goodput_mbps": float(w.flows["goodput_bps"].sum()) / 1e6,
        "rate_vs_curve": early / n / (pb / 1.5),
        "timeouts": float(w.flows["timeouts"].sum()),
        "recoveries": float(w.flows["fast_retransmits"].sum()),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--warmup", type=float, default=10.0)
    p.add_argument("--seeds", type=int, default=4, help="runs per simulator and case (seeds 1..n)")
    p.add_argument("--out", default=os.path.join(HERE, "results", "red.json"))
    a = p.parse_args()
    result: dict[str, Any] = {
        "scenario": __doc__.split("\n\n")[2],
        "duration_s": a.duration,
        "warmup_s": a.warmup,
        "seeds": a.seeds,
        "tolerance": TOLERANCE,
        "cases": {},
    }
    ok = True
    for ecn in (False, True):
        specs = [scenario(ecn, s, a.warmup, a.duration) for s in range(1, a.seeds + 1)]
        runs = {
            "quench": [figures(run_scenario(s, progress=False), ecn, a.warmup, a.duration) for s in specs],
            "ns-3": [figures(r, ecn, a.warmup, a.duration) for r in ns3.run_ns3_many(specs)],
        }
        case: dict[str, Any] = {"runs": runs, "metrics": {}}
        what = "on (marks)" if ecn else "off (drops)"
        print(f"\nECN {what}, window [{a.warmup:g}, {a.duration:g}] s, {a.seeds} seed(s)")
        print(f"{'metric':40} {'ns-3':>10} {'quench':>10} {'rel diff':>9}  verdict")
        for key, label, gated in METRICS:
            v = {sim: statistics.fmean(r[key] for r in runs[sim]) for sim in runs}
            ref = v["ns-3"]
            rel = (v["quench"] - ref) / ref if ref else (0.0 if v["quench"] == 0 else float("inf"))
            verdict = ("ok" if abs(rel) <= TOLERANCE else "DIFFERS") if gated else "(info)"
            ok &= verdict != "DIFFERS"
            case["metrics"][key] = {"label": label, "ns-3": ref, "quench": v["quench"], "rel_diff": rel, "gated": gated}
            print(f"{label:40} {ref:10.4f} {v['quench']:10.4f} {rel:+9.1%}  {verdict}")
        result["cases"][f"ecn_{'on' if ecn else 'off'}"] = case
    result["all_within_tolerance"] = ok
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    tmp = f"{a.out}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, a.out)
    print(f"\nwrote {os.path.relpath(a.out)}; all gated metrics within {TOLERANCE:.0%}: {ok}")


if __name__ == "__main__":
    main()
