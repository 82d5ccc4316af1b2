"""Property tests of the file readers (Hypothesis): any bytes given as an empirical CDF's CSV
file (`quench.dist.read_cdf`, as `{dist = "empirical", file = ...}` reads it) or as a capture
to `quench trace` (libpcap, pcapng, truncated, a wrong magic, a valid capture with bytes
changed) give a result or one clean error: a ScenarioError naming the key, or one line on
stderr with exit status 2; never another exception, a traceback or a hang. CI runs a bounded
number of examples; QUENCH_FUZZ_EXAMPLES=100000 runs a long campaign."""

from __future__ import annotations

import contextlib
import io
import os
import struct
import tempfile
import time
from pathlib import Path

import pytest
from conftest import small_net
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quench
from quench.cli import main
from quench.dist import read_cdf
from quench.trace import MAGIC_NS, MAGIC_US, PcapError, parse_pcap

EXAMPLES = int(os.environ.get("QUENCH_FUZZ_EXAMPLES", "200"))
# A file of a few KB read in longer than this counts as a hang.
SLOW_S = 2.0
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The pcapng Section Header Block's type and byte-order magic (pcapng draft, section 4.1).
PCAPNG_SHB = struct.pack("<II", 0x0A0D0D0A, 28) + struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) + struct.pack("<I", 28)


def _read_cdf_bytes(data: bytes) -> list | quench.ScenarioError:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sizes.csv"
        path.write_bytes(data)
        started = time.monotonic()
        try:
            points = read_cdf(path, key="flows[0].size.file", shown="sizes.csv")
        except quench.ScenarioError as e:
            return e
        finally:
            assert time.monotonic() - started < SLOW_S
    return points


def _check_cdf(data: bytes) -> None:
    got = _read_cdf_bytes(data)
    if isinstance(got, quench.ScenarioError):
        assert got.path == "flows[0].size.file"
        assert got.reason.startswith("sizes.csv") and "\n" not in str(got)
        return
    # A result is a CDF: p from 0 to 1 never going down, ending at 1.
    probabilities = [p for _, p in got]
    assert probabilities == sorted(probabilities) and probabilities[-1] == 1
    assert all(0 <= p <= 1 for p in probabilities)


# Lines that are nearly a CDF: sizes with or without units, probabilities, separators, junk.
_FIELD = st.one_of(
    st.integers(-5, 10**7).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1500", "10KB", "1.5MiB", "0", "1", "0.5", "1e3", "size", "p", "", "nan", "1e400", "-0"]),
    st.text(max_size=6),
)
_LINE = st.one_of(
    st.tuples(_FIELD, st.sampled_from([",", " ", "\t", ", ", ";"]), _FIELD).map("".join),
    st.sampled_from(["", "# comment", "\ufeffsize,p", "size,p", "   "]),
    st.text(max_size=20),
)


@FUZZ
@given(st.binary(max_size=2048))
def test_any_bytes_as_a_cdf_file_are_points_or_one_error(data):
    _check_cdf(data)


@FUZZ
@given(st.lists(_LINE, max_size=12), st.sampled_from(["\n", "\r\n", "\r"]))
def test_near_cdf_text_is_points_or_one_error(lines, newline):
    _check_cdf(newline.join(lines).encode("utf-8", "surrogatepass"))


def test_a_cdf_file_by_hand():
    """Points as the module docstring says: a header, comments, units, a comma or spaces."""
    text = b"\xef\xbb\xbfsize,p\n# web search\n100, 0\n10KB 0.5\n\n20000,1\n"
    assert _read_cdf_bytes(text) == [[100, 0.0], ["10KB", 0.5], [20000, 1.0]]
    assert "line 3: size 100 B is below" in str(_read_cdf_bytes(b"200,0\n300,0.5\n100,1\n"))


@pytest.fixture(scope="module")
def capture() -> bytes:
    """A real capture: two TCP flows and a UDP source through a bottleneck."""
    net = small_net(pcap=["r->b"])
    net.tcp("a", "b", bytes="20KB", profile="rfc")
    net.udp("a", "b", rate="50kbps", size="300B", stop="1s")
    return net.run("2s").pcaps["r->b"]


