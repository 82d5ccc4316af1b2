"""Bad input: an exception naming the key and the reason, never a crash or a partial file."""

import json

import pytest
from conftest import small_net

import quench
from quench.cli import main


def err(spec_changes) -> quench.ScenarioError:
    net = small_net()
    net.tcp("a", "b")
    spec = net.to_dict("1s")
    spec_changes(spec)
    with pytest.raises(quench.ScenarioError) as e:
        quench.run_scenario(spec)
    return e.value


def test_unknown_qdisc_names_the_key():
    e = err(lambda s: s["links"][1]["qdisc"].update(kind="fifo-ish"))
    assert "links[1]" in str(e) and "unknown variant `fifo-ish`" in str(e)


def test_zero_rate():
    e = err(lambda s: s["links"][0].update(rate="0bps"))
    assert e.path == "links[0].rate" and "positive" in e.reason


def test_negative_rate_and_unit_typo():
    assert "non-negative" in str(err(lambda s: s["links"][0].update(rate="-5Mbps")))
    e = err(lambda s: s["links"][0].update(delay="5 msec"))
    assert e.path == "links[0].delay" and "unknown unit" in str(e)


def test_unreachable_destination():
    def island(s):
        s["hosts"].append("c")
        s["flows"][0]["dst"] = "c"

    e = err(island)
    assert e.path.startswith("flows[0]") and "unreachable" in str(e)


def test_a_bad_value_inside_a_kind_table_names_its_key():
    e = err(lambda s: s["flows"][0].update(tcp={"sack": "yes"}))
    assert e.path == "flows[0].tcp.sack" and "expected a boolean" in e.reason
    e = err(lambda s: s["flows"][0].update(cc={"kind": "fast", "alpha": "many"}))
    assert e.path == "flows[0].cc.alpha"
    e = err(lambda s: s["links"][1].update(qdisc={"kind": "sfq", "perturb": "5Mbps"}))
    assert e.path == "links[1].qdisc.perturb" and "not a duration" in e.reason


def test_unknown_key_and_unknown_node():
    assert "unknown field `rat`" in str(err(lambda s: s["links"][0].update(rat="1Mbps")))
    e = err(lambda s: s["flows"][0].update(src="nowhere"))
    assert e.path == "flows[0].src" and "nowhere" in str(e)


def test_impossible_tcp_parameters():
    e = err(lambda s: s["flows"][0].update(tcp={"mss": 4000, "dont_fragment": True}))
    assert "MTU" in str(e)
    e = err(lambda s: s["flows"][0].update(tcp={"rto": {"k": 0}}))
    assert e.path == "flows[0].tcp.rto.k"


def test_fast_needs_alpha_and_burstiness_a_threshold_above_one():
    e = err(lambda s: s["flows"][0].update(cc="fast"))
    assert e.path == "flows[0].cc.alpha" and "required" in e.reason
    e = err(lambda s: s["flows"][0].update(tcp={"burstiness_control": {"threshold": 1}}))
    assert e.path == "flows[0].tcp.burstiness_control.threshold"
    e = err(lambda s: s["flows"][0].update(tcp={"rtt_sampling": "sometimes"}))
    assert "every_ack" in str(e)


def test_non_data_values_are_rejected():
    e = err(lambda s: s.update(duration=float("nan")))
    assert e.path == "duration" and e.reason == "nan is not a finite number"
    e = err(lambda s: s["links"][1].update(loss=float("inf")))
    assert str(e) == "links[1].loss: inf is not a finite number"


def test_cli_reports_errors_with_nonzero_exit(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "1s"\nhosts = ["a"]\n[[links]]\nfrom = "a"\nto = "b"\nrate = "1Mbps"\ndelay = "1ms"\n')
    out = tmp_path / "out"
    assert main(["run", str(bad), "--out", str(out)]) == 2
    assert "links[0].to: no host or router named 'b'" in capsys.readouterr().err
    assert not out.exists()
    assert main(["run", str(tmp_path / "missing.toml"), "--out", str(out)]) == 2
    assert "not found" in capsys.readouterr().err
    (tmp_path / "broken.toml").write_text("duration = \n")
    assert main(["run", str(tmp_path / "broken.toml"), "--out", str(out)]) == 2
    assert "not valid TOML" in capsys.readouterr().err


def test_workload_errors_name_the_workload_key():
    net = small_net()
    net.workload([("a", "b"), ("a", "nowhere")], arrival_rate=50, size="10KB")
    with pytest.raises(quench.ScenarioError) as e:
        net.run("1s")
    assert e.value.path == "workloads[0].pairs[1][1]" and "nowhere" in e.value.reason
    net = small_net()
    net.workload([("a", "b")], arrival_rate=0, size="10KB")
    with pytest.raises(quench.ScenarioError) as e:
        net.run("1s")
    assert e.value.path == "workloads[0].arrival_rate"


def test_bad_cwnd_interval_names_the_key():
    e = err(lambda s: s.setdefault("record", {}).update(cwnd_interval="soon"))
    assert "record.cwnd_interval" in str(e)


def _run_zero_rate() -> None:
    net = small_net()
    net.tcp("a", "b")
    spec = net.to_dict("1s")
    spec["links"][0]["rate"] = "0bps"
    quench.run_scenario(spec)


def test_an_error_raised_in_a_worker_process_arrives_whole():
    # Sweeps run scenarios in process pools; the error must pickle under its importable name
    # (quench._core), or the parent sees a PicklingError instead of the key at fault.
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1) as pool:
        with pytest.raises(quench.ScenarioError) as e:
            pool.submit(_run_zero_rate).result()
    assert e.value.path == "links[0].rate" and "positive" in e.value.reason


