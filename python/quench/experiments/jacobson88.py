"""jacobson88 — V. Jacobson to J. Crowcroft, "Re: Thinking about Congestion", 18 Jan 1988.

Crowcroft's UCL-SATNET echo test moved 100 KB through a path with a queue limit of "either 8
or 16 packets" and 250-byte datagrams: 4 KB window with a 512-byte MSS gave 1.54 KB/s, 16 KB
window with a 246-byte MSS 1.13 KB/s. Jacobson's explanation: (1) user bytes per packet
(170 vs 123: every fragment costs a packet slot), (2) start-up losses (1 vs 4), (3) on an echo
path data and ACKs share the bottleneck queue.

Model (choices are `Params` fields):
- An echo path: the sender and the receiver are both at UCL behind the gateway; the only way
  between them is out over SATNET to the echo host and back, so data fragments and ACKs
  share the outbound queue (`echo = False` gives separate paths for comparison).
- SATNET: 250-byte MTU (the gateway fragments with the email's unaligned arithmetic, or RFC
  791's: docs/mechanisms.md#ip-fragmentation), a packet-rate limit (the email's figures imply
  about 9.1 data packets/s), 64 kb/s, and a 0.3 s one-way delay per crossing (a geostationary
  hop plus ground segments).
- The queue limit at the gateway's SATNET interface: 8 or 16 packets (both are run).
- UCL's TCP: 4.3BSD-Tahoe (slow start, fast retransmit, `rto = srtt + 2·rttvar` in 500 ms
  ticks), delayed ACKs every second segment ("one ack generated per two tcp packets").
- Calibration: the packet rate is set so that the 512-byte run averages 9.1 data packets a
  second over its transfer, as the email's figures imply (1540 B/s at 170.7 user bytes per
  packet, 1130 B/s at 123): a few runs of the 512-byte case adjust the rate by fixed-point
  iteration. The 246-byte case and the ratio are then predictions.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from quench.experiments.common import Analysis, Criterion, Figures, Run, output_folder, report, run_grid, text_table
from quench.network import Network, droptail
from quench.results import Results
from quench.trace import parse_pcap

NAME = "jacobson88"
# The TCP this experiment was written for: the plain RFC sender, on which its controllers and
# timers are set explicitly (tcp.profile; the engine's default is Linux's).
TCP_PROFILE = "rfc"
# The email's figures.
SOURCE_RATE_512_KBPS = 1.54
SOURCE_RATE_246_KBPS = 1.13
SOURCE_RATIO = 1.36
SOURCE_USER_BYTES_512 = 170.0
SOURCE_USER_BYTES_246 = 123.0
# The email's rates over its user bytes per packet: 1540/170.7 = 9.0 and 1130/123 = 9.2.
DATA_PACKETS_PER_S = 9.1
# Pass criteria: tolerances around the email's figures.
TOL_RATIO = 0.06
TOL_RATE = 0.10
KB = 1000.0
CALIBRATION_STEPS = 4
# The MSS sweep isolates the packet-efficiency effect: a queue that never overflows.
SWEEP_QUEUE_LIMIT = 1000
BOTTLENECK = "gw->echo"
# Headers of a first fragment: 20 IP + 20 TCP; of a later one: 20 IP.
TCP_IP_HEADERS = 40
IP_HEADER = 20


@dataclass
class Params:
    transfer_bytes: int = 100_000
    mtu: int = 250
    fragmentation: str = "unaligned"
    satnet_rate: str = "64kbps"
    satnet_delay_s: float = 0.3
    packet_rate: float | None = None  # calibrated when None
    queue_limit: int = 8
    echo: bool = True
    lan_rate: str = "10Mbps"
    seed: int = 1
    max_duration_s: float = 600.0


@dataclass
class Case:
    mss: int
    window: int


CASE_512 = Case(512, 4096)
CASE_246 = Case(246, 16384)


def fragments_per_segment(mss: int, mtu: int = 250, rule: str = "unaligned") -> int:
    """k(m) = 1 + ceil(max(0, m − first)/rest) with first = mtu − 40, rest = mtu − 20 bytes of
    user data (rounded down to 8 for RFC 791 offsets)."""
    rest = mtu - IP_HEADER
    if rule == "rfc791":
        rest = rest // 8 * 8
    first = rest - (TCP_IP_HEADERS - IP_HEADER)
    return 1 + max(0, math.ceil((mss - first) / rest))


def user_bytes_per_packet(mss: int, mtu: int = 250, rule: str = "unaligned") -> float:
    return mss / fragments_per_segment(mss, mtu, rule)


def network(p: Params, case: Case) -> Network:
    rate = p.packet_rate
    if rate is None:
        raise ValueError("packet_rate must be calibrated first")
    path = "echo" if p.echo else "direct"
    name = f"{NAME}-mss{case.mss}-window{case.window}-queue{p.queue_limit}-{path}"
    net = Network(tcp_profile=TCP_PROFILE, seed=p.seed, name=name)
    net.hosts("ucl", "ucl_sink").routers("gw", "echo", "gw_back")
    satnet = dict(
        rate=p.satnet_rate,
        delay=p.satnet_delay_s,
        mtu=f"{p.mtu}B",
        packet_rate=rate,
        fragmentation=p.fragmentation,
        duplex=False,
    )
    net.link("ucl", "gw", rate=p.lan_rate, delay="1ms", duplex=False)
    net.link("gw", "echo", qdisc=droptail(f"{p.queue_limit}p"), **satnet)
    net.link("echo", "gw_back", qdisc=droptail("1000p"), **satnet)
    net.link("gw_back", "ucl_sink", rate=p.lan_rate, delay="1ms", duplex=False)
    if p.echo:
        # ACKs from the receiver go out through the same gateway queue and come back.
        net.link("ucl_sink", "gw", rate=p.lan_rate, delay="1ms", duplex=False)
        net.link("gw_back", "ucl", rate=p.lan_rate, delay="1ms", duplex=False)
    else:
        # A separate return path for ACKs, same satellite delay, no shared queue.
        net.routers("ret")
        net.link("ucl_sink", "ret", rate=p.satnet_rate, delay=2 * p.satnet_delay_s, duplex=False)
        net.link("ret", "ucl", rate=p.lan_rate, delay="1ms", duplex=False)
    tcp = {
        "mss": case.mss,
        "send_buffer": case.window,
        "receive_window": case.window,
        "rto": {"k": 2, "tick": "500ms", "initial": "3s", "max": "64s"},
    }
    net.tcp("ucl", "ucl_sink", cc="tahoe", bytes=p.transfer_bytes, name=f"mss{case.mss}", **tcp)
    net.record(queues=True, cwnd=True, segments=True, links=[BOTTLENECK], pcap=[BOTTLENECK])
    return net


@dataclass
class Measured:
    mss: int
    window: int
    completion_s: float
    throughput_kbps: float
    bottleneck_packets: int
    data_packets_per_s: float
    data_share: float
    # User bytes per packet of a segment, from the gateway's fragment counts.
    user_bytes_per_packet: float
    # Transfer size over data packets that crossed (retransmissions included).
    delivered_bytes_per_data_packet: float
    drops: int
    startup_drops: int
    timeouts: int
    retransmissions: int


def run(p: Params, case: Case, keep_measured: bool = True) -> Run:
    """The transfer of `case`; keeping its Measured, or the whole Results."""
    keep = functools.partial(measure, p=p, case=case) if keep_measured else None
    return Run.of(network(p, case), p.max_duration_s, keep)


def measure(res: Results, p: Params, case: Case) -> Measured:
    f = res.flows.iloc[0]
    t = float(f["response_time_s"])
    if not math.isfinite(t):
        raise RuntimeError(f"the {case.mss}-byte transfer did not finish in {p.max_duration_s} s")
    b = res.link(BOTTLENECK)
    crossed = parse_pcap(res.pcaps[BOTTLENECK], BOTTLENECK)
    # Data packets are fragments or segments with payload; the rest are ACKs, SYN, SYN-ACK.
    data_packets = int(((crossed["payload"] > 0) | crossed["mf"] | (crossed["frag_offset"] > 0)).sum())
    gw = res.nodes[res.nodes["name"] == "gw"].iloc[0]
    per_segment = gw["fragments_created"] / gw["datagrams_fragmented"] if gw["datagrams_fragmented"] else 1.0
    drops = res.drops[res.drops["link_name"] == BOTTLENECK]
    first_timeout = res.tcp_events[res.tcp_events["event"].isin(["timeout", "fast_retransmit"])]["time_s"]
    startup_end = float(first_timeout.min()) if len(first_timeout) else t
    return Measured(
        mss=case.mss,
        window=case.window,
        completion_s=t,
        throughput_kbps=p.transfer_bytes / t / KB,
        bottleneck_packets=int(b["departed_packets"]),
        data_packets_per_s=data_packets / t,
        data_share=data_packets / max(int(b["departed_packets"]), 1),
        user_bytes_per_packet=case.mss / per_segment,
        delivered_bytes_per_data_packet=p.transfer_bytes / max(data_packets, 1),
        drops=int(b["dropped_packets"]),
        startup_drops=int((drops["time_s"] <= startup_end).sum()),
        timeouts=int(f["timeouts"]),
        retransmissions=int(f["retransmitted_segments"]),
    )


def calibrate(models: list[Params]) -> list[Params]:
    """Set each model's packet rate so that its 512-byte run averages 9.1 data packets a second
    over the whole transfer, as the email's figures do (1540 B/s / 170.7 B per packet): data
    packets scale with the channel's rate, so a few fixed-point steps converge. A step needs
    the model's previous one; the models' steps run side by side."""
    rates = [DATA_PACKETS_PER_S] * len(models)
    for _ in range(CALIBRATION_STEPS):
        (measured,) = run_grid([run(dataclasses.replace(p, packet_rate=r), CASE_512) for p, r in zip(models, rates)])
        rates = [r * (DATA_PACKETS_PER_S / m.data_packets_per_s) for r, m in zip(rates, measured)]
    return [dataclasses.replace(p, packet_rate=r) for p, r in zip(models, rates)]


def mss_sweep_runs(p: Params, quick: bool) -> list[Run]:
    """Throughput against MSS with the 16 KB window and a queue too large to overflow, so the
    packet-rate limit always binds and only cause (1) acts; the email predicts peaks at
    mss = 210 + 230n."""
    lossless = dataclasses.replace(p, queue_limit=SWEEP_QUEUE_LIMIT)
    return [run(lossless, Case(mss, CASE_246.window)) for mss in range(150, 951, 20 if quick else 5)]


def mss_sweep(p: Params, measured: list[Measured]) -> list[dict]:
    """The sweep's rows: measured throughput and user bytes per packet beside the email's."""
    return [
        {
            "mss": m.mss,
            "throughput_kbps": m.throughput_kbps,
            "user_bytes_per_packet": m.user_bytes_per_packet,
            "model_user_bytes_per_packet": user_bytes_per_packet(m.mss, p.mtu, p.fragmentation),
        }
        for m in measured
    ]


def peaks_at_email_values(rows: list[dict], mtu: int = 250) -> tuple[float, int]:
    """For each sawtooth tooth (210 + 230(n−1), 210 + 230n], how far the measured best MSS sits
    from the tooth's right edge, in bytes (max over teeth), and how many teeth were checked."""
    first, rest = mtu - TCP_IP_HEADERS, mtu - IP_HEADER
    worst, teeth = 0.0, 0
    mss = np.array([r["mss"] for r in rows])
    thr = np.array([r["throughput_kbps"] for r in rows])
    n = 0
    while first + rest * n <= mss.max():
        lo, hi = first + rest * (n - 1) if n else mss.min() - 1, first + rest * n
        inside = (mss > lo) & (mss <= hi)
        if inside.sum() >= 3:
            best = mss[inside][np.argmax(thr[inside])]
            worst = max(worst, float(hi - best))
            teeth += 1
        n += 1
    return worst, teeth


