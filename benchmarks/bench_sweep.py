"""Sweep benchmark: the same sweep run by one process and by the local pool (one process per
core); prints the speed-up and the overhead per point against the point's own run time.

    .venv/bin/python benchmarks/bench_sweep.py [--duration 120s] [--jobs N] [--repeats 3]

The sweep: scenarios/dumbbell.toml (4 NewReno flows, 10 Mb/s bottleneck) over 4 buffer sizes
x 2 congestion controllers x 2 seeds = 16 points, each a fresh run (nothing reused). A point's
own run time is measured inside it (build, run, tables); the overhead per point is the core
time the sweep spent outside the points: (wall x processes - sum of point times) / points.
Raw numbers: benchmarks/results/sweep.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path

from quench.sweep import default_jobs, run_sweep

BENCH_DIR = Path(__file__).resolve().parent
SCENARIO = BENCH_DIR.parent / "scenarios" / "dumbbell.toml"
# 4 x 2 x 2 = 16 points: a multiple of any core count up to 16 divides it evenly.
GRID = {"links.0.qdisc.limit": ["10p", "21p", "42p", "84p"], "flows.*.cc": ["newreno", "reno"]}
SEEDS = 2


def spec(duration: str) -> dict:
    return {"sweep": {"base": str(SCENARIO), "set": {"duration": duration}, "grid": GRID, "seeds": SEEDS}}


def measure(duration: str, jobs: int) -> dict:
    """One fresh sweep with `jobs` processes: wall time and the points' own run times."""
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as out:
        started, cpu_started = time.perf_counter(), time.process_time()
        summary = run_sweep(spec(duration), out, jobs=jobs, quiet=True)
        wall, parent_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        points = [json.loads(p.read_text()) for p in (Path(out) / "status").iterdir()]
    assert summary["succeeded"] == len(points) and not summary["failed"], summary
    own = sum(p["wall_s"] for p in points)
    n = len(points)
    return {
        "jobs": jobs,
        "points": n,
        "wall_s": wall,
        "point_mean_s": own / n,
        "point_cpu_mean_s": sum(p["cpu_s"] for p in points) / n,
        "overhead_per_point_s": (wall * jobs - own) / n,
        # With a pool, the sweep process's own CPU (writing points, statistics) per point.
        "parent_cpu_per_point_s": parent_cpu / n if jobs > 1 else math.nan,
        "events": sum(p["events"] for p in points),
    }


def best_pair(duration: str, jobs: int, repeats: int) -> tuple[dict, dict]:
    """The fastest of `repeats` runs each, one process and the pool taking turns so that both
    meet the same background load on a shared machine."""
    runs = [(measure(duration, 1), measure(duration, jobs)) for _ in range(repeats)]
    return min((r[0] for r in runs), key=lambda r: r["wall_s"]), min((r[1] for r in runs), key=lambda r: r["wall_s"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", default="120s", help="simulated time per point")
    p.add_argument("--jobs", type=int, default=default_jobs(), help="pool size (default: the cores available)")
    p.add_argument("--repeats", type=int, default=3, help="runs per configuration; the fastest counts")
    args = p.parse_args()
    load_before = os.getloadavg()[0]
    serial, pool = best_pair(args.duration, args.jobs, args.repeats)
    speedup = serial["wall_s"] / pool["wall_s"]
    print(f"16-point sweep of the dumbbell, {args.duration} simulated per point; best of {args.repeats}")
    head = ("processes", "wall s", "point run time s (mean)", "point CPU s (mean)")
    head += ("overhead per point s", "overhead / point")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in (serial, pool):
        ratio = r["overhead_per_point_s"] / r["point_mean_s"]
        print(
            f"| {r['jobs']} | {r['wall_s']:.2f} | {r['point_mean_s']:.3f} | {r['point_cpu_mean_s']:.3f} | "
            f"{r['overhead_per_point_s']:.3f} | "
            f"{ratio:.1%} |"
        )
    load = (load_before, os.getloadavg()[0])
    print(f"speed-up with {args.jobs} processes: {speedup:.2f}x (ideal {args.jobs}x)")
    print(f"the sweep process's own CPU per point with the pool: {pool['parent_cpu_per_point_s']:.3f} s")
    print(f"1-minute load average before / after: {load[0]:.1f} / {load[1]:.1f} on {default_jobs()} cores")
    results = BENCH_DIR / "results"
    results.mkdir(exist_ok=True)
    raw = {"serial": serial, "pool": pool, "speedup": speedup, "load": load}
    (results / "sweep.json").write_text(json.dumps(raw, indent=2))


if __name__ == "__main__":
    main()
