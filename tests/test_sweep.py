"""Parameter sweeps: spec checking, dotted keys, the deterministic sample, t-intervals against
printed tables, the partitioned dataset, retries, resume after a killed run, and a real local
Dask cluster losing a worker mid-sweep."""

import json
import math
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from toml_text import toml_value

import quench
from quench.cli import main
from quench.sweep import SweepSpecError, apply, confidence_interval, load, parse_spec, run_sweep, t_quantile

VENV_BIN = Path(sys.executable).parent
# Generous limits: this 2-core machine is shared, and starting Python processes is slow on it.
PROCESS_START_S = 90
SWEEP_TIMEOUT_S = 240
POLL_S = 0.02
# Student's t 0.975 quantiles from printed tables (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
T_TABLE_975 = {1: 12.706, 2: 4.303, 4: 2.776, 9: 2.262, 29: 2.045}
T_TABLE_995 = {1: 63.657, 5: 4.032, 10: 3.169}


def base() -> dict:
    """Two TCP flows through a 2 Mb/s bottleneck with 0.2% random loss (so seeds differ); a run
    takes about 0.15 s."""
    bottleneck = {"rate": "2Mbps", "delay": "10ms", "loss": 0.002, "qdisc": {"kind": "droptail", "limit": "20p"}}
    return {
        "seed": 1,
        "duration": "20s",
        "hosts": ["a0", "a1", "b"],
        "routers": ["r"],
        "links": [
            {"from": "a0", "to": "r", "rate": "10Mbps", "delay": "1ms"},
            {"from": "a1", "to": "r", "rate": "10Mbps", "delay": "1ms"},
            {"from": "r", "to": "b", **bottleneck},
        ],
        "flows": [{"kind": "tcp", "src": f"a{i}", "dst": "b", "cc": "newreno"} for i in range(2)],
        "record": {"links": ["r->b"]},
    }


def spec(grid: dict | None = None, **sweep) -> dict:
    return {"sweep": {"base": base(), "grid": grid or {}, **sweep}}


def parquet_files(out: Path) -> list[Path]:
    return sorted((out / "points").rglob("*.parquet"))


# --- the spec ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sweep, message",
    [
        ({"grid": {"links.9.rate": ["1Mbps"]}}, 'sweep.grid."links.9.rate": no such element: scenario.links has 3'),
        ({"grid": {"links.2.qdiscc.limit": ["5p"]}}, 'sweep.grid."links.2.qdiscc.limit": no such element'),
        ({"grid": {"flows.x.cc": ["reno"]}}, 'sweep.grid."flows.x.cc": scenario.flows is a list'),
        ({"grid": {"duration": []}}, 'sweep.grid."duration": must be a non-empty list'),
        ({"gird": {}}, "sweep.gird: unknown key"),
        ({"grid": {"seed": [1]}, "seeds": 2}, "sweep.seeds: give seeds here only"),
        ({"seeds": 2, "metrics": ["utilization", "goodput"]}, "sweep.metrics[1]: unknown metric 'goodput'"),
        ({"seeds": 2, "retries": -1}, "sweep.retries: must be a non-negative integer"),
        ({"sample": {"points": 3, "params": {"links.2.loss": {"uniform": [0.1]}}}}, '"links.2.loss".uniform'),
        ({"sample": {"points": 3, "params": {"links.2.loss": {"normal": [0, 1]}}}}, '"links.2.loss": must be one'),
        ({"set": {"links.3.rate": "1Mbps"}, "seeds": 2}, 'sweep.set."links.3.rate": no such element'),
    ],
)
def test_malformed_spec_names_the_key(sweep, message):
    data = {"sweep": {"base": base(), **sweep}}
    with pytest.raises(SweepSpecError) as e:
        parse_spec(data)
    assert message in str(e.value)


