"""LEDBAT, Copa, Swift and Vivace from Python by name and by helper: each runs on the default (Linux) profile,
whose timestamps give LEDBAT its per-ACK delay samples, fills a 10 Mb/s link, and keeps the
queue near its own target: LEDBAT's 100 ms (83 packets of 1500 B at 10 Mb/s), Copa's about
1/delta packets, Vivace's a fraction of a packet (docs/mechanisms.md#ledbat, #copa, #vivace)."""

import io
import struct

import dpkt
import pytest

import quench


def _run(cc: object, duration: str = "20s") -> quench.Results:
    net = quench.Network()
    net.hosts("a", "b")
    net.routers("r")
    net.link("a", "r", rate="1Gbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="20ms", qdisc=quench.droptail(limit="300p"))
    net.tcp("a", "b", cc=cc)
    return net.run(duration)


@pytest.mark.parametrize("cc", ["ledbat", "copa", quench.ledbat(target="50ms"), quench.copa(delta=0.2)])
def test_delay_controllers_run_by_name_and_fill_the_link(cc: object) -> None:
    res = _run(cc)
    kind = cc if isinstance(cc, str) else cc["kind"]
    assert res.flows["cc"].iloc[0] == kind
    # 10 Mb/s less headers (1448 B of payload in 1500 with timestamps), start-up included.
    assert res.flows["goodput_bps"].iloc[0] > 0.85 * 10e6 * 1448 / 1500


def test_copa_keeps_a_shorter_queue_than_ledbat() -> None:
    def late_queue(res: quench.Results) -> float:
        return float(res.queue[res.queue["time_s"] > 10.0]["packets"].mean())

    copa, ledbat = late_queue(_run("copa")), late_queue(_run("ledbat"))
    assert copa < 10.0  # about 1/delta = 2 packets, with its oscillation
    assert ledbat > 5 * copa  # LEDBAT aims at 100 ms, 83 packets


def test_ledbat_plus_plus_by_helper_keeps_a_shorter_queue_than_rfc6817() -> None:
    """LEDBAT++ (`variant="ledbat++"`) aims at 60 ms (50 packets), RFC 6817 LEDBAT at 100 ms (83),
    and its slowdowns drain the queue about 10 % of the time."""

    def late_queue(res: quench.Results) -> float:
        return float(res.queue[res.queue["time_s"] > 10.0]["packets"].mean())

    cc = quench.ledbat(variant="ledbat++")
    assert cc == {"kind": "ledbat", "variant": "ledbat++"}
    pp, rfc = _run(cc), _run("ledbat")
    assert pp.flows["goodput_bps"].iloc[0] > 0.8 * 10e6 * 1448 / 1500  # slowdowns cost some
    # Measured over [10, 20] s: 15.7 packets against 35.0 (RFC 6817's still nearing its target).
    assert late_queue(pp) < 50.0  # its 60 ms target
    assert late_queue(pp) < 0.7 * late_queue(rfc)


def test_swift_holds_a_datacenter_queue_near_its_target() -> None:
    """Four Swift flows into a 10 Gb/s link with 1 µs links (base RTT about 10 µs): the queue
    stays within the fabric-delay target (20 µs + 2 hops of 3.053 µs + flow scaling, under
    60 µs at these windows), the link full (docs/mechanisms.md#swift)."""
    net = quench.Network()
    net.hosts("a0", "a1", "a2", "a3", "b")
    net.routers("r1", "r2")
    for a in ("a0", "a1", "a2", "a3"):
        net.link(a, "r1", rate="10Gbps", delay="1us")
        net.tcp(a, "b", cc=quench.swift(), rtt_sampling="every_ack", timestamps=False)
    net.link("r1", "r2", rate="10Gbps", delay="1us", qdisc=quench.droptail(limit="2000p"))
    net.link("r2", "b", rate="10Gbps", delay="1us")
    res = net.run("50ms")
    assert set(res.flows["cc"]) == {"swift"}
    q = res.queue[(res.queue["link_name"] == "r1->r2") & (res.queue["time_s"] > 0.01)]
    queue_us = float(q["packets"].mean()) * 1500 * 8 / 10e9 * 1e6
    assert 5.0 < queue_us < 60.0
    assert res.flows["goodput_bps"].sum() > 0.9 * 10e9 * 1460 / 1500


@pytest.mark.parametrize("cc", ["vivace", quench.vivace(epsilon=0.05, latency_coefficient=900.0)])
def test_vivace_runs_by_name_and_by_helper_and_fills_the_link_with_a_short_queue(cc: object) -> None:
    res = _run(cc)
    assert res.flows["cc"].iloc[0] == "vivace"
    # Its starting phase and probing at r(1 ± 0.05) leave some of the link idle: above 80 %.
    assert res.flows["goodput_bps"].iloc[0] > 0.8 * 10e6 * 1448 / 1500
    # The RTT-gradient penalty keeps the queue short (CUBIC fills the 300 packets).
    assert float(res.queue[res.queue["time_s"] > 10.0]["packets"].mean()) < 5.0


def test_hpcc_keeps_the_queue_near_zero_at_its_target_utilization() -> None:
    """Four HPCC flows into a 10 Gb/s link with 1 µs links: the switches stamp telemetry, the
    ACKs echo it, and HPCC holds the bottleneck near η = 0.95 with a queue under two packets,
    where CUBIC fills the buffer (docs/mechanisms.md#hpcc)."""
    net = quench.Network()
    net.hosts("a0", "a1", "a2", "a3", "b")
    net.routers("r1", "r2")
    for a in ("a0", "a1", "a2", "a3"):
        net.link(a, "r1", rate="10Gbps", delay="1us")
        net.tcp(a, "b", cc=quench.hpcc(), delayed_ack={"enabled": False})
    net.link("r1", "r2", rate="10Gbps", delay="1us", qdisc=quench.droptail(limit="2000p"))
    net.link("r2", "b", rate="10Gbps", delay="1us")
    res = net.run("20ms")
    assert set(res.flows["cc"]) == {"hpcc"}
    q = res.queue[(res.queue["link_name"] == "r1->r2") & (res.queue["time_s"] > 0.005)]
    assert float(q["packets"].mean()) < 2.0
    link = res.links[res.links["name"] == "r1->r2"].iloc[0]
    assert 0.88 < link["utilization"] < 1.0
    assert link["dropped_packets"] == 0


def test_dcqcn_shares_a_marking_bottleneck_without_loss() -> None:
    """Two DCQCN flows over a switch that marks ECN on its instantaneous queue (RED with
    w_q = 1, 5-200 KB, 1 %): the late flow's share comes near the first's, nothing is dropped
    and the queue stays between the thresholds (docs/mechanisms.md#dcqcn)."""
    net = quench.Network()
    net.hosts("a0", "a1", "b")
    net.routers("r1", "r2")
    for i, a in enumerate(("a0", "a1")):
        net.link(a, "r1", rate="10Gbps", delay="1us")
        net.tcp(a, "b", cc=quench.dcqcn(), delayed_ack={"enabled": False}, start=f"{10 * i}ms")
    marking = quench.red("5KB", "200KB", "3MB", mode="bytes", max_p=0.01, w_q=1.0, signal="mark", spacing="fj93")
    net.link("r1", "r2", rate="10Gbps", delay="1us", qdisc=marking)
    net.link("r2", "b", rate="10Gbps", delay="1us")
    res = net.run("100ms")
    assert set(res.flows["cc"]) == {"dcqcn"}
    link = res.links[res.links["name"] == "r1->r2"].iloc[0]
    assert link["dropped_packets"] == 0 and link["marked_packets"] > 0
    late = float(res.flows["goodput_bps"].iloc[1])
    assert 0.4 * 10e9 < late < 0.6 * 10e9


def test_hpcc_over_roce_carries_its_telemetry_header_into_the_capture_and_the_table() -> None:
    """A RoCE flow under HPCC across two switches: each data packet carries HPCC's 42-byte
    telemetry header after its UDP header (1000 payload + 44 RoCEv2 header bytes + 42), the
    capture leaving the second switch shows two hops in it, the first of them the one the
    `telemetry` table recorded at the first switch for that packet; `int_hops` is checked."""
    net = quench.Network()
    net.hosts("a", "b").routers("r1", "r2")
    net.link("a", "r1", rate="10Gbps", delay="1us")
    net.link("r1", "r2", rate="10Gbps", delay="1us")
    net.link("r2", "b", rate="10Gbps", delay="1us")
    net.roce("a", "b", bytes="100KB", cc=quench.hpcc(), name="h")
    net.record(telemetry=True, pcap=["r2->b"])
    res = net.run("1ms")
    t = res.tables["telemetry"]
    assert set(t["link_name"]) == {"r1->r2", "r2->b"} and set(t["flow_name"]) == {"h"}
    first = t[t["hop"] == 0].set_index("uid")
    frames = list(dpkt.pcap.Reader(io.BytesIO(res.pcaps["r2->b"])))
    assert len(frames) == 100
    for _, raw in frames:
        ip = dpkt.ip.IP(raw)
        assert ip.len == 20 + 8 + 12 + 4 + 1000 + 42
        shim = raw[28 : 28 + 42]
        assert struct.unpack(">H", shim[:2])[0] == 2
        (word,) = struct.unpack(">Q", shim[2:10])
        row = first.loc[ip.id]
        assert word & (1 << 17) - 1 == min(int(row["queue_bytes"]) // 80, (1 << 17) - 1)
        assert (word >> 17) & (1 << 20) - 1 == int(row["tx_bytes"]) // 128 % (1 << 20)
        assert word >> 61 == 5, "10 Gb/s is HPCC's rate code 5"
    with pytest.raises(quench.ScenarioError) as e:
        net.roce("a", "b", cc=quench.hpcc(int_hops=9)).run("1ms")
    assert "int_hops" in str(e.value) and "\n" not in str(e.value)
