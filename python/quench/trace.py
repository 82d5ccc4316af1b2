"""Trace analysis of pcap files, from quench or from tcpdump: `quench trace FILE`.

Reads classic libpcap (microsecond or nanosecond timestamps, either byte order) with raw-IP,
IPv4 or Ethernet link types, and decodes IPv4 with TCP/UDP/ICMP, fragments included. From the
packets it derives what tcpdump users compute by hand, per flow (5-tuple, direction kept):
time-sequence data, throughput, retransmissions (data below the highest sequence number
already sent), inter-arrival times, and Van Jacobson's smoothed instantaneous arrival rate (his
18 Jan 1988 email's postscript: first-difference the timestamps, smooth the inter-arrival
times, invert — a rate proportional to the queue the packets are building).
"""

from __future__ import annotations

import io
import ipaddress
import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_IPV4 = 228
ETHERTYPE_IPV4 = 0x0800
ETHERNET_HEADER = 14
IPV4_HEADER = 20
PROTO_ICMP, PROTO_TCP, PROTO_UDP = 1, 6, 17
# VJ's smoothing of inter-arrival times: an EWMA with the gain of his RTT estimator (1/8).
DEFAULT_SMOOTHING_GAIN = 0.125


class PcapError(ValueError):
    """The file is not a pcap this reader understands; the message says why."""


@dataclass
class _Header:
    endian: str
    nanoseconds: bool
    linktype: int


def _file_header(data: bytes, path: str | Path) -> _Header:
    if len(data) < 24:
        raise PcapError(f"{path}: too short for a pcap header ({len(data)} bytes)")
    for endian in ("<", ">"):
        (magic,) = struct.unpack(endian + "I", data[:4])
        if magic in (MAGIC_US, MAGIC_NS):
            linktype = struct.unpack(endian + "I", data[20:24])[0] & 0x0FFFFFFF
            if linktype not in (LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_IPV4):
                raise PcapError(f"{path}: link type {linktype} is not supported (Ethernet, raw IP or IPv4)")
            return _Header(endian, magic == MAGIC_NS, linktype)
    raise PcapError(f"{path}: not a libpcap file (bad magic {data[:4].hex()}; pcapng is not supported)")


def _ip_offset(frame: bytes, linktype: int) -> int | None:
    if linktype != LINKTYPE_ETHERNET:
        return 0
    if len(frame) < ETHERNET_HEADER or struct.unpack("!H", frame[12:14])[0] != ETHERTYPE_IPV4:
        return None
    return ETHERNET_HEADER


def _ntoa(b: bytes) -> str:
    return ".".join(str(x) for x in b)


def _decode(frame: bytes, orig_len: int, linktype: int) -> dict | None:
    off = _ip_offset(frame, linktype)
    if off is None or len(frame) < off + 20 or frame[off] >> 4 != 4:
        return None
    ihl = (frame[off] & 0x0F) * 4
    total, ident, flags_frag = struct.unpack("!HHH", frame[off + 2 : off + 8])
    proto = frame[off + 9]
    row = {
        "wire_len": orig_len - off,
        "ip_len": total,
        "ip_id": ident,
        "df": bool(flags_frag & 0x4000),
        "mf": bool(flags_frag & 0x2000),
        "frag_offset": (flags_frag & 0x1FFF) * 8,
        "proto": proto,
        "ecn": frame[off + 1] & 0x3,
        "src": _ntoa(frame[off + 12 : off + 16]),
        "dst": _ntoa(frame[off + 16 : off + 20]),
        "sport": 0,
        "dport": 0,
        "seq": 0,
        "ack": 0,
        "tcp_flags": 0,
        "payload": 0,
        "l4_header": 0,
    }
    t = off + ihl
    if row["frag_offset"] == 0 and proto in (PROTO_TCP, PROTO_UDP) and len(frame) >= t + 4:
        row["sport"], row["dport"] = struct.unpack("!HH", frame[t : t + 4])
        if proto == PROTO_TCP and len(frame) >= t + 14:
            row["seq"], row["ack"] = struct.unpack("!II", frame[t + 4 : t + 12])
            doff = (frame[t + 12] >> 4) * 4
            row["tcp_flags"] = frame[t + 13]
            row["l4_header"] = doff
            row["payload"] = total - ihl - doff
        elif proto == PROTO_UDP:
            row["l4_header"] = 8
            row["payload"] = total - ihl - 8
    return row


def read_pcap(path: str | Path) -> pd.DataFrame:
    """One row per IPv4 packet: time_s, lengths, addresses, ports, TCP fields, fragment fields.
    The file must be a regular file of at most `quench.files.MAX_PCAP_BYTES`; it is read
    record by record, not whole."""
    from quench.files import MAX_PCAP_BYTES, UnreadableFile, open_regular

    if not Path(path).exists():
        raise FileNotFoundError(f"pcap file not found: {path}")
    try:
        f = open_regular(path, MAX_PCAP_BYTES, "pcap file")
    except UnreadableFile as e:
        raise PcapError(str(e)) from None
    with f:
        return _parse(f, path)


