"""Sweeps that survive their points: a worker killed by a signal, a point past its time or
memory limit, the sweep process itself killed with SIGKILL (no process of its pool may outlive
it), and the base scenario's [record] table kept. Each test is bounded: points run a few
seconds at most, and limits stop the ones that would run longer."""

import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from toml_text import toml_value

from quench import sweep
from quench.cli import main
from quench.sweep import parse_spec, run_sweep

# Generous bounds for a shared 2-core machine; the tests normally take a fraction of them.
START_S = 60
SWEEP_S = 120
POLL_S = 0.05
# A process of a killed sweep's pool must be gone this soon after the kill.
GONE_S = 2.0


def udp(rate: str, limit: str, duration: str) -> dict:
    """One UDP source into a 1 Mb/s link. At 10 Gb/s with a small buffer it drops ~830,000
    packets a simulated second (about 0.1 wall seconds each, memory flat: drops are not
    recorded); with a huge buffer its queue grows by ~350 MB a wall second."""
    return {
        "seed": 1,
        "duration": duration,
        "hosts": ["a", "b"],
        "routers": [],
        "links": [
            {"from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms", "qdisc": {"kind": "droptail", "limit": limit}}
        ],
        "flows": [{"kind": "udp", "src": "a", "dst": "b", "rate": rate}],
        "record": {"queues": False, "drops": False, "monitors": False},
        # A runaway source on purpose (10 Gb/s for up to 1000 s, ~10⁹ packets): past the
        # default packet budget, which would refuse it before the limits under test could act.
        "budget": {"packets": 10**12},
    }


def write_spec(path: Path, base: dict, grid: dict, **sweep) -> Path:
    lines = ["[sweep]", *(f"{k} = {json.dumps(v)}" for k, v in sweep.items()), "[sweep.grid]"]
    lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in grid.items()]
    lines += ["[sweep.base]", *(f"{k} = {toml_value(v)}" for k, v in base.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def parquet_files(out: Path) -> list[Path]:
    return sorted((out / "points").rglob("*.parquet"))


def workers_of(pid: int) -> list[psutil.Process]:
    """The sweep's pool workers: the children of its fork server."""
    try:
        children = psutil.Process(pid).children()
    except psutil.NoSuchProcess:
        return []
    servers = [c for c in children if "forkserver" in " ".join(c.cmdline())]
    return [w for s in servers for w in s.children()]


def wait_for_workers(proc: subprocess.Popen, n: int) -> list[psutil.Process]:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the sweep ended before its workers could be seen"
        workers = workers_of(proc.pid)
        if len(workers) >= n:
            return workers
        time.sleep(POLL_S)
    raise AssertionError(f"fewer than {n} workers after {START_S} s")


def running(p: psutil.Process) -> bool:
    """Alive: not gone and not a zombie (dead, waiting for its new parent to reap it)."""
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def sweep_cmd(spec: Path, out: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "quench.cli", "sweep", str(spec), "--out", str(out), *args]


def test_the_base_record_table_is_kept():
    base = udp("1Mbps", "10p", "1s")
    spec = parse_spec({"sweep": {"base": base, "grid": {"flows.0.rate": ["1Mbps", "2Mbps"]}}})
    for point in spec.points():
        assert spec.scenario(point)["record"] == base["record"]


def test_a_worker_killed_by_a_signal_fails_its_point_and_the_others_finish(tmp_path):
    """Before: BrokenProcessPool took the sweep down (half the points written, no failure
    recorded, no summary). Now: one failed point with the signal, the rest written, exit 1 and
    one line per failure, no traceback; a resumed sweep tries the failed point again."""
    spec = write_spec(tmp_path / "spec.toml", udp("10Gbps", "100p", "8s"), {}, seeds=4, retries=0)
    out = tmp_path / "out"
    proc = subprocess.Popen(sweep_cmd(spec, out, "--jobs", "2", "--quiet"), stderr=subprocess.PIPE, text=True)
    victim = wait_for_workers(proc, 1)[0]
    victim.send_signal(signal.SIGABRT)
    _, err = proc.communicate(timeout=SWEEP_S)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "failed" in line]
    assert len(lines) == 1 and lines[0].endswith("after 1 attempts: worker died: signal 6 (SIGABRT)"), err
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["succeeded"], summary["failed"]) == (3, 1)
    (failure,) = summary["failures"]
    assert failure["cause"] == "died" and failure["seed"] == failure["params"]["seed"]
    status = json.loads((out / "status" / f"{failure['id']}.json").read_text())
    assert status["status"] == "failed" and status["error"] == "worker died: signal 6 (SIGABRT)"
    assert len(parquet_files(out)) == 3
    # Resume: the failed point runs again, the others are reused.
    again = run_sweep(spec, out, jobs=1, quiet=True)
    assert (again["reused"], again["succeeded"], again["failed"]) == (3, 1, 0)
    assert len(parquet_files(out)) == 4


