"""MPTCP on a fat-tree permutation, quench beside htsim, 1 to 8 subflows. A benchmark-style
script: it prints tables and checks nothing.

htsim's `htsim_tcp` (datacenter/main_tcp.cpp in Broadcom/csg-htsim) is itself multipath: every
connection is a MultipathTcpSrc (sim/mtcp.cpp) with `-sub N` TcpSrc subflows, each on a path
drawn at random (with replacement) among the pair's equal-cost paths, coupled by its default
algorithm, COUPLED_EPSILON with epsilon 1 (`_e = 1`, whatever the command line says): each ACK
in congestion avoidance adds alpha·MSS²/total to its subflow's window, at most MSS²/cwnd, with
alpha = total·max(cwnd/rtt²)/(Σ cwnd/rtt)² recomputed when a window crosses a packet, and a
loss halves the subflow's own window: RFC 6356's LIA (its `compute_alfa` takes each RTT in
whole milliseconds, at least 1, so on a fabric of microseconds every RTT counts as 1 ms and
alpha is max(cwnd)/total). It opens no more subflows than the pair has paths (`it_sub`: on
k = 4, 4 across pods, 2 within a pod, 1 under one edge switch), so that there `-sub 8` runs what
`-sub 4` does; quench opens every subflow asked for. `--htsim-algo UNCOUPLED` runs its uncoupled
subflows instead (with `--quench-coupling uncoupled`, quench's). The
binary is compare_htsim_fabric.py's (`build_peer_htsim`: run length, seed argument, 10 Gb/s
NIC, `RANDOM_BUFFER`, a line per subflow at the end), run with `-sub N`; its permutation is
htsim's own draw (`ConnectionMatrix::setPermutation`, from `-seed`).

quench runs the same connections (`Network.mptcp`, `coupling = "lia"`, `subflows = N`) on
`fat_tree` with its ECMP hash spreading each subflow by its own five-tuple, so the paths are
drawn independently in both, not the same paths: the comparison is over seeds. Its subflows
are compare_htsim_fabric.py's htsim-like TCP (`profile = "rfc"`, NewReno's rules under LIA,
initial window 10, MSS 1460, no SACK, an ACK per packet, RTO min 250 ms, initial 3 s, a 10 ms
tick). The fabric settings default to what that script found matches htsim's permutation
(docs/validation.md, "Fat-tree permutation against htsim"): htsim's switch queues drop-tail
(`RANDOM_BUFFER` 0; `--htsim-random-band 3` is htsim's own), quench's 7 packets waiting
(htsim's 8 count the one being sent; `--quench-switch-buffer 8`), 10 Gb/s links of 1 µs, and
quench's ACKs on paths of their own, as htsim's reverse route holds only the sender
(`--quench-fabric-acks` sends them through the fabric): each connection's ACKs are pinned
(`reverse_path`) to a chain of seven one-way 320 Gb/s links without delay through routers of
their own (an ACK in 7 ns), longer than any fabric path so that no data takes it (quench routes
by fewest hops, and a host forwards).

Figures, per number of subflows: aggregate throughput (bytes delivered in order, on the wire:
htsim's per subflow summed, quench's per connection × 1500/1460) as a fraction of the
non-blocking ideal (every host at 10 Gb/s), the slowest, median and fastest connection, Jain's
index over connections, data packets dropped (htsim: sent less arrived less queued at the end;
quench: its switch links' drops told apart from ACKs by size), and the connections with two
subflows on one path (htsim's draw; quench's hash is not printed per subflow). `--seeds` runs
each seed and prints the mean. Raiciu et al. (SIGCOMM 2011, figure 2 and section 3) report a k =
8 permutation near the ideal with 8 subflows where single-path TCP loses to ECMP collisions.

Experiment flags, each setting quench one way at a time: `--quench-as-tcp` runs N independent
TCP connections per pair in place of one MPTCP connection (htsim's subflows without a
connection-level sequence); `--quench-cap-subflows` opens no more subflows than the pair has
paths (htsim's `it_sub`); `--quench-rtt-sampling every_ack` times every ACK, retransmissions
included, as htsim's TcpSrc does (it recomputes its RTO, clearing the backoff, on every ACK);
`--quench-newreno-timer slow_but_steady` restarts the timer on every partial ACK, as htsim's
TcpSrc does; `--quench-host-qdisc droptail` makes the host's NIC queue one FIFO (quench's fair
queue classifies by flow id, so one connection's subflows are one flow there, where htsim's
FairPullQueue takes turns between subflows); `--quench-receive-window` bounds the
connection's unacknowledged data (Linux's 4 MiB `tcp_wmem[2]` bounds an MPTCP socket's);
`--quench-no-reinject` turns off the data-level reinjection of a stalled subflow's data;
`--quench-pin-paths` (with `--quench-as-tcp`) puts each TCP connection on the path of htsim's
subflow of its index (the flow key `path`), so that both run the same paths;
`--quench-tick-rule after` fires quench's timers at the first tick after the deadline as
htsim's scanner does; `--quench-abc-limit 1` grows slow start by at most one segment per ACK as
htsim's `inflate_window`; `--quench-jitter 100ns` builds the fabric link by link with every
link's delay drawn per packet, uniform within 1 us +- 100 ns, without reordering, so that no
packet reaches a queue at the instant another ends its transmission. htsim given quench's rules
(compare_htsim_fabric.py's edits of its TcpSrc and switch queues): `--htsim-flight-ssthresh`,
`--htsim-recover-max`, `--htsim-strict-recover`, `--htsim-tick-before`,
`--htsim-timeouts-on-tick` and `--htsim-arrival-first` (a packet that reaches a switch queue at
the instant another ends its transmission finds that one still queued, quench's order of an
instant's events, where htsim's event list runs the end first). `--verbose` prints each
connection's rate and, for both simulators, the subflows' timeouts, how many had none and how
many carried under 1 MB.

    .venv/bin/python benchmarks/compare_htsim_mptcp.py --htsim-src ~/csg-htsim --duration-ms 1000 \
        --seeds 1,2,3
    .venv/bin/python benchmarks/compare_htsim_mptcp.py --htsim-src ~/csg-htsim --duration-ms 1000 \
        --seeds 1,2 --subflows 4 --htsim-algo UNCOUPLED --quench-coupling uncoupled
    .venv/bin/python benchmarks/compare_htsim_mptcp.py --htsim-src ~/csg-htsim --duration-ms 1000 \
        --seeds 2,3 --subflows 4 --htsim-algo UNCOUPLED --quench-as-tcp --quench-cap-subflows
    .venv/bin/python benchmarks/compare_htsim_mptcp.py --htsim-src ~/csg-htsim --duration-ms 1000 \
        --seeds 1,2,3 --subflows 4,8 --quench-receive-window 4MiB [--quench-no-reinject]
    .venv/bin/python benchmarks/compare_htsim_mptcp.py --htsim-src ~/csg-htsim --duration-ms 1000 \
        --seeds 1,2,3 --subflows 4 --verbose [--htsim-arrival-first]
    .venv/bin/python benchmarks/compare_htsim_mptcp.py --htsim-src ~/csg-htsim --duration-ms 1000 \
        --seeds 1,2,3 --subflows 4 --htsim-algo UNCOUPLED --quench-as-tcp --quench-cap-subflows \
        --quench-pin-paths --verbose [--htsim-arrival-first]
    .venv/bin/python benchmarks/compare_htsim_mptcp.py --htsim-src ~/csg-htsim --ks 8 \
        --duration-ms 100
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fabric import HTSIM_URL, PACKET_BYTES, RATE_MBPS, WORK, timed_child  # noqa: E402
from compare_htsim_fabric import (  # noqa: E402
    ACK_BYTES,
    HOST_PACKETS,
    Setting,
    build_peer_htsim,
    data_packets,
    fat_tree_by_links,
    htsim_like_tcp,
    quench_path,
)

DURATION_MS = 200
SUBFLOWS = "1,2,4,8"
PAYLOAD = PACKET_BYTES - ACK_BYTES  # quench's MSS (1460), htsim's whole 1500-byte packet
# The largest receive window TCP's window scaling can advertise (RFC 7323: 65,535 << 14)
MAX_RECEIVE_WINDOW = 65_535 << 14
ACK_CHAIN = 7  # links of an ACK path that no fabric path (6 links at most) is longer than


@dataclass
class Conn:
    src: int
    dst: int
    gbps: float
    shared_path: bool = False  # two of its subflows on one path (htsim's draw)
    in_order_gbps: float = math.nan  # quench: the connection's data delivered in order


@dataclass
class Run:
    conns: list[Conn]
    drops: float
    # per subflow (htsim) or TCP flow (quench): bytes acknowledged on the wire and timeouts
    subflows: list[tuple[float, int]] = field(default_factory=list)
    # htsim: each connection's subflows' paths, quench's node names from source to destination
    paths: dict[tuple[int, int], list[tuple[str, ...]]] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# htsim


def htsim_setting(a: argparse.Namespace, seed: int) -> Setting:
    """compare_htsim_fabric.py's edits of htsim's TcpSrc (its PEER_TYPES), each giving htsim
    one of quench's rules."""
    return Setting(
        "mptcp",
        random_band=a.htsim_random_band,
        seed=seed,
        htsim_flight_ssthresh=a.htsim_flight_ssthresh,
        htsim_recover_max=a.htsim_recover_max,
        htsim_strict_recover=a.htsim_strict_recover,
        htsim_tick_before=a.htsim_tick_before,
        htsim_on_tick=a.htsim_timeouts_on_tick,
        htsim_arrival_first=a.htsim_arrival_first,
    )