def parse_pcap(data: bytes, p: str | Path = "<pcap>") -> pd.DataFrame:
    """As read_pcap, from the file's bytes (e.g. `Results.pcaps[link]`)."""
    return _parse(io.BytesIO(data), p)


def _parse(f: BinaryIO, p: str | Path) -> pd.DataFrame:
    h = _file_header(f.read(24), p)
    rec = struct.Struct(h.endian + "IIII")
    scale = 1e-9 if h.nanoseconds else 1e-6
    rows, pos = [], 24
    while len(head := f.read(16)) == 16:
        sec, frac, incl, orig = rec.unpack(head)
        frame = f.read(incl)
        if len(frame) < incl:
            raise PcapError(f"{p}: truncated record at byte {pos}")
        pos += 16 + incl
        row = _decode(frame, orig, h.linktype)
        if row is not None:
            row["time_s"] = sec + frac * scale
            rows.append(row)
    cols = [
        "time_s",
        "src",
        "sport",
        "dst",
        "dport",
        "proto",
        "wire_len",
        "ip_len",
        "ip_id",
        "df",
        "mf",
        "frag_offset",
        "ecn",
        "seq",
        "ack",
        "tcp_flags",
        "payload",
        "l4_header",
    ]
    return _datagram_payloads(pd.DataFrame(rows, columns=cols))


def _datagram_payloads(pkts: pd.DataFrame) -> pd.DataFrame:
    """Give a first fragment the transport payload of its whole datagram (the sum over its
    fragments, as if reassembled) and later fragments zero, so payload sums count user data
    once; `ip_len` stays per packet."""
    frag = pkts["mf"] | (pkts["frag_offset"] > 0)
    if not frag.any():
        return pkts
    f = pkts[frag]
    ends = (f["frag_offset"] + f["ip_len"] - IPV4_HEADER).groupby([f["src"], f["dst"], f["ip_id"]]).max()
    first = frag & (pkts["frag_offset"] == 0)
    keys = list(zip(pkts.loc[first, "src"], pkts.loc[first, "dst"], pkts.loc[first, "ip_id"]))
    pkts.loc[first, "payload"] = [int(ends[k]) for k in keys] - pkts.loc[first, "l4_header"]
    pkts.loc[frag & (pkts["frag_offset"] > 0), "payload"] = 0
    return pkts


def _flow_keys(pkts: pd.DataFrame) -> pd.Series:
    """A flow per direction: "src:sport > dst:dport/proto". Later fragments carry no ports:
    they join the flow of their datagram's first fragment (same src, dst, id)."""
    key = pkts["src"] + ":" + pkts["sport"].astype(str) + " > " + pkts["dst"] + ":" + pkts["dport"].astype(str)
    key = key + "/" + pkts["proto"].map({PROTO_TCP: "tcp", PROTO_UDP: "udp", PROTO_ICMP: "icmp"}).fillna("ip")
    later = pkts["frag_offset"] > 0
    if later.any():
        first = pkts[~later & pkts["mf"]]
        owner = dict(zip(zip(first["src"], first["dst"], first["ip_id"]), key[first.index]))
        ids = list(zip(pkts.loc[later, "src"], pkts.loc[later, "dst"], pkts.loc[later, "ip_id"]))
        key.loc[later] = [owner.get(i, f"{i[0]} > {i[1]} fragments") for i in ids]
    return key


def flows(pkts: pd.DataFrame) -> pd.DataFrame:
    """Per flow: packets, bytes (IP lengths), first/last time, throughput, TCP data bytes and
    retransmitted segments."""
    if pkts.empty:
        return pd.DataFrame(
            columns=[
                "flow",
                "packets",
                "bytes",
                "start_s",
                "end_s",
                "throughput_bps",
                "data_bytes",
                "retransmitted_segments",
            ]
        )
    p = pkts.assign(flow=_flow_keys(pkts))
    out = []
    for name, g in p.groupby("flow", sort=True):
        dur = g["time_s"].max() - g["time_s"].min()
        data = g[(g["proto"] == PROTO_TCP) & (g["payload"] > 0)]
        out.append(
            {
                "flow": name,
                "packets": len(g),
                "bytes": int(g["ip_len"].sum()),
                "start_s": g["time_s"].min(),
                "end_s": g["time_s"].max(),
                "throughput_bps": g["ip_len"].sum() * 8 / dur if dur > 0 else float("nan"),
                "data_bytes": int(data["payload"].sum()),
                "retransmitted_segments": retransmissions(data),
            }
        )
    return pd.DataFrame(out)


def retransmissions(data: pd.DataFrame) -> int:
    """TCP data segments whose sequence number is below the highest already sent (32-bit
    wrap handled by unwrapping relative to the first segment)."""
    if data.empty:
        return 0
    seq = data["seq"].to_numpy(dtype=np.int64)
    rel = (seq - seq[0]) % (1 << 32)
    highest = np.maximum.accumulate(rel + data["payload"].to_numpy())
    return int(np.sum(rel[1:] < highest[:-1]))


