"""Links that change (docs/mechanisms.md#links-that-change) through the Python front end: trace
files read by the rules every file follows (line numbers, regular files only), the `Network`
keywords and `change` reaching the engine, the synthetic trace generator, and `quench ns3`
refusing each with one line naming its key. The mechanisms themselves are validated against
closed forms in crates/quench-core/tests/link_changes.rs."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from test_ns3 import matched_dumbbell

import quench
from quench import ns3, traces
from quench.scenario import load_scenario


def _cbr(tmp_path: Path, **mid: object) -> quench.Network:
    net = quench.Network(seed=3)
    net.hosts("a", "b").routers("r1", "r2")
    net.link("a", "r1", rate="1Gbps", delay="1ms")
    net.link("r1", "r2", rate="12Mbps", delay="10ms", qdisc={"kind": "droptail", "limit": 1000}, **mid)
    net.link("r2", "b", rate="1Gbps", delay="1ms")
    net.udp("a", "b", rate="40Mbps", size="1472B")
    return net


def test_a_mahimahi_file_sets_the_capacity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two opportunities per ms for 100 ms, repeating: 2000 full-size packets a second.
    traces.write_mahimahi(tmp_path / "up.trace", [t for t in range(1, 101) for _ in range(2)])
    monkeypatch.chdir(tmp_path)
    res = _cbr(tmp_path, capacity={"mahimahi": "up.trace"}).run("2s")
    link = res.links.set_index("name").loc["r1->r2"]
    assert abs(int(link["departed_packets"]) - 4000) <= 1
    # The recorded scenario carries the opportunities, so the run repeats without the file.
    cap = res.scenario["links"][1]["capacity"]
    assert cap["source"] == "up.trace" and len(cap["opportunities_ms"]) == 200


def test_a_scenario_file_names_traces_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "rates.csv").write_text("time_s,rate_mbps\n0,10\n1.5,2.5\n")
    spec = _cbr(tmp_path, capacity={"rates": "traces/rates.csv"}).to_dict("3s")
    (tmp_path / "s.toml").write_text(quench.scenario.dump(spec))
    loaded = load_scenario(tmp_path / "s.toml")
    assert loaded["links"][1]["capacity"]["rates"] == [[0.0, 10_000_000], [1.5, 2_500_000]]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1\n3\n2\n", r"line 3: 2 ms comes before 3 ms"),
        ("1\nsoon\n", r"line 2: 'soon' is not a time in whole ms"),
        ("\n\n", r"no delivery opportunities"),
    ],
)
def test_bad_mahimahi_lines_are_named(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "bad.trace").write_text(text)
    with pytest.raises(quench.ScenarioError, match=rf"^links\[1\]\.capacity\.mahimahi: bad\.trace: {why}"):
        quench.scenario.resolve_traces(_cbr(tmp_path, capacity={"mahimahi": "bad.trace"}).to_dict("1s"), tmp_path)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("0,10\n", r"line 1: the header must be time_s,rate_mbps or time_s,rate_bps"),
        ("time_s,rate_mbps\n0,-1\n", r"line 2: expected a time and a rate"),
        ("time_s,rate_bps\n", r"no rate steps"),
    ],
)
def test_bad_rate_files_are_named(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "r.csv").write_text(text)
    spec = _cbr(tmp_path, reverse_capacity={"rates": "r.csv"}).to_dict("1s")
    with pytest.raises(quench.ScenarioError, match=rf"^links\[1\]\.reverse_capacity\.rates: r\.csv: {why}"):
        quench.scenario.resolve_traces(spec, tmp_path)


def test_a_fifo_is_not_read_as_a_trace(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.trace")
    spec = _cbr(tmp_path, capacity={"mahimahi": "pipe.trace"}).to_dict("1s")
    with pytest.raises(quench.ScenarioError, match=r"^links\[1\]\.capacity\.mahimahi: pipe\.trace: is not a regular"):
        quench.scenario.resolve_traces(spec, tmp_path)


def test_a_failed_link_and_routing_around_it() -> None:
    # a -> r1 -> {r2 | r3} -> r4 -> b; r1<->r2 down from 1 s to 2 s, routing converging in 20 ms.
    net = quench.Network(seed=1)
    net.hosts("a", "b").routers("r1", "r2", "r3", "r4")
    for x, y in [("a", "r1"), ("r1", "r2"), ("r1", "r3"), ("r2", "r4"), ("r3", "r4"), ("r4", "b")]:
        net.link(x, y, rate="100Mbps", delay="10ms")
    net.change("r1->r2", at="1s", up=False).change("r1->r2", at="2s", up=True)
    net.routing(convergence="20ms")
    net.udp("a", "b", rate="8Mbps", size="972B")
    res = net.run("3s")
    reasons = res.drops["reason"].astype(str)
    # 10 ms of 1000 datagrams/s on the wire, 20 ms of them sent before routing converged.
    assert (reasons == "link_cut").sum() == 10
    assert (reasons == "link_down").sum() == 20
    links = res.links.set_index("name")
    assert abs(int(links.loc["r1->r3", "departed_packets"]) - 1000) <= 2
    assert links.loc["r2->r1", "drops_link_down"] == 0


def test_bad_changes_name_their_key() -> None:
    net = _cbr(Path("."))
    net.change("r1->r9", at="1s", up=False)
    with pytest.raises(quench.ScenarioError, match=r"^link_changes\[0\]\.link: no link 'r1->r9'"):
        net.run("2s")
    with pytest.raises(quench.ScenarioError, match=r"^links\[1\]\.schedule\[0\]\.every: "):
        _cbr(Path("."), schedule=[{"every": "0s", "up": [False, True]}]).run("2s")


def test_sprout_traces_are_seeded_and_bounded() -> None:
    a = traces.sprout_trace(20.0, seed=4)
    assert a == traces.sprout_trace(20.0, seed=4)
    assert a != traces.sprout_trace(20.0, seed=5)
    assert all(x <= y for x, y in zip(a, a[1:], strict=False)) and a[-1] <= 20_000
    # Deliveries per second never beyond λ_max = 1000 by more than Poisson noise.
    per_s = np.bincount(np.array(a) // 1000)
    assert per_s.max() < 1000 + 5 * 1000**0.5
    # σ = 0 and no outage: a constant Poisson rate, 500/s within 4 standard errors.
    flat = traces.sprout_trace(20.0, seed=1, sigma_pps=0.0)
    assert abs(len(flat) - 10_000) < 4 * 10_000**0.5


def test_a_pull_to_the_mean_keeps_traces_of_any_sigma_near_it() -> None:
    # Stationary deviation σ/√(2·0.5) = σ packets/s; a minute's mean is within a few tenths of
    # it of 500 for σ up to 100, where pure Brownian motion may end anywhere in [0, 1000].
    for sigma in (25.0, 100.0):
        for seed in (1, 2, 3):
            ms = traces.sprout_trace(60.0, seed=seed, sigma_pps=sigma, mean_pps=500.0, reversion_per_s=0.5)
            assert abs(len(ms) / 60 - 500) < 0.5 * sigma, (sigma, seed, len(ms) / 60)
    with pytest.raises(ValueError, match="reversion_per_s"):
        traces.sprout_trace(1.0, seed=1, reversion_per_s=-1.0)


def test_constant_traces_have_their_rate() -> None:
    ms = traces.constant_trace(12.032e6)
    assert len(ms) == 1000 and ms[-1] == 1000
    assert len(traces.constant_trace(24.064e6, duration_ms=500)) == 1000


@pytest.mark.parametrize(
    ("key", "value", "what"),
    [
        ("capacity", {"rates": [[0, 1e6]]}, "capacity trace"),
        ("schedule", [{"at": "1s", "rate": "5Mbps"}], "changes during the run"),
    ],
)
def test_ns3_refuses_links_that_change(key: str, value: object, what: str) -> None:
    spec = matched_dumbbell("newreno", False)
    spec["links"][0][key] = value
    with pytest.raises(Exception, match=rf"^links\[0\]\.{key}: .*{what}.*no ns-3 counterpart"):
        ns3.translate(spec)


def test_ns3_refuses_named_link_changes() -> None:
    spec = matched_dumbbell("newreno", False)
    spec["link_changes"] = [{"link": "r1->r2", "at": "1s", "up": False}]
    with pytest.raises(Exception, match=r"^link_changes: .*no ns-3 counterpart"):
        ns3.translate(spec)


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("### A link that changes", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(section, "README.md", "exec"), namespace)  # noqa: S102 - the project's own README
    links = namespace["res"].links.set_index("name")  # type: ignore[attr-defined]
    assert links.loc["r1->r2", "drops_link_cut"] > 0 and links.loc["r1->r2", "departed_packets"] > 10_000
