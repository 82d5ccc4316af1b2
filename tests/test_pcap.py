"""pcap output read back by independent parsers: dpkt always, tshark when installed."""

import shutil
import struct
import subprocess

import dpkt
import pytest
from conftest import small_net

import quench

TCP_SYN, TCP_ACK, TCP_FIN, TCP_ECE, TCP_CWR = 0x02, 0x10, 0x01, 0x40, 0x80
ECT0, CE = 0b10, 0b11


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    net = small_net(segments=True, pcap=["a->r", "r->b"])
    net.tcp("a", "b", bytes="30KB", cc="reno", profile="rfc")
    net.udp("a", "b", rate="50kbps", size="200B", stop="2s")
    res = net.run("5s")
    out = res.save(tmp_path_factory.mktemp("pcap"), plots=False)
    return res, out / "a-r.pcap", out / "r-b.pcap"


def read(path):
    with open(path, "rb") as f:
        return [(ts, dpkt.ip.IP(buf)) for ts, buf in dpkt.pcap.Reader(f)]


def test_dpkt_reads_every_packet_the_link_sent(capture):
    res, a_r, r_b = capture
    for path, link in [(a_r, "a->r"), (r_b, "r->b")]:
        pkts = read(path)
        assert len(pkts) == res.link(link)["departed_packets"]
        assert all(ip.v == 4 and ip.hl == 5 for _, ip in pkts)
        sizes = sum(ip.len for _, ip in pkts)
        assert sizes == res.link(link)["departed_bytes"]


def test_tcp_fields_match_the_simulation(capture):
    res, a_r, _ = capture
    tcp = [(ts, ip) for ts, ip in read(a_r) if ip.p == dpkt.ip.IP_PROTO_TCP]
    first = tcp[0][1].data
    assert first.flags == TCP_SYN and first.dport == 5001
    isn = first.seq
    data = [(ts, ip.data) for ts, ip in tcp if ip.len > 40]
    seg = res.segments[(res.segments["is_ack"] == 0) & (res.segments["len"] > 0)]
    # Every data segment appears with the sequence number the sender used, in order.
    assert [(s.seq - isn) % 2**32 for _, s in data] == list(seg["seq"])
    assert [len_ for len_ in seg["len"]] == [ip_len - 40 for ip_len in (ip.len for _, ip in tcp if ip.len > 40)]
    assert data[-1][1].flags & TCP_FIN  # the FIN rides on the last segment
    assert all(s.flags & TCP_ACK for _, s in data)
    # Timestamps are transmission start times; the first segment meets an idle first hop,
    # so it starts transmission the instant the sender emits it.
    assert float(data[0][0]) == pytest.approx(seg["time_s"].iloc[0], abs=1e-6)