def time_sequence(pkts: pd.DataFrame, flow: str) -> pd.DataFrame:
    """time_s, relative sequence number and length of each data segment of `flow`."""
    p = pkts.assign(flow=_flow_keys(pkts))
    g = p[(p["flow"] == flow) & (p["proto"] == PROTO_TCP) & (p["frag_offset"] == 0)]
    if g.empty:
        raise ValueError(f"no TCP packets of flow {flow!r}")
    seq = g["seq"].to_numpy(dtype=np.int64)
    return pd.DataFrame(
        {"time_s": g["time_s"].to_numpy(), "seq": (seq - seq[0]) % (1 << 32), "len": g["payload"].to_numpy()}
    )


def arrival_rate(times: np.ndarray, gain: float = DEFAULT_SMOOTHING_GAIN) -> pd.DataFrame:
    """VJ's method: inter-arrival times (first differences), smoothed with an EWMA of `gain`,
    inverted into an instantaneous arrival rate in packets per second."""
    t = np.sort(np.asarray(times, dtype=float))
    gaps = np.diff(t)
    smooth = np.empty_like(gaps)
    avg = gaps[0] if len(gaps) else 0.0
    for i, g in enumerate(gaps):
        avg += gain * (g - avg)
        smooth[i] = avg
    with np.errstate(divide="ignore"):
        rate = np.where(smooth > 0, 1.0 / smooth, np.inf)
    return pd.DataFrame({"time_s": t[1:], "interarrival_s": gaps, "smoothed_s": smooth, "rate_pps": rate})


def check_gain(gain: float) -> float:
    """An EWMA gain: a finite number in (0, 1] (0 would never move the average, above 1 it
    overshoots and oscillates)."""
    if isinstance(gain, bool) or not isinstance(gain, int | float):
        raise TypeError(f"gain: expected a number in (0, 1], got {type(gain).__name__}")
    if not (math.isfinite(gain) and 0 < gain <= 1):
        raise ValueError(f"gain: {gain} is not a number in (0, 1]")
    return float(gain)


def check_source(src: str | None) -> str | None:
    """An IPv4 address in dotted-quad form, as the packets table writes `src`, or None."""
    if src is None:
        return None
    if not isinstance(src, str):
        raise TypeError(f"src: expected an IPv4 address such as '10.0.0.1', got {type(src).__name__}")
    try:
        return str(ipaddress.IPv4Address(src))
    except ValueError:
        raise ValueError(f"src: '{src}' is not an IPv4 address such as '10.0.0.1'") from None


def analyze(
    path: str | Path,
    out: str | Path,
    *,
    src: str | None = None,
    gain: float = DEFAULT_SMOOTHING_GAIN,
    force: bool = False,
) -> dict:
    """Write packets, flows, arrival rate (tables) and plots for a pcap; return a summary.
    `out` follows the rules of a run's output folder (`atomic.check_output_dir`): absent,
    empty, or an earlier quench output, replaced whole; any other folder only with `force`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from quench import _core
    from quench.atomic import RUN_MARKER, TRACE_MARKER_KEY, check_output_dir, staged_dir
    from quench.results import Results  # noqa: F401  (pyarrow is needed for Parquet)

    check_gain(gain)
    check_source(src)
    outdir = check_output_dir(out, force=force)
    pkts = read_pcap(path)
    fl = flows(pkts)
    chosen = pkts if src is None else pkts[pkts["src"] == src]
    rate = arrival_rate(chosen["time_s"].to_numpy(), gain) if len(chosen) > 1 else arrival_rate(np.array([0.0]))
    with staged_dir(outdir, force=force) as staging:
        for name, df in (("packets", pkts), ("trace_flows", fl), ("arrival_rate", rate)):
            df.to_parquet(staging / f"{name}.parquet", index=False)
            df.to_csv(staging / f"{name}.csv", index=False)
        meta = {"quench_version": _core.__version__, TRACE_MARKER_KEY: Path(path).name, "src": src, "gain": gain}
        (staging / RUN_MARKER).write_text(json.dumps(meta, indent=1), encoding="utf-8")
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 7))
        tcp_flows = [f for f in fl["flow"] if f.endswith("/tcp")] if len(fl) else []
        plotted = False
        for f in tcp_flows[:8]:
            ts = time_sequence(pkts, f)
            if ts["len"].sum() > 0:
                a1.plot(ts["time_s"], ts["seq"] / 1e3, ".", ms=2, label=f)
                plotted = True
        a1.set(xlabel="time (s)", ylabel="sequence (KB)", title="time-sequence of TCP data")
        if plotted:  # TCP flows that carried no data (a capture cut after the SYNs) have no line
            a1.legend(fontsize="x-small")
        a2.plot(rate["time_s"], rate["rate_pps"], lw=0.8)
        a2.set(xlabel="time (s)", ylabel="packets/s", title=f"smoothed instantaneous arrival rate (gain {gain})")
        for a in (a1, a2):
            a.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(staging / "trace.png", dpi=120)
        plt.close(fig)
    return {"packets": len(pkts), "flows": len(fl), "out": str(outdir)}
