"""The main job's cost: wall time, peak memory and the longest silence of `quench reproduce all`,
the command `make reproduce` runs once the build is done. A benchmark, not a test: it prints a
table and checks nothing.

The job runs in a child process under `/usr/bin/time -v` (where it is installed), which gives the
main process's peak resident set size. The experiments' runs go to worker processes that a fork
server starts, which neither `time` nor os.wait4 accounts (the fork server reaps them, not the
main process), so every process of the job's tree is sampled from /proc every
`SAMPLE_INTERVAL_S`: each process's own high-water mark (`VmHWM`, exact however short the peak)
and the tree's summed resident set (`VmRSS`, as sampled). Every line the job prints is
time-stamped as it arrives, which gives each experiment's wall time (from its `== name` line
to the next) and the longest stretch without a line.

    .venv/bin/python benchmarks/bench_reproduce.py             # the full job (15-20 min on 2 cores)
    .venv/bin/python benchmarks/bench_reproduce.py --quick     # CI's short form (about 2 min)
    .venv/bin/python benchmarks/bench_reproduce.py --out DIR   # keep the results in DIR
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Often enough that the summed resident set is seen near its peak; each process's own peak is
# exact anyway (VmHWM is kept by the kernel).
SAMPLE_INTERVAL_S = 0.25
TIME_V = "/usr/bin/time"
KIB = 1024
MIB = 1024 * 1024
HEADER = re.compile(r"^== (\S+) ")


@dataclass
class Memory:
    """What the sampler saw: each process's peak (KiB, by pid, with its command line) and the
    largest sum over the tree."""

    peak_kib: dict[int, int] = field(default_factory=dict)
    command: dict[int, str] = field(default_factory=dict)
    tree_peak_kib: int = 0


def _status_kib(pid: int) -> tuple[int, int] | None:
    """(VmHWM, VmRSS) of `pid` in KiB, None once it has gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    try:
        return int(fields["VmHWM"].split()[0]), int(fields["VmRSS"].split()[0])
    except (KeyError, ValueError):
        return None  # a zombie, or a kernel thread


def _tree(root: int) -> list[int]:
    """`root` and every process descended from it, from the parent ids in /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the parent id follows it.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def sample(root: int, memory: Memory, stop: threading.Event) -> None:
    """Sample `root`'s process tree into `memory` until `stop` is set."""
    while not stop.is_set():
        total = 0
        for pid in _tree(root):
            kib = _status_kib(pid)
            if kib is None:
                continue
            hwm, rss = kib
            total += rss
            if hwm > memory.peak_kib.get(pid, 0):
                memory.peak_kib[pid] = hwm
                memory.command.setdefault(pid, _command(pid))
        memory.tree_peak_kib = max(memory.tree_peak_kib, total)
        stop.wait(SAMPLE_INTERVAL_S)


def run_job(out: Path, quick: bool) -> tuple[list[tuple[float, str]], float, int, Memory, str]:
    """Run the job; its time-stamped lines, wall seconds, exit status, memory and `time -v` text."""
    job = [sys.executable, "-m", "quench.cli", "reproduce", "all", "--out", str(out)] + (["--quick"] if quick else [])
    timed = Path(tempfile.mkstemp(prefix="bench-reproduce-time-")[1])
    cmd = [TIME_V, "-v", "-o", str(timed), *job] if Path(TIME_V).exists() else job
    memory, stop, lines = Memory(), threading.Event(), []
    start = time.monotonic()
    # Unbuffered, so that each line is stamped when the job prints it, not when a buffer fills.
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    sampler = threading.Thread(target=sample, args=(proc.pid, memory, stop), daemon=True)
    sampler.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append((time.monotonic() - start, line.rstrip("\n")))
    status = proc.wait()
    wall = time.monotonic() - start
    stop.set()
    sampler.join()
    text = timed.read_text() if timed.exists() else ""
    timed.unlink(missing_ok=True)
    return lines, wall, status, memory, text


def experiment_walls(lines: list[tuple[float, str]], wall: float) -> list[tuple[str, float]]:
    """Each experiment's wall seconds, from its header line to the next header (or the end)."""
    starts = [(t, m.group(1)) for t, line in lines if (m := HEADER.match(line))]
    ends = [t for t, _ in starts[1:]] + [wall]
    return [(name, end - t) for (t, name), end in zip(starts, ends)]


def longest_silence(lines: list[tuple[float, str]], wall: float) -> tuple[float, str]:
    """The longest stretch without a line, and the line that ended it."""
    best, after, last = 0.0, "", 0.0
    for t, line in [*lines, (wall, "(end)")]:
        if t - last > best:
            best, after = t - last, line
        last = t
    return best, after


def main_process_peak_kib(time_v: str) -> int | None:
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_v)
    return int(m.group(1)) if m else None


def report(lines: list[tuple[float, str]], wall: float, status: int, memory: Memory, time_v: str) -> None:
    print(f"exit status {status}; wall {wall / 60:.1f} min ({wall:.0f} s); load average now {os.getloadavg()[0]:.2f}")
    main_kib = main_process_peak_kib(time_v)
    if main_kib is not None:
        print(f"main process peak RSS (/usr/bin/time -v): {main_kib * KIB / MIB:.0f} MiB")
    if memory.peak_kib:
        pid = max(memory.peak_kib, key=lambda p: memory.peak_kib[p])
        peak = memory.peak_kib[pid] * KIB / MIB
        print(f"largest process peak RSS (VmHWM): {peak:.0f} MiB  [{memory.command[pid][:100]}]")
    tree = memory.tree_peak_kib * KIB / MIB
    print(f"process tree's summed RSS, sampled every {SAMPLE_INTERVAL_S:g} s: {tree:.0f} MiB")
    gap, after = longest_silence(lines, wall)
    print(f"longest stretch without a line: {gap:.1f} s (ended by: {after.strip()[:100]})")
    print(f"\n{'experiment':<18} {'wall s':>8}")
    for name, seconds in experiment_walls(lines, wall):
        print(f"{name:<18} {seconds:>8.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="CI's short form of every experiment")
    ap.add_argument("--out", type=Path, help="keep the results here (default: a temporary folder, deleted)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-reproduce-"))
    try:
        report(*run_job(out, args.quick))
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
