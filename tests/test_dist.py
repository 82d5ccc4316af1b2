"""Size distributions from the front end (quench.dist, crates/quench-core/src/dist.rs): the
helpers write tables the engine reads, an empirical CDF can come from a CSV file found relative
to the scenario file (or, for a scenario built in Python, the working directory), and the
recorded scenario carries the points themselves. The distributions' statistics are checked
in the engine's unit tests (dist.rs)."""

import json
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
    assert e.value.path == "workloads[0].size.cdf[1][1]"


def test_unknown_distribution_lists_the_kinds():
    net = Network().hosts("a", "b").link("a", "b", "10Mbps", "1ms")
    net.udp("a", "b", rate="1Mbps", size={"dist": "gaussian", "mean": "1KB"})
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(net.to_dict("1s"))
    assert e.value.path == "flows[0].size.dist"
    for kind in ("exponential", "lognormal", "empirical", "websearch", "datamining"):
        assert f"`{kind}`" in str(e.value)
