"""Generated fabrics from the Python API and TOML: the engine expands `[[topologies]]` into
named hosts, switches and links (crates/quench-core/src/topology/), routes over equal-cost
paths by each switch's multipath policy, and refuses a bad fabric naming its key."""

from __future__ import annotations

import pytest

import quench
from quench.scenario import load_scenario, run_scenario, validate_scenario

# A k = 4 fat-tree: k³/4 hosts, 5k²/4 switches, 3k³/4 duplex links (Al-Fares et al. 2008).
K = 4
HOSTS = K**3 // 4
SWITCHES = 5 * K**2 // 4
DUPLEX_LINKS = 3 * K**3 // 4


def permutation(net: quench.Network, hosts: int, shift: int) -> quench.Network:
    for i in range(hosts):
        net.tcp(f"h{i}", f"h{(i + shift) % hosts}", bytes="200KB", cc="cubic")
    return net


def test_a_fat_tree_runs_a_permutation_to_completion():
    net = quench.Network(seed=2).fat_tree(K, rate="1Gbps", delay="10us", qdisc=quench.droptail("100p"))
    # 3 s: flows whose hashes collide on an uplink lose packets and some wait out a 1 s
    # retransmission timeout (RFC 6298's initial and minimum RTO).
    res = permutation(net, HOSTS, 5).run("3s", progress=False)
    assert len(res.links) == 2 * DUPLEX_LINKS
    assert len(res.nodes) == HOSTS + SWITCHES
    assert res.flows["completion_s"].notna().all()
    assert {"tor0->agg0_1", "agg0_1->core2", "core3->agg3_1"} <= set(res.links["name"])


def test_a_leaf_spine_from_toml_with_oversubscription(tmp_path):
    (tmp_path / "fabric.toml").write_text(
        'duration = "1s"\n'
        "[[topologies]]\n"
        'kind = "leaf_spine"\nhosts_per_leaf = 4\nleaves = 2\nspines = 2\n'
        'rate = "10Gbps"\ndelay = "2us"\noversubscription = 2.0\nmultipath = "spray"\n'
        '[[flows]]\nkind = "tcp"\nsrc = "h0"\ndst = "h7"\nbytes = "1MB"\n'
    )
    spec = load_scenario(tmp_path / "fabric.toml")
    res = run_scenario(spec, progress=False)
    links = res.links.set_index("name")
    # 4 hosts × 10 Gbit/s over 2 spines at 2:1 oversubscription: 10 Gbit/s per uplink.
    assert links.loc["tor0->spine0", "rate_bps"] == 10e9
    # Sprayed: the one flow's data crosses both spines.
    assert links.loc["tor0->spine0", "departed_packets"] > 0 and links.loc["tor0->spine1", "departed_packets"] > 0
    assert res.flows["completion_s"].notna().all()
    assert validate_scenario(spec)["topologies"][0]["kind"] == "leaf_spine"


def test_python_and_toml_give_the_same_scenario(tmp_path):
    net = quench.Network().fat_tree(2, "1Gbps", "1us", core={"rate": "10Gbps"}).multipath("core0", "spray")
    (tmp_path / "ft.toml").write_text(net.to_toml("1s"))
    assert validate_scenario(load_scenario(tmp_path / "ft.toml")) == validate_scenario(net.to_dict("1s"))


@pytest.mark.parametrize(
    ("fabric", "path"),
    [
        ({"k": 5}, "topologies[0].k"),
        ({"k": 66}, "topologies[0].k"),
        ({"core": {"rate": "0bps"}}, "topologies[0].core.rate"),
        ({"multipath": "hash"}, "topologies[0].multipath"),
    ],
)
def test_a_bad_fabric_is_refused_naming_its_key(fabric, path):
    spec = {"duration": "1s", "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "1us", **fabric}]}
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(spec)
    assert e.value.path == path


def test_traffic_matrices_over_a_fabric_through_step_marking():
    """A synchronised incast (15 senders of 64 KB into h0) and a permutation at 30 % load of
    DCTCP through step-marking switches: every flow completes, no buffer overflows, the
    incast's flows all start at once, and each host sends once and receives once in the
    permutation's pairs."""
    net = quench.Network(seed=3).fat_tree(K, rate="10Gbps", delay="1us", qdisc=quench.step("20p", "200p"))
    dctcp = {"kind": "tcp", "cc": "dctcp", "tcp": {"ecn": True}}
    net.workload(matrix="incast", receiver="h0", size="64KB", flow=dctcp, name="incast")
    net.workload(matrix="permutation", load=0.3, size="100KB", flow=dctcp, start="1ms", name="perm")
    res = net.run("20ms", progress=False)
    incast = res.flows[res.flows["name"].str.startswith("incast.")]
    assert len(incast) == HOSTS - 1 and (incast["dst"] == "h0").all() and (incast["start_s"] == 0).all()
    perm = res.flows[res.flows["name"].str.startswith("perm.")]
    assert len(perm) > 0 and (perm["src"] != perm["dst"]).all()
    pairs = set(zip(perm["src"], perm["dst"]))
    assert len({s for s, _ in pairs}) == len(pairs) == len({d for _, d in pairs}), "one destination per sender"
    done = res.flows[res.flows["start_s"] < 0.015]
    assert done["completion_s"].notna().all()
    assert res.links["drops_overflow"].sum() == 0 and res.links["marked_packets"].sum() > 0


def test_a_matrix_error_names_its_key():
    net = quench.Network().fat_tree(K, rate="10Gbps", delay="1us")
    net.workload(matrix="incast", receiver="x9", size="64KB")
    with pytest.raises(quench.ScenarioError, match=r"workloads\[0\]\.receiver"):
        net.run("1ms", progress=False)
