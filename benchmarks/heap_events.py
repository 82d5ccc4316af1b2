"""Heap events per delivered packet on the two guard dumbbells of `instructions.py` (4 flows at
10 Mb/s for 20 s, 16 flows at 100 Mb/s for 5 s; ns-3's TCP settings, recording off): the
events that went through the event queue over the data packets the bottleneck delivered, and
the model's own event count beside it (ends of transmission carried out without an event
count in the model's, not in the queue's; docs/design.md, "Ends of transmission without
events"). The goal is at most 4 (docs/benchmarks.md, "Heap events per delivered packet").
A count, not a time: it repeats on a busy machine.

    python benchmarks/heap_events.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from instructions import bench_binary, dumbbell_files  # noqa: E402

GOAL = 4.0


def main() -> None:
    binary = bench_binary()
    with tempfile.TemporaryDirectory() as folder:
        for flows, rate, seconds, path in dumbbell_files(Path(folder)):
            out = subprocess.run([binary, str(path), "1"], capture_output=True, text=True, check=True).stdout
            found = re.search(r"(\d+) events .* (\d+) heap events \(([\d.]+) per packet", out)
            if not found:
                raise SystemExit(f"unexpected output from the scenario bench:\n{out}")
            events, heap, per_packet = int(found[1]), int(found[2]), float(found[3])
            print(
                f"{flows} flows, {rate / 1e6:g} Mb/s, {seconds:g} s: {per_packet:.2f} heap events per delivered "
                f"packet ({heap:,} through the queue of the model's {events:,}; goal at most {GOAL:g})"
            )


if __name__ == "__main__":
    main()