# The loss-optimal MSS study: MTUs and losses of the analytic model, and the (MTU, loss) points
# simulated over a sweep of MSS, by mode.
LOSS_STUDY = {
    "quick": {"mtus": [250, 576], "losses": [0.01, 0.05], "simulated": [(250, 0.05)], "mss_step": 40},
    "full": {
        "mtus": [250, 576, 1006],
        "losses": [0.0, 0.01, 0.03, 0.05, 0.1],
        "simulated": [(250, 0.02), (250, 0.05)],
        "mss_step": 20,
    },
}


def lossy_sweep(quick: bool) -> list[tuple[int, float, int]]:
    """The simulated (mtu, loss, mss) points of the loss-optimal MSS study."""
    study = LOSS_STUDY["quick" if quick else "full"]
    return [(mtu, loss, mss) for mtu, loss in study["simulated"] for mss in range(150, 951, study["mss_step"])]


def loss_optimal_study(quick: bool, throughputs: list[float]) -> dict:
    """The MSS that maximizes goodput under random fragment loss p, analytic model against
    simulation (`throughputs` of `lossy_sweep`'s points): goodput per packet slot ∝
    (m/k(m))·(1 − p)^k(m) (each segment is lost when any of its k fragments is)."""
    study = LOSS_STUDY["quick" if quick else "full"]
    candidates = np.arange(100, 2001, 10)
    analytic = []
    for mtu in study["mtus"]:
        for loss in study["losses"]:
            score = [
                user_bytes_per_packet(int(m), mtu) * (1 - loss) ** fragments_per_segment(int(m), mtu)
                for m in candidates
            ]
            analytic.append({"mtu": mtu, "loss": loss, "best_mss": int(candidates[int(np.argmax(score))])})
    best: dict[tuple[int, float], tuple[int, float]] = {}
    for (mtu, loss, mss), rate in zip(lossy_sweep(quick), throughputs):
        if (mtu, loss) not in best or rate > best[(mtu, loss)][1]:
            best[(mtu, loss)] = (mss, rate)
    simulated = [{"mtu": mtu, "loss": loss, "best_mss": mss} for (mtu, loss), (mss, _) in best.items()]
    return {"analytic": analytic, "simulated": simulated}