def test_cli_rejects_a_malformed_spec_file(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    dumbbell = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell.toml"
    path.write_text(f'[sweep]\nbase = "{dumbbell}"\n[sweep.grid]\n"links.9.rate" = ["1Mbps"]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert 'sweep.grid."links.9.rate": no such element: scenario.links has 9 elements' in err
    assert not (tmp_path / "out").exists()


def test_dotted_keys_set_one_element_or_every_element():
    s = base()
    apply(s, "flows.*.cc", "tahoe")
    apply(s, "links.2.qdisc.limit", "7p")
    apply(s, "links.0.loss", 0.5)  # a key the base leaves to its default
    assert [f["cc"] for f in s["flows"]] == ["tahoe", "tahoe"]
    assert s["links"][2]["qdisc"] == {"kind": "droptail", "limit": "7p"}
    assert s["links"][0]["loss"] == 0.5 and "loss" not in s["links"][1]
    assert quench.validate_scenario(s)["links"][2]["qdisc"]["limit"] == "7p"


def test_grid_crossed_with_seeds_in_spec_order():
    points = parse_spec(
        spec({"flows.*.cc": ["reno", "tahoe"], "links.2.qdisc.limit": ["10p", "30p"]}, seeds=3)
    ).points()
    assert len(points) == 12 and len({p.id for p in points}) == 12
    assert points[0].params == {"flows.*.cc": "reno", "links.2.qdisc.limit": "10p", "seed": 1}
    assert points[-1].params == {"flows.*.cc": "tahoe", "links.2.qdisc.limit": "30p", "seed": 3}
    assert str(points[0].partition()) == "flows.%2A.cc=reno/links.2.qdisc.limit=10p/seed=1"
    # The id and the path depend on the assignment, not on the order of the axes in the spec.
    swapped = parse_spec(spec({"links.2.qdisc.limit": ["10p", "30p"], "flows.*.cc": ["reno", "tahoe"]}, seeds=3))
    assert {(p.id, p.partition()) for p in swapped.points()} == {(p.id, p.partition()) for p in points}


def test_a_parameter_mixing_value_types_is_stored_as_text():
    sweep = parse_spec(spec({"links.2.qdisc.limit": ["10p", 30], "links.2.loss": [0, 0.01]}, seeds=1))
    assert sweep.text_keys() == {"links.2.qdisc.limit"}


def test_sample_is_deterministic_and_drawn_from_the_seeded_generator():
    params = {
        "links.2.loss": {"uniform": [0.001, 0.01]},
        "links.2.rate": {"log_uniform": [1e6, 1e7]},
        "links.2.qdisc.limit": {"choice": ["10p", "20p", "40p"]},
        "duration": {"int": [5, 9]},
    }
    sweep = spec(sample={"points": 6, "seed": 42, "params": params}, seeds=[3])
    first, again = parse_spec(sweep).points(), parse_spec(sweep).points()
    assert [p.params for p in first] == [p.params for p in again]
    # The same draws by hand: one random() per parameter, per point, in spec order.
    rng = random.Random(42)
    for p in first:
        u = [rng.random() for _ in range(4)]
        assert p.params["links.2.loss"] == pytest.approx(0.001 + u[0] * 0.009, rel=1e-12)
        assert p.params["links.2.rate"] == pytest.approx(1e6 * 10 ** u[1], rel=1e-12)
        assert p.params["links.2.qdisc.limit"] == ["10p", "20p", "40p"][int(u[2] * 3)]
        assert p.params["duration"] == 5 + int(u[3] * 5) and p.params["seed"] == 3
    other = parse_spec(spec(sample={"points": 6, "seed": 43, "params": params}, seeds=[3])).points()
    assert [p.params for p in other] != [p.params for p in first]


# --- statistics --------------------------------------------------------------------------------


def test_t_quantiles_match_printed_tables():
    for df, t in T_TABLE_975.items():
        assert t_quantile(0.975, df) == pytest.approx(t, abs=1e-3)
    for df, t in T_TABLE_995.items():
        assert t_quantile(0.995, df) == pytest.approx(t, abs=1e-3)


def test_confidence_interval_by_hand():
    # 1..5: mean 3, s = sqrt(2.5), half-width t(0.975, 4) s / sqrt(5) = 2.776 * 0.7071 = 1.9632.
    mean, half = confidence_interval(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert mean == 3.0 and half == pytest.approx(1.9632, abs=1e-4)
    assert math.isnan(confidence_interval(np.array([2.0]))[1])


# --- running sweeps -----------------------------------------------------------------------------


def test_local_sweep_writes_each_point_once_with_its_parameters_and_statistics(tmp_path):
    sweep = spec({"links.2.qdisc.limit": ["10p", "30p"]}, seeds=[1, 2, 3], metrics=["goodput_bps", "loss_rate"])
    summary = run_sweep(sweep, tmp_path, jobs=2, quiet=True)
    assert (summary["points"], summary["succeeded"], summary["reused"], summary["failed"]) == (6, 6, 0, 0)
    assert len(parquet_files(tmp_path)) == 6
    flows = load(tmp_path, "flows")
    assert len(flows) == 12 and set(flows["links.2.qdisc.limit"]) == {"10p", "30p"}
    assert flows.groupby("point").size().eq(2).all() and "utilization" not in flows
    # A point's tables equal a direct run of its scenario with the `record` section kept.
    direct = quench.run_scenario(apply_all(base(), {"links.2.qdisc.limit": "30p", "seed": 2}), progress=False)
    row = flows[(flows["links.2.qdisc.limit"] == "30p") & (flows["seed"] == 2)]
    assert row["goodput_bps"].tolist() == direct.flows["goodput_bps"].tolist()
    # stats.csv: mean and t-interval over the three seeds, recomputed here from the raw rows.
    stats = pd.read_csv(tmp_path / "stats.csv")
    total = flows.groupby(["links.2.qdisc.limit", "seed"])["goodput_bps"].sum()
    for limit in ("10p", "30p"):
        x = total[limit].to_numpy()
        got = stats[stats["links.2.qdisc.limit"] == limit].iloc[0]
        half = T_TABLE_975[2] * x.std(ddof=1) / math.sqrt(3)
        assert got["seeds"] == 3 and got["goodput_bps_mean"] == pytest.approx(x.mean())
        assert got["goodput_bps_ci_high"] - got["goodput_bps_mean"] == pytest.approx(half, rel=1e-3)
    assert x.std() > 0  # the seeds do differ


def apply_all(scenario: dict, params: dict) -> dict:
    for key, value in params.items():
        apply(scenario, key, value)
    return scenario


def test_failing_point_is_retried_and_recorded_while_the_others_finish(tmp_path, capsys):
    path = tmp_path / "spec.toml"
    path.write_text(
        "[sweep]\nretries = 2\nseeds = [1, 2]\n[sweep.grid]\n"
        '"links.2.qdisc.limit" = ["10p", "lots", "30p"]\n'
        f"[sweep.base]\n{toml_of(base())}"
    )
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet"]) == 1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["succeeded"], summary["failed"], summary["reused"]) == (4, 2, 0)
    for failure in summary["failures"]:
        assert failure["params"]["links.2.qdisc.limit"] == "lots" and failure["attempts"] == 3
        assert "links[2].qdisc.limit: 'lots'" in failure["error"]
        status = json.loads((tmp_path / "out" / "status" / f"{failure['id']}.json").read_text())
        assert status["status"] == "failed" and status["attempts"] == 3 and status["file"] is None
    assert len(parquet_files(tmp_path / "out")) == 4
    # --retries overrides the spec; the failed points are tried again, the others reused.
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--retries", "0"]) == 1
    printed = capsys.readouterr().out
    assert "0 succeeded, 4 reused, 2 failed" in printed and "after 1 attempts" in printed


def toml_of(scenario: dict) -> str:
    """The base scenario as TOML under [sweep.base] (inline tables; enough for these dicts)."""
    lines = []
    for key, value in scenario.items():
        lines.append(f"{key} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


def wait_for_files(out: Path, at_least: int, running, context=None, timeout: float = SWEEP_TIMEOUT_S) -> int:
    """Wait until `at_least` points are written while `running()` says the sweep still runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = len(parquet_files(out))
        if n >= at_least:
            return n
        assert running(), f"the sweep ended before it could be interrupted: {context}"
        time.sleep(POLL_S)
    raise AssertionError(f"fewer than {at_least} points written in {timeout} s: {context}")


def test_interrupted_local_sweep_resumes_without_recomputing(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(
        f'[sweep]\nseeds = 8\n[sweep.grid]\n"flows.*.cc" = ["newreno", "reno", "tahoe"]\n'
        f"[sweep.base]\n{toml_of(base())}"
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "quench.cli", "sweep", str(path), "--out", str(out), "--jobs", "1", "--quiet"]
    # Ctrl-C: the sweep stops, says how to resume, exits 130. A shell starts a background job
    # with SIGINT ignored, and Python keeps an ignored SIGINT ignored: the child gets the
    # default disposition back, so that the test does not depend on how it was started.
    proc = subprocess.Popen(
        cmd, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )
    wait_for_files(out, 2, lambda: proc.poll() is None)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=PROCESS_START_S)
    assert proc.returncode == 130 and "run again to resume" in err
    # SIGKILL: nothing runs after it, not even cleanup.
    before = len(parquet_files(out))
    proc = subprocess.Popen(cmd)
    wait_for_files(out, before + 2, lambda: proc.poll() is None)
    proc.kill()
    proc.wait(timeout=PROCESS_START_S)
    written = {f: f.stat().st_mtime_ns for f in parquet_files(out)}
    assert 0 < len(written) < 24
    summary = run_sweep(path, out, jobs=2, quiet=True)
    assert (summary["reused"], summary["succeeded"], summary["failed"]) == (len(written), 24 - len(written), 0)
    assert all(f.stat().st_mtime_ns == t for f, t in written.items())
    files = parquet_files(out)
    assert len(files) == 24 and len({f.stem for f in files}) == 24
    assert not [f for f in out.rglob(".*") if f.name != ".lock"]


# --- a real Dask cluster --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cluster(tmp_path_factory):
    """A `dask scheduler` and two `dask worker` processes (no nanny: a killed worker stays dead);
    their logs go to dask.log, shown when the test fails."""
    log = (tmp_path_factory.mktemp("dask") / "dask.log").open("w")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(VENV_BIN / "dask")
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    ]
    worker = [dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--memory-limit", "0"]
    procs += [subprocess.Popen([*worker, "--name", f"w{i}"], stdout=log, stderr=subprocess.STDOUT) for i in range(2)]
    try:
        from distributed import Client

        with Client(address, timeout=PROCESS_START_S) as client:
            client.wait_for_workers(2, timeout=PROCESS_START_S)
            by_name = {w["name"]: a for a, w in client.scheduler_info()["workers"].items()}
        yield address, procs[1:], [by_name["w0"], by_name["w1"]], Path(log.name)
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=PROCESS_START_S)
        log.close()


def test_dask_sweep_survives_a_killed_worker(tmp_path, dask_cluster):
    address, workers, addresses, log = dask_cluster
    sweep = spec({"flows.*.cc": ["newreno", "tahoe"], "links.2.qdisc.limit": ["10p", "30p"]}, seeds=4)
    result = {}

    def sweep_on_cluster():
        try:
            result.update(run_sweep(sweep, tmp_path, cluster=address, quiet=True))
        except Exception as e:  # reported by the assertions below
            result["error"] = repr(e)

    runner = threading.Thread(target=sweep_on_cluster)
    runner.start()
    wait_for_files(tmp_path, 3, runner.is_alive, result)
    workers[0].kill()
    workers[0].wait(timeout=PROCESS_START_S)
    before_kill = {f.stem for f in parquet_files(tmp_path)}
    runner.join(SWEEP_TIMEOUT_S)
    assert not runner.is_alive() and "error" not in result, (result, log.read_text()[-3000:])
    assert len(before_kill) < 16
    assert (result["points"], result["succeeded"], result["failed"]) == (16, 16, 0)
    files = parquet_files(tmp_path)
    assert len(files) == 16 and len({f.stem for f in files}) == 16
    flows = load(tmp_path, "flows")
    assert flows.groupby("point").size().eq(2).all() and flows["point"].nunique() == 16
    # The surviving worker carried on after the kill (the dead one may still have had a result
    # on its way to the client), and no point ran anywhere but on the two workers.
    status = {f.stem: json.loads(f.read_text()) for f in (tmp_path / "status").iterdir()}
    assert addresses[1] in {status[pid]["worker"] for pid in set(status) - before_kill}
    assert {s["worker"] for s in status.values()} <= set(addresses)


# --- without the cluster extra -------------------------------------------------------------------


def test_cluster_without_dask_names_the_extra_before_touching_the_folder(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails
    out = tmp_path / "out"
    with pytest.raises(ImportError, match=r"^--cluster needs dask\.distributed: pip install 'quench\[cluster\]'$"):
        run_sweep(spec(seeds=2), out, cluster="tcp://127.0.0.1:8786", quiet=True)
    assert not out.exists()
