"""RoCE from Python (docs/mechanisms.md#roce): `Network.roce` between two hosts through one
switch, 10 Gb/s and 1 us per link. A lone flow finishes within 0.1 % of its closed form (the
flows table's ideal; the NIC's pacer rounds each packet's time up to the nanosecond); one
scripted loss costs the 8 packets the hand trace of crates/quench-core/tests/roce.rs counts;
two DCQCN flows share a PFC-enabled bottleneck evenly without a drop; bad keys are named."""

import pytest

import quench

PACKET, RATE = 1044, 10e9


def _line(loss: float | dict = 0.0) -> quench.Network:
    net = quench.Network()
    net.hosts("a", "b")
    net.routers("sw")
    net.link("a", "sw", rate="10Gbps", delay="1us", loss=loss)
    net.link("sw", "b", rate="10Gbps", delay="1us")
    return net


def test_a_lone_flow_meets_its_closed_form() -> None:
    net = _line()
    net.roce("a", "b", bytes="100000B")
    flows = net.run("1ms").flows
    # 100 packets of 1044 B: the first crosses both hops, the other 99 follow one packet apart.
    closed = 2 * (PACKET * 8 / RATE + 1e-6) + 99 * PACKET * 8 / RATE
    assert flows["ideal_fct_s"].iloc[0] == pytest.approx(closed, abs=1e-12)
    assert flows["response_time_s"].iloc[0] == pytest.approx(closed, rel=1e-3)
    assert flows["cc"].iloc[0] == "dcqcn"
    assert flows["retransmitted_segments"].iloc[0] == 0


def test_one_loss_goes_back_n() -> None:
    net = _line(loss={"model": "list", "packets": [5]})
    net.roce("a", "b", bytes="20000B")
    row = net.run("1ms").flows.iloc[0]
    assert (row["retransmitted_segments"], row["fast_retransmits"], row["timeouts"]) == (8, 1, 0)
    assert (row["packets_sent"], row["reordered_segments"], row["bytes_delivered"]) == (28, 7, 20000)


def test_two_dcqcn_flows_share_a_lossless_bottleneck() -> None:
    net = quench.Network()
    net.hosts("s0", "s1", "d")
    net.routers("r1", "r2")
    red = quench.red(mode="bytes", min_th="5KB", max_th="200KB", max_p=0.01, w_q=1.0, signal="mark", limit="100KB")
    for s in ("s0", "s1"):
        net.link(s, "r1", rate="10Gbps", delay="1us")
    net.link("r1", "r2", rate="10Gbps", delay="1us", qdisc=red)
    net.link("r2", "d", rate="10Gbps", delay="1us")
    net.pfc(xoff="20KB")
    net.roce("s0", "d", bytes="20MB")
    net.roce("s1", "d", bytes="20MB")
    res = net.run("50ms")
    flows, links = res.flows, res.links
    assert links["dropped_packets"].sum() == 0
    assert flows["retransmitted_segments"].sum() == 0
    assert (flows["bytes_delivered"] == 20_000_000).all()
    # Started together with equal transfers: they finish close together.
    done = flows["response_time_s"]
    assert done.max() / done.min() < 1.05


def test_bad_keys_are_named() -> None:
    for params, key in [({"mtu": 0}, "mtu"), ({"ack_interval": 0}, "ack_interval"), ({"rto": "0s"}, "rto")]:
        net = _line()
        net.roce("a", "b", bytes="10KB", **params)
        with pytest.raises(quench.ScenarioError, match=key):
            net.run("1ms")
    net = _line()
    net.roce("a", "b", bytes="10KB", cc="cubic")
    with pytest.raises(quench.ScenarioError, match="dcqcn"):
        net.run("1ms")
