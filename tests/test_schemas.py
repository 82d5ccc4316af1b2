"""Stable schemas: every results table has the same columns and dtypes whether it has rows or
not, for every record option, in memory, in Parquet and in CSV; and the Parquet file a table
still in the engine's form is saved to without pandas (quench.schema.write_parquet) reads back
as the one its DataFrame gives."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import quench
from quench import _core
from quench.results import SAVE_CHUNK_ROWS, Results
from quench.schema import raw_schema, table_schema, write_parquet

# Every record option on; each option alone is a case below.
EVERYTHING = {
    "queues": True,
    "sojourn": True,
    "drops": True,
    "cwnd": True,
    "rtt": True,
    "segments": True,
    "monitors": True,
    "monitor_flow": {"flow": "reno"},
    "flow_links": True,
    # Inside the busy run (1 s), past the idle one's end (0.5 s, so none taken there).
    "snapshots": ["750ms"],
    "delay": ["reno"],
    "telemetry": True,
}
# Every option off: booleans false, the tables of options that name things absent.
OFF = {**dict.fromkeys(EVERYTHING, False), "monitor_flow": None, "snapshots": None, "delay": []}
BUSY_S = 1.0
WINDOW_FLOWS_START = "100ms"
IDLE_S = 0.5
OPTIONS = [
    pytest.param(OFF, id="none"),
    pytest.param({}, id="defaults"),
    *(pytest.param({**OFF, key: value}, id=key) for key, value in EVERYTHING.items()),
    pytest.param(EVERYTHING, id="everything"),
    # The options that shape records without switching a table: thinning, links, captures.
    pytest.param({**EVERYTHING, "cwnd_interval": "10ms", "links": ["r->b"], "pcap": ["r->b"]}, id="restricted"),
]


def _network(record: dict, busy: bool) -> quench.Network:
    """Busy: every kind of table source, a RED bottleneck (monitors), NewReno, BBR (pacing),
    PCP (pcp_rate), multipath (subflows) and HPCC (telemetry) flows overflowing its buffer.
    Idle: the same links and no flow (so no flow to monitor either), so every time series and
    the flows table are empty."""
    net = quench.Network(seed=1)
    net.hosts("a", "b").routers("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="5Mbps", delay="10ms", qdisc=quench.red(limit="20p"))
    if busy:
        # PCP probes for spare capacity and yields to flows that fill the queue (Anderson et
        # al., NSDI '06), so it starts 100 ms ahead of the window flows to set a rate at all.
        net.tcp("a", "b", cc="newreno", name="reno", start=WINDOW_FLOWS_START)
        net.tcp("a", "b", cc="bbr", name="bbr", start=WINDOW_FLOWS_START)
        net.pcp("a", "b", name="pcp")
        net.mptcp("a", "b", subflows=2, name="mp", start=WINDOW_FLOWS_START)
        net.tcp("a", "b", cc="hpcc", name="hpcc", start=WINDOW_FLOWS_START)
    net.record(**(record if busy else {**record, "monitor_flow": None, "delay": []}))
    return net


def _run(record: dict, busy: bool) -> Results:
    return _network(record, busy).run(BUSY_S if busy else IDLE_S)


def _raw_run(record: dict, busy: bool) -> dict:
    sim = _core.Simulation(json.dumps(_network(record, busy).to_dict(BUSY_S if busy else IDLE_S)))
    sim.run_until(sim.end)
    return sim.finish()


def _dtypes(df: pd.DataFrame) -> list[tuple[str, str]]:
    return [(c, str(t)) for c, t in df.dtypes.items()]


@pytest.mark.parametrize("record", OPTIONS)
def test_tables_keep_their_schema_with_and_without_rows(record: dict, tmp_path: Path) -> None:
    busy, idle = _run(record, busy=True), _run(record, busy=False)
    assert list(busy.tables) == list(idle.tables)
    for name in busy.tables:
        a, b = busy.tables[name], idle.tables[name]
        assert _dtypes(a) == _dtypes(b), name
    busy.save(tmp_path / "busy", formats=["parquet", "csv"], plots=False)
    idle.save(tmp_path / "idle", formats=["parquet", "csv"], plots=False)
    for name in busy.tables:
        a = pq.read_schema(tmp_path / "busy" / f"{name}.parquet")
        b = pq.read_schema(tmp_path / "idle" / f"{name}.parquet")
        assert a.equals(b, check_metadata=True), name
        header = (tmp_path / "busy" / f"{name}.csv").read_text().splitlines()[0]
        assert (tmp_path / "idle" / f"{name}.csv").read_text().splitlines()[0] == header, name


def test_the_cases_have_rows_and_none() -> None:
    """The busy run fills every table (so both sides of the comparison above are exercised)
    but `pfc_cycles`, which needs PFC and a cycle of paused links (tests/test_pfc.py checks its
    rows' schema); the idle one only the links and nodes."""
    busy, idle = _run(EVERYTHING, busy=True), _run(EVERYTHING, busy=False)
    assert {n for n in busy.tables if busy.tables[n].empty} == {"pfc_cycles"}
    assert {n for n in idle.tables if not idle.tables[n].empty} == {"links", "nodes"}


def test_dataframes_follow_the_declared_schema() -> None:
    """The dtypes of every table are those quench.schema derives from the engine's columns."""
    for busy in (True, False):
        raw = _raw_run(EVERYTHING, busy)
        res = Results.from_raw(raw, {}, wall_run_s=0.0)
        for name, cols in raw["tables"].items():
            assert _dtypes(res.tables[name]) == raw_schema(name, cols), name


def test_text_columns_are_strings_when_empty() -> None:
    """The two columns that became float64 when empty."""
    idle = _run(EVERYTHING, busy=False)
    assert str(idle.monitors["name"].dtype) == "str"
    assert str(idle.flow_monitor["event"].dtype) == "str"
    assert table_schema("monitors", [("name", "str")]) == [("name", "str")]


@pytest.mark.parametrize("busy", [True, False], ids=["rows", "empty"])
def test_parquet_without_pandas_is_the_dataframes_file(busy: bool, tmp_path: Path) -> None:
    """Read back, the engine's file is pandas' own: the same Arrow schema and pandas metadata
    (but its creator), the same row groups and codec, the same DataFrame to the last bit."""
    fast = Results.from_raw(_raw_run(EVERYTHING, busy), {}, wall_run_s=0.0)
    frames = Results.from_raw(_raw_run(EVERYTHING, busy), {}, wall_run_s=0.0)
    for name in fast.tables:
        expected, got = tmp_path / f"{name}.pandas.parquet", tmp_path / f"{name}.quench.parquet"
        frames.tables[name].to_parquet(expected, index=False, row_group_size=SAVE_CHUNK_ROWS)
        assert fast.tables.write_parquet(name, got), name  # type: ignore[attr-defined]
        _assert_same_parquet(got, expected, name)


def test_parquet_without_pandas_splits_row_groups_as_pandas() -> None:
    """Row groups of 7 rows: every table longer than that is split where pandas splits it."""
    fast = Results.from_raw(_raw_run(EVERYTHING, True), {}, wall_run_s=0.0)
    frames = Results.from_raw(_raw_run(EVERYTHING, True), {}, wall_run_s=0.0)
    tables, split = fast.tables, 0
    for name in tables:
        raw = tables.raw(name)  # type: ignore[attr-defined]
        with tempfile.TemporaryDirectory() as tmp:
            expected, got = Path(tmp) / "pandas.parquet", Path(tmp) / "quench.parquet"
            frames.tables[name].to_parquet(expected, index=False, row_group_size=7)
            write_parquet(got, name, raw, tables.names.links, tables.names.flows, 7)  # type: ignore[attr-defined]
            _assert_same_parquet(got, expected, name)
            split += pq.ParquetFile(got).metadata.num_row_groups > 1
    assert split >= 5, "most tables of the busy run span several groups"


def test_a_saved_dataframe_is_the_engine_forms_file(tmp_path: Path) -> None:
    """Tables made DataFrames before saving give the same bytes as tables saved from the engine's
    form (one writer for both), labels with missing names included; a DataFrame with a column
    of another dtype is written by pandas."""
    untouched = Results.from_raw(_raw_run(EVERYTHING, True), {}, wall_run_s=0.0)
    touched = Results.from_raw(_raw_run(EVERYTHING, True), {}, wall_run_s=0.0)
    for name in touched.tables:
        touched.tables[name]  # noqa: B018  (made a DataFrame)
    untouched.save(tmp_path / "a", formats=["parquet"], plots=False)
    touched.save(tmp_path / "b", formats=["parquet"], plots=False)
    for name in untouched.tables:
        a, b = (tmp_path / d / f"{name}.parquet" for d in "ab")
        assert a.read_bytes() == b.read_bytes(), name
    cwnd = touched.tables["cwnd"]
    cwnd.loc[0, "flow_name"] = pd.NA
    cwnd["extra"] = range(len(cwnd))  # int64, a dtype the engine does not write
    touched.save(tmp_path / "c", formats=["parquet"], plots=False)
    back = pd.read_parquet(tmp_path / "c" / "cwnd.parquet")
    pd.testing.assert_frame_equal(back, cwnd, check_exact=True)
    del cwnd["extra"]
    touched.save(tmp_path / "d", formats=["parquet"], plots=False)
    back = pd.read_parquet(tmp_path / "d" / "cwnd.parquet")
    pd.testing.assert_frame_equal(back, cwnd, check_exact=True)
    assert back["flow_name"].isna().tolist()[:2] == [True, False]
    assert [_creator(tmp_path / d / "cwnd.parquet") for d in "abcd"] == ["quench", "quench", "pyarrow", "quench"]


def _creator(path: Path) -> str:
    return json.loads(pq.read_schema(path).metadata[b"pandas"])["creator"]["library"]


def _assert_same_parquet(got: Path, expected: Path, name: str) -> None:
    a, b = pq.read_schema(got), pq.read_schema(expected)
    assert a.equals(b, check_metadata=False), name
    assert _pandas_meta(a) == _pandas_meta(b), name
    assert _layout(got) == _layout(expected), name
    pd.testing.assert_frame_equal(pd.read_parquet(got), pd.read_parquet(expected), check_exact=True, obj=name)


def _pandas_meta(schema: object) -> dict:
    meta = json.loads(schema.metadata[b"pandas"])  # type: ignore[attr-defined]
    meta.pop("creator")
    return meta


def _layout(path: Path) -> list[tuple[int, list[str]]]:
    """Rows and codecs of each row group."""
    meta = pq.ParquetFile(path).metadata
    groups = (meta.row_group(i) for i in range(meta.num_row_groups))
    return [(g.num_rows, [g.column(c).compression for c in range(g.num_columns)]) for g in groups]
