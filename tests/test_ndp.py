"""NDP from Python (docs/mechanisms.md#ndp-and-packet-trimming): `Network.ndp` over switch ports
of `quench.trim()`. A lone flow finishes at its closed form (the flows table's ideal); an incast
of 8 senders into one receiver completes every flow without a timeout, the last within 10 % of
the total wire bytes at the receiver's 10 Gb/s plus a round trip, its trims counted as marks on
the receiver's port."""

import pytest

import quench

MSS, HEADER, RATE = 1436, 64, 10e9


def _star(senders: int, qdisc: dict) -> quench.Network:
    """Senders s0.. and receiver d around one switch, 10 Gb/s and 1 us per link; the switch's
    ports have `qdisc`, the hosts' own queues stay drop-tail."""
    net = quench.Network()
    hosts = [f"s{i}" for i in range(senders)] + ["d"]
    net.hosts(*hosts)
    net.routers("sw")
    for h in hosts:
        net.link(h, "sw", rate="10Gbps", delay="1us", reverse_qdisc=qdisc)
    return net


def test_a_lone_flow_meets_its_closed_form() -> None:
    net = _star(1, quench.trim())
    net.ndp("s0", "d", bytes="143600B")
    flows = net.run("10ms").flows
    # 100 packets of 1500 B: the first crosses both hops, the other 99 follow at 1.2 us each.
    closed = 2 * (1500 * 8 / RATE + 1e-6) + 99 * 1500 * 8 / RATE
    assert flows["response_time_s"].iloc[0] == pytest.approx(closed, abs=1e-12)
    assert flows["ideal_fct_s"].iloc[0] == pytest.approx(closed, abs=1e-12)
    assert flows["retransmitted_segments"].iloc[0] == 0


def test_incast_completes_near_the_ideal_without_timeouts() -> None:
    sizes = [64_000 + (450_000 - 64_000) * i // 7 for i in range(8)]
    net = _star(8, quench.trim(data_limit="8p"))
    for i, size in enumerate(sizes):
        net.ndp(f"s{i}", "d", bytes=f"{size}B", initial_window=15)
    res = net.run("50ms")
    flows, links = res.flows, res.links
    assert flows["response_time_s"].notna().all()
    assert flows["timeouts"].sum() == 0
    wire = sum(s + -(-s // MSS) * HEADER for s in sizes)
    ideal = wire * 8 / RATE + 4 * (1500 * 8 / RATE + 1e-6)
    assert flows["response_time_s"].max() == pytest.approx(ideal, rel=0.10)
    port = links[links["name"] == "sw->d"].iloc[0]
    assert port["qdisc"] == "trim"
    assert port["marked_packets"] > 0
    assert flows["fast_retransmits"].sum() == port["marked_packets"]


def test_bad_keys_are_named() -> None:
    net = _star(1, quench.trim(header_weight=0))
    net.ndp("s0", "d", bytes="10KB")
    with pytest.raises(quench.ScenarioError, match="header_weight"):
        net.run("1ms")
    net = _star(1, quench.trim())
    net.ndp("s0", "d", bytes="10KB", initial_window=0)
    with pytest.raises(quench.ScenarioError, match="initial_window"):
        net.run("1ms")