def lossy_run(p: Params, mtu: int, loss: float, mss: int) -> Run:
    """A transfer with random fragment loss on the SATNET link, separate return path, a large
    queue (loss comes only from `loss`); keeps its throughput."""
    q = dataclasses.replace(p, mtu=mtu, echo=False, queue_limit=1000)
    net = network(q, Case(mss, 8 * mss))
    for link in net._links:
        if link["from"] == "gw":
            link["loss"] = loss
    net.record(queues=False, cwnd=False, segments=False, pcap=[])
    return Run.of(net, q.max_duration_s * 4, functools.partial(transfer_rate, transfer_bytes=q.transfer_bytes))


def transfer_rate(res: Results, transfer_bytes: int) -> float:
    """Bytes per second over the transfer; 0 when it did not finish."""
    t = float(res.flows.iloc[0]["response_time_s"])
    return transfer_bytes / t if math.isfinite(t) else 0.0


def criteria(m512: Measured, m246: Measured, q8_512: Measured, p: Params, sweep: list[dict]) -> list[Criterion]:
    ratio = m512.throughput_kbps / m246.throughput_kbps
    worst_peak, teeth = peaks_at_email_values(sweep, p.mtu)
    return [
        Criterion.within_abs("throughput ratio 512/246", SOURCE_RATIO, ratio, TOL_RATIO),
        Criterion.within(
            "throughput, 4 KB window, MSS 512 (KB/s)", SOURCE_RATE_512_KBPS, m512.throughput_kbps, TOL_RATE
        ),
        Criterion.within(
            "throughput, 16 KB window, MSS 246 (KB/s)", SOURCE_RATE_246_KBPS, m246.throughput_kbps, TOL_RATE
        ),
        Criterion.at_least("start-up drops, queue limit 8, 4 KB window of 512-byte segments", 1, q8_512.startup_drops),
        Criterion.within("user bytes per packet, MSS 512", SOURCE_USER_BYTES_512, m512.user_bytes_per_packet, 0.01),
        Criterion.within("user bytes per packet, MSS 246", SOURCE_USER_BYTES_246, m246.user_bytes_per_packet, 0.01),
        Criterion.at_most(
            f"sweep peaks: best MSS of each of {teeth} teeth below 210 + 230n (bytes)", 10, worst_peak, source=0
        ),
    ]