def test_points_past_their_time_or_memory_limit_fail_and_the_others_finish(tmp_path):
    grid = {"flows.0.rate": ["1Mbps", "10Gbps"], "links.0.qdisc.limit": ["100p", "100000000p"]}
    spec = {"sweep": {"base": udp("1Mbps", "100p", "1000s"), "grid": grid, "retries": 2}}
    started = time.monotonic()
    summary = run_sweep(spec, tmp_path, jobs=2, quiet=True, point_timeout=3, point_memory=100)
    assert time.monotonic() - started < SWEEP_S
    assert (summary["succeeded"], summary["failed"]) == (2, 2)
    assert summary["limits"] == {"point_timeout_s": 3.0, "point_memory_mb": 100.0}
    by_limit = {f["params"]["links.0.qdisc.limit"]: f for f in summary["failures"]}
    assert all(f["params"]["flows.0.rate"] == "10Gbps" for f in summary["failures"])
    # The small buffer drops packets for ~90 s of wall time: stopped at 3 s.
    assert by_limit["100p"]["error"] == "exceeded 3 s" and by_limit["100p"]["cause"] == "timeout"
    # The huge buffer's queue grows until an allocation fails at the limit.
    assert by_limit["100000000p"]["cause"] == "memory", by_limit
    assert by_limit["100000000p"]["error"].startswith("exceeded 100 MB (")
    # Past a limit is not retried: the engine is deterministic.
    assert all(f["attempts"] == 1 for f in summary["failures"])
    assert len(parquet_files(tmp_path)) == 2


# The experiments' grid runner's pool (a ProcessPoolExecutor) under a process killed mid-grid.
GRID_SCRIPT = """
import time
from quench.sweep import process_pool

if __name__ == "__main__":
    pool = process_pool(2)
    for _ in range(2):
        pool.submit(time.sleep, 1000)
    time.sleep(1000)
"""


@pytest.mark.parametrize("who", ["quench sweep", "process_pool"])
def test_sigkill_of_the_sweep_takes_its_whole_pool_down(tmp_path, who):
    """Before: the fork server, the resource tracker and the workers stayed alive (one still
    there 74 s later). Every descendant must be gone soon after the SIGKILL, for a sweep and
    for the experiments' pool."""
    if who == "quench sweep":
        spec = write_spec(tmp_path / "spec.toml", udp("10Gbps", "100p", "1000s"), {}, seeds=4)
        cmd = sweep_cmd(spec, tmp_path / "out", "--jobs", "2", "--quiet")
    else:
        (tmp_path / "grid.py").write_text(GRID_SCRIPT)
        cmd = [sys.executable, str(tmp_path / "grid.py")]
    proc = subprocess.Popen(cmd)
    descendants: list[psutil.Process] = []
    try:
        wait_for_workers(proc, 2)
        descendants = psutil.Process(proc.pid).children(recursive=True)
        assert len(descendants) >= 4  # the resource tracker, the fork server, two workers
        proc.kill()
        proc.wait(timeout=START_S)
        deadline = time.monotonic() + GONE_S
        while (alive := [p for p in descendants if running(p)]) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        assert not alive, [f"{p.pid}: {' '.join(p.cmdline())}" for p in alive]
    finally:  # leave nothing behind, whatever failed above
        for p in [psutil.Process(proc.pid), *descendants] if proc.poll() is None else descendants:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--point-timeout", "-1"], "--point-timeout: must be a non-negative number (0: no limit), got -1.0"),
        (["--point-memory", "nan"], "--point-memory: must be a non-negative number"),
        (["--point-memory", "512", "--cluster", "tcp://127.0.0.1:1"], "--point-timeout/--point-memory limit local"),
    ],
)
def test_bad_limits_are_refused_before_anything_runs(tmp_path, capsys, args, message):
    spec = write_spec(tmp_path / "spec.toml", udp("1Mbps", "10p", "1s"), {}, seeds=2)
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_sweep_under_an_inherited_address_space_limit_runs_its_points(tmp_path):
    """Under `ulimit -v` (soft and hard RLIMIT_AS), the default per-point memory (physical
    memory / workers) is above the hard limit, which a worker cannot raise: it is capped at the
    inherited limit instead of failing every point's setrlimit."""
    spec = write_spec(tmp_path / "spec.toml", udp("1Mbps", "100p", "2s"), {}, seeds=2, retries=0)
    out = tmp_path / "out"
    command = " ".join(sweep_cmd(spec, out, "--jobs", "1", "--quiet"))
    done = subprocess.run(
        ["bash", "-c", f"ulimit -v 4194304 && exec {command}"], capture_output=True, text=True, timeout=SWEEP_S
    )
    assert done.returncode == 0, done.stderr
    assert len(parquet_files(out)) == 2


