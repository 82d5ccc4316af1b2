"""Streamed records (quench.stream): a run long enough to spill several chunks gives the same
tables and files as one kept in memory, leaves no spill folder behind, and a failed write is one
line naming the output folder."""

import gc
import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from toml_text import toml_value

from quench import _core
from quench.cli import main
from quench.results import Results
from quench.scenario import _to_json, load_scenario, run_scenario
from quench.stream import SPILL_DIR, TEMP_PREFIX

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell.toml"
# Long enough that the queue table (about 1,600 rows per simulated second) fills several of the
# engine's chunks (trace::spill::CHUNK_ROWS) and leaves a remainder.
DURATION = "100s"
ENGINE_CHUNK_ROWS = 65_536
BOTTLENECK = "r1->r2"


def spec() -> dict:
    s = load_scenario(SCENARIO)
    s["duration"] = DURATION
    return s


def in_memory() -> Results:
    """The run as before streaming: every record kept in memory by the engine."""
    sim = _core.Simulation(_to_json(spec()))
    sim.run_until(sim.end)
    return Results.from_raw(sim.finish(), json.loads(sim.scenario), wall_run_s=0.0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("stream")
    memory = in_memory()
    memory.save(base / "memory", formats=["parquet", "csv"], plots=False)
    args = ["run", str(SCENARIO), "--out", str(base / "streamed"), "--duration", DURATION]
    assert main([*args, "--format", "parquet,csv", "--no-plots", "--quiet"]) == 0
    return base, memory


def test_the_run_spills_several_chunks_and_saves_several_row_groups(runs):
    _, memory = runs
    import quench.results

    assert len(memory.queue) > 2 * ENGINE_CHUNK_ROWS
    assert len(memory.queue) > quench.results.SAVE_CHUNK_ROWS


def test_streamed_output_files_are_those_of_the_in_memory_run(runs):
    base, memory = runs
    files = sorted(p.name for p in (base / "memory").iterdir() if p.name != "meta.json")
    assert files == sorted(p.name for p in (base / "streamed").iterdir() if p.name != "meta.json")
    for name in files:
        assert (base / "streamed" / name).read_bytes() == (base / "memory" / name).read_bytes(), name
    for table in memory.tables:
        got = pd.read_parquet(base / "streamed" / f"{table}.parquet")
        pd.testing.assert_frame_equal(got, pd.read_parquet(base / "memory" / f"{table}.parquet"))


def test_streamed_pcap_is_the_in_memory_capture(runs):
    base, memory = runs
    assert (base / "streamed" / "r1-r2.pcap").read_bytes() == memory.pcaps[BOTTLENECK]


def test_no_spill_folder_or_temporary_is_left(runs):
    base, _ = runs
    assert not (base / "streamed" / SPILL_DIR).exists()
    assert sorted(p.name for p in base.iterdir()) == ["memory", "streamed"]


def test_the_api_streams_to_a_temporary_folder_its_results_own(runs, tmp_path, monkeypatch):
    base, memory = runs
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # let TMPDIR take effect
    res = run_scenario(spec(), progress=False)
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith(TEMP_PREFIX) and (folder / SPILL_DIR / "manifest.json").exists()
    assert list(res.tables) == list(memory.tables)
    for name in memory.tables:
        pd.testing.assert_frame_equal(res.tables[name], memory.tables[name])
    assert res.pcaps[BOTTLENECK] == memory.pcaps[BOTTLENECK]
    saved = tmp_path / "saved"  # saved from the temporary folder: the same files
    res.save(saved, formats=["parquet", "csv"], plots=False)
    for file in saved.iterdir():
        if file.name != "meta.json":
            assert file.read_bytes() == (base / "memory" / file.name).read_bytes(), file.name
    del res
    gc.collect()
    assert [p.name for p in tmp_path.iterdir()] == ["saved"]


def test_a_streamed_table_stays_readable_while_only_the_tables_are_held(runs, tmp_path, monkeypatch):
    """`run_scenario(...).tables[name]`: the Results are gone before the table is read, the
    tables keep their temporary folder, and it goes with them (no cycle collection needed)."""
    _, memory = runs
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    tables = run_scenario(spec(), progress=False).tables
    assert tables.on_disk("queue") is not None  # streamed: read from the folder now
    pd.testing.assert_frame_equal(tables["queue"], memory.tables["queue"])
    segments = tables.on_disk("segments")
    assert segments is not None and len(tables["segments"]) == segments.rows == len(memory.segments)
    gc.disable()
    try:
        del tables
        assert list(tmp_path.iterdir()) == []
    finally:
        gc.enable()


def test_a_short_api_run_keeps_no_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    s = spec()
    s["duration"] = "1s"
    s["record"].pop("pcap", None)
    res = run_scenario(s, progress=False)
    assert len(res.queue) > 0 and list(tmp_path.iterdir()) == []


def _limit_file_size(limit_bytes: int):
    def apply():
        # A write past the limit then fails with EFBIG ("File too large") like one on a full
        # disk, instead of the default SIGXFSZ killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return apply


def test_a_failed_write_is_one_line_naming_the_output_folder_and_leaves_nothing(tmp_path):
    out = tmp_path / "out"
    # Far below one chunk of a column (512 KiB) or the capture, far above any file Python needs.
    limit = 64 * 1024
    cmd = [sys.executable, "-m", "quench.cli", "run", str(SCENARIO), "--out", str(out), "--duration", DURATION]
    r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=_limit_file_size(limit))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"quench: error: cannot write the results into {out}: "), r.stderr
    assert "File too large" in lines[0]
    assert list(tmp_path.iterdir()) == []  # no output, no staging folder, no spill


