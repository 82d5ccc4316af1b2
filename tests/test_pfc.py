"""PFC from the Python API and TOML (the engine's tests, crates/quench-core/tests/pfc.rs, check
the hand trace, the lossless incast and the deadlock): the keys reach the engine as written,
the links table and the `pfc_cycles` table come back, and a bad key is refused naming it."""

from __future__ import annotations

import math

import pytest

import quench
from quench.scenario import load_scenario, run_scenario, validate_scenario


def bottleneck() -> quench.Network:
    """Host a sends 1000-byte datagrams at 20 Gb/s through switch s onto a 1 Gb/s link to c."""
    net = quench.Network(seed=1).hosts("a", "c").routers("s")
    net.link("a", "s", rate="10Gbps", delay="1us", qdisc=quench.droptail("10000p"))
    net.link("s", "c", rate="1Gbps", delay="1us", qdisc=quench.droptail("10000p"))
    return net.udp("a", "c", rate="20Gbps", size="972B")


def test_pfc_pauses_the_upstream_link_and_loses_nothing():
    res = bottleneck().pfc("10500B").run("80us", progress=False)
    links = res.links.set_index("name")
    # The hand trace of pfc.rs's test: paused at 12.452 us, 14,000 bytes held at most.
    assert links.loc["a->s", "pfc_pauses"] == 2
    assert links.loc["a->s", "pfc_max_ingress_bytes"] == 14_000
    assert links.loc["s->c", "dropped_packets"] == 0
    assert list(res.pfc_cycles.columns) == ["time_s", "links", "hops", "priority", "still_paused"]
    assert res.pfc_cycles.empty


def test_the_control_class_reaches_the_engine():
    """A connection opened the other way while a->s is paused: with `control="priority"` its
    SYN-ACK passes the paused link and the 500 bytes arrive at 33.872 us (the engine's hand
    trace); in the one lossless class they do not arrive within 200 us."""

    def done(control: str | None) -> float:
        net = bottleneck().tcp("c", "a", bytes="500B", start="20us", profile="rfc", delayed_ack={"enabled": False})
        return float(net.pfc("10500B", control=control).run("200us", progress=False).flows["completion_s"].iloc[1])

    assert done("priority") == pytest.approx(33.872e-6, abs=1e-12)
    assert math.isnan(done(None))


def test_priorities_and_classes_reach_the_engine():
    """The engine's priority test from Python: a's datagrams to c in priority 3, the only
    lossless one, and a 1 Gb/s flow to e in priority 0, with a's queue in two classes: s pauses
    priority 3 (the monitor's bit 3) and the priority-0 flow loses nothing to the pause; a
    workload takes a priority too, and a bad one is refused naming its key."""
    net = quench.Network(seed=1).hosts("a", "c", "e").routers("s")
    fifo = quench.droptail("10000p")
    net.link("a", "s", rate="10Gbps", delay="1us", qdisc=quench.classes(([3], fifo), ([0], fifo)))
    net.link("s", "c", rate="1Gbps", delay="1us", qdisc=fifo)
    net.link("s", "e", rate="10Gbps", delay="1us")
    net.udp("a", "c", rate="20Gbps", size="972B", priority=3)
    net.udp("a", "e", rate="1Gbps", size="972B", name="low")
    net.pfc("10500B", priorities=[3]).record(monitors=True)
    res = net.run("80us", progress=False)
    paused = res.monitors[(res.monitors["name"] == "pfc_paused") & (res.monitors["link_name"] == "a->s")]
    assert list(paused["value"])[:2] == [8.0, 0.0]
    low = res.flows.set_index("name").loc["low"]
    assert low["bytes_delivered"] >= 6 * 972, "it goes while priority 3 is paused"
    spec = net.to_dict("1s")
    assert spec["pfc"]["priorities"] == [3] and spec["flows"][0]["priority"] == 3
    net.workload([("a", "e")], size="10KB", priority=9)
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(net.to_dict("1s"))
    assert e.value.path == "workloads[0].priority"


def test_without_pfc_the_tables_keep_their_form():
    res = bottleneck().run("80us", progress=False)
    assert not any(c.startswith("pfc_") for c in res.links.columns)
    assert res.pfc_cycles.empty
    assert "pfc" not in validate_scenario(bottleneck().to_dict("1s"))


def test_a_priority_with_thresholds_of_its_own_uses_them():
    """The datagrams' priority (0) given xoff 5500 B of its own behind a scenario-wide 10500 B:
    the same pauses and ingress high-water mark as 5500 B for the whole scenario, and not
    those of 10500 B (2 pauses, 14,000 bytes: the hand trace)."""

    def links(net: quench.Network):
        return net.run("80us", progress=False).links.set_index("name").loc["a->s"]

    own = links(bottleneck().pfc("10500B", thresholds=[{"priorities": [0], "xoff": "5500B"}]))
    whole = links(bottleneck().pfc("5500B"))
    columns = ["pfc_pauses", "pfc_paused_s", "pfc_max_ingress_bytes"]
    assert list(own[columns]) == list(whole[columns])
    assert own["pfc_max_ingress_bytes"] < 14_000


