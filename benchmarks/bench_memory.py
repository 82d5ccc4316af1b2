"""Peak memory of `quench run --out` as the simulated duration grows: with records streamed to
disk (quench.stream) it should stay flat. A benchmark, not a test: it prints a table and
checks nothing.

Cases, each run in a fresh process (`python -m quench.cli run ... --out DIR --no-plots
--quiet`) whose peak resident set size is read from os.wait4's rusage:
  dumbbell  scenarios/dumbbell.toml with its default recording (queues, drops, cwnd, rtt,
            monitors, and the bottleneck's pcap), for 100, 300, 1000 and 3000 simulated seconds;
  pcap10g   a 10 Gb/s link filled by a 9.9 Gb/s UDP flow of 64 kB datagrams, every packet
            captured to pcap and nothing else recorded, for 100 and 1000 s;
  workload  1000 arrivals/s of 10 kB TCP flows over a 100 Mb/s, 10 ms path (about 40 flows
            in progress at any time), summary tables only, for 10⁴ to 10⁷ arrivals (10 s to
            10⁴ s): arrivals are built as they come and reclaimed when done, and the flows
            table streams out as they are released.

Plots are off: they read whole tables into memory, which is what they need to draw them.
Each case's output folder is deleted after it is measured (the 1000 s capture is 1.5 GB).

    .venv/bin/python benchmarks/bench_memory.py              # every case (about 30 min here)
    .venv/bin/python benchmarks/bench_memory.py --quick      # 100 s and 300 s, 10⁵ arrivals
    .venv/bin/python benchmarks/bench_memory.py --case workload
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DUMBBELL = ROOT / "scenarios" / "dumbbell.toml"
DUMBBELL_DURATIONS_S = (100, 300, 1000, 3000)
PCAP_DURATIONS_S = (100, 1000)
QUICK_LIMIT_S = 300
WORKLOAD_ARRIVALS = (10_000, 100_000, 1_000_000, 10_000_000)
WORKLOAD_RATE_PER_S = 1000
QUICK_ARRIVALS = 100_000
KIB = 1024
MIB = 1024 * 1024

# 64 kB datagrams (the link's MTU raised to carry them whole) keep the packet rate, hence the
# run time, modest while the capture still grows by 1.5 MB per simulated second.
PCAP_SCENARIO = """\
name = "pcap10g"
seed = 1
duration = "1s"
hosts = ["a", "b"]
[[links]]
from = "a"
to = "b"
rate = "10Gbps"
delay = "1ms"
mtu = "64000B"
[[flows]]
kind = "udp"
src = "a"
dst = "b"
rate = "9.9Gbps"
size = "64000B"
[record]
queues = false
drops = false
cwnd = false
rtt = false
monitors = false
pcap = ["a->b"]
# The 1000-s capture (1.5 GB) is past the default budget.record_bytes (10⁹ bytes streamed).
[budget]
record_bytes = 10_000_000_000
"""


# Short flows at a fixed arrival rate: concurrency (arrival rate × flow duration, ~40 ms here)
# stays the same however long the run, so memory should too.
WORKLOAD_SCENARIO = f"""\
name = "workload"
seed = 1
duration = "1s"
hosts = ["a", "b"]
routers = ["r"]
[[links]]
from = "a"
to = "r"
rate = "100Mbps"
delay = "5ms"
[[links]]
from = "r"
to = "b"
rate = "100Mbps"
delay = "5ms"
[[workloads]]
pairs = [["a", "b"]]
arrival_rate = {WORKLOAD_RATE_PER_S}
size = "10kB"
flow = {{kind = "tcp", tcp = {{profile = "rfc"}}}}
[record]
queues = false
drops = false
cwnd = false
rtt = false
monitors = false
# 10⁷ arrivals stream a flows table of a few GB, past the default budget.record_bytes (10⁹).
[budget]
record_bytes = 100_000_000_000
"""


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def measure(scenario: Path, duration_s: int, work: Path) -> tuple[float, float, int]:
    """(peak RSS in MiB, wall seconds, output bytes) of one `quench run` process."""
    out = work / "out"
    cmd = [sys.executable, "-m", "quench.cli", "run", str(scenario), "--out", str(out)]
    cmd += ["--duration", f"{duration_s}s", "--no-plots", "--quiet", "--force"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"bench_memory: {' '.join(cmd)} failed with status {proc.returncode}")
    size = folder_bytes(out)
    shutil.rmtree(out)
    return usage.ru_maxrss * KIB / MIB, wall, size  # ru_maxrss is in KiB on Linux


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help=f"durations up to {QUICK_LIMIT_S} s only")
    p.add_argument("--case", choices=("dumbbell", "pcap10g", "workload"), action="append", help="only these cases")
    args = p.parse_args()
    limit = QUICK_LIMIT_S if args.quick else max(DUMBBELL_DURATIONS_S + PCAP_DURATIONS_S)
    most_arrivals = QUICK_ARRIVALS if args.quick else max(WORKLOAD_ARRIVALS)
    with tempfile.TemporaryDirectory(prefix="quench-bench-memory-") as tmp:
        work = Path(tmp)
        pcap = work / "pcap10g.toml"
        pcap.write_text(PCAP_SCENARIO)
        cases = [("dumbbell", DUMBBELL, d) for d in DUMBBELL_DURATIONS_S if d <= limit]
        cases += [("pcap10g", pcap, d) for d in PCAP_DURATIONS_S if d <= limit]
        workload = work / "workload.toml"
        workload.write_text(WORKLOAD_SCENARIO)
        arrivals = [n for n in WORKLOAD_ARRIVALS if n <= most_arrivals]
        cases += [("workload", workload, n // WORKLOAD_RATE_PER_S) for n in arrivals]
        cases = [c for c in cases if args.case is None or c[0] in args.case]
        print(f"{'case':<10} {'simulated s':>11} {'peak RSS MiB':>12} {'wall s':>8} {'output MB':>10}", flush=True)
        for name, scenario, duration in cases:
            rss, wall, size = measure(scenario, duration, work)
            print(f"{name:<10} {duration:>11} {rss:>12.0f} {wall:>8.1f} {size / 1e6:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
