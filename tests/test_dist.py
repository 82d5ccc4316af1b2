"""Size distributions from the front end (quench.dist, crates/quench-core/src/dist.rs): the
helpers write tables the engine reads, an empirical CDF can come from a CSV file found relative
to the scenario file (or, for a scenario built in Python, the working directory), and the
recorded scenario carries the points themselves. The distributions' statistics are checked
in the engine's unit tests (dist.rs)."""

import json
import os
import time
import tomllib
from pathlib import Path

import pytest

import quench
from quench import dist
from quench.cli import main
from quench.network import Network
from quench.scenario import load_scenario, run_scenario, validate_scenario

CSV = """# flow sizes: bytes, cumulative probability
size,p
1000, 0
2000, 0.5
4000, 1
"""
POINTS = [[1000, 0], [2000, 0.5], [4000, 1]]

SCENARIO = """
duration = "4s"
hosts = ["a", "b"]
routers = ["r"]

[[links]]
from = "a"
to = "r"
rate = "10Mbps"
delay = "1ms"

[[links]]
from = "r"
to = "b"
rate = "10Mbps"
delay = "1ms"

[[workloads]]
pairs = [["a", "b"]]
flow = { kind = "tcp" }
arrival_rate = 50
size = { dist = "empirical", file = "data/sizes.csv" }
"""


def write_scenario(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "sizes.csv").write_text(CSV)
    path = folder / "scenario.toml"
    path.write_text(SCENARIO)
    return path


def test_csv_is_read_relative_to_the_scenario_file(tmp_path, monkeypatch):
    path = write_scenario(tmp_path / "here")
    monkeypatch.chdir(tmp_path)  # not the scenario's folder
    spec = load_scenario(path)
    assert spec["workloads"][0]["size"] == {"dist": "empirical", "cdf": POINTS}
    res = run_scenario(spec)
    flows = res.flows[res.flows["name"].str.startswith("w0.")]
    assert len(flows) > 100  # 50 arrivals/s over 4 s
    sizes = flows["bytes_requested"]
    assert sizes.between(1000, 4000).all(), sizes.describe()
    # The median of the table is 2000 B: about half the flows lie on each side (4 binomial σ).
    share = (sizes <= 2000).mean()
    assert abs(share - 0.5) < 4 * (0.25 / len(flows)) ** 0.5, share
    # The recorded scenario holds the points, so the run repeats without the file.
    recorded = json.loads(json.dumps(res.scenario))
    assert recorded["workloads"][0]["size"]["cdf"] == [["1000B", 0.0], ["2000B", 0.5], ["4000B", 1.0]]
    assert "file" not in recorded["workloads"][0]["size"]


def test_cli_runs_a_scenario_with_a_csv_cdf(tmp_path, monkeypatch, capsys):
    path = write_scenario(tmp_path)
    monkeypatch.chdir("/")
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err


def test_python_network_reads_csv_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "sizes.csv").write_text(CSV)
    monkeypatch.chdir(tmp_path)
    net = Network(seed=1).hosts("a", "b").routers("r").link("a", "r", "10Mbps", "1ms").link("r", "b", "10Mbps", "1ms")
    net.workload([("a", "b")], arrival_rate=10, size=dist.empirical("sizes.csv"))
    spec = net.to_dict("1s")
    resolved = validate_scenario(spec)
    assert resolved["workloads"][0]["size"]["cdf"][1] == ["2000B", 0.5]
    assert spec["workloads"][0]["size"] == {"dist": "empirical", "file": "sizes.csv"}  # not changed


def test_helpers_write_tables_the_engine_reads():
    net = Network().hosts("a", "b").routers("r").link("a", "r", "10Mbps", "1ms").link("r", "b", "10Mbps", "1ms")
    for size in (
        dist.fixed("1000B"),
        dist.uniform(100, 1400),
        dist.exponential("1000B"),
        dist.lognormal("800B", 0.5),
        dist.pareto("900B", 1.5),
        dist.choice([64, 576, 1500], [7, 4, 1]),
        dist.empirical([(64, 0.5), ("1KB", 1)]),
    ):
        net.udp("a", "b", rate="1Mbps", size=size)
    for size in (dist.websearch(), dist.datamining(), dist.pareto("100KB", 1.2)):
        net.workload([("a", "b")], arrival_rate=1, size=size)
    resolved = validate_scenario(net.to_dict("1s"))
    kinds = [f["size"]["dist"] for f in resolved["flows"]] + [w["size"]["dist"] for w in resolved["workloads"]]
    assert kinds == [
        *"fixed uniform exponential lognormal pareto choice empirical".split(),
        "websearch",
        "datamining",
        "pareto",
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1000,0.5,7\n", "expected two fields"),
        ("1000,0.5\n2000,x\n", "line 2: p 'x' is not a finite number"),
        ("# only a comment\n", "no (size, p) points"),
    ],
)
def test_malformed_csv_names_the_key_and_line(tmp_path, text, why):
    (tmp_path / "bad.csv").write_text(text)
    with pytest.raises(quench.ScenarioError) as e:
        dist.read_cdf(tmp_path / "bad.csv", key="flows[0].size.file")
    assert e.value.path == "flows[0].size.file"
    assert why in str(e.value)