def test_file_problems_are_scenario_errors_with_a_path_and_a_reason(tmp_path):
    def load_err(path) -> quench.ScenarioError:
        with pytest.raises(quench.ScenarioError) as e:
            quench.load_scenario(path)
        assert e.value.path == "" and str(e.value) == e.value.reason
        return e.value

    assert load_err(tmp_path / "missing.toml").reason == f"{tmp_path / 'missing.toml'}: scenario file not found"
    assert load_err(tmp_path).reason == f"{tmp_path}: is a folder, not a scenario file"
    (tmp_path / "latin1.toml").write_bytes(b'duration = "1s"\n# caf\xe9\n')
    assert load_err(tmp_path / "latin1.toml").reason.endswith(
        "latin1.toml: line 2, column 6: not UTF-8 text (byte 0xe9)"
    )
    (tmp_path / "syntax.toml").write_text('duration = "1s"\nhosts = ["a",,]\n')
    assert "syntax.toml: line 2, column 14: not valid TOML: " in load_err(tmp_path / "syntax.toml").reason
    (tmp_path / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nested too deeply" in load_err(tmp_path / "deep.toml").reason


def test_a_file_with_a_byte_order_mark_reads_as_utf8(tmp_path):
    (tmp_path / "bom.toml").write_bytes('\ufeffduration = "1s"\n'.encode())
    assert quench.load_scenario(tmp_path / "bom.toml") == {"duration": "1s"}


def test_deep_or_non_plain_data_names_the_key():
    deep: dict = {}
    spec = {"duration": "1s", "record": deep}
    for _ in range(5000):
        deep["a"] = {}
        deep = deep["a"]
    with pytest.raises(quench.ScenarioError) as e:
        quench.validate_scenario(spec)
    assert e.value.path.startswith("record.a.a.a") and e.value.reason == "nested deeper than 32 levels"
    loop: dict = {"duration": "1s"}
    loop["record"] = loop
    with pytest.raises(quench.ScenarioError, match="nested deeper"):
        quench.validate_scenario(loop)
    e = err(lambda s: s["links"][0].update(loss=float("inf")))
    assert e.path == "links[0].loss" and e.reason == "inf is not a finite number"
    e = err(lambda s: s.update(duration=object()))
    assert e.path == "duration" and "not plain data" in e.reason


def test_an_overloaded_workload_stops_at_its_active_flow_budget(tmp_path, capsys):
    """200 arrivals/s of 1 MB over 10 Mb/s pile up: the run stops with one line naming
    budget.active_flows, and nothing is written."""
    scenario = tmp_path / "overload.toml"
    scenario.write_text(
        'duration = "20s"\nhosts = ["a", "b"]\n'
        'links = [{from = "a", to = "b", rate = "10Mbps", delay = "10ms"}]\n'
        'workloads = [{pairs = [["a", "b"]], arrival_rate = 200, size = "1MB", flow = {kind = "tcp"}}]\n'
        "budget = {active_flows = 50}\n"
    )
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("quench: error: budget.active_flows: more than 50"), err
    assert not out.exists() and list(tmp_path.iterdir()) == [scenario]


def _overload(active_flows: int | None) -> dict:
    spec = {
        "duration": "20s",
        "hosts": ["a", "b"],
        "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms"}],
        "workloads": [{"pairs": [["a", "b"]], "arrival_rate": 200, "size": "1MB", "flow": {"kind": "tcp"}}],
    }
    if active_flows is not None:
        spec["budget"] = {"active_flows": active_flows}
    return spec