# Why the criteria that fail do (REPORT.md and REPORT.html show it under each failing one).
GAP_ANCHOR = "open-gap-what-does-not-match-and-why"
FAILURES = {
    "throughput ratio 512/246": Analysis(
        "Crowcroft's two transfers kept the same data packet rate, so his ratio is about that of user bytes per "
        "packet; with the 8-packet queue both transfers here keep nearly the same rate too (about 8.2 data "
        "packets a second), while with a 16-packet queue the 16 KB window of 246-byte segments overruns it and "
        "pays for it in slow starts (ratios 1.70-1.90).",
        GAP_ANCHOR,
    ),
    "throughput, 16 KB window, MSS 246 (KB/s)": Analysis(
        "Both transfers run at about 8.2 data packets a second, not the calibrated 9.1: at the calibrated packet "
        "rate the 4 KB window of 512-byte segments overruns the 8-packet queue every 19 s or so, so the "
        "calibration's fixed-point steps end below the target, and the 246-byte transfer, with 10 start-up "
        "losses and 4 more later, delivers 123 user bytes per packet at that rate.",
        GAP_ANCHOR,
    ),
}

# Every bottleneck model the email leaves open: echo path or not, queue limit 8 or 16.
MODELS = [(echo, limit) for echo in (True, False) for limit in (8, 16)]


