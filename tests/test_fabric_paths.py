"""Flowlet switching, flows pinned to named paths and flows that wait for others, from the
Python API and TOML (the engine's tests, crates/quench-core/tests/fabric_paths.rs, check the
figures): the keys reach the engine as written, and a bad one is refused naming it."""

from __future__ import annotations

import pytest

import quench
from quench.scenario import load_scenario, run_scenario, validate_scenario

# h0 (pod 0) to h5 (pod 1) of a k = 4 fat-tree over aggregation switch 1 and core switch 3.
THERE = ["h0", "tor0", "agg0_1", "core3", "agg1_1", "tor2", "h5"]


def fat_tree() -> quench.Network:
    return quench.Network(seed=2).fat_tree(4, rate="1Gbps", delay="10us", qdisc=quench.droptail("100p"))


def test_a_pinned_flow_crosses_its_named_links():
    net = fat_tree().tcp("h0", "h5", bytes="100KB", path=THERE, name="pinned")
    res = net.run("100ms", progress=False)
    links = res.links.set_index("name")
    up = [f"{a}->{b}" for a, b in zip(THERE, THERE[1:], strict=False)]
    assert (links.loc[up, "departed_packets"] > 0).all()
    # The other aggregation switch and cores of the pod carry none of its data.
    assert links.loc["tor0->agg0_0", "departed_packets"] == 0
    assert links.loc[["agg0_1->core2"], "departed_packets"].sum() == 0
    assert res.flows["completion_s"].notna().all()


@pytest.mark.parametrize("transport", ["ndp", "roce"])
def test_ndp_and_roce_take_pinned_paths_both_ways(transport):
    """`path` and `reverse_path` from `Network.ndp` and `Network.roce`: data crosses the named
    links only (over switches that spray, for NDP), its ACKs the reverse path's."""
    back = ["h5", "tor2", "agg1_0", "core0", "agg0_0", "tor0", "h0"]
    qdisc = quench.trim() if transport == "ndp" else quench.droptail("1000p")
    net = quench.Network(seed=2).fat_tree(4, rate="10Gbps", delay="1us", qdisc=qdisc, multipath="spray")
    getattr(net, transport)("h0", "h5", bytes=100 * 1000, path=THERE, reverse_path=back, name="pinned")
    res = net.run("10ms", progress=False)
    links = res.links.set_index("name")["departed_packets"]
    for a, b in zip(THERE, THERE[1:], strict=False):
        assert links[f"{a}->{b}"] >= 70, f"{a}->{b}"  # 100 KB in packets of 1436 or 1000 bytes
    for a, b in zip(back, back[1:], strict=False):
        assert links[f"{a}->{b}"] > 0, f"{a}->{b}"
    others = [n for n in links.index if n.startswith(("tor0->agg", "agg0_0->core", "agg0_1->core"))]
    assert links[[n for n in others if n not in ("tor0->agg0_1", "agg0_1->core3")]].sum() == 0
    assert res.flows["completion_s"].notna().all()


def test_per_flow_spraying_spreads_a_flow_over_every_path():
    """`spray_flow` from Python: a 100-packet NDP flow from pod 0 to pod 1 of a k = 4 fat-tree
    crosses both of its edge switch's uplinks and all four cores, 25 packets each (each run of
    4 packets takes the 4 paths once; crates/quench-core/src/topology/tests.rs checks the
    orders)."""
    net = quench.Network(seed=2).fat_tree(
        4, rate="10Gbps", delay="1us", qdisc=quench.droptail("1000p"), multipath="spray_flow"
    )
    net.ndp("h0", "h5", bytes=100 * 1436)
    res = net.run("10ms", progress=False)
    links = res.links.set_index("name")["departed_packets"]
    assert links[["tor0->agg0_0", "tor0->agg0_1"]].tolist() == [50, 50]
    cores = [f"agg0_{a}->core{c}" for a in range(2) for c in (2 * a, 2 * a + 1)]
    assert links[cores].tolist() == [25, 25, 25, 25]
    assert res.flows["completion_s"].notna().all()