def test_udp_and_ip_checksums(capture):
    _, a_r, _ = capture
    for _, ip in read(a_r):
        raw = bytes(ip)[:20]
        total = sum(int.from_bytes(raw[i : i + 2], "big") for i in range(0, 20, 2))
        while total > 0xFFFF:
            total = (total & 0xFFFF) + (total >> 16)
        assert total == 0xFFFF  # a correct header checksum sums to all ones
        if ip.p == dpkt.ip.IP_PROTO_UDP:
            assert ip.data.ulen == ip.len - 20


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_decodes_without_errors(capture):
    res, _, r_b = capture
    out = subprocess.run(
        ["tshark", "-r", str(r_b), "-T", "fields", "-e", "ip.len", "-e", "tcp.flags.syn", "-e", "_ws.expert.severity"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert len(rows) == res.link("r->b")["departed_packets"]
    assert sum(int(r[0]) for r in rows) == res.link("r->b")["departed_bytes"]
    assert "Malformed" not in out.stdout + out.stderr


@pytest.fixture(scope="module")
def quench_capture(tmp_path_factory):
    from quench.experiments import mills88

    p = mills88.Params(duration_s=120.0, warmup_s=10.0)
    net = mills88.network(p, quench=True)
    net.record(pcap=["gateway->sun3"])
    res = net.run(p.duration_s)
    out = res.save(tmp_path_factory.mktemp("sq"), plots=False)
    return res, out / "gateway-sun3.pcap"


def test_source_quench_is_rfc792_and_quotes_the_offending_datagram(quench_capture):
    res, path = quench_capture
    icmp = [ip for _, ip in read(path) if ip.p == dpkt.ip.IP_PROTO_ICMP]
    assert icmp, "no Source Quench captured"
    sun3, sink = "10.0.0.1", "10.0.0.2"  # nodes 0 and 1: hosts are declared first
    for ip in icmp:
        assert ip.len == 56 and ip.data.type == 4 and ip.data.code == 0
        raw = bytes(ip.data)
        total = sum(int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2))
        while total > 0xFFFF:
            total = (total & 0xFFFF) + (total >> 16)
        assert total == 0xFFFF  # valid ICMP checksum
        quoted = dpkt.ip.IP(raw[8:28] + raw[28:36])
        assert (socket_ntoa(quoted.src), socket_ntoa(quoted.dst)) == (sun3, sink)
        assert quoted.p == dpkt.ip.IP_PROTO_TCP and quoted.len == 552  # a full 512-byte segment
        assert raw[30:32] == (5001).to_bytes(2, "big")  # quoted destination port
        assert socket_ntoa(ip.src) == "10.0.0.3" and socket_ntoa(ip.dst) == sun3  # gateway -> source
    # Each message quenches all four connections when it arrives; one may still be in flight.
    reactions = int((res.tcp_events["event"] == "source_quench").sum())
    assert 4 * (len(icmp) - 1) <= reactions <= 4 * len(icmp)


def socket_ntoa(b: bytes) -> str:
    return ".".join(str(x) for x in b)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_decodes_source_quench(quench_capture):
    _, path = quench_capture
    out = subprocess.run(
        [
            "tshark",
            "-r",
            str(path),
            "-Y",
            "icmp.type == 4",
            "-T",
            "fields",
            "-e",
            "icmp.type",
            "-e",
            "icmp.code",
            "-e",
            "icmp.checksum.status",
            "-e",
            "ip.src",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert rows and all(r[0] == "4" and r[1] == "0" and r[2] == "1" for r in rows)


@pytest.fixture(scope="module")
def ecn_capture(tmp_path_factory):
    """An ECN connection through a RED queue that marks: CE on data, ECE/CWR in TCP."""
    net = quench.Network(seed=3)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="10Mbps", delay="1ms")
    red = quench.red(min_th="3p", max_th="12p", limit="40p", max_p=0.2, w_q=0.05, signal="mark")
    net.link("r", "b", rate="1Mbps", delay="10ms", qdisc=red, reverse_qdisc=quench.droptail())
    net.tcp("a", "b", ecn=True, bytes="300KB", profile="rfc")
    net.record(pcap=["a->r", "r->b", "b->r"])
    res = net.run("5s")
    out = res.save(tmp_path_factory.mktemp("ecn"), plots=False)
    return res, out / "a-r.pcap", out / "r-b.pcap", out / "b-r.pcap"


def test_ecn_bits_in_pcap_match_the_simulation(ecn_capture):
    res, a_r, r_b, b_r = ecn_capture
    data = [ip for _, ip in read(r_b)]
    acks = [ip for _, ip in read(b_r)]
    syn, syn_ack = data[0].data, acks[0].data
    assert syn.flags == TCP_SYN | TCP_ECE | TCP_CWR and data[0].tos & 3 == 0  # RFC 3168 6.1.1
    assert syn_ack.flags & (TCP_ECE | TCP_CWR) == TCP_ECE
    payload = [ip for ip in data[1:] if ip.len > 40]
    # New data is ECT(0) (or CE once marked); retransmissions are not ECN-capable (6.1.5).
    sent = [ip for _, ip in read(a_r) if ip.len > 40]
    assert all(ip.tos & 3 in (0, ECT0) for ip in sent)
    not_ect = sum(ip.tos & 3 == 0 for ip in sent)
    assert not_ect == res.flows["retransmitted_segments"].iloc[0]
    assert all(ip.tos & 3 in (0, ECT0, CE) for ip in payload)
    marked = sum(ip.tos & 3 == CE for ip in payload)
    assert marked == res.link("r->b")["marked_packets"] > 0
    assert any(ip.data.flags & TCP_CWR for ip in payload)
    assert any(ip.data.flags & TCP_ECE for ip in acks[1:])
    assert all(ip.tos & 3 == 0 for ip in acks)  # pure ACKs are not ECN-capable (6.1.4)
    assert res.link("r->b")["drops_early"] <= not_ect  # only retransmissions can be dropped early
    assert (res.tcp_events["event"] == "ecn_reduction").sum() > 0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_decodes_ecn_fields(ecn_capture):
    res, a_r, r_b, b_r = ecn_capture
    fields = ["-e", "ip.dsfield.ecn", "-e", "tcp.flags.ece", "-e", "tcp.flags.cwr", "-e", "tcp.len"]

    def rows(path):
        out = subprocess.run(
            ["tshark", "-r", str(path), "-T", "fields", *fields], capture_output=True, text=True, check=True
        )
        return [[_flag(v) for v in line.split("\t")] for line in out.stdout.splitlines()]

    sent, data, acks = rows(a_r), rows(r_b), rows(b_r)
    assert sum(1 for r in data if r[0] == CE) == res.link("r->b")["marked_packets"]
    assert sum(1 for r in sent if r[3] > 0 and r[0] == 0) == res.flows["retransmitted_segments"].iloc[0]
    assert data[0][1:3] == [1, 1]  # the SYN asks for ECN with ECE and CWR
    assert any(r[2] == 1 for r in data[1:]) and any(r[1] == 1 for r in acks[1:])


def _flag(v: str) -> int:
    """tshark prints booleans as 1/0 or True/False depending on its version."""
    return {"True": 1, "False": 0}.get(v, int(v, 0) if v else 0)


def test_assisted_transport_is_ip_protocol_253_with_its_stamps(tmp_path):
    """The router-assisted ideal's packets carry RFC 3692's experimental protocol number and a
    TCP-shaped header; its SYN and one packet per RTT request a stamp (URG bit position)."""
    net = quench.Network(seed=1)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="10ms", qdisc=quench.fq("50p", advertise_rate=True))
    net.assisted("a", "b", bytes="100KB")
    net.record(pcap=["r->b"])
    res = net.run("2s")
    out = res.save(tmp_path, plots=False)
    pkts = [ip for _, ip in read(out / "r-b.pcap")]
    assert pkts and all(ip.p == 253 for ip in pkts)
    assert len(pkts) == res.link("r->b")["departed_packets"]
    flags = [ip.data[13] for ip in pkts]
    assert flags[0] & TCP_SYN and flags[0] & 0x20  # the SYN requests a stamp
    assert flags[-1] & TCP_FIN  # the last data packet closes the flow at the routers
    requests = sum(1 for f in flags[1:] if f & 0x20)
    # 100 KB at 10 Mb/s takes about 4 RTTs of 22 ms: a request each.
    assert 2 <= requests <= 6, requests
    assert res.flows["bytes_delivered"].iloc[0] == 100_000


ECT1 = 0b01


@pytest.fixture(scope="module")
def l4s_capture(tmp_path_factory):
    """Prague (ECT(1)) and a UDP ECT(1) source through a DualPI2 that marks."""
    net = quench.Network(seed=5)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="5ms", qdisc=quench.dualpi2(), reverse_qdisc=quench.droptail())
    net.tcp("a", "b", ecn=True, cc="prague", bytes="2MB", profile="rfc")
    net.udp("a", "b", rate="1Mbps", size="500B", ecn="ect1", stop="1s")
    net.record(pcap=["a->r", "r->b"], sojourn=True)
    res = net.run("3s")
    out = res.save(tmp_path_factory.mktemp("l4s"), plots=False)
    return res, out / "a-r.pcap", out / "r-b.pcap"