def run_htsim(a: argparse.Namespace, k: int, n: int, seed: int) -> Run:
    """Each connection's throughput (its subflows' bytes delivered in order) and the data
    packets dropped."""
    duration_ms, algo = a.duration_ms, a.htsim_algo
    binary = build_peer_htsim(a.htsim_src, duration_ms, htsim_setting(a, seed))
    hosts = k**3 // 4
    args = ["-nodes", str(hosts), "-conns", str(hosts), "-sub", str(n), "-seed", str(seed)]
    args += ["-o", str(WORK / "logout.dat")] + ([algo] if algo != "COUPLED_EPSILON" else [])
    out, _, _ = timed_child([str(binary), *args], cwd=WORK)
    delivered: dict[tuple[int, int], float] = {}
    paths: dict[tuple[int, int], list[tuple[str, ...]]] = {}
    subflows = []
    unaccounted = 0
    for line in out.splitlines():
        if "PEER_FLOW " in line:
            f = line[line.index("PEER_FLOW ") :].split()
            key = (int(f[1]), int(f[2]))
            delivered[key] = delivered.get(key, 0.0) + float(f[5])
            unaccounted += int(f[3]) - int(f[4])
            paths.setdefault(key, []).append(quench_path(f[9], k))
            subflows.append((float(f[5]), int(f[8])))
    queued = re.search(r"PEER_QUEUED (\d+)", out)
    if len(delivered) != hosts or not queued:
        sys.exit(f"compare_htsim_mptcp: htsim printed {len(delivered)} connections, expected {hosts}:\n{out[-2000:]}")
    conns = [
        Conn(a, b, gbps(v, duration_ms), len(set(paths[(a, b)])) < len(paths[(a, b)]))
        for (a, b), v in sorted(delivered.items())
    ]
    return Run(conns, (unaccounted - int(queued[1])) / PACKET_BYTES, subflows, paths)