EXAMPLE_SWEEP = Path(__file__).resolve().parents[1] / "scenarios" / "sweep_example.toml"
# The example sweep's points: 3 buffers × 2 controllers × 3 seeds.
EXAMPLE_POINTS = 18


def test_the_example_sweep_runs_every_point_under_ulimit_v_4_gb(tmp_path):
    """`ulimit -v 4194304; quench sweep scenarios/sweep_example.toml`: every point of the
    example sweep runs (the default per-point memory is capped at the inherited limit), none
    fails (exit status 0, not EXIT_POINTS_FAILED)."""
    out = tmp_path / "out"
    command = " ".join(sweep_cmd(EXAMPLE_SWEEP, out, "--jobs", "2", "--quiet"))
    done = subprocess.run(
        ["bash", "-c", f"ulimit -v 4194304 && exec {command}"], capture_output=True, text=True, timeout=4 * SWEEP_S
    )
    assert done.returncode == 0, done.stderr
    assert len(parquet_files(out)) == EXAMPLE_POINTS


def test_the_default_time_limit_follows_the_budget_by_its_rule():
    """60 s plus the budget's work at 10^6 events a second: 2 events per packet, 10 per flow."""
    assert sweep.budget_timeout_s({}) == 60 + (2 * 10**8 + 10 * 10**7) / 1e6 == 360
    assert sweep.budget_timeout_s({"budget": {"packets": 10**9, "flows": 1000}}) == 60 + 2000 + 0.01
    # A value that is not a positive number counts as the default (validation refuses it).
    assert sweep.budget_timeout_s({"budget": {"packets": "lots", "flows": -1}}) == 360
    assert sweep.budget_timeout_s({"budget": "none"}) == 360


def test_the_budget_defaults_are_the_engines():
    """The engine writes budget.flows always and budget.packets only when it differs from its
    default: both defaults read back from a validated scenario."""
    from quench import validate_scenario

    base = udp("1Mbps", "100p", "1s")
    del base["budget"]
    assert validate_scenario(base)["budget"]["flows"] == sweep.DEFAULT_FLOW_BUDGET
    at_default = validate_scenario({**base, "budget": {"packets": sweep.DEFAULT_PACKET_BUDGET}})["budget"]
    above = validate_scenario({**base, "budget": {"packets": sweep.DEFAULT_PACKET_BUDGET + 1}})["budget"]
    assert "packets" not in at_default and above["packets"] == sweep.DEFAULT_PACKET_BUDGET + 1


def test_a_runaway_point_stops_at_its_budgets_time_limit(tmp_path, monkeypatch):
    """No --point-timeout: a point of 1000 simulated seconds of TCP at 10 Gb/s (work its budget
    does not count) stops at the limit its budget gives (set-up time shortened to 2 s here),
    and the short point beside it finishes."""
    monkeypatch.setattr(sweep, "POINT_SETUP_S", 2.0)
    base = {
        "seed": 1,
        "duration": "1000s",
        "hosts": ["a", "b"],
        "links": [{"from": "a", "to": "b", "rate": "10Gbps", "delay": "1ms"}],
        "flows": [{"kind": "tcp", "src": "a", "dst": "b"}],
        "record": {"queues": False, "drops": False, "monitors": False},
        "budget": {"packets": 1, "flows": 1},
    }
    spec = {"sweep": {"base": base, "grid": {"duration": ["10ms", "1000s"]}}}
    started = time.monotonic()
    summary = run_sweep(spec, tmp_path, jobs=2, quiet=True)
    assert time.monotonic() - started < SWEEP_S
    assert (summary["succeeded"], summary["failed"]) == (1, 1)
    assert summary["limits"]["point_timeout_s"] == "from each point's budget"
    (failure,) = summary["failures"]
    limit = sweep.budget_timeout_s(base)
    assert limit == 2.0 + 12 / 1e6
    assert failure["params"]["duration"] == "1000s" and failure["cause"] == "timeout"
    assert failure["error"] == f"exceeded {limit:g} s (the limit from its budget; --point-timeout sets another)"


def test_a_zero_point_timeout_turns_the_budgets_limit_off():
    limits = sweep._limits(1, 0.0, 0.0)
    assert limits.point_timeout_s({}) is None and limits.memory_mb is None
    assert sweep._limits(1, None, 0.0).point_timeout_s({}) == 360
    assert sweep._limits(1, 5.0, 0.0).point_timeout_s({}) == 5.0
