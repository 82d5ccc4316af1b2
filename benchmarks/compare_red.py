"""Cross-check quench's RED against ns-3's RedQueueDisc on one shared scenario.

    python3 benchmarks/compare_red.py [--duration 60] [--warmup 10] [--seeds 1]

Runs ns3_red.py (in benchmarks/.venv-ns3) and quench_red.py (in .venv) as subprocesses, once
with drops (ECN off) and once with marks (ECN on), and prints a table of the figures and their
relative difference; writes benchmarks/results/red.json atomically. Standard library only.

Scenario: dumbbell of N = 16 NewReno/SACK flows, 10 Mb/s bottleneck, 50 ms base RTT,
1500-byte packets; RED in packet mode on the bottleneck: min_th 10, max_th 30, limit 60
packets, w_q 0.002, max_p 0.1, gentle, wait, no adaptation, mean packet size 1500 B, hard
(forced) drops even with ECN. Figures cover [warmup, duration].
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NS3_PY = os.path.join(HERE, ".venv-ns3", "bin", "python")
QUENCH_PY = os.path.join(ROOT, ".venv", "bin", "python")
TOLERANCE = 0.10

# (key, label, compared against the 10% target?)
METRICS = [
    ("red_avg", "RED average queue (time mean), pkts", True),
    ("queue", "instantaneous queue (time mean), pkts", False),
    ("early_rate", "early drop/mark rate per arrival", True),
    ("forced_rate", "forced drops per arrival", False),
    ("overflow", "overflow drops", False),
    ("utilization", "bottleneck utilization", True),
    ("goodput_mbps", "aggregate goodput, Mb/s", False),
    ("rate_vs_curve", "early rate / (pb(mean avg)/1.5)", False),
    ("timeouts", "TCP timeouts (all flows)", False),
    ("recoveries", "TCP fast recoveries (all flows)", False),
]


def run(cmd: list[str], out: str) -> dict:
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"{' '.join(cmd)} failed with {p.returncode}")
    with open(out) as f:
        return json.load(f)


def figures(r: dict, ecn: bool) -> dict:
    n = r["arrived_packets"]
    early = r["early_marks"] + r["early_drops"] if ecn else r["early_drops"]
    c = r["config"]
    # RED's own law, independent of TCP: with `wait` spacing the gaps between early signals are
    # uniform on 1/pb..2/pb arrivals, so the rate is about pb/1.5 at the average's mean (linear
    # region; ignores the restart of count on entering the region and the avg's spread).
    pb = c["max_p"] * (r["red_avg_time_mean"] - c["min_th"]) / (c["max_th"] - c["min_th"])
    return {
        "red_avg": r["red_avg_time_mean"],
        "queue": r["qdisc_queue_time_mean"],
        "early_rate": early / n,
        "forced_rate": (r["forced_drops"] + r["forced_marks"]) / n,
        "overflow": r["overflow_drops"],
        "utilization": r["utilization"],
        "goodput_mbps": r["aggregate_goodput_bps"] / 1e6,
        "rate_vs_curve": early / n / (pb / 1.5),
        "timeouts": r["tcp"]["timeouts"],
        "recoveries": r["tcp"]["fast_recoveries"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--warmup", type=float, default=10.0)
    p.add_argument("--seeds", type=int, default=1, help="runs per simulator and case (seeds 1..n)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default=os.path.join(HERE, "results", "red.json"))
    a = p.parse_args()

    tmpdir = tempfile.mkdtemp(prefix="red-xcheck-")
    jobs = []
    for ecn in ("off", "on"):
        for seed in range(1, a.seeds + 1):
            for sim, py, script in (("ns-3", NS3_PY, "ns3_red.py"), ("quench", QUENCH_PY, "quench_red.py")):
                out = os.path.join(tmpdir, f"{sim}-ecn{ecn}-{seed}.json")
                cmd = [
                    py,
                    os.path.join(HERE, script),
                    "--duration",
                    str(a.duration),
                    "--warmup",
                    str(a.warmup),
                    "--ecn",
                    ecn,
                    "--seed",
                    str(seed),
                    "--json",
                    out,
                ]
                jobs.append(((ecn, sim, seed), cmd, out))
    try:
        with ThreadPoolExecutor(a.jobs) as pool:
            raw = dict(zip([j[0] for j in jobs], pool.map(lambda j: run(j[1], j[2]), jobs)))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    result = {
        "scenario": __doc__.split("\n\n")[2],
        "duration_s": a.duration,
        "warmup_s": a.warmup,
        "seeds": a.seeds,
        "tolerance": TOLERANCE,
        "cases": {},
    }
    ok = True
    for ecn in ("off", "on"):
        case = {"runs": {}, "metrics": {}}
        for sim in ("ns-3", "quench"):
            case["runs"][sim] = [raw[(ecn, sim, s)] for s in range(1, a.seeds + 1)]
        print(
            f"\nECN {ecn} ({'marks' if ecn == 'on' else 'drops'}), window [{a.warmup:g}, {a.duration:g}] s, "
            f"{a.seeds} seed(s)"
        )
        print(f"{'metric':40} {'ns-3':>10} {'quench':>10} {'rel diff':>9}  verdict")
        for key, label, gated in METRICS:
            v = {
                sim: statistics.mean(figures(r, ecn == "on")[key] for r in case["runs"][sim])
                for sim in ("ns-3", "quench")
            }
            ref = v["ns-3"]
            rel = (v["quench"] - ref) / ref if ref else (0.0 if v["quench"] == 0 else float("inf"))
            verdict = ("ok" if abs(rel) <= TOLERANCE else "DIFFERS") if gated else "(info)"
            ok &= verdict != "DIFFERS"
            case["metrics"][key] = {
                "label": label,
                "ns-3": ref,
                "quench": v["quench"],
                "rel_diff": rel,
                "gated": gated,
                "within_tolerance": abs(rel) <= TOLERANCE,
            }
            print(f"{label:40} {ref:10.4f} {v['quench']:10.4f} {rel:+9.1%}  {verdict}")
        result["cases"][f"ecn_{ecn}"] = case
    result["all_within_tolerance"] = ok

    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    tmp = f"{a.out}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, a.out)
    print(f"\nwrote {os.path.relpath(a.out, ROOT)}; all gated metrics within {TOLERANCE:.0%}: {ok}")


if __name__ == "__main__":
    main()
