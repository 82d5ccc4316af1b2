"""The ns-3 side of the dumbbell benchmark (see bench_dumbbell.py): quench_dumbbell.py's scenario
translated by `quench ns3`'s translator and run in ns-3, with the same flags and JSON keys.

Run with quench's interpreter; ns-3 runs in its own environment (`quench ns3 --setup`,
$QUENCH_NS3_VENV or benchmarks/.venv-ns3):

    .venv/bin/python benchmarks/ns3_dumbbell.py --flows 4 --rate 10000000 --duration 10 \
        --buffer-pkts 42 --seed 1 --json out.json

The plan is translated lean (`quench.ns3.translate(..., lean=True)`): the same simulation with
no trace callback per packet, so the timed run loop is ns-3's own; links are read from the
counters ns-3's queue objects keep. The ns-3 child is the measured process: its wall time,
peak RSS and run loop (Simulator::Run alone) are reported; translating the scenario is not
counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quench_dumbbell import parse_args, scenario, write_json_atomic  # noqa: E402

from quench import ns3  # noqa: E402

BOTTLENECK = "r1->r2"


def run_child(plan: dict) -> tuple[dict, float, int]:
    """Run `plan` in a fresh ns-3 child; its raw result, wall seconds and peak RSS (KiB)."""
    with tempfile.TemporaryDirectory(prefix="quench-bench-ns3-") as tmp:
        plan_path, out_path = Path(tmp) / "plan.json", Path(tmp) / "result.json"
        plan_path.write_text(json.dumps({k: v for k, v in plan.items() if k != "resolved"}))
        start = time.perf_counter()
        proc = subprocess.Popen([str(ns3.ns3_python()), str(ns3.CHILD), str(plan_path), str(out_path)])
        _, status, rusage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0 or not out_path.is_file():
            raise SystemExit(f"the ns-3 child failed (exit {os.waitstatus_to_exitcode(status)})")
        return json.loads(out_path.read_text()), wall, rusage.ru_maxrss


def main() -> None:
    a = parse_args(__doc__.split("\n\n")[0])
    plan = ns3.translate(scenario(a), lean=True)
    try:
        raw, wall, peak_kib = run_child(plan)
    except ns3.Ns3Unavailable as e:  # one line, as `quench ns3` says it
        raise SystemExit(f"ns3_dumbbell.py: {e}") from None
    res = ns3.to_results(plan, raw)
    b = res.link(BOTTLENECK)
    goodput = [float(v) * 8 / a.duration for v in res.flows["bytes_delivered"]]
    write_json_atomic(
        a.json,
        {
            "simulator": "ns-3",
            "version": ns3.NS3_VERSION,
            "config": vars(a),
            "utilization": float(b["utilization"]),
            "goodput_bps": goodput,
            "aggregate_goodput_bps": sum(goodput),
            "drops": int(b["dropped_packets"]),
            "bottleneck_tx_packets": int(b["departed_packets"]),
            "events": int(raw["events"]),
            # Everything of the child but its run loop: importing ns-3, building, reading out.
            "wall_setup_s": wall - raw["run_wall_s"],
            "wall_run_s": raw["run_wall_s"],
            "peak_rss_kib": peak_kib,
            # The ns-3 child alone, which bench_dumbbell.py reports as ns-3's process.
            "process_wall_s": wall,
        },
    )


if __name__ == "__main__":
    main()