def test_ect1_in_pcap_and_in_the_sojourn_table(l4s_capture):
    res, a_r, r_b = l4s_capture
    sent = [ip for _, ip in read(a_r)]
    udp = [ip for ip in sent if ip.p == dpkt.ip.IP_PROTO_UDP]
    data = [ip for ip in sent if ip.p == dpkt.ip.IP_PROTO_TCP and ip.len > 40]
    assert udp and all(ip.tos & 3 == ECT1 for ip in udp)
    # New data carries ECT(1) (RFC 9331 section 4.1); retransmissions none (RFC 3168 6.1.5).
    assert all(ip.tos & 3 in (0, ECT1) for ip in data)
    assert sum(ip.tos & 3 == 0 for ip in data) == res.flows["retransmitted_segments"].iloc[0]
    out = [ip.tos & 3 for _, ip in read(r_b)]
    marked = sum(cp == CE for cp in out)
    assert marked == res.link("r->b")["marked_packets"] > 0
    # The sojourn table records each packet's codepoint as it leaves: the same sequence.
    link = res.sojourn[res.sojourn["link_name"] == "r->b"]
    assert list(link["ecn"]) == out


@pytest.fixture(scope="module")
def ts_capture(tmp_path_factory):
    """A SACK connection with the timestamp option (RFC 7323) through a lossy link."""
    net = quench.Network(seed=5)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="10Mbps", delay="1ms")
    net.link("r", "b", rate="2Mbps", delay="10ms", loss=0.02)
    net.tcp("a", "b", timestamps=True, sack=True, bytes="200KB")
    net.record(pcap=["a->r", "b->r"], segments=True)
    res = net.run("5s")
    out = res.save(tmp_path_factory.mktemp("ts"), plots=False)
    return res, out / "a-r.pcap", out / "b-r.pcap"


