"""Per-discipline cost: run-loop time per packet through one bottleneck, against drop-tail's.

The same traffic through each queue discipline (drop-tail, RED, CoDel, FQ-CoDel, PIE,
FQ-PIE, CHOKe, DualPI2, each with its defaults, on the bottleneck's direction r1->r2; the
ACKs' direction keeps drop-tail unless `--both-ways`): N NewReno flows (8 and 1024) from one
sender host through a 100 Mb/s bottleneck (base RTT 40 ms) for `--seconds` simulated
seconds, recording only the summary tables. The cost of a run is the CPU time of its run
loop (the thread's, so that time the process spends waiting for a core on a busy machine
does not count) per packet the bottleneck sent: the whole simulation, TCP included, so a
ratio above 1 is the discipline's own cost plus what its different drops do to TCP.

Timing is paired and interleaved so that a shared, noisy machine affects both sides of
each ratio alike: in each of `--rounds` rounds every discipline runs right next to a
drop-tail run (the order of the two alternating from round to round), the round's ratio is
the discipline's time per packet over that drop-tail run's, and the verdict takes the median
over the rounds. `--instructions` adds instruction counts (valgrind's callgrind on the
engine without Python, `benches/scenario.rs` on the same scenario; deterministic, so one run
each), whose ratio does not depend on the machine's load at all.

    .venv/bin/python benchmarks/bench_aqm.py [--seconds 10] [--rounds 5] [--flows 8,1024]
        [--instructions] [--both-ways] [--goal 1.5]

Prints a Markdown table per flow count and a verdict line: each discipline's median ratio
(and instruction ratio) against `--goal`.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import quench

ROOT = Path(__file__).resolve().parent.parent

DISCIPLINES = [
    ("drop-tail", quench.droptail()),
    ("RED", quench.red()),
    ("CoDel", quench.codel()),
    ("FQ-CoDel", quench.fq_codel()),
    ("PIE", quench.pie()),
    ("FQ-PIE", quench.fq_pie()),
    ("CHOKe", quench.choke()),
    ("DualPI2", quench.dualpi2()),
]

# The engine's run loop, whose instructions callgrind counts (everything else in the bench
# binary, parsing the scenario and building the digest, is left out): the world's loop where
# the compiler kept it out of line, else the simulation's, which calls it.
RUN_LOOP_SYMBOLS = ["quench_core::world::World::run_until", "quench_core::Simulation::run_until"]


def run_loop_symbol(binary: Path) -> str:
    """The first of RUN_LOOP_SYMBOLS that `binary` defines (`nm -C`)."""
    names = subprocess.run(["nm", "-C", str(binary)], capture_output=True, text=True, check=True).stdout
    for symbol in RUN_LOOP_SYMBOLS:
        if re.search(rf" {re.escape(symbol)}$", names, re.MULTILINE):
            return symbol
    sys.exit(f"bench_aqm.py: {binary} defines none of {RUN_LOOP_SYMBOLS}")


def network(qdisc, flows: int, both_ways: bool = False):
    net = quench.Network(seed=1, tcp_profile="rfc").hosts("s", "d").routers("r1", "r2")
    net.link("s", "r1", rate="1Gbps", delay="1ms")
    # The discipline runs at the bottleneck, r1->r2; the ACKs' direction keeps drop-tail unless
    # `both_ways` (it never queues there, so the results are the same either way: only the cost
    # of passing each ACK through the idle discipline differs).
    reverse = qdisc if both_ways else quench.droptail()
    net.link("r1", "r2", rate="100Mbps", delay="18ms", qdisc=qdisc, reverse_qdisc=reverse)
    net.link("r2", "d", rate="1Gbps", delay="1ms")
    for i in range(flows):
        net.tcp("s", "d", start=f"{(i % 1000) * 0.1}ms")
    # Only the summary tables: a drop row per drop and RED's or DualPI2's monitor rows per
    # packet are the recorder's cost, which differs with the discipline's drops and variables.
    net.record(queues=False, cwnd=False, rtt=False, drops=False, monitors=False, links=["r1->r2"])
    return net


def run(qdisc, flows: int, seconds: float, both_ways: bool) -> tuple[int, float]:
    """Packets the bottleneck sent, and the CPU seconds of the run loop."""
    sim = network(qdisc, flows, both_ways).simulation(f"{seconds}s")
    started = time.thread_time()
    sim.advance(sim.end)
    cpu = time.thread_time() - started
    res = sim.finish()
    return int(res.link("r1->r2")["departed_packets"]), cpu


def paired_ratios(flows: int, seconds: float, rounds: int, both_ways: bool):
    """Per discipline: packets, the run loop's CPU seconds per round, and each round's ratio
    of time per packet against the drop-tail run beside it."""
    base_qdisc = DISCIPLINES[0][1]
    out = {name: {"cpu": [], "ratio": []} for name, _ in DISCIPLINES}
    for r in range(rounds):
        for name, qdisc in DISCIPLINES[1:]:
            if r % 2 == 0:
                (bp, bt), (p, t) = run(base_qdisc, flows, seconds, both_ways), run(qdisc, flows, seconds, both_ways)
            else:
                (p, t), (bp, bt) = run(qdisc, flows, seconds, both_ways), run(base_qdisc, flows, seconds, both_ways)
            out["drop-tail"]["cpu"].append(bt)
            out["drop-tail"]["packets"] = bp
            out[name]["cpu"].append(t)
            out[name]["packets"] = p
            out[name]["ratio"].append((t / p) / (bt / bp))
    out["drop-tail"]["ratio"] = [1.0]
    return out


def bench_binary(given: str | None) -> Path:
    """The engine's scenario bench (built on demand with cargo)."""
    if given:
        return Path(given)
    cargo = subprocess.run(
        ["cargo", "bench", "-p", "quench-core", "--bench", "scenario", "--no-run", "--message-format=json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    for line in cargo.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "scenario":
            return Path(msg["executable"])
    sys.exit("bench_aqm.py: cargo built no scenario bench")


def instructions(binary: Path, qdisc, flows: int, seconds: float, both_ways: bool, folder: Path) -> int:
    """Instructions callgrind counts in the engine's run loop for one run of the scenario."""
    spec = folder / "scenario.json"
    spec.write_text(json.dumps(network(qdisc, flows, both_ways).to_dict(f"{seconds}s")))
    cmd = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={folder / 'callgrind.out'}",
        "--collect-atstart=no",
        f"--toggle-collect={run_loop_symbol(binary)}",
        str(binary),
        str(spec),
        "1",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if not m or int(m.group(1)) == 0:
        sys.exit(f"bench_aqm.py: no instruction count from callgrind:\n{done.stderr[-2000:]}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated seconds per run")
    ap.add_argument("--rounds", type=int, default=5, help="paired rounds (the median ratio counts)")
    ap.add_argument("--flows", default="8,1024")
    ap.add_argument("--goal", type=float, default=1.5, help="the largest acceptable ratio to drop-tail")
    ap.add_argument("--instructions", action="store_true", help="also count instructions with callgrind")
    ap.add_argument("--bench-binary", help="the scenario bench (default: built with cargo)")
    ap.add_argument("--both-ways", action="store_true", help="the discipline on the ACKs' direction too")
    a = ap.parse_args()
    if a.rounds < 1 or a.seconds <= 0:
        sys.exit("bench_aqm.py: --rounds must be at least 1 and --seconds positive")
    binary = None
    if a.instructions:
        if not shutil.which("valgrind"):
            sys.exit("bench_aqm.py: --instructions needs valgrind")
        binary = bench_binary(a.bench_binary)
    worst = {}
    load = os.getloadavg()[0]
    where = "both directions of the bottleneck" if a.both_ways else "the bottleneck direction, drop-tail for the ACKs"
    print(f"Run-loop CPU time per packet, {a.rounds} paired rounds, {a.seconds:g} simulated s, load {load:.1f}")
    print(f"The discipline on {where}")
    print()
    header = "| flows | discipline | packets | CPU s (median) | ns/packet | ratio per round | median ratio |"
    rule = "|---|---|---|---|---|---|---|"
    if a.instructions:
        header += " instructions/packet | instruction ratio |"
        rule += "---|---|"
    print(header)
    print(rule, flush=True)
    for flows in [int(f) for f in a.flows.split(",")]:
        res = paired_ratios(flows, a.seconds, a.rounds, a.both_ways)
        base_instr = None
        with tempfile.TemporaryDirectory() as tmp:
            for name, qdisc in DISCIPLINES:
                r = res[name]
                cpu = statistics.median(r["cpu"])
                median = statistics.median(r["ratio"])
                rounds = ", ".join(f"{x:.2f}" for x in r["ratio"]) if name != "drop-tail" else "-"
                row = (
                    f"| {flows} | {name} | {r['packets']} | {cpu:.3f} | {cpu / r['packets'] * 1e9:,.0f} "
                    f"| {rounds} | {median:.2f}x |"
                )
                verdict = median
                if binary:
                    per_packet = instructions(binary, qdisc, flows, a.seconds, a.both_ways, Path(tmp)) / r["packets"]
                    base_instr = base_instr or per_packet
                    row += f" {per_packet:,.0f} | {per_packet / base_instr:.2f}x |"
                    verdict = max(verdict, per_packet / base_instr)
                worst[(flows, name)] = verdict
                print(row, flush=True)
    over = {k: v for k, v in worst.items() if v > a.goal}
    print()
    if over:
        listed = ", ".join(f"{name} at {flows} flows ({v:.2f}x)" for (flows, name), v in over.items())
        print(f"Verdict: above {a.goal}x drop-tail: {listed}")
    else:
        top = max(worst.values())
        print(f"Verdict: every discipline at most {top:.2f}x drop-tail per packet (goal {a.goal}x)")


if __name__ == "__main__":
    main()