def test_an_active_flow_budget_beyond_the_memory_available_is_refused_with_the_figures():
    """budget.active_flows × ACTIVE_FLOW_BYTES (2.1 KB) against half the memory available: 10⁶
    arrivals need 2.1 GB, more than half of 1 GB; 2.4·10⁵ fit (10⁹ / 4200 = 238,095)."""
    from quench.scenario import ACTIVE_FLOW_BYTES, check_budget_memory

    assert ACTIVE_FLOW_BYTES == 2_100
    one_gb = (10**9, "a test's figure")
    with pytest.raises(quench.ScenarioError) as e:
        check_budget_memory(_overload(10**6), one_gb)
    assert e.value.path == "budget.active_flows"
    assert e.value.reason == (
        "1e6 workload arrivals in progress at once would take up to 2.1 GB (about 2.1 KB each), more than half "
        "the 1.0 GB available (a test's figure; the other half is kept for the engine's tables as they grow and "
        "the rest of the process); at most 2.38e5 fit"
    )
    fits = _overload(238_095)
    assert check_budget_memory(fits, one_gb) is fits
    no_workload = _overload(10**9)
    del no_workload["workloads"]
    assert check_budget_memory(no_workload, one_gb) is no_workload  # it bounds workload arrivals only
    # The default (10⁶, 2.1 GB) is lowered to what fits; the caller's dict is left as it was.
    default = _overload(None)
    assert check_budget_memory(default, one_gb)["budget"] == {"active_flows": 238_095}
    assert "budget" not in default
    assert check_budget_memory(default, (10**10, "ten GB")) is default


def test_the_default_active_flow_budget_is_the_engines():
    from quench.scenario import DEFAULT_ACTIVE_FLOWS, validate_scenario

    assert validate_scenario(_overload(None))["budget"]["active_flows"] == DEFAULT_ACTIVE_FLOWS


def test_an_overloaded_workload_under_a_small_address_space_limit_stops_at_the_lowered_budget(tmp_path):
    """Under `ulimit -v` 1.5 GB the default 10⁶ arrivals in progress (2.1 GB) cannot fit: the
    budget is lowered to what the limit leaves, so a workload offering 50 times what its path
    carries stops with the budget's one line instead of an allocator abort."""
    import subprocess
    import sys

    spec = _overload(None)
    spec["workloads"][0]["arrival_rate"] = 50_000
    spec["duration"] = "60s"
    spec["budget"] = {"flows": 10**7}
    scenario = tmp_path / "overload.json"
    scenario.write_text(json.dumps(spec))
    out = tmp_path / "out"
    cmd = f"ulimit -v 1500000 && exec {sys.executable} -m quench.cli run {scenario} --out {out} --quiet --no-plots"
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("quench: error: budget.active_flows: more than "), lines
    assert not out.exists()


def test_an_active_flow_budget_beyond_the_address_space_limit_is_one_line(tmp_path):
    """Under `ulimit -v` 2 GB, 10⁶ arrivals in progress (2.1 GB) cannot fit: refused before the
    run, naming the limit, instead of an allocator abort once the workload piles up."""
    import subprocess
    import sys

    scenario = tmp_path / "overload.json"
    scenario.write_text(json.dumps(_overload(10**6)))
    cmd = f"ulimit -v 2000000 && exec {sys.executable} -m quench.cli validate {scenario}"
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("quench: error: budget.active_flows: 1e6 workload arrivals"), lines
    assert "the address-space limit (ulimit -v)" in lines[0]


def test_a_run_past_its_record_budget_stops_with_one_line_and_leaves_nothing(tmp_path, capsys):
    """budget.record_bytes bounds what a run streams to its staging folder before anything is
    final: a 20 s capture at 10 Mbit/s (headers only: the capture keeps no payload) passes 300 kB after about 5 s."""
    scenario = tmp_path / "capture.toml"
    scenario.write_text(
        'duration = "20s"\nhosts = ["a", "b"]\n'
        'links = [{from = "a", to = "b", rate = "10Mbps", delay = "10ms"}]\n'
        'flows = [{kind = "tcp", src = "a", dst = "b"}]\n'
        'record = {segments = true, pcap = ["a->b"]}\n'
        "budget = {record_bytes = 300000}\n"
    )
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("quench: error: budget.record_bytes: the run's records"), err
    assert "more than budget.record_bytes, 3e5" in err[0]
    assert not out.exists() and list(tmp_path.iterdir()) == [scenario]


def test_a_json_scenario_giving_a_key_twice_is_refused_naming_it(tmp_path, capsys):
    path = tmp_path / "s.json"
    text = (
        '{"duration": "1s", "hosts": ["a", "b"], "links": [{"from": "a", "to": "b", "rate": "1Mbps",'
        ' "delay": "1ms", "rate": "2Mbps"}]}'
    )
    path.write_text(text)
    with pytest.raises(quench.ScenarioError) as e:
        quench.load_scenario(path)
    assert e.value.path == "links[0].rate"
    assert e.value.reason == f"{path}: the key is given more than once (the last would silently win)"
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"quench: error: links[0].rate: {path}: the key is given more than once (the last would silently win)"
    ]
    path.write_text('{"duration": "1s", "duration": "1s"}')
    with pytest.raises(quench.ScenarioError, match="^duration: "):
        quench.load_scenario(path)


