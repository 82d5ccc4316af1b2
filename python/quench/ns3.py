"""Run a quench scenario in ns-3 too (`quench ns3`, `quench compare`).

`translate` turns a validated scenario (every default filled in) into a plan of plain numbers
for `ns3_child.py`, which runs it in the ns-3 environment's interpreter in a child process (ns-3
is never imported here). Anything without an ns-3 counterpart is refused with a ScenarioError
naming the key. The mapping, and every ns-3 default it relies on, is in docs/validation.md
("quench ns3: the translated subset").
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from quench.errors import scenario_error
from quench.results import Results, jain_index
from quench.scenario import validate_scenario
from quench.units import parse_bytes, parse_duration, parse_limit, parse_packets, parse_rate

# The ns3 wheel on PyPI (ns-3.44) that `quench ns3 --setup` installs.
NS3_VERSION = "3.44.post0"
# Where the ns-3 environment lives: $QUENCH_NS3_VENV, else beside the source checkout
# (benchmarks/.venv-ns3, shared with the benchmark scripts), else in the user's data folder.
_CHECKOUT = Path(__file__).resolve().parents[2]
SETUP_HINT = "quench ns3 --setup"
CHILD = Path(__file__).with_name("ns3_child.py")
# TCP/IP header bytes without options (20 IPv4 + 20 TCP) and UDP.
TCP_IP_HEADERS = 40
# The timestamp option with its two NOPs (RFC 7323), with `tcp.timestamps`.
TCP_TIMESTAMP_OPTION = 12
UDP_IP_HEADERS = 28
# The device queue under every queue disc: one packet, so that the queue disc holds the backlog
# (ns-3's default DropTailQueue of 100 packets would hold it out of the queue disc's sight).
DEVICE_QUEUE = "1p"
# First TCP/UDP port; flow k listens on BASE_PORT + k.
BASE_PORT = 9000
# Bytes handed to the socket per BulkSend write (ns-3's default SendSize is 512).
SEND_SIZE = 1460
# The initial ssthresh ("infinite"): ns-3's TcpSocket InitialSlowStartThreshold default, and
# quench's in its cwnd table.
NS3_NO_SSTHRESH = 2**32 - 1
NO_SSTHRESH = 2**64 - 1
# RFC 3390 / RFC 5681 initial window when a scenario leaves it to quench's default.
RFC5681_IW_BYTES = 4380


# What `quench ns3 --setup` fetches from PyPI (the ns3 wheel, 69 MB, and cppyy's Cling backend,
# 48 MB, with a few small source packages; measured with `pip download ns3==3.44.post0`), said
# the same way wherever the set-up is mentioned.
DOWNLOAD = "a download of about 120 MB, then about 5 minutes while cppyy's backend compiles"


class Ns3Unavailable(OSError):
    """The ns-3 environment is missing or broken (an OSError: the command line reports it as
    one line with exit status 2, like a missing file)."""


def venv_dir() -> Path:
    env = os.environ.get("QUENCH_NS3_VENV")
    if env:
        return Path(env)
    if (_CHECKOUT / "benchmarks").is_dir() and (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / "benchmarks" / ".venv-ns3"
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data / "quench" / "ns3-venv"


def ns3_python() -> Path:
    """The ns-3 environment's interpreter; Ns3Unavailable (one line, naming the set-up command)
    when it is absent."""
    py = venv_dir() / "bin" / "python"
    if not py.is_file():
        raise Ns3Unavailable(
            f"no ns-3 environment at {venv_dir()}; create it with `{SETUP_HINT}` "
            f"(installs ns3=={NS3_VERSION} from PyPI: {DOWNLOAD}) or point QUENCH_NS3_VENV at one"
        )
    return py


def setup(quiet: bool = False) -> Path:
    """Create the ns-3 environment (a venv with the ns3 wheel) unless it already imports ns-3."""
    venv = venv_dir()
    py = venv / "bin" / "python"
    if not py.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    ok = subprocess.run([str(py), "-c", "from ns import ns"], capture_output=True).returncode == 0
    if not ok:
        q = ["--quiet"] if quiet else []
        subprocess.run([str(py), "-m", "pip", "install", *q, f"ns3=={NS3_VERSION}"], check=True)
        subprocess.run([str(py), "-c", "from ns import ns"], check=True, capture_output=True)
    return py


# --- translation ---------------------------------------------------------------------------


# The plan's times and rates are floats (seconds, bit/s), as ns3_child.py hands them to ns-3.
def _secs(v: Any) -> float:
    return float(parse_duration(v))


def _rate(v: Any) -> float:
    return float(parse_rate(v))


def _refuse(key: str, what: str) -> Exception:
    return scenario_error(key, f"{what} has no ns-3 counterpart in `quench ns3`")


def _queue_size(limit: Any, key: str, *, minus_device: bool) -> str:
    pkts, byts = parse_limit(limit, key)
    if pkts is not None and byts is not None:
        raise _refuse(key, "a limit in both packets and bytes")
    if pkts is None and byts is None:
        raise _refuse(key, "an unlimited queue")
    if pkts is not None:
        # The device queue holds one of the packets waiting, so the queue disc holds one fewer.
        return f"{max(1, pkts - 1) if minus_device else pkts}p"
    return f"{byts}B"


def _qdisc(spec: dict[str, Any], key: str, rate_bps: float, notes: list[str], *, own_device: bool) -> dict[str, Any]:
    """The queue disc's type and attributes, and the Config defaults its children need;
    approximations go to `notes`. `own_device`: the link has quench's device queue, so ns-3's
    takes none of the queue disc's packets."""
    kind = spec["kind"]
    a: dict[str, tuple[str, Any]] = {}
    child_defaults: dict[str, tuple[str, Any]] = {}
    if kind == "droptail":
        a["MaxSize"] = ("size", _queue_size(spec["limit"], f"{key}.limit", minus_device=not own_device))
    elif kind == "red":
        _red(spec, key, rate_bps, notes, a)
    elif kind in ("codel", "fq_codel"):
        _codel(spec, key, notes, a, child_defaults)
    elif kind in ("pie", "fq_pie"):
        _pie(spec, key, a, child_defaults)
    else:
        raise _refuse(f"{key}.kind", f"the {kind!r} queue discipline")
    return {"kind": kind, "attributes": a, "defaults": child_defaults}


def _red(spec: dict[str, Any], key: str, rate_bps: float, notes: list[str], a: dict[str, tuple[str, Any]]) -> None:
    """RedQueueDisc's attributes into `a`."""
    bytes_mode = spec["mode"] == "bytes"
    mean = parse_bytes(spec["mean_packet_size"])
    a["MaxSize"] = ("size", _queue_size(spec["limit"], f"{key}.limit", minus_device=False))
    ptc = rate_bps / (8 * mean)  # mean-sized packets per second
    min_th, max_th = spec["min_th"], spec["max_th"]
    if min_th == "auto" or max_th == "auto":
        # quench's (and ARED's) rule, computed here so no ns-3 automatic setting is relied on.
        lo = max(5.0, _secs(spec["target_delay"]) * ptc / 2)
        min_th, max_th = (lo * mean, 3 * lo * mean) if bytes_mode else (lo, 3 * lo)
    else:
        min_th, max_th = (_threshold(spec[k], mean, bytes_mode, f"{key}.{k}") for k in ("min_th", "max_th"))
    w_q = 1 - math.exp(-1 / ptc) if spec["w_q"] == "auto" else float(spec["w_q"])
    max_p = float(spec["max_p"])
    adaptation, max_p = _red_adaptation(spec["adapt"], max_p, f"{key}.adapt", notes)
    a.update(adaptation)
    a.update(
        MinTh=("double", min_th),
        MaxTh=("double", max_th),
        QW=("double", w_q),
        LInterm=("double", 1 / max_p),
        MeanPktSize=("uint", mean),
        Gentle=("bool", spec["curve"] == "gentle"),
        Wait=("bool", spec["spacing"] == "wait"),
        UseEcn=("bool", spec["signal"] == "mark"),
        UseHardDrop=("bool", spec["forced"] == "drop"),
        # ARED = true would also reset the thresholds and w_q to ns-3's automatic ones;
        # Floyd's adaptation alone is AdaptMaxP (set above).
        ARED=("bool", False),
        NLRED=("bool", bool(spec.get("nonlinear", False))),
        LinkBandwidth=("rate_bps", rate_bps),
    )