def model_row(q: Params, a: Measured, b: Measured) -> dict:
    """A calibrated model's 512- and 246-byte runs (the 246-byte throughput and the ratio are
    predictions)."""
    return {
        "echo": q.echo,
        "queue_limit": q.queue_limit,
        "packet_rate": q.packet_rate,
        "throughput_512_kbps": a.throughput_kbps,
        "throughput_246_kbps": b.throughput_kbps,
        "ratio": a.throughput_kbps / b.throughput_kbps,
        "startup_drops_512": a.startup_drops,
        "startup_drops_246": b.startup_drops,
        "timeouts_512": a.timeouts,
        "timeouts_246": b.timeouts,
    }


def plot(out: Path, runs: dict[str, Results], sweep: list[dict], study: dict) -> list[str]:
    from quench.plot import time_sequence

    figures = Figures(out, dpi=120)
    with figures.new("time_sequence.png", len(runs), 1, figsize=(9, 3.2 * len(runs))) as (fig, axes):
        for ax, (label, res) in zip(np.atleast_1d(axes), runs.items()):
            time_sequence(res, res.flows["name"].iloc[0], ax=ax)
            ax.set_title(f"time-sequence, {label}")

    with figures.new("mss_sweep.png", figsize=(9, 4)) as (fig, ax):
        mss = [r["mss"] for r in sweep]
        ax.plot(mss, [r["throughput_kbps"] for r in sweep], ".-", lw=0.8, label="quench throughput (KB/s)")
        ax2 = ax.twinx()
        model = [r["model_user_bytes_per_packet"] for r in sweep]
        ax2.plot(mss, model, color="tab:gray", lw=0.8, label="user bytes/packet (email)")
        for n in range(4):
            ax.axvline(210 + 230 * n, color="tab:red", ls=":", lw=0.8)
        ax.set(
            xlabel="MSS (bytes)",
            ylabel="throughput (KB/s)",
            title="MSS sweep, 16 KB window, no overflow; dotted: 210 + 230n",
        )
        ax2.set_ylabel("user bytes per packet")
        ax.legend(loc="lower right", fontsize="small")

    with figures.new("loss_optimal_mss.png", figsize=(7, 4)) as (fig, ax):
        for mtu in sorted({r["mtu"] for r in study["analytic"]}):
            rows = [r for r in study["analytic"] if r["mtu"] == mtu]
            ax.plot([r["loss"] for r in rows], [r["best_mss"] for r in rows], "o-", label=f"model, MTU {mtu}")
        for r in study["simulated"]:
            ax.plot(r["loss"], r["best_mss"], "k*", ms=10)
        ax.plot([], [], "k*", label="quench (best of a sweep)")
        ax.set(
            xlabel="fragment loss probability p",
            ylabel="loss-optimal MSS (bytes)",
            title="loss-optimal MSS vs MTU and p",
        )
        ax.legend(fontsize="small")
    return figures.names