def _trace(data: bytes) -> tuple[int, str]:
    """`quench trace` on a file of `data`: its exit status and stderr."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "in.pcap"
        path.write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        started = time.monotonic()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["trace", str(path), "--out", str(Path(d) / "out")])
        assert time.monotonic() - started < 10 * SLOW_S
    return status, err.getvalue()


def _check_pcap(data: bytes) -> None:
    """parse_pcap gives a table or a PcapError (one line); nothing else escapes."""
    started = time.monotonic()
    try:
        table = parse_pcap(data, "in.pcap")
    except PcapError as e:
        assert str(e).startswith("in.pcap: ") and "\n" not in str(e)
    else:
        assert set(table.columns) >= {"time_s", "src", "dst", "proto"}
    assert time.monotonic() - started < SLOW_S


def _header(magic: int, endian: str = "<", linktype: int = 101, snaplen: int = 65535) -> bytes:
    return struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)


@FUZZ
@given(st.binary(max_size=4096))
def test_any_bytes_as_a_pcap_are_a_table_or_one_error(data):
    _check_pcap(data)


@FUZZ
@given(
    st.sampled_from([MAGIC_US, MAGIC_NS]),
    st.sampled_from(["<", ">"]),
    st.sampled_from([1, 101, 228, 0, 113]),
    st.binary(max_size=2048),
    st.sampled_from([0, 96, 65535, 2**31, 2**32 - 1]),
)
def test_a_valid_header_then_any_records_is_a_table_or_one_error(magic, endian, linktype, records, snaplen):
    _check_pcap(_header(magic, endian, linktype, snaplen) + records)


@pytest.mark.parametrize("length", [2**31 - 1, 2**32 - 1])
def test_a_huge_snaplen_and_record_length_are_one_error_without_reading_them(length):
    """A header claiming a 4 GB snaplen and a record claiming `length` bytes of a 40-byte file:
    the record is truncated, refused at once (nothing of that size is allocated)."""
    record = struct.pack("<IIII", 0, 0, length, length) + bytes(40)
    started = time.monotonic()
    with pytest.raises(PcapError) as e:
        parse_pcap(_header(MAGIC_US, snaplen=2**32 - 1) + record, "in.pcap")
    assert str(e.value) == "in.pcap: truncated record at byte 24"
    assert time.monotonic() - started < SLOW_S


@FUZZ
@given(st.data())
def test_a_capture_with_bytes_changed_or_cut_is_a_table_or_one_error(capture, data):
    buf = bytearray(capture)
    for _ in range(data.draw(st.integers(0, 8))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(buf)))
    _check_pcap(bytes(buf[:cut]))


@pytest.mark.parametrize(
    ("what", "make", "words"),
    [
        ("pcapng", lambda c: PCAPNG_SHB, "pcapng is not supported"),
        ("wrong magic", lambda c: b"\x00\x01\x02\x03" + c[4:], "bad magic 00010203"),
        ("empty", lambda c: b"", "too short for a pcap header (0 bytes)"),
        ("a header cut short", lambda c: c[:20], "too short for a pcap header (20 bytes)"),
        ("a record cut short", lambda c: c[:-7], "truncated record"),
    ],
)
def test_trace_on_a_bad_capture_is_one_line_with_status_2(capture, what, make, words):
    status, err = _trace(make(capture))
    assert status == 2 and err.count("\n") == 1 and err.startswith("quench: error: "), what
    assert words in err


def test_trace_on_the_capture_itself_succeeds(capture):
    status, err = _trace(capture)
    assert status == 0 and "Traceback" not in err


def test_trace_on_a_capture_of_a_handshake_alone_writes_nothing_to_stderr(capture):
    """The file header and the first record, a SYN of 40 bytes: a TCP flow without data has no
    line in the time-sequence figure, and no legend (matplotlib would warn of an empty one)."""
    first = 24 + 16 + struct.unpack_from("<I", capture, 24 + 8)[0]
    assert first == 80
    assert _trace(capture[:first]) == (0, "")


@settings(max_examples=max(20, EXAMPLES // 10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_trace_on_a_changed_capture_never_shows_a_traceback(capture, data):
    buf = bytearray(capture)
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    status, err = _trace(bytes(buf[: data.draw(st.integers(0, len(buf)))]))
    assert status in (0, 2) and "Traceback" not in err
    if status == 2:
        assert err.count("\n") == 1 and err.startswith("quench: error: ")