def test_toml_takes_the_same_keys(tmp_path):
    (tmp_path / "lossless.toml").write_text(
        'duration = "80us"\nhosts = ["a", "c"]\nrouters = ["s"]\n'
        '[pfc]\nxoff = "10500B"\nxon = "7428B"\nswitches = ["s"]\n'
        '[[links]]\nfrom = "a"\nto = "s"\nrate = "10Gbps"\ndelay = "1us"\n'
        'qdisc = { kind = "droptail", limit = "10000p" }\n'
        '[[links]]\nfrom = "s"\nto = "c"\nrate = "1Gbps"\ndelay = "1us"\n'
        'qdisc = { kind = "droptail", limit = "10000p" }\n'
        '[[flows]]\nkind = "udp"\nsrc = "a"\ndst = "c"\nrate = "20Gbps"\nsize = "972B"\n'
    )
    links = run_scenario(load_scenario(tmp_path / "lossless.toml"), progress=False).links.set_index("name")
    # xon given as its default: the same run as the API's.
    assert links.loc["a->s", "pfc_max_ingress_bytes"] == 14_000


def test_a_deadlock_is_a_row_of_pfc_cycles_with_the_tables_schema():
    """Four switches in a ring, each host's flow pinned three hops clockwise (the engine's
    deadlock test): the cycle is reported, still paused, in the same columns and dtypes as
    the empty table of a run without PFC."""
    net = quench.Network(seed=1)
    ring = [f"s{i}" for i in range(4)]
    net.hosts(*(f"h{i}" for i in range(4))).routers(*ring)
    for i in range(4):
        net.link(f"h{i}", ring[i], rate="10Gbps", delay="1us")
        net.link(ring[i], ring[(i + 1) % 4], rate="10Gbps", delay="1us")
    for i in range(4):
        path = [f"h{i}", *(ring[(i + j) % 4] for j in range(4)), f"h{(i + 3) % 4}"]
        net.udp(f"h{i}", f"h{(i + 3) % 4}", rate="10Gbps", size="1000B", path=path)
    cycles = net.pfc("20KB").run("2ms", progress=False).pfc_cycles
    assert (cycles["hops"] == 4).any() and cycles.loc[cycles["hops"] == 4, "still_paused"].eq(1).all()
    empty = bottleneck().run("80us", progress=False).pfc_cycles
    assert list(cycles.dtypes.astype(str).items()) == list(empty.dtypes.astype(str).items())


@pytest.mark.parametrize(
    ("pfc", "key"),
    [
        ({"xoff": 0}, "pfc.xoff"),
        ({"xoff": "10KB", "xon": "10KB"}, "pfc.xon"),
        ({"xoff": "10KB", "switches": ["a"]}, "pfc.switches[0]"),
        ({"xoff": "10KB", "control": "urgent"}, "pfc.control"),
        ({"xoff": "10KB", "headroom": "5KB"}, "pfc.headroom"),
        ({"xoff": "10KB", "thresholds": [{"priorities": [3], "xoff": 0}]}, "pfc.thresholds[0].xoff"),
        ({"xoff": "10KB", "thresholds": [{"priorities": [3], "xoff": "5KB", "xon": "6KB"}]}, "pfc.thresholds[0].xon"),
        (
            {"xoff": "10KB", "priorities": [0], "thresholds": [{"priorities": [3], "xoff": "5KB"}]},
            "pfc.thresholds[0].priorities[0]",
        ),
        ({"xoff": "10KB", "thresholds": [{"priorities": [3], "xoff": "5KB", "quanta": 2}]}, "pfc.thresholds[0].quanta"),
    ],
)
def test_a_bad_pfc_key_is_refused_naming_it(pfc, key):
    spec = bottleneck().to_dict("1s")
    spec["pfc"] = pfc
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(spec)
    assert e.value.path == key


def test_ets_shares_the_link_by_quantum():
    """IEEE 802.1Qaz ETS (Linux's sch_ets): two saturating UDP flows of 1000-byte datagrams in
    priorities 1 and 2, their classes' quanta 3000 B and 1000 B, share a 100 Mb/s link 3:1;
    a strict class before them (priority 5, a 10 Mb/s flow) goes first and leaves them the
    rest. Closed form: 90 Mb/s split 67.5 / 22.5."""
    net = quench.Network(seed=1).hosts("a", "b").routers("s")
    fifo = quench.droptail("100p")
    ets = quench.classes(([5], fifo), ([1], fifo, "3000B"), ([2], fifo, "1000B"))
    net.link("a", "s", rate="1Gbps", delay="1us")
    net.link("s", "b", rate="100Mbps", delay="1us", qdisc=ets)
    net.udp("a", "b", rate="200Mbps", size="1000B", priority=1, name="three")
    net.udp("a", "b", rate="200Mbps", size="1000B", priority=2, name="one")
    net.udp("a", "b", rate="10Mbps", size="1000B", priority=5, name="strict")
    res = net.run("200ms", progress=False)
    rate = res.flows.set_index("name")["goodput_bps"]
    wire = 1000 / (1000 - 28)  # the IP and UDP headers the goodput leaves out
    assert rate["strict"] * wire == pytest.approx(10e6, rel=0.02)
    assert rate["three"] * wire == pytest.approx(67.5e6, rel=0.02)
    assert rate["one"] * wire == pytest.approx(22.5e6, rel=0.02)
    spec = net.to_dict("1s")["links"][1]["qdisc"]["classes"]
    assert [c.get("quantum") for c in spec] == [None, "3000B", "1000B"]
