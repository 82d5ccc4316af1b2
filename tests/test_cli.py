"""The command line: scenario files, the demo, help."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from quench.cli import main

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell.toml"
SWEEP = SCENARIO.with_name("sweep_example.toml")


def test_run_scenario_file_writes_results(tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["run", str(SCENARIO), "--out", str(out), "--duration", "5s", "--format", "parquet,csv"]) == 0
    text = capsys.readouterr().out
    assert "bottleneck r1->r2" in text and "Jain" in text
    flows = pd.read_csv(out / "flows.csv")
    assert len(flows) == 4 and (flows["bytes_delivered"] > 0).all()
    assert (out / "queue.png").stat().st_size > 0


def test_demo_quick(tmp_path, capsys):
    assert main(["demo", "--quick", "--out", str(tmp_path / "demo")]) == 0
    assert "NewReno" in capsys.readouterr().out
    assert (tmp_path / "demo" / "time_sequence.png").exists()


def test_validate_prints_resolved_scenario(capsys):
    assert main(["validate", str(SCENARIO)]) == 0
    assert '"dupack_threshold": 3' in capsys.readouterr().out


def test_validate_names_the_source_of_each_tcp_key(tmp_path, capsys):
    """A flow that writes `sack = false` under the default profile: on stderr, sack comes from
    the scenario, the minimum RTO (Linux's 200 ms) and the controller (CUBIC) from the profile,
    and RACK stands down for duplicate ACKs without SACK."""
    text = SCENARIO.read_text().replace('tcp = { profile = "rfc" }', "tcp = { sack = false }", 1)
    path = tmp_path / "one.toml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "flows[0].tcp.sack = false  (scenario)" in err
    assert 'flows[0].tcp.rto.min = "200ms"  (profile linux)' in err
    assert 'flows[0].tcp.loss_detection = "dupack"  (profile linux)' in err
    assert 'flows[0].cc.kind = "newreno"  (scenario)' in err
    assert 'flows[1].tcp.profile = "rfc"  (scenario)' in err
    assert 'flows[1].tcp.rto.min = "1s"  (profile rfc)' in err


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["demo", "--help"]])
def test_help_everywhere(args):
    r = subprocess.run([sys.executable, "-m", "quench.cli", *args], capture_output=True, text=True)
    assert r.returncode == 0 and "usage:" in r.stdout


def test_sweep_cluster_without_dask_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails
    out = tmp_path / "out"
    assert main(["sweep", str(SWEEP), "--out", str(out), "--cluster", "tcp://127.0.0.1:8786"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "quench: error: --cluster needs dask.distributed: pip install 'quench[cluster]'\n"
    assert captured.out == "" and not out.exists()


def test_usage_errors_are_one_line(capsys):
    assert main(["run", str(SCENARIO)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("quench: error: the following arguments are required: --out")
    assert main(["nonsense"]) == 2
    assert capsys.readouterr().err.startswith("quench: error: argument command: invalid choice")


def test_a_bug_is_one_line_with_exit_status_3(capsys, monkeypatch):
    def boom(args):
        raise KeyError("oops")

    monkeypatch.setattr("quench.cli.cmd_validate", boom)
    monkeypatch.delenv("QUENCH_TRACEBACK", raising=False)
    assert main(["validate", str(SCENARIO)]) == 3
    assert capsys.readouterr().err == "quench: internal error: KeyError: 'oops'\n"


def _panic_exception() -> type[BaseException]:
    """pyo3's PanicException as Python sees it: a BaseException of module pyo3_runtime (pyo3's
    src/panic.rs), which the engine raises only when a Rust panic crosses the boundary."""
    return type("PanicException", (BaseException,), {"__module__": "pyo3_runtime"})


def test_an_engine_panic_is_one_line_naming_the_command(capsys, monkeypatch):
    panic = _panic_exception()

    def boom(args):
        raise panic("index out of bounds: the len is 3 but the index is 7\nat src/world.rs:12")

    monkeypatch.setattr("quench.cli.cmd_validate", boom)
    monkeypatch.delenv("QUENCH_TRACEBACK", raising=False)
    assert main(["validate", str(SCENARIO)]) == 3
    assert capsys.readouterr().err == (
        "quench: internal error: validate failed: the engine panicked: "
        "index out of bounds: the len is 3 but the index is 7\\nat src/world.rs:12\n"
    )
    # With QUENCH_TRACEBACK the panic itself propagates, for a traceback.
    monkeypatch.setenv("QUENCH_TRACEBACK", "1")
    with pytest.raises(panic):
        main(["validate", str(SCENARIO)])


def test_other_base_exceptions_are_not_taken_for_panics(monkeypatch):
    class Stop(BaseException):
        pass

    def boom(args):
        raise Stop

    monkeypatch.setattr("quench.cli.cmd_validate", boom)
    with pytest.raises(Stop):
        main(["validate", str(SCENARIO)])


def test_messages_stay_on_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'duration = "1s"\nhosts = ["a"]\n[[links]]\nfrom = "a"\nto = "b\\nc"\nrate = "1Mbps"\ndelay = "1ms"\n'
    )
    assert main(["validate", str(bad)]) == 2
    assert capsys.readouterr().err == "quench: error: links[0].to: no host or router named 'b\\nc'\n"