def gbps(wire_bytes: float, duration_ms: int) -> float:
    return wire_bytes * 8 / (duration_ms / 1e3) / 1e9


# ---------------------------------------------------------------------------------------
# quench


def add_ack_paths(net, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], list[str]]:
    """Each connection's ACK path, from its receiver to its sender: a chain of ACK_CHAIN one-way
    links through routers of its own, an ACK in 1 ns per link. A shorter one would carry data:
    quench routes by fewest hops, and a host forwards, so a link from host b to host a would be
    the way from b to a, and to every host a few hops from a."""
    routes = {}
    for a, b in pairs:
        hops = [f"ack{b}_{a}_{i}" for i in range(ACK_CHAIN - 1)]
        net.routers(*hops)
        route = [f"h{b}", *hops, f"h{a}"]
        for x, y in zip(route, route[1:], strict=False):
            net.link(x, y, f"{8 * ACK_BYTES}Gbps", "0ns", duplex=False)
        routes[(a, b)] = route
    return routes


def run_quench(k: int, n: int, duration_ms: int, h: Run, a: argparse.Namespace, seed: int) -> Run:
    from quench import Network
    from quench.scenario import run_scenario

    pairs = [(c.src, c.dst) for c in h.conns]
    net = Network(seed=seed, name=f"htsim-mptcp-k{k}")
    buffer = {"kind": "droptail", "limit": f"{a.quench_switch_buffer}p"}
    access = {"qdisc": {"kind": a.quench_host_qdisc, "limit": f"{HOST_PACKETS}p"}}
    if a.quench_jitter:  # fat_tree's links one by one, each delay drawn per packet
        jitter = {"sigma": a.quench_jitter, "dist": "uniform", "reorder": False}
        fat_tree_by_links(net, k, buffer, access["qdisc"], access["qdisc"], jitter)
        half = k // 2  # fat_tree's switches hash by flow among equal-cost next hops, listed ones not
        switches = [f"tor{i}" for i in range(k * half)] + [f"core{i}" for i in range(half * half)]
        for r in switches + [f"agg{p}_{i}" for p in range(k) for i in range(half)]:
            net.multipath(r, "ecmp")
    else:
        net.fat_tree(k, f"{RATE_MBPS}Mbps", "1us", qdisc=buffer, access=access)
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False)
    routes = {} if a.quench_fabric_acks else add_ack_paths(net, pairs)
    tcp = htsim_like_tcp(10, "250ms")
    # htsim's connection has no receive window (MODEL_RECEIVE_WINDOW is not defined in mtcp.h)
    tcp["receive_window"] = a.quench_receive_window or f"{MAX_RECEIVE_WINDOW}B"
    if a.quench_rtt_sampling:
        tcp["rtt_sampling"] = a.quench_rtt_sampling
    if a.quench_newreno_timer:
        tcp["newreno_timer"] = a.quench_newreno_timer
    if a.quench_tick_rule:
        tcp["rto"]["tick_rule"] = a.quench_tick_rule
    if a.quench_abc_limit:
        tcp["cc"]["abc_limit"] = a.quench_abc_limit
    # A coupling is its subflows' controller, with the initial window of htsim's TcpSrc.
    base = tcp.pop("cc")
    cc = base if a.quench_coupling == "uncoupled" else {**base, "kind": a.quench_coupling}
    count = {(s, d): min(n, pair_paths(s, d, k)) if a.quench_cap_subflows else n for s, d in pairs}
    if a.quench_as_tcp:
        paths = h.paths if a.quench_pin_paths else {}
        if paths:  # htsim's subflows, each on its path
            count = {pair: len(paths[pair]) for pair in pairs}
        return run_quench_tcp(net, count, duration_ms, pairs, routes, {**tcp, "cc": base}, paths)
    for s, d in pairs:
        net.mptcp(f"h{s}", f"h{d}", subflows=count[(s, d)], coupling=a.quench_coupling, cc=cc, name=f"c{s}_{d}", **tcp)
    spec = net.to_dict(f"{duration_ms}ms")
    for flow, pair in zip(spec["flows"], pairs, strict=True):
        flow["reinject"] = not a.quench_no_reinject
        if pair in routes:
            flow["reverse_path"] = routes[pair]
    res = run_scenario(spec)
    if a.verbose:
        sub = res.tables["subflows"]
        unopened = int(sub["srtt_s"].isna().sum())
        print(
            f"  quench subflows: {len(sub)}, without an RTT sample {unopened}, timeouts {int(sub['timeouts'].sum())},"
            f" retransmitted {int(sub['retransmitted_segments'].sum())}, sent but not acked (MB) "
            f"{(sub['bytes_sent'].sum() - sub['bytes_acked'].sum()) / 1e6:.2f}"
        )
    sub = res.tables["subflows"]
    subflows = [(b * PACKET_BYTES / PAYLOAD, int(t)) for b, t in zip(sub["bytes_acked"], sub["timeouts"], strict=True)]
    acked = sub.groupby("flow_name")["bytes_acked"].sum()
    delivered = res.flows.set_index("name")["bytes_delivered"]
    # Bytes acknowledged on the subflows, as htsim's count (its subflows' cumulative ACKs);
    # the connection's in-order delivery waits behind any subflow's hole.
    conns = [
        Conn(
            s,
            d,
            gbps(float(acked[f"c{s}_{d}"]) * PACKET_BYTES / PAYLOAD, duration_ms),
            in_order_gbps=gbps(float(delivered[f"c{s}_{d}"]) * PACKET_BYTES / PAYLOAD, duration_ms),
        )
        for s, d in pairs
    ]
    fabric = res.links[~res.links["from"].str.startswith("ack") & ~res.links["to"].str.startswith("ack")]
    fabric = fabric[fabric["rate_bps"] == RATE_MBPS * 1e6]
    drops = data_packets(float(fabric["dropped_packets"].sum()), float(fabric["dropped_bytes"].sum()))
    return Run(conns, drops, subflows)


