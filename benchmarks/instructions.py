"""Instruction counts of the engine on the two NewReno dumbbells that guard the per-packet path:
4 flows at 10 Mb/s for 20 s and 16 flows at 100 Mb/s for 5 s (ns-3's TCP settings, recording
off), counted by callgrind rather than timed, so that they repeat on a busy machine.

    python benchmarks/instructions.py            # prints the two counts and the digests

It then counts the small dumbbell again with its bottleneck's capacity from a trace
(docs/mechanisms.md#links-that-change): a one-step rate trace at the link's rate (the same run:
equal digest) and a Mahimahi trace of the nearest constant rate, and prints each one's
instructions per link transmission against the fixed link's (the goal: at most 1.3x).

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


def count(binary: str, path: Path) -> tuple[int, str, int]:
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.out", binary, str(path), "1"],
            capture_output=True,
            text=True,
            check=True,
        )
    instructions = re.search(r"Collected : (\d+)", run.stderr)
    digest = re.search(r"digest ([0-9a-f]+)", run.stdout)
    transmissions = re.search(r"(\d+) link transmissions", run.stdout)
    if not instructions or not digest or not transmissions:
        raise SystemExit(f"unexpected output from callgrind:\n{run.stdout}\n{run.stderr}")
    return int(instructions.group(1)), digest.group(1), int(transmissions.group(1))


def with_traced_bottleneck(spec: dict, capacity: dict) -> dict:
    """`spec` with the capacity of its router-to-router link, both ways, from `capacity`."""
    routers = set(spec["routers"])
    spec = json.loads(json.dumps(spec))
    for link in spec["links"]:
        if link["from"] in routers and link["to"] in routers:
            link["capacity"] = link["reverse_capacity"] = capacity
    return spec


def traced(binary: str, folder: Path) -> None:
    """The small dumbbell with its bottleneck from traces, against the fixed link."""
    from quench.traces import constant_trace

    flows, rate, seconds = DUMBBELLS[0]
    base = scenario(flows, rate, seconds)
    forms = [
        ("fixed link", base),
        ("one-step rate trace", with_traced_bottleneck(base, {"rates": [[0, rate]]})),
        ("Mahimahi constant trace", with_traced_bottleneck(base, {"opportunities_ms": constant_trace(rate)})),
    ]
    per_transmission = None
    for label, spec in forms:
        path = folder / "traced.json"
        path.write_text(json.dumps(spec))
        instructions, digest, transmissions = count(binary, path)
        each = instructions / transmissions
        per_transmission = per_transmission or each
        print(
            f"  {label}: {instructions / 1e6:.2f} M instructions, {each:.0f} per link transmission "
            f"({each / per_transmission:.2f}x the fixed link), digest {digest}"
        )


def dumbbell_files(folder: Path):
    """Each guard dumbbell written as JSON into `folder`: (flows, rate, seconds, path)."""
    for flows, rate, seconds in DUMBBELLS:
        path = folder / f"dumbbell_{flows}.json"
        path.write_text(json.dumps(scenario(flows, rate, seconds)))
        yield flows, rate, seconds, path


def main() -> None:
    binary = bench_binary()
    with tempfile.TemporaryDirectory() as folder:
        for flows, rate, seconds, path in dumbbell_files(Path(folder)):
            instructions, digest, _ = count(binary, path)
            label = f"{flows} flows, {rate / 1e6:g} Mb/s, {seconds:g} s"
            print(f"{label}: {instructions / 1e6:.2f} M instructions, digest {digest}")
        print(f"{DUMBBELLS[0][0]} flows with a traced bottleneck:")
        traced(binary, Path(folder))


if __name__ == "__main__":
    main()
