"""Whole-process time of `quench run` beside its run loop: a fast start.

Writes the dumbbells of bench_dumbbell.py (the same ns-3-matched TCP, quench_dumbbell.py) as
TOML scenarios with recording off, runs `quench run X.toml --out D --no-plots --quiet` as a
fresh process `--repeats` times, and prints for each the fastest whole-process wall time, its
CPU time (user + system, from the child's rusage), the run loop (meta.json's wall_run_s), and
what is left: interpreter start, imports, building, and saving the Parquet tables. The bare
interpreter and `import quench` are timed the same way. Raw numbers go to
benchmarks/results/start.json.

    .venv/bin/python benchmarks/bench_start.py [--configs small,medium] [--repeats 5]

Target: the 4-flow configuration ("small") under 0.15 s whole-process.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
sys.path.insert(0, str(BENCH_DIR))

from bench_dumbbell import CONFIGS, PACKET_BYTES, RTT_S  # noqa: E402
from quench_dumbbell import ns3_matched_dumbbell  # noqa: E402

TARGET_SMALL_S = 0.15  # the goal for the 4-flow configuration's whole process


def toml_value(v: object) -> str:
    """A value as TOML: tables and arrays inline (enough for a scenario's plain data)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string for the plain text of a scenario
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items() if x is not None) + "}"
    raise TypeError(f"no TOML for {type(v).__name__}")


def scenario_toml(cfg: dict, seed: int) -> str:
    buffer_pkts = math.ceil(cfg["rate"] * RTT_S / 8 / PACKET_BYTES)
    net = ns3_matched_dumbbell(cfg["flows"], cfg["rate"], RTT_S, buffer_pkts, seed, sack=True, limited_transmit=True)
    net.record(queues=False, drops=False, cwnd=False, rtt=False, monitors=False)
    spec = net.to_dict(cfg["duration"])
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in spec.items() if v is not None)


# The children run as a user's installed quench does: with its modules' bytecode cached. An
# environment that forbids writing bytecode (PYTHONDONTWRITEBYTECODE, as some CI machines set)
# would have every run compile quench's modules from source again (70-90 ms measured here).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=CHILD_ENV)
    _, status, rusage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, rusage.ru_utime + rusage.ru_stime


def best(runs: list[tuple[float, ...]]) -> list[float]:
    """Each measure's minimum over the runs (on a shared machine the minimum is the cost)."""
    return [min(r[i] for r in runs) for i in range(len(runs[0]))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", default="small,medium,large", help=f"subset of {','.join(CONFIGS)}")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    python = sys.executable
    script = Path(python).parent / "quench"  # the installed command, as a user runs it
    quench = [str(script)] if script.exists() else [python, "-m", "quench.cli"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="quench-bench-start-") as tmp:
        for label, code in (("python (bare interpreter)", "pass"), ("import quench", "import quench")):
            wall, cpu = best([timed([python, "-c", code]) for _ in range(a.repeats)])
            rows.append({"case": label, "process_wall_s": wall, "process_cpu_s": cpu})
        for name in a.configs.split(","):
            cfg = CONFIGS[name]
            scenario = Path(tmp) / f"{name}.toml"
            scenario.write_text(scenario_toml(cfg, a.seed))
            out = Path(tmp) / f"{name}-out"
            runs = []
            for _ in range(a.repeats):
                shutil.rmtree(out, ignore_errors=True)
                wall, cpu = timed([*quench, "run", str(scenario), "--out", str(out), "--no-plots", "--quiet"])
                loop = json.loads((out / "meta.json").read_text())["wall_run_s"]
                runs.append((wall, cpu, loop))
            wall, cpu, loop = best(runs)
            rows.append(
                {
                    "case": f"quench run {name} ({cfg['flows']} flows, {cfg['duration']:g} s)",
                    "process_wall_s": wall,
                    "process_cpu_s": cpu,
                    "run_loop_s": loop,
                }
            )
    print(f"{'case':<36} {'process wall s':>14} {'process CPU s':>13} {'run loop s':>10} {'rest s':>7}")
    for r in rows:
        loop = r.get("run_loop_s")
        rest = f"{r['process_wall_s'] - loop:7.3f}" if loop is not None else f"{'':>7}"
        shown = f"{loop:10.3f}" if loop is not None else f"{'':>10}"
        print(f"{r['case']:<36} {r['process_wall_s']:14.3f} {r['process_cpu_s']:13.3f} {shown} {rest}")
    small = next((r for r in rows if r["case"].startswith("quench run small")), None)
    if small is not None:
        verdict = "meets" if small["process_wall_s"] < TARGET_SMALL_S else "misses"
        print(f"4-flow whole process {small['process_wall_s']:.3f} s {verdict} the {TARGET_SMALL_S} s target")
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "start.json").write_text(json.dumps({"repeats": a.repeats, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