def pair_paths(s: int, d: int, k: int) -> int:
    """The equal-cost paths between hosts s and d of a k-ary fat-tree (k/2 hosts under an edge
    switch, k²/4 in a pod): htsim's `it_sub` cap on a connection's subflows."""
    if s // (k // 2) == d // (k // 2):
        return 1
    return k // 2 if s // (k * k // 4) == d // (k * k // 4) else (k // 2) ** 2


def run_quench_tcp(net, count: dict, duration_ms: int, pairs, routes, tcp: dict, paths: dict) -> Run:
    """N independent TCP connections per pair in place of a connection's N subflows (htsim's
    UNCOUPLED subflows without a connection-level sequence): each its own flow, so ECMP
    hashes each onto a path of its own, or with `paths` (htsim's draws) pinned to the path of
    htsim's subflow of the same index (`path`: its nodes, the hosts included)."""
    from quench.scenario import run_scenario

    for s, d in pairs:
        for i in range(count[(s, d)]):
            pin = {"path": [f"h{s}", *paths[(s, d)][i][:-1], f"h{d}"]} if paths else {}
            net.tcp(f"h{s}", f"h{d}", name=f"c{s}_{d}_{i}", **pin, **tcp)
    spec = net.to_dict(f"{duration_ms}ms")
    for flow in spec["flows"]:
        s, d, _ = flow["name"][1:].split("_")
        if (int(s), int(d)) in routes:
            flow["reverse_path"] = routes[(int(s), int(d))]
    res = run_scenario(spec)
    rows = res.flows.set_index("name")["bytes_delivered"]
    flows = zip(res.flows["bytes_delivered"], res.flows["timeouts"], strict=True)
    subflows = [(b * PACKET_BYTES / PAYLOAD, int(t)) for b, t in flows]
    conns = []
    for s, d in pairs:
        acked = sum(float(rows[f"c{s}_{d}_{i}"]) for i in range(count[(s, d)]))
        rate = gbps(acked * PACKET_BYTES / PAYLOAD, duration_ms)
        conns.append(Conn(s, d, rate, in_order_gbps=rate))
    fabric = res.links[~res.links["from"].str.startswith("ack") & ~res.links["to"].str.startswith("ack")]
    fabric = fabric[fabric["rate_bps"] == RATE_MBPS * 1e6]
    drops = data_packets(float(fabric["dropped_packets"].sum()), float(fabric["dropped_bytes"].sum()))
    return Run(conns, drops, subflows)