def _codel(
    spec: dict[str, Any],
    key: str,
    notes: list[str],
    a: dict[str, tuple[str, Any]],
    child_defaults: dict[str, tuple[str, Any]],
) -> None:
    """CoDelQueueDisc's or FqCoDelQueueDisc's attributes into `a`, its flow queues' defaults
    into `child_defaults`."""
    kind = spec["kind"]
    a["MaxSize"] = ("size", _queue_size(spec["limit"], f"{key}.limit", minus_device=False))
    if kind == "codel":
        a.update(Target=("time_s", _secs(spec["target"])), Interval=("time_s", _secs(spec["interval"])))
    else:
        # FqCoDelQueueDisc takes Target and Interval as strings (it hands them on to the
        # CoDel of each flow queue): whole nanoseconds, which ns-3's Time parser reads exactly.
        a.update(
            Target=("string", f"{round(_secs(spec['target']) * 1e9)}ns"),
            Interval=("string", f"{round(_secs(spec['interval']) * 1e9)}ns"),
        )
    a["UseEcn"] = ("bool", spec["ecn"])
    if spec.get("control_law", "exact") == "exact":
        notes.append(
            f"{key}.control_law: ns-3's CoDel takes interval/sqrt(count) from Linux's Newton step "
            '(quench\'s control_law = "newton"), not exactly'
        )
    if spec.get("ce_threshold") is not None:
        a["CeThreshold"] = ("time_s", _secs(spec["ce_threshold"]))
    if spec.get("ce_threshold_selector") is not None:
        raise _refuse(f"{key}.ce_threshold_selector", "a CE threshold for selected packets only")
    if spec.get("batch_drop_count", False):
        notes.append(f"{key}.batch_drop_count: not translated (Linux's count increase after a batch drop)")
    # RFC 8289's MAXPACKET test (and Linux's) holds drops while the bytes left behind are
    # at most `mtu`; ns-3 holds them while the bytes are below MinBytes: MinBytes = mtu + 1
    # is the same rule. FqCoDelQueueDisc makes each flow's CoDelQueueDisc from the
    # attribute defaults, so there it is a Config default.
    min_bytes = ("uint", parse_bytes(spec["mtu"]) + 1)
    if kind == "codel":
        a["MinBytes"] = min_bytes
    else:
        child_defaults["ns3::CoDelQueueDisc::MinBytes"] = min_bytes
        a.update(
            Flows=("uint", spec["flows"]),
            DropBatchSize=("uint", spec["drop_batch_size"]),
            Perturbation=("uint", 0),
        )
        # ns-3's FqCoDel takes its quantum from the device MTU and has no memory limit.


def _pie(
    spec: dict[str, Any], key: str, a: dict[str, tuple[str, Any]], child_defaults: dict[str, tuple[str, Any]]
) -> None:
    """PieQueueDisc's or FqPieQueueDisc's attributes into `a`, its flow queues' defaults into
    `child_defaults`."""
    kind = spec["kind"]
    a["MaxSize"] = ("size", _queue_size(spec["limit"], f"{key}.limit", minus_device=False))
    a.update(
        QueueDelayReference=("time_s", _secs(spec["target"])),
        Tupdate=("time_s", _secs(spec["tupdate"])),
        A=("double", spec["alpha"]),
        B=("double", spec["beta"]),
        MaxBurstAllowance=("time_s", _secs(spec["max_burst"])),
        UseEcn=("bool", spec["ecn"]),
        MarkEcnThreshold=("double", spec["mark_ecnth"]),
        MeanPktSize=("uint", parse_bytes(spec["mean_packet_size"])),
        UseDequeueRateEstimator=("bool", spec["delay_estimate"] != "timestamp"),
        UseDerandomization=("bool", spec["derandomize"]),
    )
    if not spec.get("cap_drop_adjustment", True):
        a["UseCapDropAdjustment"] = ("bool", False)
    if spec.get("auto_activate", False):
        # ns-3's ActiveThreshold is a queue delay, not RFC 8033's third of the buffer.
        raise _refuse(f"{key}.auto_activate", "PIE activated at a third of its limit")
    if kind == "pie":
        a["DequeueThreshold"] = ("uint", parse_bytes(spec["dq_threshold"]))
    else:
        a.update(Flows=("uint", spec["flows"]), Perturbation=("uint", 0))
        # FqPieQueueDisc does not pass its MarkEcnThreshold to the per-flow PIEs it builds,
        # which read PieQueueDisc's default (0.1): set that default too.
        child_defaults["ns3::PieQueueDisc::MarkEcnThreshold"] = ("double", spec["mark_ecnth"])


def _red_adaptation(adapt: Any, max_p: float, key: str, notes: list[str]) -> tuple[dict[str, tuple[str, Any]], float]:
    """RedQueueDisc's adaptation attributes for quench's `adapt`, and the max_p to start from."""
    kind = adapt if isinstance(adapt, str) else adapt.get("kind", "none")
    off = {"AdaptMaxP": ("bool", False), "FengAdaptive": ("bool", False)}
    if kind in ("none", None):
        return off, max_p
    if kind == "feng1999":
        alpha, beta = float(adapt["alpha"]), float(adapt["beta"])
        attributes = {
            **off,
            "FengAdaptive": ("bool", True),
            "FengAlpha": ("double", alpha),
            "FengBeta": ("double", beta),
        }
        if adapt.get("start", "below") == "above":
            return attributes, max_p  # ns-3's own starting status
        # ns-3 starts Feng's status at "above" and quench at "below" (the average starts at 0):
        # ns-3's first arrival finds the average below min_th and divides max_p by alpha.
        # Starting ns-3 from alpha x max_p gives the same max_p from the first arrival on.
        notes.append(
            f"{key}: ns-3 starts Feng's status at 'above' (quench: 'below'), so its initial "
            f"max_p is set to {alpha:g} x max_p, which its first arrival divides back; its gentle "
            "region keeps the initial max_p while quench's follows the adapted one"
        )
        return attributes, max_p * alpha
    if kind == "floyd2001":
        # ns-3 adapts on the first arrival more than Interval after its last change, quench on
        # the first arrival at or after each Interval boundary; ns-3's gentle region keeps the
        # initial max_p while quench's follows the adapted one.
        notes.append(
            f"{key}: ns-3 adapts max_p on the first arrival more than `interval` after its last "
            "change (quench: after each interval boundary), and its gentle region keeps the "
            "initial max_p"
        )
        return {
            **off,
            "AdaptMaxP": ("bool", True),
            "Interval": ("time_s", _secs(adapt["interval"])),
            "Alpha": ("double", float(adapt["alpha"])),
            "Beta": ("double", float(adapt["beta"])),
            "Top": ("double", float(adapt["top"])),
            "Bottom": ("double", float(adapt["bottom"])),
        }, max_p
    raise _refuse(key, f"RED adaptation {kind!r}")


