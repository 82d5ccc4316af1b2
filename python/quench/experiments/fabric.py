"""fabric — three datacenter results on quench's generated fabrics (docs/reproductions.md,
"fabric").

1. TCP incast (Vasudevan et al., "Safe and effective fine-grained TCP retransmissions for
   datacenter communication", SIGCOMM 2009): a client reads a 1 MB block striped over N
   servers behind one switch port with a shallow buffer. With a 200 ms minimum RTO a single
   timeout idles the link for 200 ms and goodput collapses as N grows; with a 1 ms minimum it
   does not. DCTCP over a step marker (Alizadeh et al., SIGCOMM 2010: incast) keeps the
   queue short and so rides out more senders than drop-tail TCP with the same 200 ms RTO.
2. ECMP collisions (Raiciu et al., "Improving datacenter performance and robustness with
   multipath TCP", SIGCOMM 2011): a permutation of long TCP flows on a k = 8 fat-tree
   (k = 4 in quick mode). Hashing each flow onto one path makes flows collide on links while
   others idle, so aggregate throughput stays well below the non-blocking ideal; spreading
   every flow over all equal-cost paths (here by spraying its packets) comes near it, and so
   does the paper's own remedy, multipath TCP with 8 subflows and coupled (LIA) congestion
   control, each subflow hashed by ECMP on its own.
3. Web-search traffic (DCTCP's workload) at loads 0.3-0.8 on a leaf-spine, with drop-tail
   CUBIC, DCTCP over the step marker, FQ-CoDel, and HPCC with in-band telemetry over drop-tail
   (Li et al., SIGCOMM 2019): FCT slowdown by flow size (the flows table's `slowdown`,
   `Results.fct`). Short flows wait behind the long flows' standing queue in a drop-tail
   buffer; DCTCP keeps the queue near K, FQ-CoDel serves them from their own queue, and HPCC
   holds every link below full with its queue near zero, so each cuts the short flows' tail
   slowdown (DCTCP's benchmark traffic; pFabric's and HPCC's slowdown figures use the same
   measure). The datacenter transports on the same fabric and loads: Swift (Kumar et al.,
   SIGCOMM 2020) over drop-tail, DCQCN and HPCC over lossless links (PFC, IEEE 802.1Qbb), and
   NDP over trimming switches (Handley et al., SIGCOMM 2017), with each one's queue occupancy
   and PFC pause time. HPCC's evaluation (Li et al., section 5) finds DCQCN's queues and PFC
   pauses large where HPCC's are near zero; under PFC the switches lose nothing; NDP, which
   never loses a packet's header, and Swift keep short flows' tail slowdown below drop-tail
   TCP's.

What the papers leave open, and what we chose (each a field of `Params`):
- TCP: the linux profile (CUBIC, SACK, RACK-TLP, timestamps, 40 ms delayed ACKs), pinned,
  with an initial window of 3 segments in the incast (RFC 3390's, the Linux of 2009-2010
  both papers ran; Linux's 10 of RFC 6928 came in 2011) and 10 elsewhere.
- Incast: 1 Gb/s links of 25 us each way, the client's port 64 packets of buffer (the
  shallow per-port buffers both papers name), the 1 MB block of DCTCP's incast test split
  evenly over the senders; one synchronised read, goodput = block / time of the last byte.
- Marking threshold K = 20 packets, DCTCP's setting for its 1 Gb/s switches (K = 65 at
  10 Gb/s, the step qdisc's default).
- Permutation: 1 Gb/s links of 10 us, 100-packet drop-tail buffers, the engine's random
  derangement from the seed, duplicate-ACK loss detection with a threshold of 30 (Linux's
  adaptive reordering threshold, which quench does not model) and a 1 ms minimum RTO
  (`PERMUTATION_TCP`); the
  non-blocking ideal is every host at its line rate less the headers (1448 payload bytes in
  1500).
- Web search: a leaf-spine of 1 Gb/s links of 10 us, full bisection, ECMP, 100-packet
  buffers; Poisson arrivals between random hosts at the load, for `ws_arrivals_s`, then a
  drain; FQ-CoDel at RFC 8290's defaults with CUBIC; HPCC at its defaults with an ACK per
  packet, its base RTT each flow's own idle round trip. HPCC and DCQCN run on RDMA NICs
  (`RDMA_TCP`): an ACK per packet, and a flow's next packet taken only when the NIC's port can
  send it (`tcp.small_queues = "nic"`), so one packet per flow waits in a host.
- Lossless runs: PFC with xoff `pfc_xoff` (6 KB, four packets) per ingress port, so that the
  eleven ingress ports of a leaf, each holding at most xoff and the headroom of a 1 Gb/s,
  10 us link (about 5.6 KB), fit in a port's 150 KB (`ws_buffer_bytes`: 100 packets of 1,500
  bytes, in bytes, since PFC bounds bytes and small ACKs would fill a bound in packets). The
  hosts' own (NIC) queues hold `lossless_buffer` (10,000 packets, 15 MB) there, so that a
  paused NIC holds what its transports send meanwhile: a packet per flow and the ACKs.
  DCQCN's switches mark by the step marker at the paper's Kmin, 5 KB (`dcqcn_threshold`;
  Kmin = Kmax, Pmax = 1: the limit of its RED-like marking), below xoff so that ECN acts
  before PFC, as the paper requires; rather than by RED's ramp, which drops the non-ECT ACKs
  it would mark (a RoCE fabric carries them in another priority class). DCQCN's rate steps
  and floor scaled to 1 Gb/s (`DCQCN_AT_1G`).
- Swift over drop-tail with its targets scaled to 1 Gb/s (`SWIFT_AT_1G`), an ACK per packet
  and an RTT sample per ACK.
- NDP over the trimming queue at htsim's defaults (8-packet data queue).
- Queue occupancy: each switch egress port's time-averaged backlog, averaged over the ports,
  and the largest backlog any port reached (hosts' NIC queues are not counted).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from quench import dist
from quench.experiments.common import Analysis, Criterion, Figures, Run, report, run_grid, text_table
from quench.fct import fct_slowdown
from quench.network import Network, droptail, fq_codel, step, trim
from quench.results import Results
from quench.units import parse_bytes, parse_rate

NAME = "fabric"
# The TCP every flow runs, pinned (the engine's default profile could change).
TCP_PROFILE = "linux"
# Segment payload with the timestamp option (mss 1460 less 12) and every segment's wire size.
PAYLOAD_BYTES = 1448
WIRE_BYTES = 1500
# Criteria. Vasudevan et al.: with a 200 ms RTO goodput falls by an order of magnitude.
COLLAPSED = 0.25  # goodput below this share of the line is a collapse
HELD = 0.5  # and above this share, no collapse
SPRAY_WITHIN = 0.20  # spraying within 20 % of the non-blocking ideal
ECMP_BELOW = 0.70  # ECMP below 70 % of it: hash collisions (Raiciu et al.)
# MPTCP with 8 subflows at least 1.25 times single-path TCP: Raiciu et al. report about 90 %
# of the optimum against about 50 % (a ratio near 1.8) for long runs; these runs of 0.1 s
# (0.5 s on quick mode's k = 4, whose fewer hosts collide less) include the subflows' slow
# starts. On k = 4 the ratio is 1.20 over 0.05 s, 1.25 over 0.1 s, 1.34 over 0.5 s and 1.39
# over 1 s (MPTCP at 0.89 of the ideal there, as the paper's 90 %).
MPTCP_OVER_TCP = 1.25
SHORT_BYTES = 100e3  # pFabric's and DCTCP's short flows: (0, 100KB]
HPCC_PAUSES_BELOW = 0.5  # HPCC over PFC pauses links at most half as long as DCQCN does
RTO_LONG = "200ms"  # Linux's TCP_RTO_MIN
RTO_SHORT = "1ms"  # a fine-grained minimum, as Vasudevan et al. propose
# The permutation's loss detection, for both policies: RFC 6675's duplicate ACKs with a
# threshold of 30. Linux raises its threshold when it sees reordering (tp->reordering, up to
# net.ipv4.tcp_max_reordering = 300) and widens RACK's window on DSACKs; quench's TCP does
# neither (rack.rs), so over sprayed paths RACK's fixed min_RTT/4 window takes the paths'
# queueing differences for losses (61 % of the ideal at k = 4), and so does a threshold of
# 10 at k = 8 (16 paths: 3256 fast retransmits in 0.2 s, 80 % of the ideal, against 458
# and 87 % with 30).
# And a 1 ms minimum RTO (Vasudevan et al.'s): the run is shorter than Linux's 200 ms, so a
# flow that times out would idle to its end, and the figure would be of timeouts, not of
# collisions.
PERMUTATION_TCP = {"loss_detection": "dupack", "dupack_threshold": 30, "rto": {"min": RTO_SHORT}}

# The permutation's configurations: single-path TCP hashed by ECMP, sprayed per packet, and
# MPTCP over ECMP.
PERM_CONFIGS = ("ecmp", "spray", "mptcp")

# Where criteria fail and why (the report prints each beside its failure; the evidence is in
# docs/reproductions.md, fabric's "Findings and gaps").
FINDINGS_ANCHOR = "findings-and-gaps"
_NDP_TAIL = Analysis(
    "Drop-tail CUBIC's short-flow p99 is its timeouts: where fewer than 1 % of its short flows meet "
    "the 200 ms RTO its tail falls below NDP's, whose senders start every flow with a full window at "
    "line rate over ECMP-hashed paths (NDP's design sprays them).",
    FINDINGS_ANCHOR,
)
FAILURES = {
    "incast, 200 ms RTO: goodput share of line at 32 senders": Analysis(
        "One synchronised read collapses exactly when one of its senders is left to its 200 ms RTO, which "
        "the fan-in alone does not decide: the full sweep collapses at 8, 16, 24, 40 and 48 senders and "
        "not at 12 or 32.",
        FINDINGS_ANCHOR,
    ),
    # The quick grid's highest load (the report keys analyses by the quick run's criteria).
    "web search at load 0.8: NDP's short-flow p99 slowdown / drop-tail CUBIC's": _NDP_TAIL,
}

INCAST_CONFIGS = {
    "tcp_rto200ms": ("cubic", RTO_LONG, "droptail"),
    "tcp_rto1ms": ("cubic", RTO_SHORT, "droptail"),
    "dctcp_rto200ms": ("dctcp", RTO_LONG, "step"),
}
# HPCC acknowledges every packet, as its NIC does (HPCC's simulator: L2_ACK_INTERVAL 1): under
# a two-segment window a delayed ACK would wait out its 40 ms timer. It starts at line rate (no
# initial window of its own here).
PER_PACKET_ACKS = {"delayed_ack": {"enabled": False}}
# An RDMA NIC (HPCC, DCQCN) acknowledges every packet and takes a queue pair's next packet only
# when its port can send it: one packet of a flow waits in the host at a time.
RDMA_TCP = {**PER_PACKET_ACKS, "small_queues": "nic"}
# Swift needs an RTT sample per ACK, and acknowledges every packet here too (its windows fall
# below one packet).
SWIFT_TCP = {**PER_PACKET_ACKS, "rtt_sampling": "every_ack"}
# Swift's targets (htsim's, for 100 Gb/s: a 20 us base, per hop base/6.55, a flow-scaling
# range of 5 x base) are under these links' idle round trip (about 130 us on the longest path:
# 80 us of propagation and four 12 us serializations at 1 Gb/s), so every flow would sit above
# its target and shrink to the floor. The base here is that round trip and about two packet
# times, 150 us, and the others follow from it by htsim's relations.
SWIFT_AT_1G = {"base_target": "150us", "per_hop": "22.9us", "fs_range": "750us"}
# Each web-search configuration: controller ("ndp": NDP's own transport), switch queue,
# TCP keys, and whether the links are lossless (PFC).
WS_CONFIGS = {
    "droptail_cubic": ("cubic", "droptail", {}, False),
    "dctcp_step": ("dctcp", "step", {}, False),
    "fq_codel": ("cubic", "fq_codel", {}, False),
    "hpcc": ("hpcc", "droptail", RDMA_TCP, False),
    "swift": ("swift", "droptail", SWIFT_TCP, False),
    "hpcc_pfc": ("hpcc", "droptail", RDMA_TCP, True),
    "dcqcn_pfc": ("dcqcn", "step", RDMA_TCP, True),
    "ndp_trim": ("ndp", "trim", {}, False),
}

# The configurations the web-search criteria set against drop-tail CUBIC: label and source.
WS_COMPARED = {
    "dctcp_step": ("DCTCP", "Alizadeh et al. 2010"),
    "fq_codel": ("FQ-CoDel", "RFC 8290"),
    "hpcc": ("HPCC", "Li et al. 2019"),
    "swift": ("Swift", "Kumar et al. 2020"),
    "ndp_trim": ("NDP", "Handley et al. 2017"),
}
# DCQCN's rate steps and floor (the HPCC authors' mix/config.txt: 50 and 100 Mb/s, a floor of
# 100 Mb/s, for their 100 Gb/s fabric) scaled to these 1 Gb/s links: at 100 Mb/s each, ten
# flows of one host at their floor would already ask for its whole link.
DCQCN_AT_1G = {"rate_ai": "0.5Mbps", "rate_hai": "1Mbps", "min_rate": "1Mbps"}
# The lossless configurations (PFC), where neither the switches nor the hosts' NICs may drop.
WS_LOSSLESS = [c for c, (_, _, _, lossless) in WS_CONFIGS.items() if lossless]


@dataclass
class Params:
    seed: int = 1
    # incast
    senders: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32, 40, 48)
    block: str = "1MB"
    incast_rate: str = "1Gbps"
    incast_delay: str = "25us"
    incast_buffer: str = "64p"
    incast_initial_window: int = 3
    incast_duration_s: float = 3.0
    marking_threshold: str = "20p"
    # permutation
    k: int = 8
    perm_rate: str = "1Gbps"
    perm_delay: str = "10us"
    perm_buffer: str = "100p"
    perm_duration_s: float = 0.1
    mptcp_subflows: int = 8
    # web search
    hosts_per_leaf: int = 8
    leaves: int = 4
    spines: int = 4
    ws_rate: str = "1Gbps"
    ws_delay: str = "10us"
    ws_buffer: str = "100p"
    ws_buffer_bytes: str = "150KB"
    loads: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
    ws_arrivals_s: float = 1.0
    ws_drain_s: float = 0.5
    pfc_xoff: str = "6KB"
    dcqcn_threshold: str = "5KB"
    lossless_buffer: str = "10000p,15MB"


def quick_params(seed: int) -> Params:
    return Params(
        seed=seed,
        senders=(1, 4, 8, 16, 32),
        k=4,
        perm_duration_s=0.5,
        hosts_per_leaf=4,
        leaves=2,
        spines=2,
        loads=(0.3, 0.6, 0.8),
        ws_arrivals_s=0.5,
    )


def tcp_flow(cc: str, initial_window: int | None, rto_min: str | None = None, **tcp: object) -> dict:
    """A TCP flow of the pinned profile with `tcp` keys over it; DCTCP negotiates ECN there by
    itself. `initial_window` None: the controller's own (HPCC's line rate)."""
    tcp = {"profile": TCP_PROFILE, **({"rto": {"min": rto_min}} if rto_min else {}), **tcp}
    window = {} if initial_window is None else {"initial_window": initial_window}
    return {"kind": "tcp", "cc": {"kind": cc, **window}, "tcp": tcp}


def queue(kind: str, buffer: str, threshold: str) -> dict:
    if kind == "step":
        return step(threshold, buffer)
    if kind == "trim":
        return trim()
    return fq_codel() if kind == "fq_codel" else droptail(buffer)


def quiet(net: Network) -> Network:
    """Only the summary tables: no time series."""
    return net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False)


# ---------------------------------------------------------------------------------------
# 1. Incast


def incast_network(p: Params, config: str, n: int) -> Network:
    cc, rto_min, kind = INCAST_CONFIGS[config]
    net = Network(seed=p.seed, name=f"{NAME}-incast-{config}-{n}")
    servers = [f"s{i}" for i in range(n)]
    net.hosts("client", *servers).routers("tor")
    port = queue(kind, p.incast_buffer, p.marking_threshold)
    net.link("tor", "client", rate=p.incast_rate, delay=p.incast_delay, qdisc=port)
    flow = tcp_flow(cc, p.incast_initial_window, rto_min)
    share = parse_bytes(p.block) // n
    for s in servers:
        net.link(s, "tor", rate=p.incast_rate, delay=p.incast_delay, qdisc=droptail(p.incast_buffer))
        net.tcp(s, "client", cc=flow["cc"], bytes=share, name=f"read.{s}", **flow["tcp"])
    return quiet(net)


def incast_goodput(res: Results, p: Params) -> dict:
    """The read's goodput: the block over the time its last byte took, or what arrived over the
    whole run if some server never finished."""
    f = res.flows
    done = f["completion_s"].notna().all()
    elapsed = float(f["completion_s"].max()) if done else p.incast_duration_s
    bits = float(f["bytes_delivered"].sum()) * 8
    return {
        "goodput_bps": bits / elapsed,
        "completed": bool(done),
        "timeouts": int(f["timeouts"].sum()),
        "drops": int(res.links["dropped_packets"].sum()),
    }


def collapse_point(senders: tuple[int, ...], share: list[float]) -> float:
    """The fewest senders whose goodput falls under HELD of the line (inf: never)."""
    return next((n for n, s in zip(senders, share) if s < HELD), math.inf)


# ---------------------------------------------------------------------------------------
# 2. Permutation


def permutation_network(p: Params, config: str) -> Network:
    """The permutation under `config`: "ecmp" or "spray" with single-path TCP, or "mptcp"
    (Raiciu et al.'s remedy: `mptcp_subflows` subflows per connection, LIA coupling, over
    ECMP, each subflow hashed on its own). Spraying is `spray_flow`, each flow cycling through
    the next hops in an order of its own (htsim's `-strat perm`): a switch's one round robin
    shared by every flow would, in a permutation's lockstep, hand each flow the same next
    hop at every turn (simultaneous arrivals take their turns in a fixed order)."""
    multipath = {"ecmp": "ecmp", "spray": "spray_flow", "mptcp": "ecmp"}[config]
    net = Network(seed=p.seed, name=f"{NAME}-permutation-{config}")
    net.fat_tree(p.k, p.perm_rate, p.perm_delay, qdisc=droptail(p.perm_buffer), multipath=multipath)
    flow = tcp_flow("cubic", 10, **PERMUTATION_TCP)
    if config == "mptcp":
        flow = {"kind": "mptcp", "subflows": p.mptcp_subflows, "coupling": "lia", "tcp": flow["tcp"]}
    # Each host one long flow, never finished within the run.
    net.workload(matrix="permutation", size="10GB", flow=flow, name="perm")
    return quiet(net)


def permutation_throughput(res: Results) -> dict:
    g = res.flows["goodput_bps"].to_numpy(dtype=float)
    return {"aggregate_bps": float(g.sum()), "flows": len(g), "min_flow_bps": float(g.min())}


def ideal_aggregate_bps(p: Params) -> float:
    """Every host at its line rate less the headers: a non-blocking fabric (full bisection)."""
    return p.k**3 / 4 * parse_rate(p.perm_rate) * PAYLOAD_BYTES / WIRE_BYTES


# ---------------------------------------------------------------------------------------
# 3. Web search


def websearch_network(p: Params, config: str, load: float) -> Network:
    cc, kind, tcp, lossless = WS_CONFIGS[config]
    net = Network(seed=p.seed, name=f"{NAME}-websearch-{config}-{load:g}")
    threshold = p.dcqcn_threshold if cc == "dcqcn" else p.marking_threshold
    # PFC bounds the bytes a switch holds, so its ports' buffers are in bytes (as switches'
    # are): the same 100 packets of 1,500 bytes, with no packet bound that small ACKs could fill.
    port = queue(kind, p.ws_buffer_bytes if lossless else p.ws_buffer, threshold)
    # Under PFC a paused host's NIC holds what its transport sends; the switches keep theirs.
    access = {"qdisc": queue(kind, p.lossless_buffer, threshold), "down_qdisc": port} if lossless else None
    net.leaf_spine(
        p.hosts_per_leaf, p.leaves, p.spines, p.ws_rate, p.ws_delay, qdisc=port, multipath="ecmp", access=access
    )
    if lossless:
        net.pfc(p.pfc_xoff)
    if cc == "ndp":
        flow: dict = {"kind": "ndp"}
    else:
        # HPCC and DCQCN start at line rate: no initial window of their own here.
        flow = tcp_flow(cc, None if cc in ("hpcc", "dcqcn") else 10, **tcp)
        if cc == "dcqcn":
            flow["cc"] |= DCQCN_AT_1G
        if cc == "swift":
            flow["cc"] |= SWIFT_AT_1G
    net.workload(matrix="all_to_all", load=load, size=dist.websearch(), flow=flow, stop=p.ws_arrivals_s, name="ws")
    return quiet(net)


FLOW_COLUMNS = ["bytes_requested", "start_s", "response_time_s", "ideal_fct_s", "slowdown", "timeouts"]


@dataclass
class WebSearchRun:
    """What a web-search run keeps: the flows table's columns the slowdown needs, and the
    switches' queues and pauses (kept small to cross processes)."""

    flows: pd.DataFrame
    # Mean over the switches' egress ports of each one's time-averaged backlog, bytes.
    mean_queue_bytes: float
    # The largest backlog any switch port reached, bytes.
    max_queue_bytes: float
    # Time paused by PFC, summed over every link, seconds (0 without PFC).
    pfc_paused_s: float
    # Packets dropped at the switches' ports, and at the hosts' own (NIC) queues.
    switch_drops: int
    host_drops: int


def websearch_run(res: Results) -> WebSearchRun:
    links = res.links
    switches = res.nodes.loc[res.nodes["kind"] == "router", "name"]
    switch_ports = links[links["from"].isin(switches)]
    paused = float(links["pfc_paused_s"].sum()) if "pfc_paused_s" in links else 0.0
    return WebSearchRun(
        flows=res.flows[FLOW_COLUMNS].copy(),
        mean_queue_bytes=float(switch_ports["mean_backlog_bytes"].mean()),
        max_queue_bytes=float(switch_ports["max_backlog_bytes"].max()),
        pfc_paused_s=paused,
        switch_drops=int(switch_ports["dropped_packets"].sum()),
        host_drops=int(links["dropped_packets"].sum() - switch_ports["dropped_packets"].sum()),
    )


def short_p99(flows: pd.DataFrame) -> float:
    done = flows[(flows["bytes_requested"] <= SHORT_BYTES) & flows["slowdown"].notna()]
    return float(np.percentile(done["slowdown"], 99)) if len(done) else math.nan


# ---------------------------------------------------------------------------------------


def runs(p: Params) -> tuple[list[Run], list[Run], list[Run]]:
    incast = [
        Run.of(incast_network(p, c, n), p.incast_duration_s, functools.partial(incast_goodput, p=p))
        for c in INCAST_CONFIGS
        for n in p.senders
    ]
    perm = [Run.of(permutation_network(p, m), p.perm_duration_s, permutation_throughput) for m in PERM_CONFIGS]
    ws = [
        Run.of(websearch_network(p, c, load), p.ws_arrivals_s + p.ws_drain_s, websearch_run)
        for c in WS_CONFIGS
        for load in p.loads
    ]
    return incast, perm, ws


def reproduce(out: Path, quick: bool = False, seed: int = 1) -> dict:
    p = quick_params(seed) if quick else Params(seed=seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    incast_runs, perm_runs, ws_runs = runs(p)
    incast_done, perm_done, ws_done = run_grid(incast_runs, perm_runs, ws_runs)
    line = parse_rate(p.incast_rate)
    incast = {}
    for i, c in enumerate(INCAST_CONFIGS):
        rows = incast_done[i * len(p.senders) : (i + 1) * len(p.senders)]
        incast[c] = [{"senders": n, "share_of_line": r["goodput_bps"] / line, **r} for n, r in zip(p.senders, rows)]
    perm = {m: r for m, r in zip(PERM_CONFIGS, perm_done)}
    ideal = ideal_aggregate_bps(p)
    for r in perm.values():
        r["share_of_ideal"] = r["aggregate_bps"] / ideal
    websearch = websearch_summary(p, ws_done)
    plots = plot(out, p, incast, perm, ideal, ws_done)
    measured = {"incast": incast, "permutation": perm, "ideal_aggregate_bps": ideal, "websearch": websearch}
    return report(
        out,
        NAME,
        criteria(p, incast, perm, websearch),
        tables(p, incast, perm, websearch),
        seed=p.seed,
        parameters=dataclasses.asdict(p),
        quick=quick,
        measured=measured,
        plots=plots,
    )


def websearch_summary(p: Params, done: list[WebSearchRun]) -> dict:
    """Per configuration and load: the slowdown table by size (Results.fct's buckets), the
    short flows' p99, how many flows did not complete, the switches' queues, PFC's pause time
    and the drops."""
    out: dict = {}
    for i, c in enumerate(WS_CONFIGS):
        out[c] = []
        for j, load in enumerate(p.loads):
            run = done[i * len(p.loads) + j]
            flows = run.flows
            table = fct_slowdown(flows)
            out[c].append(
                {
                    "load": load,
                    "flows": len(flows),
                    "not_completed": int(flows["response_time_s"].isna().sum()),
                    "timeouts": int(flows["timeouts"].sum()),
                    "short_p99": short_p99(flows),
                    "by_size": table.reset_index().to_dict(orient="records"),
                    "mean_queue_bytes": run.mean_queue_bytes,
                    "max_queue_bytes": run.max_queue_bytes,
                    "pfc_paused_s": run.pfc_paused_s,
                    "switch_drops": run.switch_drops,
                    "host_drops": run.host_drops,
                }
            )
    return out


def criteria(p: Params, incast: dict, perm: dict, ws: dict) -> list[Criterion]:
    share = {c: [r["share_of_line"] for r in rows] for c, rows in incast.items()}
    most = p.senders[-1]
    # A configuration that holds at every N tested collapses beyond the grid: its largest N is
    # then a lower bound of its collapse point, and the ratio a lower bound, finite as every
    # criterion's value must be.
    tcp_collapse = min(collapse_point(p.senders, share["tcp_rto200ms"]), most)
    dctcp_collapse = min(collapse_point(p.senders, share["dctcp_rto200ms"]), most)
    out = [
        Criterion.at_most(
            f"incast, 200 ms RTO: goodput share of line at {most} senders",
            COLLAPSED,
            share["tcp_rto200ms"][-1],
            source="collapse (Vasudevan et al. 2009)",
        ),
        Criterion.at_least(
            f"incast, 1 ms RTO: goodput share of line at {most} senders",
            HELD,
            share["tcp_rto1ms"][-1],
            source="no collapse (Vasudevan et al. 2009)",
        ),
        Criterion.at_least(
            "incast, 200 ms RTO: DCTCP's collapse point over drop-tail TCP's (senders)",
            1.0,
            dctcp_collapse / tcp_collapse,
            source="DCTCP later (Alizadeh et al. 2010)",
        ),
        Criterion.at_least(
            "permutation: spraying's share of the non-blocking ideal",
            1 - SPRAY_WITHIN,
            perm["spray"]["share_of_ideal"],
            source="near the ideal (Raiciu et al. 2011)",
        ),
        Criterion.at_most(
            "permutation: ECMP's share of the non-blocking ideal",
            ECMP_BELOW,
            perm["ecmp"]["share_of_ideal"],
            source="collisions (Raiciu et al. 2011)",
        ),
        Criterion.at_least(
            f"permutation: MPTCP's ({p.mptcp_subflows} subflows, LIA) aggregate / single-path TCP's under ECMP",
            MPTCP_OVER_TCP,
            perm["mptcp"]["aggregate_bps"] / perm["ecmp"]["aggregate_bps"],
            source="MPTCP recovers the collisions (Raiciu et al. 2011)",
        ),
    ]
    for j, load in enumerate(p.loads):
        base = ws["droptail_cubic"][j]["short_p99"]
        for c, (label, paper) in WS_COMPARED.items():
            out.append(
                Criterion.at_most(
                    f"web search at load {load:g}: {label}'s short-flow p99 slowdown / drop-tail CUBIC's",
                    1.0,
                    ws[c][j]["short_p99"] / base,
                    source=f"lower ({paper})",
                )
            )
        for c in WS_LOSSLESS:
            out.append(
                Criterion.at_most(
                    f"web search at load {load:g}: {c}'s drops at the switches and the hosts' NICs",
                    0,
                    ws[c][j]["switch_drops"] + ws[c][j]["host_drops"],
                    source="lossless (IEEE 802.1Qbb)",
                )
            )
        out.append(
            Criterion.at_most(
                f"web search at load {load:g}: HPCC's PFC pause time / DCQCN's over PFC",
                HPCC_PAUSES_BELOW,
                ws["hpcc_pfc"][j]["pfc_paused_s"] / ws["dcqcn_pfc"][j]["pfc_paused_s"],
                source="fewer pauses (Li et al. 2019, section 5)",
            )
        )
    return out


def tables(p: Params, incast: dict, perm: dict, ws: dict) -> list[str]:
    rows = [("senders", *INCAST_CONFIGS)]
    for i, n in enumerate(p.senders):
        rows.append((str(n), *(f"{incast[c][i]['share_of_line']:.3f}" for c in INCAST_CONFIGS)))
    t1 = text_table(
        rows, f"incast: goodput / line rate, {p.block} block over N senders, {p.incast_buffer} port", right=[0, 1, 2, 3]
    )
    rows = [("configuration", "aggregate (Gb/s)", "share of ideal", "slowest flow (Mb/s)")]
    for m, r in perm.items():
        rows.append(
            (m, f"{r['aggregate_bps'] / 1e9:.2f}", f"{r['share_of_ideal']:.3f}", f"{r['min_flow_bps'] / 1e6:.0f}")
        )
    t2 = text_table(rows, f"permutation on a k = {p.k} fat-tree ({p.k**3 // 4} hosts)")
    rows = [("load", "config", *(b["bucket"] for b in ws["droptail_cubic"][0]["by_size"]), "not done")]
    for j, load in enumerate(p.loads):
        for c in WS_CONFIGS:
            r = ws[c][j]
            cells = (f"{b['p50']:.1f}/{b['p99']:.1f}" for b in r["by_size"])
            rows.append((f"{load:g}", c, *cells, str(r["not_completed"])))
    hosts = p.hosts_per_leaf * p.leaves
    t3 = text_table(rows, f"web search on a {hosts}-host leaf-spine: FCT slowdown p50/p99 by size")
    rows = [("load", "config", "mean queue (KB)", "max queue (KB)", "PFC paused (ms)", "drops sw/host", "timeouts")]
    for j, load in enumerate(p.loads):
        for c in WS_CONFIGS:
            r = ws[c][j]
            rows.append(
                (
                    f"{load:g}",
                    c,
                    f"{r['mean_queue_bytes'] / 1e3:.2f}",
                    f"{r['max_queue_bytes'] / 1e3:.1f}",
                    f"{r['pfc_paused_s'] * 1e3:.2f}",
                    f"{r['switch_drops']}/{r['host_drops']}",
                    str(r["timeouts"]),
                )
            )
    t4 = text_table(rows, "web search: switch queues (mean over ports), PFC pause time over all links, drops")
    return [t1, t2, t3, t4]


def plot(out: Path, p: Params, incast: dict, perm: dict, ideal: float, ws: list[WebSearchRun]) -> list[str]:
    from quench import plot as qplot

    figures = Figures(out, dpi=110)
    with figures.new("incast.png", 1, 1, figsize=(7, 4)) as (fig, ax):
        for c, rows in incast.items():
            ax.plot([r["senders"] for r in rows], [r["goodput_bps"] / 1e6 for r in rows], "o-", label=c)
        ax.set(xlabel="senders", ylabel="goodput (Mb/s)", title=f"incast: {p.block} block, {p.incast_buffer} port")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
    with figures.new("permutation.png", 1, 1, figsize=(6, 4)) as (fig, ax):
        names = list(perm)
        ax.bar(names, [perm[m]["aggregate_bps"] / 1e9 for m in names])
        ax.axhline(ideal / 1e9, ls="--", color="gray", label="non-blocking ideal")
        ax.set(ylabel="aggregate goodput (Gb/s)", title=f"permutation, k = {p.k} fat-tree")
        ax.legend(fontsize="small")
    j = p.loads.index(0.6) if 0.6 in p.loads else len(p.loads) // 2
    with figures.new("slowdown.png", 1, 1, figsize=(8, 5)) as (fig, ax):
        for i, c in enumerate(WS_CONFIGS):
            qplot.fct_slowdown(ws[i * len(p.loads) + j].flows, ax=ax, label=c)
        ax.set_title(f"web search at load {p.loads[j]:g}: FCT slowdown by size")
    return figures.names