# ---------------------------------------------------------------------------------------
# The table


def figures(r: Run, hosts: int) -> dict:
    rates = sorted(c.gbps for c in r.conns)
    total = sum(rates)
    line = RATE_MBPS / 1e3
    return {
        "ideal": total / (hosts * line),
        "min": rates[0],
        "median": statistics.median(rates),
        "max": rates[-1],
        "jain": total**2 / (len(rates) * sum(x * x for x in rates)) if total else math.nan,
        "drops": r.drops,
        "shared": sum(c.shared_path for c in r.conns),
        "in_order": sum(c.in_order_gbps for c in r.conns) / (hosts * line),
    }


def subflow_counts(r: Run) -> str:
    """Subflows (TCP flows with --quench-as-tcp): how many, their timeouts, how many had none,
    how many carried under 1 MB."""
    n, timeouts = len(r.subflows), sum(t for _, t in r.subflows)
    clean, small = sum(t == 0 for _, t in r.subflows), sum(b < 1e6 for b, _ in r.subflows)
    return f"subflows {n}, timeouts {timeouts}, without a timeout {clean}, under 1 MB {small}"


COLUMNS = [
    ("ideal", "of ideal", ".3f"),
    ("min", "min Gb/s", ".2f"),
    ("median", "median Gb/s", ".2f"),
    ("max", "max Gb/s", ".2f"),
    ("jain", "Jain", ".3f"),
    ("drops", "drops", ".0f"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim-src", default=HTSIM_URL, help="htsim checkout or git URL")
    ap.add_argument("--ks", default="4", help="fat-tree k values, comma-separated")
    ap.add_argument("--subflows", default=SUBFLOWS, help="subflow counts, comma-separated")
    ap.add_argument("--duration-ms", type=int, default=DURATION_MS, help="simulated time")
    ap.add_argument("--seeds", default="1", help="seeds: htsim's permutation and path draws, quench's hash")
    ap.add_argument("--htsim-random-band", type=int, default=0, help="htsim's RANDOM_BUFFER (its own: 3)")
    ap.add_argument("--htsim-algo", default="COUPLED_EPSILON", help="htsim's coupling (COUPLED_EPSILON, UNCOUPLED)")
    ap.add_argument("--quench-coupling", default="lia", help="quench's coupling (lia, olia, uncoupled)")
    ap.add_argument("--quench-switch-buffer", type=int, default=7, help="quench's switch queues, packets waiting")
    ap.add_argument("--quench-host-qdisc", default="fq", help="quench's host NIC queue (fq, droptail)")
    ap.add_argument("--quench-fabric-acks", action="store_true", help="quench's ACKs through the fabric")
    ap.add_argument(
        "--quench-as-tcp",
        action="store_true",
        help="quench: N independent TCP flows per pair, not one MPTCP connection",
    )
    ap.add_argument(
        "--quench-cap-subflows", action="store_true", help="quench: no more subflows than the pair has paths (htsim's)"
    )
    ap.add_argument("--quench-receive-window", default="", help="quench's connection receive window (the largest)")
    ap.add_argument("--quench-no-reinject", action="store_true", help="quench: no data-level reinjection")
    ap.add_argument("--quench-rtt-sampling", default="", help="quench's tcp.rtt_sampling (every_ack: htsim's)")
    ap.add_argument("--quench-newreno-timer", default="", help="quench's tcp.newreno_timer (slow_but_steady: htsim's)")
    ap.add_argument(
        "--quench-jitter", default="", help="quench: every fabric link's delay uniform within +- this (no ties)"
    )
    ap.add_argument("--quench-tick-rule", default="", help="quench's tcp.rto.tick_rule (after: htsim's scanner)")
    ap.add_argument("--quench-abc-limit", type=int, default=0, help="quench's slow start, segments per ACK (htsim: 1)")
    ap.add_argument(
        "--quench-pin-paths", action="store_true", help="with --quench-as-tcp: each flow on htsim's subflow's path"
    )
    ap.add_argument("--htsim-flight-ssthresh", action="store_true", help="htsim: a timeout's ssthresh from FlightSize")
    ap.add_argument("--htsim-recover-max", action="store_true", help="htsim: a timeout's recover point snd_max")
    ap.add_argument("--htsim-strict-recover", action="store_true", help="htsim: RFC 6582's 'more than recover'")
    ap.add_argument("--htsim-tick-before", action="store_true", help="htsim: timers at the tick before the deadline")
    ap.add_argument(
        "--htsim-arrival-first",
        action="store_true",
        help="htsim: an arrival at a departure's instant finds the departing packet queued (quench's order)",
    )
    ap.add_argument("--htsim-timeouts-on-tick", action="store_true", help="htsim: timeouts on the scanner's tick")
    ap.add_argument("--verbose", action="store_true", help="per-connection rates and per-subflow counts per run")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    seeds = [int(x) for x in a.seeds.split(",")]
    for k in (int(x) for x in a.ks.split(",")):
        hosts = k**3 // 4
        print(f"\nk={k}: {hosts} connections, {a.duration_ms} ms, {RATE_MBPS / 1e3:g} Gb/s links, seeds {a.seeds}")
        head = " ".join(f"{'h ' + label:>13} {'q ' + label:>13}" for _, label, _ in COLUMNS)
        print(f"{'subflows':>8} {'seed':>4} {head} {'h shared':>8} {'q in order':>10}")
        for n in (int(x) for x in a.subflows.split(",")):
            rows = []
            for seed in seeds:
                h = run_htsim(a, k, n, seed)
                q = run_quench(k, n, a.duration_ms, h, a, seed)
                if a.verbose:
                    print("  htsim per connection Gb/s:", sorted(round(c.gbps, 2) for c in h.conns))
                    print("  quench per connection Gb/s:", sorted(round(c.gbps, 2) for c in q.conns))
                    for name, r in (("htsim", h), ("quench", q)):
                        print(f"  {name} {subflow_counts(r)}")
                hf, qf = figures(h, hosts), figures(q, hosts)
                rows.append((hf, qf))
                cells = " ".join(f"{hf[key]:>13{fmt}} {qf[key]:>13{fmt}}" for key, _, fmt in COLUMNS)
                print(f"{n:>8} {seed:>4} {cells} {hf['shared']:>8} {qf['in_order']:>10.3f}", flush=True)
            if len(seeds) > 1:
                mean = {
                    key: (statistics.mean(r[0][key] for r in rows), statistics.mean(r[1][key] for r in rows))
                    for key, _, _ in COLUMNS
                }
                cells = " ".join(f"{mean[key][0]:>13{fmt}} {mean[key][1]:>13{fmt}}" for key, _, fmt in COLUMNS)
                print(f"{n:>8} {'mean':>4} {cells}")


if __name__ == "__main__":
    main()