def comparison_table(m512: Measured, m246: Measured, matrix: list[dict]) -> str:
    rows = [
        ("", "email (Crowcroft's test)", "quench"),
        (
            "user bytes per packet, 512 / 246",
            "170 / 123",
            f"{m512.user_bytes_per_packet:.1f} / {m246.user_bytes_per_packet:.1f}",
        ),
        ("throughput 4 KB / 512 (KB/s)", "1.54", f"{m512.throughput_kbps:.3f}"),
        ("throughput 16 KB / 246 (KB/s)", "1.13", f"{m246.throughput_kbps:.3f}"),
        ("ratio", "1.36", f"{m512.throughput_kbps / m246.throughput_kbps:.3f}"),
        ("losses during start-up, 512 / 246", "1 / 4", f"{m512.startup_drops} / {m246.startup_drops}"),
        ("timeouts, 512 / 246", "-", f"{m512.timeouts} / {m246.timeouts}"),
        (
            "data packets/s over the transfer",
            "9.0 / 9.2",
            f"{m512.data_packets_per_s:.2f} / {m246.data_packets_per_s:.2f}",
        ),
    ]
    lines = [text_table(rows), "", "bottleneck models (each calibrated to 9.1 data packets/s on the 512-byte case):"]
    for r in matrix:
        lines.append(
            f"  echo={r['echo']!s:5} queue={r['queue_limit']:2}  rate {r['packet_rate']:5.2f} pkt/s  "
            f"512: {r['throughput_512_kbps']:.3f}  246: {r['throughput_246_kbps']:.3f} KB/s  ratio {r['ratio']:.3f}  "
            f"start-up drops {r['startup_drops_512']}/{r['startup_drops_246']}"
        )
    return "\n".join(lines)


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    out = output_folder(out)
    p = Params(seed=seed)
    # The experiment's own calibration, then each model's: all independent of each other.
    p, *models = calibrate([p] + [dataclasses.replace(p, echo=e, queue_limit=limit) for e, limit in MODELS])
    (res512, res246, q8), by_model, by_mss, lossy = run_grid(
        [run(p, CASE_512, keep_measured=False), run(p, CASE_246, keep_measured=False), run(p, CASE_512)],
        [run(q, case) for q in models for case in (CASE_512, CASE_246)],
        mss_sweep_runs(p, quick),
        [lossy_run(p, mtu, loss, mss) for mtu, loss, mss in lossy_sweep(quick)],
    )
    m512, m246 = measure(res512, p, CASE_512), measure(res246, p, CASE_246)
    res512.save(out / "mss512", plots=False)
    res246.save(out / "mss246", plots=False)
    matrix = [model_row(q, a, b) for q, a, b in zip(models, by_model[::2], by_model[1::2])]
    sweep = mss_sweep(p, by_mss)
    study = loss_optimal_study(quick, lossy)
    plots = plot(out, {"4 KB window, MSS 512": res512, "16 KB window, MSS 246": res246}, sweep, study)
    return report(
        out,
        NAME,
        criteria(m512, m246, q8, p, sweep),
        [comparison_table(m512, m246, matrix)],
        seed=seed,
        parameters=dataclasses.asdict(p),
        quick=quick,
        measured={
            "mss512": dataclasses.asdict(m512),
            "mss246": dataclasses.asdict(m246),
            "queue8_mss512": dataclasses.asdict(q8),
        },
        models=matrix,
        mss_sweep=sweep,
        loss_optimal=study,
        plots=plots,
    )