def test_a_table_saved_in_several_chunks_has_the_same_rows(runs, tmp_path, monkeypatch):
    base, memory = runs
    import pyarrow.parquet as pq

    import quench.results

    rows = 40_000  # more save chunks of the queue table than SAVE_CHUNK_ROWS gives
    monkeypatch.setattr(quench.results, "SAVE_CHUNK_ROWS", rows)
    out = tmp_path / "chunked"
    args = ["run", str(SCENARIO), "--out", str(out), "--duration", DURATION, "--format", "parquet,csv"]
    assert main([*args, "--no-plots", "--quiet"]) == 0
    assert (out / "queue.csv").read_bytes() == (base / "memory" / "queue.csv").read_bytes()
    assert pq.ParquetFile(out / "queue.parquet").metadata.num_row_groups == -(-len(memory.queue) // rows)
    pd.testing.assert_frame_equal(
        pd.read_parquet(out / "queue.parquet"), pd.read_parquet(base / "memory" / "queue.parquet")
    )


def test_results_pickled_to_another_process_carry_their_streamed_tables(runs):
    # Experiments run in a process pool and hand Results back pickled; the worker's temporary
    # folder goes with the worker's Results.
    import pickle

    _, memory = runs
    res = run_scenario(spec(), progress=False)
    folder = res.stream.folder
    copy = pickle.loads(pickle.dumps(res))
    del res
    gc.collect()
    assert not folder.exists()
    for name in memory.tables:
        pd.testing.assert_frame_equal(copy.tables[name], memory.tables[name])
    assert copy.pcaps[BOTTLENECK] == memory.pcaps[BOTTLENECK]


def test_a_killed_process_temporary_folder_is_removed_by_the_next_run(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{TEMP_PREFIX}{int(gone.stdout)}-abc123"
    (stale / SPILL_DIR).mkdir(parents=True)
    foreign = tmp_path / "quench-records-not-ours"
    foreign.mkdir()
    s = spec()
    s["duration"] = "1s"
    run_scenario(s, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [foreign.name]


def test_a_table_stored_out_of_order_reads_in_its_order(tmp_path):
    """The flows table stores its arrivals first and its listed flows last; `order` gives the
    ranges of stored rows in reading order, across any chunk boundary."""
    from quench.stream import SpilledColumn, SpilledTable

    stored = np.arange(10, dtype="<u4")  # rows 0-6 arrivals, 7-9 listed flows
    (tmp_path / "flows.flow.bin").write_bytes(stored.tobytes())
    col = SpilledColumn("flow", np.dtype("<u4"), tmp_path / "flows.flow.bin", None)
    table = SpilledTable("flows", 10, [col], [(7, 10), (0, 7)])
    assert table.read(0, 10)["flow"].tolist() == [7, 8, 9, 0, 1, 2, 3, 4, 5, 6]
    assert table.read(2, 5)["flow"].tolist() == [9, 0, 1]
    assert [c["flow"].tolist() for c in table.chunks(4)] == [[7, 8, 9, 0], [1, 2, 3, 4], [5, 6]]


def test_a_long_workload_streams_its_flows_table(tmp_path):
    """More arrivals than one engine chunk: released arrivals' rows stream out while the run
    goes (their names as text, not a dictionary that grows with the run), the listed flow's
    row is written last and read first, and the saved table is the in-memory run's."""
    scenario = {
        "duration": "70s",
        "seed": 2,
        "hosts": ["a", "b"],
        "routers": ["r"],
        "links": [
            {"from": "a", "to": "r", "rate": "100Mbps", "delay": "5ms"},
            {"from": "r", "to": "b", "rate": "100Mbps", "delay": "5ms"},
        ],
        "flows": [{"kind": "udp", "src": "b", "dst": "a", "rate": "1Mbps", "name": "cbr"}],
        "workloads": [{"pairs": [["a", "b"]], "arrival_rate": 1000, "size": "3kB", "flow": {"kind": "tcp"}}],
        "record": {"queues": False, "drops": False, "cwnd": False, "rtt": False, "monitors": False},
    }
    sim = _core.Simulation(_to_json(scenario))
    sim.run_until(sim.end)
    memory = Results.from_raw(sim.finish(), json.loads(sim.scenario), wall_run_s=0.0)
    assert len(memory.flows) > ENGINE_CHUNK_ROWS
    path = tmp_path / "workload.toml"
    path.write_text("".join(f"{key} = {toml_value(value)}\n" for key, value in scenario.items()))
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plots", "--quiet"]) == 0
    streamed = pd.read_parquet(tmp_path / "out" / "flows.parquet")
    assert streamed["name"].iloc[0] == "cbr" and streamed["name"].iloc[-1] == f"w0.{len(streamed) - 2}"
    expected = pd.read_parquet(memory.save(tmp_path / "memory", plots=False) / "flows.parquet")
    pd.testing.assert_frame_equal(streamed, expected)


def test_a_capture_is_readable_after_its_results_are_dropped():
    """`net.run().pcaps[link]`: the Results go before the capture is read from the temporary
    folder, which lives while their captures do, and goes with them."""
    s = spec()
    s["duration"] = "2s"
    s["record"] = {"pcap": ["r1->r2"]}
    pcaps = run_scenario(s, progress=False).pcaps
    gc.collect()
    data = pcaps["r1->r2"]
    assert data[:4] == bytes.fromhex("d4c3b2a1") or data[:4] == bytes.fromhex("4d3cb2a1")
    folder = pcaps.files["r1->r2"].parent
    del pcaps
    gc.collect()
    assert not folder.exists()


def test_a_killed_run_staging_folder_is_removed_by_the_next_run_into_its_out(tmp_path):
    """A `quench run --out` killed while it streams leaves its hidden staging folder (bounded by
    budget.record_bytes, tests/test_errors.py); the next run into the same `--out` removes it."""
    import time

    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "quench.cli", "run", str(SCENARIO), "--out", str(out), "--duration", "2000s"]
    child = subprocess.Popen([*cmd, "--quiet", "--no-plots"], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(f".out.quench-tmp-*/{SPILL_DIR}/*.bin")):
            assert child.poll() is None and time.monotonic() < deadline, "no spill file after 60 s"
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
        child.stderr.close()
    assert len(list(tmp_path.glob(".out.quench-tmp-*"))) == 1
    assert main(["run", str(SCENARIO), "--out", str(out), "--duration", "1s", "--quiet", "--no-plots"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