def test_a_csv_cdf_is_checked_like_an_inline_one(tmp_path):
    (tmp_path / "sizes.csv").write_text("1000 0.5\n2000 0.9\n")  # white space also separates
    scenario = SCENARIO.replace("data/sizes.csv", "sizes.csv")
    (tmp_path / "s.toml").write_text(scenario)
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(load_scenario(tmp_path / "s.toml"))
    # The file's own line is named, not the index of the point in the scenario.
    assert e.value.path == "workloads[0].size.file"
    assert e.value.reason == "sizes.csv: line 2: the last p is 0.9; a CDF ends at 1"


def test_unknown_distribution_lists_the_kinds():
    net = Network().hosts("a", "b").link("a", "b", "10Mbps", "1ms")
    net.udp("a", "b", rate="1Mbps", size={"dist": "gaussian", "mean": "1KB"})
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(net.to_dict("1s"))
    assert e.value.path == "flows[0].size.dist"
    for kind in ("exponential", "lognormal", "empirical", "websearch", "datamining"):
        assert f"`{kind}`" in str(e.value)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1000,0.5\n100,1\n", "bad.csv: line 2: size 100 B is below the size before it, 1000 B"),
        ("1KB,0.5\n900,1\n", "line 2: size 900 B is below the size before it, 1000 B"),
        ("1000,0.5\n2000,0.4\n", "line 2: p 0.4 is below the p before it, 0.5"),
        ("1000,1.5\n", "line 1: p 1.5 is not in [0, 1]"),
        ("1000,nan\n", "line 1: p 'nan' is not a finite number"),
        # A malformed data line on the first line is not taken for a header.
        ("1000,x\n2000,1\n", "line 1: p 'x' is not a finite number"),
        ("lots,0.5\n2000,1\n", "line 1: size 'lots' is not a size"),
        ("size,p\n1000,0.5\n1000,0.9\n", "line 3: the last p is 0.9; a CDF ends at 1"),
        ("1000,0.5\n\xff,1\n", "line 2, column 1: not UTF-8 text"),
    ],
)
def test_a_csv_cdf_is_refused_at_its_first_bad_line(tmp_path, text, why):
    (tmp_path / "bad.csv").write_bytes(text.encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff"))
    with pytest.raises(quench.ScenarioError) as e:
        dist.read_cdf(tmp_path / "bad.csv", key="flows[4].size.file", shown="bad.csv")
    assert e.value.path == "flows[4].size.file"
    assert e.value.reason.startswith("bad.csv: ") and why in e.value.reason, e.value.reason


def test_a_csv_cdf_with_a_byte_order_mark_a_header_and_crlf_reads(tmp_path):
    (tmp_path / "s.csv").write_bytes(b"\xef\xbb\xbfsize,p\r\n1KB,0.5\r\n4000,1\r\n")
    assert dist.read_cdf(tmp_path / "s.csv") == [["1KB", 0.5], [4000, 1]]


def test_a_csv_cdf_must_be_a_regular_file_within_the_cap(tmp_path, monkeypatch):
    def refused(path, shown="s.csv") -> str:
        with pytest.raises(quench.ScenarioError) as e:
            dist.read_cdf(path, key="flows[0].size.file", shown=shown)
        assert e.value.path == "flows[0].size.file"
        return e.value.reason

    assert "is not a regular file" in refused("/dev/zero", shown="/dev/zero")
    assert refused(tmp_path, shown="data") == "data: is a folder, not a CDF file"
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    started = time.perf_counter()
    assert "is not a regular file" in refused(fifo)  # refused at once, not waiting for a writer
    assert time.perf_counter() - started < 1
    (tmp_path / "big.csv").write_text("1000,0.5\n2000,1\n")
    monkeypatch.setattr(dist, "MAX_CDF_BYTES", 10)
    assert refused(tmp_path / "big.csv") == "s.csv: is 16 bytes, more than the 10 bytes quench reads from a CDF file"


def test_a_json_scenario_reads_its_csv_relative_to_its_folder(tmp_path, monkeypatch):
    path = write_scenario(tmp_path / "here")
    spec = tomllib.loads(path.read_text())
    (tmp_path / "here" / "s.json").write_text(json.dumps(spec))
    monkeypatch.chdir(tmp_path)  # not the scenario's folder
    assert load_scenario(tmp_path / "here" / "s.json")["workloads"][0]["size"]["cdf"] == POINTS