def test_deeply_nested_json_is_a_scenario_error(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text('{"duration": "1s", "record": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(quench.ScenarioError) as e:
        quench.load_scenario(path)
    assert e.value.reason == f"{path}: not valid JSON: arrays or objects nested too deeply"
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "nested too deeply" in err


def test_a_scenario_must_be_a_regular_file_within_the_cap(tmp_path, monkeypatch):
    import os
    import time

    from quench import scenario

    def reason(path) -> str:
        with pytest.raises(quench.ScenarioError) as e:
            quench.load_scenario(path)
        assert e.value.path == ""
        return e.value.reason

    os.mkfifo(tmp_path / "fifo.toml")
    started = time.perf_counter()
    assert reason(tmp_path / "fifo.toml").endswith(
        "fifo.toml: is not a regular file (a FIFO, device or socket), so it is not read as a scenario file"
    )
    assert "is not a regular file" in reason("/dev/zero")
    assert time.perf_counter() - started < 5
    (tmp_path / "s.toml").write_text('duration = "1s"\n')
    monkeypatch.setattr(scenario, "MAX_SCENARIO_BYTES", 8)
    assert (
        reason(tmp_path / "s.toml")
        == f"{tmp_path / 's.toml'}: is 16 bytes, more than the 8 bytes quench reads from a scenario file"
    )
    with pytest.raises(TypeError, match="load_scenario: expected the path of a scenario file, got NoneType"):
        quench.load_scenario(None)


def test_units_errors_carry_the_key_and_the_reason():
    with pytest.raises(quench.ScenarioError) as e:
        quench.parse_rate("5 msec", "links[0].rate")
    assert e.value.path == "links[0].rate" and "unknown unit 'msec'" in e.value.reason
    with pytest.raises(ValueError) as e:
        quench.parse_duration("10Mbps")
    assert e.value.path == "" and e.value.reason == "'10Mbps' is a rate, not a time"
    for bad in (float("nan"), float("inf"), -1):
        with pytest.raises(ValueError, match="^until: .* is not a finite, non-negative time$"):
            quench.parse_duration(bad, "until")
    with pytest.raises(TypeError) as t:
        quench.parse_bytes(None, "record.x")
    assert t.value.path == "record.x" and "got NoneType" in t.value.reason


def test_public_calls_refuse_a_wrong_type_or_a_finished_run(tmp_path):
    from quench.scenario import Simulation

    net = small_net()
    net.tcp("a", "b")
    res = net.run("1s")
    with pytest.raises(TypeError, match="^out_dir: expected the path of a folder, got NoneType$"):
        res.save(None)
    with pytest.raises(TypeError, match="^t0: expected a time"):
        res.window(None, "1s")
    sim = Simulation(net.to_dict("1s"))
    with pytest.raises(TypeError, match="^until: "):
        sim.advance(None)
    sim.finish()
    assert sim.now == sim.end == 1.0
    for call in (lambda: sim.advance("0.5s"), sim.snapshot, sim.finish):
        with pytest.raises(ValueError, match="this Simulation has already finished"):
            call()


def test_saving_where_no_folder_can_be_made_names_the_folder_given(tmp_path):
    net = small_net()
    net.tcp("a", "b")
    res = net.run("1s")
    # /proc's folders cannot be created: the error names what the caller gave, not a staging folder.
    with pytest.raises(OSError) as e:
        res.save("/proc/no-such-process/results")
    assert str(e.value).startswith("cannot save the results into /proc/no-such-process/results: "), str(e.value)
    assert "quench-tmp" not in str(e.value)


def test_listed_flows_past_the_cap_are_one_error_naming_flows(tmp_path, capsys):
    """MAX_LISTED_FLOWS flows validate; one more is refused before any is read, from Python and
    from a file (10⁶ listed flows: at once), pointing to a workload."""
    from quench.scenario import MAX_LISTED_FLOWS

    net = small_net()
    spec = net.to_dict("1s")
    flow = {"kind": "udp", "src": "a", "dst": "b", "rate": "1kbps", "start": "0.5s"}
    assert len(quench.validate_scenario({**spec, "flows": [flow] * MAX_LISTED_FLOWS})["flows"]) == MAX_LISTED_FLOWS
    for n in (MAX_LISTED_FLOWS + 1, 10**6):
        with pytest.raises(quench.ScenarioError) as e:
            quench.validate_scenario({**spec, "flows": [flow] * n})
        assert e.value.path == "flows" and e.value.reason.startswith(f"{n} listed flows, more than the 10000")
        assert "workload" in e.value.reason
    path = tmp_path / "many.json"
    path.write_text(json.dumps({**spec, "flows": [flow] * (MAX_LISTED_FLOWS + 1)}))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("quench: error: flows: 10001 listed flows")
