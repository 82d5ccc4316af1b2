"""`quench trace`: pcap decoding and the tcpdump-style analyses, against tshark and by hand."""

import os
import shutil
import struct
import subprocess
import time

import numpy as np
import pytest
from conftest import small_net

from quench import files
from quench.cli import main
from quench.trace import (
    PcapError,
    analyze,
    arrival_rate,
    flows,
    parse_pcap,
    read_pcap,
    retransmissions,
)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    net = small_net(pcap=["r->b"])
    net.tcp("a", "b", cc="reno", bytes="60KB", profile="rfc")
    net.tcp("a", "b", cc="newreno", bytes="40KB", start="0.5s", profile="rfc")
    net.udp("a", "b", rate="100kbps", size="300B", stop="3s")
    res = net.run("10s")
    out = res.save(tmp_path_factory.mktemp("trace"), plots=False)
    return res, out / "r-b.pcap"


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_per_flow_bytes_match_tsharks_statistics(capture):
    _, path = capture
    table = flows(read_pcap(path))
    assert len(table) == 3
    for _, f in table.iterrows():
        src, dst = f["flow"].split(" > ")
        (sip, sport), (dip, rest) = src.split(":"), dst.split(":")
        dport, proto = rest.split("/")
        flt = f"ip.src=={sip}&&ip.dst=={dip}&&{proto}.srcport=={sport}&&{proto}.dstport=={dport}"
        out = subprocess.run(
            ["tshark", "-r", str(path), "-q", "-z", f"io,stat,0,SUM(ip.len)ip.len&&{flt},COUNT(ip.len)ip.len&&{flt}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        row = next(line for line in out.splitlines() if "<>" in line)
        total, count = [int(x) for x in row.split("|")[2:4]]
        assert (total, count) == (f["bytes"], f["packets"]), f["flow"]


def test_flow_bytes_match_the_simulation(capture):
    res, path = capture
    table = flows(read_pcap(path))
    assert table["bytes"].sum() == res.link("r->b")["departed_bytes"]
    tcp = table[table["flow"].str.endswith("/tcp") & (table["data_bytes"] > 0)].sort_values("data_bytes")
    # Data bytes that crossed r->b: what each sender sent less what the queue dropped.
    drops = res.drops[res.drops["link_name"] == "r->b"]
    crossed = []
    for _, f in res.flows[res.flows["kind"] == "tcp"].iterrows():
        lost = (drops.loc[drops["flow"] == f["flow"], "size"] - 40).sum()
        crossed.append(int(f["bytes_sent"] - lost))
    assert tcp["data_bytes"].to_list() == sorted(crossed)


def _ethernet_pcap(frames):
    """A microsecond-resolution pcap with Ethernet framing, as tcpdump writes."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for t, ip in frames:
        frame = b"\x00" * 12 + b"\x08\x00" + ip
        out += struct.pack("<IIII", int(t), int(round((t % 1) * 1e6)), len(frame), len(frame)) + frame
    return out


def _tcp(seq, payload, src=b"\x0a\x00\x00\x01", dst=b"\x0a\x00\x00\x02"):
    total = 40 + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, 0, 64, 6, 0, src, dst)
    tcp = struct.pack("!HHIIBBHHH", 1234, 80, seq, 0, 5 << 4, 0x10, 65535, 0, 0)
    return ip + tcp  # header only: a short snaplen


def test_reads_tcpdump_ethernet_captures_and_finds_retransmissions():
    frames = [(1.0, _tcp(1000, 100)), (1.5, _tcp(1100, 100)), (2.0, _tcp(1000, 100)), (2.5, _tcp(1200, 100))]
    pkts = parse_pcap(_ethernet_pcap(frames))
    assert list(pkts["time_s"]) == [1.0, 1.5, 2.0, 2.5]
    assert list(pkts["payload"]) == [100] * 4
    assert retransmissions(pkts) == 1  # the third segment resends seq 1000
    assert flows(pkts)["retransmitted_segments"].iloc[0] == 1


def test_arrival_rate_is_the_inverse_of_smoothed_gaps():
    # Gaps of 0.1 s then 0.05 s: the rate starts at 10/s and moves toward 20/s at gain 1/2.
    t = np.array([0.0, 0.1, 0.2, 0.25, 0.30])
    r = arrival_rate(t, gain=0.5)
    assert list(np.round(r["smoothed_s"], 6)) == [0.1, 0.1, 0.075, 0.0625]
    assert list(np.round(r["rate_pps"], 6)) == [10.0, 10.0, 13.333333, 16.0]


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"\x0a\x0d\x0d\x0a" + b"\x00" * 40)
    with pytest.raises(PcapError, match="not a libpcap file"):
        read_pcap(bad)
    with pytest.raises(FileNotFoundError):
        read_pcap(tmp_path / "missing.pcap")


def test_cli_writes_tables_and_plot(capture, tmp_path, capsys):
    _, path = capture
    assert main(["trace", str(path), "--out", str(tmp_path / "t")]) == 0
    assert "3 flows" in capsys.readouterr().out
    for name in ("packets.parquet", "trace_flows.csv", "arrival_rate.parquet", "trace.png"):
        assert (tmp_path / "t" / name).exists()
    assert main(["trace", str(tmp_path / "nope.pcap"), "--out", str(tmp_path / "u")]) == 2


def test_cli_out_follows_the_run_rules(capture, tmp_path, capsys):
    """`--out` is replaced whole when it holds an earlier trace, refused when it holds
    anything else unless --force, and never merged with what was there."""
    _, path = capture
    out = tmp_path / "t"
    assert main(["trace", str(path), "--out", str(out)]) == 0
    (out / "stale.csv").write_text("x\n")
    assert main(["trace", str(path), "--out", str(out)]) == 0, "an earlier trace is replaced"
    assert not (out / "stale.csv").exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["trace", str(path), "--out", str(foreign)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "keep me"
    assert main(["trace", str(path), "--out", str(foreign), "--force"]) == 0
    assert sorted(p.name for p in foreign.iterdir()) == sorted(p.name for p in out.iterdir())


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("quench: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


def test_only_a_regular_pcap_within_the_cap_is_read(capture, tmp_path, capsys, monkeypatch):
    """A FIFO would block the reader and /dev/zero feed it without end: both are refused before
    a byte is read, as is a folder and a file past the cap; the file is read record by record."""
    os.mkfifo(tmp_path / "fifo.pcap")
    started = time.perf_counter()
    for path in ("/dev/zero", str(tmp_path / "fifo.pcap"), str(tmp_path)):
        assert main(["trace", path, "--out", str(tmp_path / "t")]) == 2
        line = _one_error_line(capsys)
        assert f"quench: error: {path}: " in line and ("not a regular file" in line or "is a folder" in line), line
    assert time.perf_counter() - started < 10
    assert not (tmp_path / "t").exists()
    _, path = capture
    monkeypatch.setattr(files, "MAX_PCAP_BYTES", 100)
    with pytest.raises(PcapError, match=r"more than the 100 bytes quench reads from a pcap file"):
        read_pcap(path)


def test_a_truncated_record_is_named_by_its_byte(capture, tmp_path):
    _, path = capture
    data = path.read_bytes()
    (tmp_path / "cut.pcap").write_bytes(data[:-3])
    with pytest.raises(PcapError, match="truncated record at byte"):
        read_pcap(tmp_path / "cut.pcap")
    assert len(read_pcap(path)) == len(parse_pcap(data))


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--gain", "nan"], "argument --gain: 'nan' is not a number in (0, 1]"),
        (["--gain", "-1"], "argument --gain: '-1' is not a number in (0, 1]"),
        (["--gain", "0"], "argument --gain: '0' is not a number in (0, 1]"),
        (["--gain", "1.5"], "argument --gain: '1.5' is not a number in (0, 1]"),
        (["--src", "10.0.0.300"], "argument --src: '10.0.0.300' is not an IPv4 address"),
        (["--src", "host-a"], "argument --src: 'host-a' is not an IPv4 address"),
    ],
)
def test_bad_gain_or_source_is_one_line(capture, tmp_path, capsys, args, words):
    _, path = capture
    assert main(["trace", str(path), "--out", str(tmp_path / "t"), *args]) == 2
    assert words in _one_error_line(capsys)
    assert not (tmp_path / "t").exists()


def test_analyze_checks_gain_and_source_naming_the_argument(capture, tmp_path):
    _, path = capture
    with pytest.raises(ValueError, match=r"^gain: nan is not a number in \(0, 1\]"):
        analyze(path, tmp_path / "t", gain=float("nan"))
    with pytest.raises(TypeError, match="^gain: "):
        analyze(path, tmp_path / "t", gain="fast")
    with pytest.raises(ValueError, match="^src: 'a' is not an IPv4 address"):
        analyze(path, tmp_path / "t", src="a")
    assert not (tmp_path / "t").exists()