def test_a_chain_starts_each_flow_at_the_previous_ones_completion():
    net = fat_tree()
    net.tcp("h0", "h5", bytes="10KB", name="a")
    net.tcp("h5", "h10", bytes="10KB", name="b", after=["a"])
    net.tcp("h10", "h0", bytes="10KB", name="c", after=["b"], start="1ms")
    flows = net.run("100ms", progress=False).flows.set_index("name")
    assert flows.loc["b", "start_s"] == pytest.approx(flows.loc["a", "completion_s"], abs=1e-12)
    assert flows.loc["c", "start_s"] == pytest.approx(flows.loc["b", "completion_s"] + 1e-3, abs=1e-12)


def test_flowlet_switching_and_its_gap_reach_the_engine():
    net = quench.Network().fat_tree(4, rate="1Gbps", delay="10us", multipath="flowlet")
    net.routing(flowlet_gap="100us").multipath("core0", "ecmp")
    spec = validate_scenario(net.to_dict("1s"))
    assert spec["flowlet_gap"] == "100us"
    assert spec["topologies"][0]["multipath"] == "flowlet" and spec["multipath"]["core0"] == "ecmp"
    # Left out at its default, as before the key existed.
    assert "flowlet_gap" not in validate_scenario(quench.Network().fat_tree(4, "1Gbps", "1us").to_dict("1s"))


def test_toml_takes_the_same_keys(tmp_path):
    (tmp_path / "ring.toml").write_text(
        'duration = "100ms"\nflowlet_gap = "200us"\n'
        "[[topologies]]\n"
        'kind = "fat_tree"\nk = 4\nrate = "1Gbps"\ndelay = "10us"\nmultipath = "flowlet"\n'
        '[[flows]]\nkind = "tcp"\nname = "a"\nsrc = "h0"\ndst = "h5"\nbytes = "10KB"\n'
        f"path = {THERE!r}\n".replace("'", '"')
        + '[[flows]]\nkind = "tcp"\nname = "b"\nsrc = "h5"\ndst = "h0"\nbytes = "10KB"\nafter = ["a"]\n'
    )
    spec = load_scenario(tmp_path / "ring.toml")
    flows = run_scenario(spec, progress=False).flows.set_index("name")
    assert flows.loc["b", "start_s"] == pytest.approx(flows.loc["a", "completion_s"], abs=1e-12)


@pytest.mark.parametrize(
    ("flows", "key"),
    [
        ([{"path": ["h0", "tor0", "core3", "agg1_1", "tor2", "h5"]}], "flows[0].path[2]"),
        ([{"reverse_path": THERE}], "flows[0].reverse_path[0]"),
        ([{"name": "a", "after": ["b"]}, {"name": "b", "after": ["a"]}], "flows[0].after"),
        ([{"after": ["nobody"]}], "flows[0].after[0]"),
    ],
)
def test_a_bad_path_or_dependency_is_refused_naming_its_key(flows, key):
    spec = fat_tree().to_dict("1s")
    spec["flows"] = [{"kind": "tcp", "src": "h0", "dst": "h5", **f} for f in flows]
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(spec)
    assert e.value.path == key


def test_the_flowlet_gap_is_range_checked():
    spec = fat_tree().routing(flowlet_gap="2s").to_dict("1s")
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(spec)
    assert e.value.path == "flowlet_gap"


@pytest.mark.parametrize(
    ("key", "value"),
    [("path", ["s0", "r1", "r2", "d0"]), ("reverse_path", ["d0", "r2", "r1", "s0"]), ("after", ["x"])],
)
def test_ns3_refuses_pinned_paths_and_dependencies(key, value):
    from test_ns3 import matched_dumbbell

    from quench import ns3

    spec = matched_dumbbell("newreno", False)
    spec["flows"].append({**spec["flows"][0], "name": "x"})
    spec["flows"][0] = {**spec["flows"][0], key: value}
    with pytest.raises(Exception, match=rf"^flows\[0\]\.{key}: .*no ns-3 counterpart"):
        ns3.translate(spec)