def ts_option(tcp):
    """(TSval, TSecr) of a dpkt TCP segment's timestamp option, or None."""
    for kind, value in dpkt.tcp.parse_opts(tcp.opts):
        if kind == dpkt.tcp.TCP_OPT_TIMESTAMP:
            return int.from_bytes(value[:4], "big"), int.from_bytes(value[4:], "big")
    return None


def test_timestamp_option_in_pcap(ts_capture):
    res, a_r, b_r = ts_capture
    sent = [(ts, ip.data) for ts, ip in read(a_r)]
    acks = [(ts, ip.data) for ts, ip in read(b_r)]
    # Every segment carries the option: 12 more header bytes; a full segment 1448 bytes of data.
    for _, tcp in sent + acks:
        assert ts_option(tcp) is not None and tcp.off * 4 >= 32
    data = [(ts, tcp) for ts, tcp in sent if len(tcp.opts) and tcp.flags & TCP_ACK and not tcp.flags & TCP_SYN]
    assert max(ip.len for _, ip in read(a_r)) == 1500
    # TSval is the send time on a microsecond clock; on the first hop transmission starts at
    # the send for a segment that finds the link idle, so TSval is its pcap time, truncated.
    syn_ts, syn = sent[0]
    assert ts_option(syn)[0] == int(float(syn_ts) * 1e6)
    tsvals = {ts_option(tcp)[0] for _, tcp in data}
    # Each ACK echoes the TSval of a data segment (or of the SYN), as RFC 7323 section 4.3 says.
    echoed = {ts_option(tcp)[1] for _, tcp in acks}
    assert echoed <= tsvals | {ts_option(syn)[0]}
    assert len(echoed) > 10


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_decodes_the_timestamp_option(ts_capture):
    _, a_r, b_r = ts_capture
    for path in (a_r, b_r):
        out = subprocess.run(
            [
                "tshark",
                "-r",
                str(path),
                "-T",
                "fields",
                "-e",
                "tcp.options.timestamp.tsval",
                "-e",
                "tcp.options.timestamp.tsecr",
                "-e",
                "_ws.expert.severity",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        rows = [line.split("\t") for line in out.splitlines()]
        assert rows and all(r[0] != "" and r[1] != "" for r in rows)


@pytest.fixture(scope="module")
def sack_capture(tmp_path_factory):
    """A SACK NewReno transfer of the linux profile (without timestamps) that overflows the
    20-packet queue (SACK blocks on the ACKs) and, after it, an rfc-profile flow without
    options, captured on both directions of the first hop."""
    net = small_net(pcap=["a->r", "r->a"])
    net.tcp("a", "b", bytes="300KB", cc="newreno", sack=True, timestamps=False)
    net.tcp("a", "b", bytes="20KB", cc="newreno", start="6s", profile="rfc")  # after the transfer: no loss
    res = net.run("10s")
    out = res.save(tmp_path_factory.mktemp("sack"), plots=False)
    return res, out / "a-r.pcap", out / "r-a.pcap"


SACK_PERMITTED = 4  # RFC 2018 section 2: option kind 4, length 2
SACK_OPTION = 5


def options(tcp):
    """The kinds of a TCP header's options, padding (NOP, kind 1) left out."""
    return {kind for kind, _ in dpkt.tcp.parse_opts(tcp.opts)} - {dpkt.tcp.TCP_OPT_NOP}


def record_lengths(path):
    """(captured, original) length of every record, read from the pcap record headers."""
    data = path.read_bytes()
    out, at = [], 24  # the global header
    while at < len(data):
        captured, original = struct.unpack_from("<II", data, at + 8)
        out.append((captured, original))
        at += 16 + captured
    return out


def test_syn_carries_its_options_in_its_size(sack_capture):
    res, a_r, r_a = sack_capture
    sack_port, plain_port = 10000, 10001  # sender port 10000 + flow id
    for path, link in [(a_r, "a->r"), (r_a, "r->a")]:
        pkts = [ip for _, ip in read(path) if ip.p == dpkt.ip.IP_PROTO_TCP]
        syns = [ip for ip in pkts if ip.data.flags & TCP_SYN]
        assert len(syns) == 2, link  # one SYN (a->r) or SYN-ACK (r->a) per connection
        for ip in syns:
            port = ip.data.sport if link == "a->r" else ip.data.dport
            if port == sack_port:
                # Linux without timestamps: "mss 1460,nop,nop,sackOK,nop,wscale 7".
                opts = dict(dpkt.tcp.parse_opts(ip.data.opts))
                assert options(ip.data) == {dpkt.tcp.TCP_OPT_MSS, SACK_PERMITTED, dpkt.tcp.TCP_OPT_WSCALE}, link
                assert opts[dpkt.tcp.TCP_OPT_MSS] == (1460).to_bytes(2, "big")
                assert opts[dpkt.tcp.TCP_OPT_WSCALE] == bytes([7])  # 6 MiB >> 7 fits 16 bits
                assert ip.len == 52 and ip.data.off == 8
            else:
                assert port == plain_port and options(ip.data) == set() and ip.len == 40
        # Every record's original length is its IP total length, and the link's departed bytes
        # are their sum: the simulated SYN counts the bytes its options take.
        records = record_lengths(path)
        assert [orig for _, orig in records] == [ip.len for _, ip in read(path)]
        assert sum(orig for _, orig in records) == res.link(link)["departed_bytes"]
    acks = [ip.data for _, ip in read(r_a) if ip.p == dpkt.ip.IP_PROTO_TCP and not ip.data.flags & TCP_SYN]
    assert any(SACK_OPTION in options(t) for t in acks), "the overflow should produce SACK blocks"
    assert not any(SACK_PERMITTED in options(t) for t in acks)


def test_capture_lengths_equal_departed_bytes_with_every_option(ts_capture):
    """Linux's defaults (MSS, SACK-permitted, timestamps, window scale: a 60-byte SYN) and
    SACK blocks on a lossy path: the capture and the link count the same bytes."""
    res, a_r, b_r = ts_capture
    for path, link in [(a_r, "a->r"), (b_r, "b->r")]:
        records = record_lengths(path)
        assert sum(orig for _, orig in records) == res.link(link)["departed_bytes"], link
        first = read(path)[0][1]
        assert first.data.flags & TCP_SYN and first.len == 60 and first.data.off == 10


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_decodes_sack_permitted(sack_capture):
    _, a_r, r_a = sack_capture
    for path in (a_r, r_a):
        out = subprocess.run(
            [
                "tshark",
                "-r",
                str(path),
                "-Y",
                "tcp.flags.syn == 1",
                "-T",
                "fields",
                "-e",
                "tcp.srcport",
                "-e",
                "tcp.dstport",
                "-e",
                "tcp.options.sack_perm",
                "-e",
                "_ws.expert.message",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = [line.split("\t") for line in out.stdout.splitlines()]
        assert len(rows) == 2, out.stdout
        flagged = [r for r in rows if r[2]]
        assert len(flagged) == 1 and "10000" in flagged[0][:2], rows
        assert "Malformed" not in out.stdout + out.stderr


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_counts_the_links_bytes_and_scales_the_window(ts_capture):
    """tshark's frame lengths sum to the link's departed bytes, and its window, scaled by the
    SYNs' shift, is the 6 MiB the linux profile advertises."""
    res, a_r, _ = ts_capture
    out = subprocess.run(
        ["tshark", "-r", str(a_r), "-T", "fields", "-e", "frame.len", "-e", "tcp.flags.syn", "-e", "tcp.window_size"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    assert sum(int(r[0]) for r in rows) == res.link("a->r")["departed_bytes"]
    windows = {int(r[2]) for r in rows if _flag(r[1]) == 0}
    assert windows == {6 << 20}


@pytest.fixture(scope="module")
def dsack_capture(tmp_path_factory):
    """Eight linux-profile CUBIC flows sprayed over a k = 4 fat-tree (`spray_flow`): reordering
    makes RACK resend segments whose originals arrive, and the receivers report the copies in
    D-SACK blocks (RFC 2883). Captured on the last hop to h0, which carries flow 0's ACKs."""
    net = quench.Network(seed=1)
    net.fat_tree(4, rate="10Gbps", delay="1us", qdisc=quench.droptail("100p"), multipath="spray_flow")
    for i in range(8):
        net.tcp(f"h{i}", f"h{i + 8}", cc="cubic", profile="linux")
    net.record(pcap=["tor0->h0"])
    res = net.run("5ms", progress=False)
    out = res.save(tmp_path_factory.mktemp("dsack"), plots=False)
    return res, out / "tor0-h0.pcap"


def sack_blocks(tcp):
    """The (left, right) edges of a TCP segment's SACK blocks, in order."""
    for kind, data in dpkt.tcp.parse_opts(tcp.opts):
        if kind == SACK_OPTION:
            edges = struct.unpack(f">{len(data) // 4}I", data)
            return list(zip(edges[::2], edges[1::2]))
    return []


def test_dsack_blocks_are_written_and_counted_in_the_length(dsack_capture):
    """Every D-SACK the sender of flow 0 counts is in the capture as an ACK whose first SACK
    block lies below its acknowledgment number (RFC 2883 section 4), and the capture's lengths
    still sum to the link's departed bytes: the simulated ACK counts the block's 8 bytes."""
    res, path = dsack_capture
    records = record_lengths(path)
    assert [orig for _, orig in records] == [ip.len for _, ip in read(path)]
    assert sum(orig for _, orig in records) == res.link("tor0->h0")["departed_bytes"]
    acks = [ip.data for _, ip in read(path) if ip.p == dpkt.ip.IP_PROTO_TCP and ip.data.dport == 10000]
    below = [t for t in acks if (blocks := sack_blocks(t)) and 0 < (t.ack - blocks[0][0]) % 2**32 < 2**31]
    dsacks = int(res.flows.loc[0, "dsacks_received"])
    assert dsacks > 0 and len(below) == dsacks
    # TCP 20 + timestamps 12 + SACK: NOP, NOP, kind, length and 8 bytes per block.
    assert all(t.off * 4 == 20 + 12 + 4 + 8 * len(sack_blocks(t)) for t in below)


MPTCP = 30  # RFC 8684 section 8: option kind 30
MP_CAPABLE, MP_JOIN, DSS = 0, 1, 2  # its subtypes (section 3, table 2)


@pytest.fixture(scope="module")
def mptcp_capture(tmp_path_factory):
    """A three-subflow MPTCP connection under the linux profile (timestamps, SACK) through a
    2 Mb/s, 20-packet bottleneck, so that losses make the receiver SACK."""
    net = quench.Network(seed=7)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="10Mbps", delay="1ms")
    net.link("r", "b", rate="2Mbps", delay="10ms", qdisc=quench.droptail("20p"))
    net.mptcp("a", "b", bytes="300KB", subflows=3)
    net.record(pcap=["a->r", "b->r"])
    res = net.run("5s")
    out = res.save(tmp_path_factory.mktemp("mptcp"), plots=False)
    return res, out / "a-r.pcap", out / "b-r.pcap"


def payload(ip):
    """Data bytes of a captured TCP segment (the capture holds its headers only)."""
    return ip.len - 4 * ip.hl - 4 * ip.data.off


def mptcp_options(tcp):
    """(subtype, length, body) of each MPTCP option of a dpkt TCP segment."""
    return [(v[0] >> 4, len(v) + 2, v) for kind, v in dpkt.tcp.parse_opts(tcp.opts) if kind == MPTCP]


def test_mptcp_options_are_linuxs_and_counted_in_the_size(mptcp_capture):
    """RFC 8684's options at Linux's sizes: MP_CAPABLE (4 bytes on the SYN, 12 on the SYN-ACK)
    on the first subflow, MP_JOIN (12, 16) on the others, a 22-byte DSS with a mapping and
    two NOPs on each data segment, within the MSS (1448 - 24 = 1424 bytes of data), a 12-byte
    DSS with a 64-bit DATA_ACK on the receiver's ACKs, and with timestamps room for one SACK
    block. Each subflow has its own port; the capture counts the link's bytes."""
    res, a_r, b_r = mptcp_capture
    for path, link in [(a_r, "a->r"), (b_r, "b->r")]:
        assert sum(orig for _, orig in record_lengths(path)) == res.link(link)["departed_bytes"], link
    sent = [ip for _, ip in read(a_r)]
    acks = [ip for _, ip in read(b_r)]
    syns = [ip.data for ip in sent if ip.data.flags & TCP_SYN]
    assert [(o[0][0], o[0][1]) for o in map(mptcp_options, syns)] == [(MP_CAPABLE, 4), (MP_JOIN, 12), (MP_JOIN, 12)]
    assert len({t.sport for t in syns}) == 3
    syn_acks = [ip.data for ip in acks if ip.data.flags & TCP_SYN]
    assert sorted(mptcp_options(t)[0][1] for t in syn_acks) == [12, 16, 16]
    data = [ip for ip in sent if payload(ip) > 0]
    assert data and max(map(payload, data)) == 1424
    for ip in data:
        ((subtype, length, body),) = mptcp_options(ip.data)
        # Flags A, M, m: a 32-bit DATA_ACK and a 64-bit DSN; the data-level length is the payload's.
        assert (subtype, length, body[1]) == (DSS, 22, 0x0D)
        assert int.from_bytes(body[18:20], "big") == payload(ip)
    pure = [ip.data for ip in acks if not ip.data.flags & TCP_SYN]
    assert pure and all([(s, n) for s, n, _ in mptcp_options(t)] == [(DSS, 12)] for t in pure)
    sack_blocks = [len(v) // 8 for t in pure for kind, v in dpkt.tcp.parse_opts(t.opts) if kind == SACK_OPTION]
    assert sack_blocks and set(sack_blocks) == {1}


def test_mptcp_data_acks_follow_the_data(mptcp_capture):
    """The receiver's DATA_ACK (64 bits) never passes the data sent, and reaches the end of the
    300 KB: the first data byte's DSN plus 300,000."""
    _, a_r, b_r = mptcp_capture
    mappings = [
        (int.from_bytes(o[2][6:14], "big"), payload(ip))
        for _, ip in read(a_r)
        if payload(ip) > 0
        for o in mptcp_options(ip.data)
    ]
    first = min(dsn for dsn, _ in mappings)
    ends = [dsn + n for dsn, n in mappings]
    acks = [o for _, ip in read(b_r) if not ip.data.flags & TCP_SYN for o in mptcp_options(ip.data)]
    data_acks = [int.from_bytes(body[2:10], "big") for _, _, body in acks]
    assert max(data_acks) == first + 300_000 == max(ends)
    assert min(data_acks) > first


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_decodes_the_mptcp_options(mptcp_capture):
    res, a_r, b_r = mptcp_capture
    for path, link in [(a_r, "a->r"), (b_r, "b->r")]:
        out = subprocess.run(
            ["tshark", "-r", str(path), "-T", "fields", "-e", "frame.len", "-e", "tcp.options.mptcp.subtype"],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = [line.split("\t") for line in out.stdout.splitlines()]
        assert sum(int(r[0]) for r in rows) == res.link(link)["departed_bytes"]
        assert all(r[1] in ("0", "1", "2") for r in rows), rows[:5]
        assert "Malformed" not in out.stdout + out.stderr
