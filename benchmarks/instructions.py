"""Instruction counts of the engine on the two NewReno dumbbells that guard the per-packet path:
4 flows at 10 Mb/s for 20 s and 16 flows at 100 Mb/s for 5 s (ns-3's TCP settings, recording
off), counted by callgrind rather than timed, so that they repeat on a busy machine.

    python benchmarks/instructions.py            # prints the two counts and the digests

It builds the scenario bench (`cargo bench -p quench-core --bench scenario --no-run`), writes
the two scenarios as JSON into a temporary folder, and runs the bench once on each under
`valgrind --tool=callgrind`. Equal digests mean bit-identical results; the counts move by up
to 2 % with changes far from the packet path (see docs/benchmarks.md).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_dumbbell import PACKET_BYTES, RTT_S  # noqa: E402
from quench_dumbbell import ns3_matched_dumbbell  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# (flows, bottleneck bit/s, simulated seconds): the speed benchmark's small and medium dumbbells.
DUMBBELLS = [(4, 10_000_000, 20.0), (16, 100_000_000, 5.0)]


def scenario(flows: int, rate: int, seconds: float) -> dict:
    buffer_pkts = max(1, round(rate * RTT_S / 8 / PACKET_BYTES))
    net = ns3_matched_dumbbell(flows, rate, RTT_S, buffer_pkts, seed=1, sack=True, limited_transmit=True)
    net.record(queues=False, drops=False, cwnd=False, rtt=False, monitors=False)
    return net.to_dict(seconds)


def bench_binary() -> str:
    subprocess.run(["cargo", "bench", "-p", "quench-core", "--bench", "scenario", "--no-run"], cwd=ROOT, check=True)
    candidates = [p for p in glob.glob(str(ROOT / "target/release/deps/scenario-*")) if os.access(p, os.X_OK)]
    candidates = [p for p in candidates if not p.endswith(".d")]
    return max(candidates, key=os.path.getmtime)


def count(binary: str, path: Path) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.out", binary, str(path), "1"],
            capture_output=True,
            text=True,
            check=True,
        )
    instructions = re.search(r"Collected : (\d+)", run.stderr)
    digest = re.search(r"digest ([0-9a-f]+)", run.stdout)
    if not instructions or not digest:
        raise SystemExit(f"unexpected output from callgrind:\n{run.stdout}\n{run.stderr}")
    return int(instructions.group(1)), digest.group(1)


def main() -> None:
    binary = bench_binary()
    with tempfile.TemporaryDirectory() as folder:
        for flows, rate, seconds in DUMBBELLS:
            path = Path(folder) / f"dumbbell_{flows}.json"
            path.write_text(json.dumps(scenario(flows, rate, seconds)))
            instructions, digest = count(binary, path)
            label = f"{flows} flows, {rate / 1e6:g} Mb/s, {seconds:g} s"
            print(f"{label}: {instructions / 1e6:.2f} M instructions, digest {digest}")


if __name__ == "__main__":
    main()