def _threshold(t: Any, mean: int, bytes_mode: bool, key: str) -> float:
    """A RED threshold as ns-3 takes it: in packets, or in bytes in byte mode (a threshold
    given in the other unit converted at the mean packet size)."""
    if isinstance(t, int | float):
        return float(t)
    if str(t).strip().endswith("p"):
        v = float(parse_packets(t, key))
        return v * mean if bytes_mode else v
    b = parse_bytes(t, key)
    return float(b) if bytes_mode else b / mean


def _tcp_defaults(flow: dict[str, Any], key: str) -> tuple[dict[str, tuple[str, Any]], list[str]]:
    """ns-3 Config defaults for a TCP flow's `tcp` and `cc` settings, and the approximations."""
    tcp, cc = flow["tcp"], flow["cc"]
    _refuse_tcp_options(tcp, f"{key}.tcp")
    defaults = _tcp_socket_defaults(tcp, cc)
    notes = _tcp_notes(tcp, cc, key)
    defaults.update(_cc_defaults(tcp, cc, f"{key}.cc", notes))
    return defaults, notes


def _refuse_tcp_options(tcp: dict[str, Any], key: str) -> None:
    """Refuse the TCP options ns-3 has no counterpart for, naming the first."""
    for k, bad in (
        ("source_quench", lambda v: v != "ignore"),
        ("burstiness_control", lambda v: v is not None),
        ("pacing", bool),
        ("local_drop", lambda v: v != "loss"),
        ("small_queues", lambda v: v not in (None, False)),
        # ns-3 3.44 has no RACK-TLP: its SACK sender detects losses by RFC 6675 only.
        ("loss_detection", lambda v: v not in (None, "dupack")),
        # ns-3 3.44's TcpRxBuffer builds SACK blocks only above its next expected byte: no D-SACK.
        ("dsack", bool),
    ):
        if bad(tcp.get(k)):
            raise _refuse(f"{key}.{k}", f"{k} = {tcp.get(k)!r}")
    if tcp["delayed_ack"].get("quick_ack"):
        # tcp-socket-base.cc delays by DelAckCount and DelAckTimeout alone, from the first segment.
        raise _refuse(f"{key}.delayed_ack.quick_ack", "Linux's quick-ack mode")
    receiver = tcp.get("receiver") or {}
    refused = [k for k in ("sack", "timestamps", "ecn") if receiver.get(k) is False]
    if refused:
        # The translator sets TcpSocketBase's Config defaults, which both ends share.
        raise _refuse(f"{key}.receiver.{refused[0]}", "a receiving end that differs from the sending one")
    rto = tcp["rto"]
    if _secs(rto["tick"]) > 0:
        raise _refuse(f"{key}.rto.tick", "a coarse timer tick")
    if rto["k"] != 4:
        raise _refuse(f"{key}.rto.k", f"an RTO variance multiplier of {rto['k']} (ns-3's is 4)")
    if tcp["recovery"] == "prr_crb":
        raise _refuse(
            f"{key}.recovery", "PRR's conservative reduction bound alone (ns-3's PRR switches to SSRB on some ACKs)"
        )


def _tcp_socket_defaults(tcp: dict[str, Any], cc: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """The Config defaults of ns-3's TcpSocket, TcpSocketBase and recovery for these settings."""
    rto, dack = tcp["rto"], tcp["delayed_ack"]
    mss = int(tcp["mss"])
    iw = cc.get("initial_window")
    if iw is None:
        iw = min(4, max(2, RFC5681_IW_BYTES // mss)) if mss <= RFC5681_IW_BYTES else 2
    return {
        # With timestamps quench's full segment carries mss − 12 bytes (Linux's accounting);
        # ns-3's SegmentSize is the payload, to which it adds the option.
        "ns3::TcpSocket::SegmentSize": ("uint", mss - (TCP_TIMESTAMP_OPTION if tcp.get("timestamps") else 0)),
        "ns3::TcpSocket::InitialCwnd": ("uint", iw),
        "ns3::TcpSocket::SndBufSize": ("uint", parse_bytes(tcp["send_buffer"])),
        "ns3::TcpSocket::RcvBufSize": ("uint", parse_bytes(tcp["receive_window"])),
        "ns3::TcpSocket::DelAckCount": ("uint", int(dack["segments"]) if dack["enabled"] else 1),
        "ns3::TcpSocket::DelAckTimeout": ("time_s", _secs(dack["timeout"])),
        "ns3::TcpSocket::DataRetries": ("uint", int(rto["max_backoffs"])),
        # The SYN's timer: ns-3 defaults to 3 s; quench's first RTO is rto.initial.
        "ns3::TcpSocket::ConnTimeout": ("time_s", _secs(rto["initial"])),
        "ns3::RttEstimator::InitialEstimation": ("time_s", _secs(rto["initial"])),
        "ns3::TcpSocketBase::MinRto": ("time_s", _secs(rto["min"])),
        "ns3::TcpSocketBase::ReTxThreshold": ("uint", int(tcp["dupack_threshold"])),
        "ns3::TcpSocketBase::Timestamp": ("bool", bool(tcp.get("timestamps"))),
        "ns3::TcpSocketBase::Sack": ("bool", bool(tcp["sack"])),
        # With SACK ns-3 sends by RFC 6675's pipe before recovery whatever this says (quench's
        # "rfc6675"); the attribute is RFC 3042's rule without SACK.
        "ns3::TcpSocketBase::LimitedTransmit": ("bool", bool(tcp["limited_transmit"])),
        "ns3::TcpSocketBase::UseEcn": ("string", "On" if tcp["ecn"] else "Off"),
        # quench's `recovery`: "prr" is RFC 6937 PRR with the slow-start reduction bound, ns-3's
        # TcpPrrRecovery (which adds SSRB's extra segment only on an ACK of retransmitted data,
        # the conservative bound otherwise: RFC 9937's rule, not RFC 6937's; docs/validation.md,
        # "AQMs against ns-3"). "prr_rfc9937" is RFC 9937's PRR, the same class: ns-3 3.44's
        # SafeACK is "an ACK that cumulatively acknowledges retransmitted data" (no loss check;
        # RFC 9937: snd.una advances and no further loss is indicated), its RecoverFS is its
        # bytes in flight at entry (RFC 9937: snd.nxt - snd.una less what was SACKed before),
        # and it has no "DeliveredData = 0: send nothing" rule. "standard" is the recovery procedure's own
        # window (RFC 6675 with SACK, RFC 6582 without), ns-3's TcpClassicRecovery: cwnd =
        # ssthresh, sending while BytesInFlight (the pipe; without SACK, duplicate ACKs count
        # as SACKed segments) is below it.
        "ns3::TcpL4Protocol::RecoveryType": (
            "string",
            "ns3::TcpPrrRecovery" if tcp["recovery"] in ("prr", "prr_rfc9937") else "ns3::TcpClassicRecovery",
        ),
    }


def _tcp_notes(tcp: dict[str, Any], cc: dict[str, Any], key: str) -> list[str]:
    """Where ns-3's TCP approximates these settings (the controller's own notes aside)."""
    notes = []
    if tcp["rtt_sampling"] != "every_ack" and not tcp.get("timestamps"):
        # ns-3's TcpSocketBase::EstimateRtt measures on every ACK that covers the oldest
        # unacknowledged send (never a retransmitted one): quench's "every_ack" is the closer.
        notes.append(
            f"{key}.tcp.rtt_sampling: ns-3 takes an RTT sample on every ACK of new data "
            "(quench: one timed segment per round trip)"
        )
    if tcp["cwnd_limited_growth"]:
        notes.append(f"{key}.tcp.cwnd_limited_growth: ns-3 grows the window on every ACK")
    if _secs(tcp["rto"]["max"]) != 60:
        notes.append(f"{key}.tcp.rto.max: ns-3's maximum RTO is fixed at 60 s")
    kind, abc = cc["kind"], cc.get("abc_limit")
    if cc.get("growth") == "linux" and kind in ("newreno", "cubic"):
        # TcpNewReno: one segment per ACK in slow start, SMSS²/cwnd per ACK after it;
        # TcpCubic: every segment an ACK covers, past ssthresh, the rest of the ACK dropped.
        notes.append(
            f"{key}.cc.growth: ns-3's {'NewReno' if kind == 'newreno' else 'CUBIC'} does not grow "
            'as Linux\'s tcp_slow_start and tcp_cong_avoid_ai (quench: growth = "linux"'
            + (", with tcp_cubic.c's integer arithmetic)" if kind == "cubic" else ")")
        )
    elif kind == "newreno" and abc != 1:
        notes.append(
            f"{key}.cc.abc_limit: ns-3's NewReno grows slow start by one segment per ACK "
            f"(quench: up to {abc or 'the default 2'})"
        )
    elif kind == "cubic":
        # ns-3's TcpCubic::IncreaseWindow adds every segment an ACK covers in slow start (its
        # stand-in for Linux's quick ACKs), unlike its NewReno (docs/validation.md, "CUBIC").
        notes.append(
            f"{key}.cc.abc_limit: ns-3's CUBIC grows slow start by every segment an ACK covers "
            f"(RFC 3465 without a limit; quench: up to {abc or 'the default 2'})"
        )
    return notes


def _cc_defaults(tcp: dict[str, Any], cc: dict[str, Any], key: str, notes: list[str]) -> dict[str, tuple[str, Any]]:
    """The Config defaults of the ns-3 congestion controller for `cc` (`key` names it);
    approximations go to `notes`."""
    kind = cc["kind"]
    if kind == "cubic":
        return _cubic_defaults(cc, key)
    if kind == "bbr":
        return _bbr_defaults(cc, key, notes)
    if kind == "dctcp":
        return _dctcp_defaults(tcp, cc, key, notes)
    if kind == "vegas":
        return _vegas_defaults(cc, key)
    if kind != "newreno":
        raise _refuse(f"{key}.kind", f"the {kind!r} congestion controller")
    return {}


def _cubic_defaults(cc: dict[str, Any], key: str) -> dict[str, tuple[str, Any]]:
    hystart = cc.get("hystart")
    if hystart == "linux":
        # ns-3's TcpCubic HyStart is an older form of Linux's (its own round and threshold
        # rules), not checked against quench's `hystart_linux.rs`.
        raise _refuse(f"{key}.hystart", "Linux's HyStart as quench models it")
    if hystart:
        # ns-3's TcpCubic HyStart is Linux's older ack-train and delay detector, not RFC 9406.
        raise _refuse(f"{key}.hystart", "HyStart++ (RFC 9406)")
    return {
        "ns3::TcpCubic::C": ("double", cc["c"]),
        "ns3::TcpCubic::Beta": ("double", cc["beta"]),
        "ns3::TcpCubic::FastConvergence": ("bool", cc["fast_convergence"]),
        "ns3::TcpCubic::TcpFriendliness": ("bool", cc["reno_friendly"]),
        # quench's CUBIC without `hystart` ends slow start at the first loss.
        "ns3::TcpCubic::HyStart": ("bool", False),
    }


def _bbr_defaults(cc: dict[str, Any], key: str, notes: list[str]) -> dict[str, tuple[str, Any]]:
    # ns-3's TcpBbr fixes PROBE_BW's cwnd gain at 2 and the pacing margin at 1 %, as quench's
    # defaults. It turns on its own socket's pacing (TcpBbr::InitPacingRate); the attribute
    # TcpSocketState::EnablePacing is not set, since as a default it would pace every other
    # socket too (a CUBIC flow beside BBR at 2 x cwnd/srtt in slow start), which quench's
    # unpaced flows are not (docs/validation.md#bbr).
    for p, default in (("cwnd_gain", 2.0), ("pacing_margin", 0.01)):
        if float(cc[p]) != default:
            raise _refuse(f"{key}.{p}", f"a BBR {p} other than {default} (ns-3's is fixed)")
    # Both add Linux's ACK-aggregation allowance and 2 segments in the 5/4 phase to the
    # window target (TcpBbr::UpdateAckAggregation); quench's can be switched off.
    if not cc.get("ack_aggregation", True):
        notes.append(
            f"{key}.ack_aggregation: ns-3's TcpBbr always adds Linux's ACK-aggregation "
            "allowance (extra_acked) to its window target (docs/mechanisms.md#bbr)"
        )
    if cc.get("send_quantum", "draft") != "segment":
        # ns-3's TcpBbr::SetSendQuantum is one segment at any rate (it has no TSO).
        notes.append(
            f"{key}.send_quantum: ns-3's TcpBbr sends one segment per quantum (quench: the "
            "draft's, 1 ms of pacing above 24 Mb/s; \"segment\" is ns-3's)"
        )
    return {"ns3::TcpBbr::HighGain": ("double", cc["high_gain"])}


def _dctcp_defaults(tcp: dict[str, Any], cc: dict[str, Any], key: str, notes: list[str]) -> dict[str, tuple[str, Any]]:
    # ns-3's TcpDctcp (RFC 8257 on TcpLinuxReno): alpha's gain g, its initial value, ECT(0);
    # it turns ECN on for its sockets itself, and echoes CE by RFC 8257's state machine when
    # the receiving socket is a TcpDctcp too (the translator sets the receiver's node).
    if tcp["delayed_ack"]["enabled"] and int(tcp["delayed_ack"]["segments"]) > 1:
        notes.append(
            f"{key}: ns-3's TcpDctcp (TcpLinuxReno) grows slow start by every segment an ACK "
            f"covers (quench: up to {cc.get('abc_limit') or 'the default 2'})"
        )
    return {
        "ns3::TcpDctcp::DctcpShiftG": ("double", cc["g"]),
        "ns3::TcpDctcp::DctcpAlphaOnInit": ("double", cc["initial_alpha"]),
        "ns3::TcpDctcp::UseEct0": ("bool", True),
    }


def _vegas_defaults(cc: dict[str, Any], key: str) -> dict[str, tuple[str, Any]]:
    for p in ("alpha", "beta", "gamma"):
        if float(cc[p]) != int(cc[p]):
            raise _refuse(f"{key}.{p}", f"a fractional Vegas {p} (ns-3's is an integer)")
    return {f"ns3::TcpVegas::{p.capitalize()}": ("uint", int(cc[p])) for p in ("alpha", "beta", "gamma")}


def translate(spec: dict[str, Any], *, lean: bool = False) -> dict[str, Any]:
    """The plan ns3_child.py runs: validates `spec` with quench first, then maps each element
    or refuses it (ScenarioError naming the key).

    `lean` asks for the same simulation with no trace callback per packet, for timing ns-3's
    run loop: links report only what ns-3's queue objects count themselves (arrivals, drops,
    departures, utilization; no backlog integrals or maxima), TCP flows only the bytes their
    sinks received (and a finite flow's completion), and nothing is recorded over time."""
    r = validate_scenario(spec)
    _refuse_sections(r)
    notes = _record_notes(r["record"])
    links = [_link(ln, f"links[{i}]", notes) for i, ln in enumerate(r["links"])]
    defaults = _queue_disc_defaults(links)
    flows = _flows(r, defaults, notes)
    if lean:
        notes.append("lean: counters only (no backlog integrals, TCP counters or records over time)")
    return _plan(r, links, flows, defaults, notes, lean)


def _refuse_sections(r: dict[str, Any]) -> None:
    for key, what in (
        ("workloads", "a workload (random finite-flow arrivals)"),
        ("topologies", "a generated fabric (list its nodes and links instead)"),
        ("multipath", "multipath routing (ECMP or spraying)"),
        ("link_changes", "links that change during the run"),
        ("routing_convergence", "routing that moves around failed links"),
        ("pfc", "priority-based flow control (ns-3's point-to-point devices send no pause frames)"),
    ):
        if r.get(key):
            raise _refuse(key, what)


def _record_notes(record: dict[str, Any]) -> list[str]:
    """The notes every plan starts with: the wire's framing, and what ns-3 does not record."""
    notes: list[str] = ["packets on ns-3's wire carry a 2-byte PPP header (quench: none)"]
    for k in ("pcap", "segments", "sojourn", "rtt"):
        if record.get(k):
            notes.append(f"record.{k}: not recorded in ns-3 (the queue, cwnd, monitors and snapshot tables are)")
    if record.get("monitors"):
        notes.append("record.monitors: ns-3 records RED's average (avg_queue) only")
    return notes


def _link(ln: dict[str, Any], key: str, notes: list[str]) -> dict[str, Any]:
    """A link's plan entry (both directions' queue discs, their defaults still inside)."""
    if not ln["duplex"]:
        raise _refuse(f"{key}.duplex", "a one-way link")
    if parse_bytes(ln["framing_overhead"]) != 0:
        raise _refuse(f"{key}.framing_overhead", "link framing other than PPP's 2 bytes")
    if ln.get("packet_rate") is not None:
        raise _refuse(f"{key}.packet_rate", "a packet-rate limit")
    # A device queue of quench's (N packets between the qdisc and the transmitter) is ns-3's
    # DropTailQueue of N packets; without one, ns-3 still needs one: DEVICE_QUEUE.
    device = int(ln.get("device_queue") or 0)
    if ln["fragmentation"] != "rfc791":
        raise _refuse(f"{key}.fragmentation", f"fragmentation rule {ln['fragmentation']!r}")
    _refuse_wire_effects(ln, key)
    rate = _rate(ln["rate"])
    rq = ln.get("reverse_qdisc") or ln["qdisc"]
    return {
        "from": ln["from"],
        "to": ln["to"],
        "rate_bps": rate,
        "delay_s": _secs(ln["delay"]),
        "mtu": parse_bytes(ln["mtu"]),
        "loss": float(ln["loss"]),
        "reverse_loss": float(ln["reverse_loss"]),
        "device_queue": f"{device}p" if device else DEVICE_QUEUE,
        "qdisc": _qdisc(ln["qdisc"], f"{key}.qdisc", rate, notes, own_device=device > 0),
        # The same notes again for a reverse queue that copies the forward one.
        "reverse_qdisc": _qdisc(
            rq,
            f"{key}.reverse_qdisc" if ln.get("reverse_qdisc") else f"{key}.qdisc",
            rate,
            notes if ln.get("reverse_qdisc") else [],
            own_device=device > 0,
        ),
    }


def _refuse_wire_effects(ln: dict[str, Any], key: str) -> None:
    """Refuse what ns-3's point-to-point link cannot do faithfully: its error models
    (RateErrorModel, BurstErrorModel, ListErrorModel) have no Gilbert-Elliott chain (and quench's
    scripted lists are not translated to ReceiveListErrorModel), its channel
    has one fixed delay, and a corrupted packet is counted as lost there, not apart."""
    for side in ("loss", "reverse_loss"):
        if isinstance(ln.get(side), dict):
            what = "a loss model (Gilbert-Elliott: none among ns-3's error models; lists: not translated)"
            raise _refuse(f"{key}.{side}", what)
    for side in ("jitter", "reverse_jitter"):
        if ln.get(side) is not None:
            raise _refuse(f"{key}.{side}", "delay jitter (ns-3's point-to-point channel has one fixed delay)")
    for side in ("corrupt", "reverse_corrupt"):
        if ln.get(side):
            raise _refuse(f"{key}.{side}", "corruption counted apart from loss")
    for side in ("capacity", "reverse_capacity"):
        if ln.get(side) is not None:
            raise _refuse(f"{key}.{side}", "a capacity trace (ns-3's point-to-point link has one rate)")
    if ln.get("schedule"):
        raise _refuse(f"{key}.schedule", "a link that changes during the run")


def _queue_disc_defaults(links: list[dict[str, Any]]) -> dict[str, tuple[str, Any]]:
    """The Config defaults the queue discs need, taken out of the links' entries; two queue
    discs that need one default set differently are refused (ns-3 has one value for all)."""
    defaults: dict[str, tuple[str, Any]] = {}
    set_by: dict[str, str] = {}
    for i, ln in enumerate(links):
        for side in ("qdisc", "reverse_qdisc"):
            for path, v in ln[side].pop("defaults").items():
                if path in defaults and defaults[path] != v:
                    raise scenario_error(
                        f"links[{i}].{side}",
                        f"needs {path} = {v[1]!r} but {set_by[path]} needs {defaults[path][1]!r}: "
                        "ns-3 sets it for every queue disc",
                    )
                defaults[path], set_by[path] = v, f"links[{i}].{side}"
    return defaults


class _NodeControllers:
    """ns-3 sets the congestion controller per node: the controller each node's TCP sockets
    use, and whether each receiving node echoes CE as DCTCP's receiver does."""

    def __init__(self) -> None:
        self.cc_of_node: dict[str, str] = {}
        self.dctcp_receiver: dict[str, bool] = {}

    def add(self, fl: dict[str, Any], key: str) -> bool:
        """Record `fl`'s nodes; whether its receiver takes the controller too (DCTCP's)."""
        kind = fl["cc"]["kind"]
        # DCTCP's receiver echoes CE by its own controller's rules in ns-3: its node gets
        # the controller too.
        receiver_cc = kind == "dctcp"
        for end in ("src", "dst") if receiver_cc else ("src",):
            if self.cc_of_node.setdefault(fl[end], kind) != kind:
                raise scenario_error(
                    f"{key}.cc",
                    f"{fl[end]} already uses {self.cc_of_node[fl[end]]}: ns-3 sets the controller per node",
                )
        if self.dctcp_receiver.setdefault(fl["dst"], receiver_cc) != receiver_cc:
            raise scenario_error(
                f"{key}.dst",
                f"{fl['dst']} receives DCTCP and other TCP flows: ns-3 sets the controller per node",
            )
        return receiver_cc


def _flows(r: dict[str, Any], defaults: dict[str, tuple[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
    """Every flow's plan entry; the TCP sockets' Config defaults go into `defaults` (the first
    TCP flow's notes into `notes`), and must be the same for every TCP flow."""
    first_tcp: str | None = None
    nodes = _NodeControllers()
    flows = []
    for k, fl in enumerate(r["flows"]):
        key = f"flows[{k}]"
        for routing, what in (("path", "a flow pinned to a path"), ("reverse_path", "a flow's ACKs pinned to a path")):
            if fl.get(routing):
                raise _refuse(f"{key}.{routing}", what)
        if fl.get("after"):
            raise _refuse(f"{key}.after", "a flow that starts when others complete")
        if fl["kind"] == "tcp":
            first_tcp = _add_tcp_defaults(fl, key, defaults, notes, first_tcp)
            receiver_cc = nodes.add(fl, key)
            flows.append(_tcp_flow(fl, receiver_cc))
        elif fl["kind"] == "udp":
            flows.append(_udp_flow(fl, key, r["duration"]))
        else:
            raise _refuse(f"{key}.kind", f"the {fl['kind']!r} transport")
    return flows


def _add_tcp_defaults(
    fl: dict[str, Any], key: str, defaults: dict[str, tuple[str, Any]], notes: list[str], first_tcp: str | None
) -> str:
    """Add a TCP flow's socket defaults to `defaults`; the key of the first TCP flow."""
    d, n = _tcp_defaults(fl, key)
    if first_tcp is None:
        defaults.update(d)
        notes += n
        return key
    for path, v in d.items():
        if path in defaults and defaults[path] != v:
            raise scenario_error(
                key,
                f"sets {path} to {v[1]!r} but {first_tcp} to {defaults[path][1]!r}: "
                "`quench ns3` gives every TCP socket the same settings",
            )
    defaults.update(d)
    return first_tcp


def _tcp_flow(fl: dict[str, Any], receiver_cc: bool) -> dict[str, Any]:
    return {
        "kind": "tcp",
        "src": fl["src"],
        "dst": fl["dst"],
        "cc": fl["cc"]["kind"],
        "receiver_cc": receiver_cc,
        "bytes": parse_bytes(fl["bytes"]) if fl.get("bytes") is not None else None,
        "start_s": _secs(fl["start"]),
        "send_size": int(fl["tcp"]["mss"]),
    }


def _udp_flow(fl: dict[str, Any], key: str, duration: Any) -> dict[str, Any]:
    size = fl["size"]
    if isinstance(size, dict):
        raise _refuse(f"{key}.size", "a drawn datagram size")
    payload = parse_bytes(size)
    # quench's rate counts IP datagrams (payload + 28 bytes of UDP/IP headers).
    gap = (payload + UDP_IP_HEADERS) * 8 / _rate(fl["rate"])
    stop = _secs(fl["stop"]) if fl.get("stop") is not None else _secs(duration)
    return {
        "kind": "udp",
        "src": fl["src"],
        "dst": fl["dst"],
        "payload": payload,
        "mean_gap_s": gap,
        "poisson": fl["pattern"] == "poisson",
        "start_s": _secs(fl["start"]),
        "stop_s": stop,
    }


def _plan(
    r: dict[str, Any],
    links: list[dict[str, Any]],
    flows: list[dict[str, Any]],
    defaults: dict[str, tuple[str, Any]],
    notes: list[str],
    lean: bool,
) -> dict[str, Any]:
    """The plan: the translated parts with the run's length, seed and records."""
    rec = {} if lean else r["record"]
    names = [f"{ln['from']}->{ln['to']}" for ln in links] + [f"{ln['to']}->{ln['from']}" for ln in links]
    record_queue = (rec.get("links") or names) if rec.get("queues") else []
    # RED's average on every arrival, as quench's `avg_queue` monitor (other queue discs'
    # variables have no counterpart read here).
    red_links = [n for n, (ln, side) in _directions(links) if ln[side]["kind"] == "red"]
    monitor_links = [n for n in red_links if n in (rec.get("links") or names)] if rec.get("monitors") else []
    return {
        "name": r.get("name", ""),
        "duration_s": _secs(r["duration"]),
        # ns-3's generators are MRG32k3a streams chosen by (seed, run): the run number carries
        # the scenario's seed, the seed stays 1 (ns-3's default), as ns-3 recommends.
        "rng_seed": 1,
        "rng_run": int(r["seed"]),
        "nodes": list(r["hosts"]) + list(r["routers"]),
        "links": links,
        "flows": flows,
        "flow_names": [fl.get("name") or f"{fl['kind']}{k}" for k, fl in enumerate(r["flows"])],
        "defaults": defaults,
        "device_queue": DEVICE_QUEUE,
        "base_port": BASE_PORT,
        "record_queue": record_queue,
        "monitor_links": monitor_links,
        "snapshots": snapshot_instants(rec.get("snapshots"), _secs(r["duration"])),
        # ns-3's CongestionWindow and SlowStartThreshold traces, one row per change (quench's
        # cwnd_interval thinning is not applied).
        "record_cwnd": bool(rec.get("cwnd")),
        "notes": notes,
        "lean": lean,
        "resolved": r,
    }


def _directions(links: list[dict[str, Any]]) -> list[tuple[str, tuple[dict[str, Any], str]]]:
    """Each link direction's name with its plan entry and the key of its queue disc."""
    out = []
    for ln in links:
        out.append((f"{ln['from']}->{ln['to']}", (ln, "qdisc")))
        out.append((f"{ln['to']}->{ln['from']}", (ln, "reverse_qdisc")))
    return out


def snapshot_instants(snapshots: Any, duration_s: float) -> list[float]:
    """The instants (s) of a resolved `record.snapshots` within the run: every interval, or
    the listed instants (quench-core's snapshots.rs takes the same ones)."""
    if snapshots is None:
        return []
    if isinstance(snapshots, list):
        return [t for t in (_secs(x) for x in snapshots) if t <= duration_s]
    every_ns = round(_secs(snapshots) * 1e9)
    count = round(duration_s * 1e9) // every_ns
    return [k * every_ns / 1e9 for k in range(1, count + 1)]


# --- running -------------------------------------------------------------------------------

# ns-3 queue discs' drop reasons (their *_DROP strings) mapped to quench's columns.
DROP_REASON_MAP = {
    "Unforced drop": "early",
    "Forced drop": "forced",
    "Queue disc limit exceeded": "overflow",
    "Overlimit drop": "overflow",
    # RED's and PIE's child DropTail queue refusing a packet: the hard limit.
    "Dropped by internal queue": "overflow",
}


def run_plan(plan: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
    """Run `plan` in the ns-3 child; its raw result."""
    return run_plans([plan], timeout_s)[0]


def run_plans(plans: list[dict[str, Any]], timeout_s: float | None = None) -> list[dict[str, Any]]:
    """Run `plans` one after another in one ns-3 child (ns-3's start-up, ~14 s, is paid once;
    each plan's result is the one it gives alone); their raw results."""
    py = ns3_python()
    with tempfile.TemporaryDirectory(prefix="quench-ns3-") as tmp:
        plan_path, out_path = Path(tmp) / "plan.json", Path(tmp) / "result.json"
        plan_path.write_text(json.dumps([{k: v for k, v in p.items() if k != "resolved"} for p in plans]))
        p = subprocess.run(
            [str(py), str(CHILD), str(plan_path), str(out_path)], capture_output=True, text=True, timeout=timeout_s
        )
        if p.returncode != 0 or not out_path.is_file():
            tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
            raise Ns3Unavailable(f"the ns-3 run failed (exit {p.returncode}): {tail[0]}")
        return json.loads(out_path.read_text())


def _known(v: Any) -> Any:
    """A counter of the ns-3 run, NaN where the run did not count it (a lean plan)."""
    return np.nan if v is None else v


def _packets_received(flow: dict[str, Any], got: dict[str, Any]) -> float:
    """Datagrams a UDP flow's sink received: every one carries the flow's fixed payload, so the
    sink's byte count divided by it. NaN for TCP, whose sink counts bytes, not segments."""
    if flow["kind"] != "udp" or not flow["payload"]:
        return np.nan
    return got["bytes_delivered"] // int(flow["payload"])


def to_results(plan: dict[str, Any], raw: dict[str, Any]) -> Results:
    """The ns-3 run as quench Results (same table and column names where ns-3 has them);
    `wall_run_s` is ns-3's run loop alone, as quench's is."""
    dur = plan["duration_s"]
    links = pd.DataFrame(
        [_link_row(plan, lid, ln, dur) for lid, ln in enumerate({ln["name"]: ln for ln in raw["links"]}.values())]
    )
    flows = pd.DataFrame(
        [_flow_row(plan, k, fl, got, dur) for k, (fl, got) in enumerate(zip(plan["flows"], raw["flows"]))]
    )
    tables = {
        "links": links,
        "flows": flows,
        "queue": _queue_table(raw, links),
        **_monitors_and_snapshots(raw, links, flows),
    }
    if plan.get("record_cwnd"):
        tables["cwnd"] = _cwnd_table(raw, flows)
    meta = {
        "quench_version": _version(),
        "simulator": f"ns-3 (ns3=={NS3_VERSION})",
        "seed": plan["resolved"]["seed"],
        "ns3_rng": {"seed": plan["rng_seed"], "run": plan["rng_run"]},
        "simulated_s": dur,
        "events_executed": raw["events"],
        "wall_run_s": raw["run_wall_s"],
        "ns3_approximations": plan["notes"],
    }
    return Results(tables, {}, plan["resolved"], meta)


def _link_row(plan: dict[str, Any], lid: int, ln: dict[str, Any], dur: float) -> dict[str, Any]:
    """A link direction's row of the links table from the ns-3 child's record `ln`."""
    name = ln["name"]
    a, b = name.split("->")
    spec = next(x for x in plan["links"] if {x["from"], x["to"]} == {a, b})
    qd = spec["qdisc"] if spec["from"] == a else spec["reverse_qdisc"]
    reasons = {"overflow": 0, "preempted": 0, "early": 0, "forced": 0, "link_loss": 0}
    for why, n in ln["drop_reasons"].items():
        reasons[DROP_REASON_MAP.get(why, "early" if qd["kind"] != "droptail" else "overflow")] += n
    return {
        "link": lid,
        "name": name,
        "from": a,
        "to": b,
        "qdisc": qd["kind"],
        "rate_bps": int(spec["rate_bps"]),
        "delay_s": spec["delay_s"],
        "arrived_packets": ln["arrived_packets"],
        "arrived_bytes": ln["arrived_bytes"],
        "departed_packets": ln["departed_packets"],
        "departed_bytes": ln["departed_bytes"],
        "dropped_packets": ln["dropped_packets"],
        "dropped_bytes": ln["dropped_bytes"],
        **{f"drops_{k}": v for k, v in reasons.items()},
        "marked_packets": ln["marked_packets"],
        "backlog_packets": ln["backlog_packets"],
        "backlog_bytes": ln["backlog_bytes"],
        "utilization": ln["busy_s"] / dur,
        # Little's law over the run: time-integral of the backlog / packets that left.
        "mean_sojourn_s": _known(ln["packet_seconds"]) / ln["departed_packets"] if ln["departed_packets"] else np.nan,
        "max_sojourn_s": np.nan,
        "mean_backlog_packets": _known(ln["packet_seconds"]) / dur,
        "mean_backlog_bytes": _known(ln["byte_seconds"]) / dur,
        "max_backlog_packets": _known(ln["max_backlog_packets"]),
        "max_backlog_bytes": _known(ln["max_backlog_bytes"]),
    }


def _flow_row(plan: dict[str, Any], k: int, fl: dict[str, Any], got: dict[str, Any], dur: float) -> dict[str, Any]:
    """Flow `k`'s row of the flows table from its plan entry `fl` and the child's record `got`."""
    done = got.get("completion_s")
    none_for_udp = 0 if fl["kind"] == "udp" else None  # UDP retransmits nothing
    active = (done if done is not None else dur) - fl["start_s"]
    return {
        "flow": k,
        "name": plan["flow_names"][k],
        "kind": fl["kind"],
        "cc": fl.get("cc", ""),
        "src": fl["src"],
        "dst": fl["dst"],
        "start_s": fl["start_s"],
        "bytes_requested": float(fl["bytes"]) if fl.get("bytes") else np.nan,
        "bytes_sent": _known(got.get("bytes_sent")),
        "bytes_delivered": got["bytes_delivered"],
        "goodput_bps": got["bytes_delivered"] * 8 / active if active > 0 else 0.0,
        "completion_s": np.nan if done is None else done,
        "response_time_s": np.nan if done is None else done - fl["start_s"],
        "packets_sent": _known(got.get("packets_sent")),
        "packets_received": _packets_received(fl, got),
        "retransmitted_segments": _known(got.get("retransmitted_segments", none_for_udp)),
        "timeouts": _known(got.get("timeouts", none_for_udp)),
        "fast_retransmits": _known(got.get("fast_retransmits", none_for_udp)),
        # Counted at quench's own TCP receiver (docs/tables.md, "ns-3 results").
        "reordered_segments": np.nan,
        "duplicate_segments": np.nan,
        "dsacks_received": np.nan,
        "final_cwnd_bytes": got.get("final_cwnd_bytes", np.nan),
        "srtt_s": np.nan if got.get("srtt_s") is None else got["srtt_s"],
        # What the ns-3 run does not measure (docs/tables.md, "ns-3 results").
        "mean_rtt_s": np.nan,
        "mean_delay_s": np.nan,
        "aborted": np.nan,
        "ideal_fct_s": np.nan,
        "slowdown": np.nan,
    }


def _queue_table(raw: dict[str, Any], links: pd.DataFrame) -> pd.DataFrame:
    link_id = dict(zip(links["name"], links["link"]))
    q = raw["queue"]
    queue = pd.DataFrame(
        {
            "time_s": np.array([r[0] for r in q], dtype=float),
            "link": np.array([link_id[r[1]] for r in q], dtype=np.uint32),
            "packets": np.array([r[2] for r in q], dtype=np.uint64),
            "bytes": np.array([r[3] for r in q], dtype=np.uint64),
        }
    )
    queue["link_name"] = queue["link"].map(dict(zip(links["link"], links["name"]))).astype("string")
    return queue


def _cwnd_table(raw: dict[str, Any], flows: pd.DataFrame) -> pd.DataFrame:
    cw = raw.get("cwnd", [])
    cwnd = pd.DataFrame(
        {
            "time_s": np.array([r[0] for r in cw], dtype=float),
            "flow": np.array([r[1] for r in cw], dtype=np.uint32),
            "cwnd": np.array([r[2] for r in cw], dtype=np.uint64),
            # ns-3's "no threshold yet" is UINT32_MAX, quench's u64::MAX.
            "ssthresh": np.array([NO_SSTHRESH if r[3] == NS3_NO_SSTHRESH else r[3] for r in cw], dtype=np.uint64),
        }
    )
    cwnd["flow_name"] = cwnd["flow"].map(dict(zip(flows["flow"], flows["name"]))).astype("string")
    return cwnd


# The snapshot tables' columns in quench's order (quench-core's snapshots.rs), with the ns-3
# child's row layout: link rows carry no delivered count (ns-3's departures are used: no link
# loses packets on the wire unless a loss model is set), flow rows no received-packet count.
_LINK_SNAPSHOT_COLUMNS = [
    ("arrived_packets", "uint64"),
    ("arrived_bytes", "uint64"),
    ("departed_packets", "uint64"),
    ("departed_bytes", "uint64"),
    ("dropped_packets", "uint64"),
    ("dropped_bytes", "uint64"),
    ("marked_packets", "uint64"),
    ("busy_s", "float64"),
    ("backlog_packet_s", "float64"),
    ("backlog_byte_s", "float64"),
    ("backlog_packets", "uint64"),
    ("backlog_bytes", "uint64"),
]
_FLOW_SNAPSHOT_COLUMNS = [
    ("bytes_sent", "uint64"),
    ("bytes_delivered", "uint64"),
    ("packets_sent", "uint64"),
    ("retransmitted_segments", "uint64"),
    ("timeouts", "uint64"),
    ("fast_retransmits", "uint64"),
    ("cwnd_bytes", "float64"),
    ("srtt_s", "float64"),
]


def _monitors_and_snapshots(raw: dict[str, Any], links: pd.DataFrame, flows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The ns-3 child's RED averages and snapshots as quench's `monitors`, `link_snapshots`
    and `flow_snapshots` tables."""
    link_id = dict(zip(links["name"], links["link"]))
    link_name = dict(zip(links["link"], links["name"]))
    flow_name = dict(zip(flows["flow"], flows["name"]))
    m = raw.get("monitors", [])
    monitors = pd.DataFrame(
        {
            "time_s": np.array([r[0] for r in m], dtype=float),
            "link": np.array([link_id[r[1]] for r in m], dtype=np.uint32),
            "name": pd.array([r[2] for r in m], dtype="str"),
            "value": np.array([r[3] for r in m], dtype=float),
        }
    )
    ls = raw.get("link_snapshots", [])
    cols: dict[str, Any] = {
        "time_s": np.array([r[0] for r in ls], dtype=float),
        "link": np.array([link_id[r[1]] for r in ls], dtype=np.uint32),
    }
    for j, (c, dtype) in enumerate(_LINK_SNAPSHOT_COLUMNS):
        cols[c] = np.array([r[2 + j] for r in ls], dtype=dtype)
    cols["delivered_packets"] = cols["departed_packets"]
    cols["sojourn_sum_s"] = cols["backlog_packet_s"]  # Little's law: the backlog's integral
    link_snaps = pd.DataFrame(cols)
    fs = raw.get("flow_snapshots", [])
    cols = {"time_s": np.array([r[0] for r in fs], dtype=float), "flow": np.array([r[1] for r in fs], dtype=np.uint32)}
    for j, (c, dtype) in enumerate(_FLOW_SNAPSHOT_COLUMNS):
        cols[c] = np.array([np.nan if r[2 + j] is None else r[2 + j] for r in fs], dtype=dtype)
    cols["packets_received"] = np.zeros(len(fs), dtype=np.uint64)
    flow_snaps = pd.DataFrame(cols)
    for df in (monitors, link_snaps):
        df["link_name"] = df["link"].map(link_name).astype("string")
    flow_snaps["flow_name"] = flow_snaps["flow"].map(flow_name).astype("string")
    return {"monitors": monitors, "link_snapshots": link_snaps, "flow_snapshots": flow_snaps}


def _version() -> str:
    from quench import _core

    return _core.__version__


def run_ns3(spec: dict[str, Any], timeout_s: float | None = None) -> Results:
    """Translate and run `spec` in ns-3 (child process); Results like quench's."""
    plan = translate(spec)
    return to_results(plan, run_plan(plan, timeout_s))


def run_ns3_many(specs: list[dict[str, Any]], timeout_s: float | None = None) -> list[Results]:
    """Translate `specs` and run them in one ns-3 child (seeds of one comparison); each result
    equals run_ns3's for that spec."""
    plans = [translate(s) for s in specs]
    raws = run_plans(plans, timeout_s)
    return [to_results(p, r) for p, r in zip(plans, raws)]


# --- comparison ----------------------------------------------------------------------------

# (metric, label, tolerance as a relative difference). Goodput and utilization are the
# figures the translation is held to (5 %); drops and queue depend on loss recovery details
# the two TCPs do not share (docs/validation.md), so their tolerance is wider.
COMPARE_METRICS = [
    ("utilization", "bottleneck utilization", 0.05),
    ("goodput_mbps", "total goodput, Mb/s", 0.05),
    ("jain", "Jain index of per-flow goodput", 0.05),
    ("drops", "bottleneck drops (+ marks)", 0.25),
    ("mean_queue", "bottleneck mean queue, pkts", 0.25),
]


def figures(res: Results, bottleneck: str) -> dict[str, float]:
    b = res.link(bottleneck)
    return {
        "utilization": float(b["utilization"]),
        "goodput_mbps": float(res.flows["goodput_bps"].sum()) / 1e6,
        "jain": jain_index(res.flows["goodput_bps"].to_numpy(dtype=float)),
        "drops": float(b["dropped_packets"] + b["marked_packets"]),
        "mean_queue": float(b["mean_backlog_packets"]),
    }


def compare_table(quench_runs: list[Results], ns3_runs: list[Results]) -> tuple[str, list[dict[str, Any]]]:
    """Side-by-side table (means over seeds, with their spread) and its rows."""
    bottleneck = quench_runs[0].bottleneck()
    q = [figures(r, bottleneck) for r in quench_runs]
    n = [figures(r, bottleneck) for r in ns3_runs]
    lines = [
        f"bottleneck {bottleneck}, {len(q)} seed(s); relative difference = (quench - ns-3) / ns-3",
        f"{'metric':32} {'quench':>14} {'ns-3':>14} {'rel diff':>9} {'tol':>5}  verdict",
    ]
    rows = []
    for key, label, tol in COMPARE_METRICS:
        qv, nv = np.array([x[key] for x in q]), np.array([x[key] for x in n])
        qm, nm = float(qv.mean()), float(nv.mean())
        rel = (qm - nm) / nm if nm else (0.0 if qm == 0 else math.inf)
        ok = abs(rel) <= tol
        sd = lambda v: f"±{v.std(ddof=1):.3g}" if len(v) > 1 else ""  # noqa: E731
        lines.append(
            f"{label:32} {f'{qm:.4g}{sd(qv)}':>14} {f'{nm:.4g}{sd(nv)}':>14} {rel:+9.1%} {tol:>5.0%}  "
            f"{'ok' if ok else 'DIFFERS'}"
        )
        rows.append(
            {"metric": key, "label": label, "quench": qm, "ns3": nm, "rel_diff": rel, "tolerance": tol, "ok": ok}
        )
    return "\n".join(lines), rows


# The per-flow comparison's columns: (flows column, heading, scale to the unit shown).
FLOW_COMPARE_COLUMNS = [
    ("share", "share", 1.0),
    ("goodput_bps", "goodput Mb/s", 1e-6),
    ("srtt_s", "srtt ms", 1e3),
    ("retransmitted_segments", "retransmissions", 1.0),
]


def _flow_figures(runs: list[Results]) -> pd.DataFrame:
    """Per flow, the mean over seeds of its share of the total goodput, its goodput, smoothed
    RTT at the end and retransmissions (ns-3's srtt_s: its socket's smoothed estimate)."""
    frames = []
    for res in runs:
        f = res.flows.set_index("name")
        total = float(f["goodput_bps"].sum())
        f = f.assign(share=f["goodput_bps"] / total if total else np.nan)
        frames.append(f[[c for c, _, _ in FLOW_COMPARE_COLUMNS]].astype(float))
    return pd.concat(frames).groupby(level=0, sort=False).mean()


def flow_table(quench_runs: list[Results], ns3_runs: list[Results]) -> str:
    """Per flow, quench's figures beside ns-3's (means over seeds), as 'quench / ns-3' cells."""
    q, n = _flow_figures(quench_runs), _flow_figures(ns3_runs)
    head = ["flow", *[f"{label} quench / ns-3" for _, label, _ in FLOW_COMPARE_COLUMNS]]
    rows = [head]
    for name in q.index:
        cells = [f"{q.at[name, c] * k:.4g} / {n.at[name, c] * k:.4g}" for c, _, k in FLOW_COMPARE_COLUMNS]
        rows.append([str(name), *cells])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join([f"per flow, {len(quench_runs)} seed(s):", *lines])
