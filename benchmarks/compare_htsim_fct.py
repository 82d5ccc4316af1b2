"""Web-search flow completion times, quench beside htsim on the same flows. A benchmark-style
script: it prints tables and checks nothing.

The flows are quench's own draws: a workload over every ordered pair of hosts of a k-ary
fat-tree (`matrix = "all_to_all"`), Poisson arrivals at `--load` of each sender's access link,
sizes from the web-search distribution quench ships (`quench.dist.websearch()`, DCTCP's,
Alizadeh et al., SIGCOMM 2010), arriving for `--arrivals-ms` and run for `--duration-ms`. The
flows table quench returns (source, destination, start, bytes) is written as htsim's connection
matrix (the tokenised format `ConnectionMatrix::load` reads, sim/datacenter/connection_matrix.cpp:
`s->d id i start <ps> size <bytes>`), so both simulators run the same flows at the same instants.

The transport is NDP in both (Handley et al., SIGCOMM 2017), the one both model packet for
packet without a handshake: htsim's `htsim_ndp` (sim/datacenter/main_ndp.cpp, built unedited
from `--htsim-src` as compare_htsim_fabric.py's NDP incast builds it, with the sink
below) with `-q 8 -mtu 1500
-linkspeed 10000 -cwnd 15 -strat perm` (8-packet composite trimming queues, packets sprayed);
quench's `ndp` (initial window 15, htsim's) on `trim` ports of 8 data packets on every switch
port, the edge's port to each host included, drop-tail host queues, `multipath = "spray"`.
10 Gb/s links of 1 µs.

Sizes: htsim's NdpSrc sends whole 1500-byte packets (sim/ndp.cpp: the last packet is never
short), quench's the flow's bytes in 1436-byte payloads behind a 64-byte header; a flow of B
bytes is ceil(B / 1436) packets in both (htsim's size is that many times 1500).

Completion and slowdown: quench's `response_time_s` (start to the last byte's arrival) over its
`ideal_fct_s` (crates/quench-core/src/fct.rs: the flow alone on the idle path, store and
forward, NDP without a handshake), bucketed by `Results.fct()`'s sizes. htsim prints a flow's
finish when its sender has the last ACK (sim/ndp.cpp, `NdpSrc::processAck`), an ACK's trip after
the last byte arrived; the copy built here notes the arrival itself: its main_ndp.cpp (edited
on anchored lines, as compare_htsim_fabric.py edits main_tcp.cpp) gives each flow a sink that
prints the instant its cumulative ACK reaches the flow's size. htsim's ideal is fct.rs's
definition for its own packets (all 1500 bytes): h · (1 µs + 1.2 µs) + (P − 1) · 1.2 µs over h
hops (2 within an edge switch, 4 within a pod, 6 across the core). Both then go through
`quench.fct.fct_slowdown`.
Losses: NDP trims rather than drops, so the figure is retransmitted packets (htsim's "Rtx",
quench's `retransmitted_segments`) beside quench's trims.

Settings either simulator can take from the other, one at a time: `--htsim-pull-queue fifo`
builds htsim's pull pacers first come first served (quench's) instead of round robin over the
flows; `--quench-host-queue trim` sends quench's hosts' headers ahead of their data (htsim's
FairPriorityQueue), `--quench-host-queue drr` or `fq` serves them flow by flow (the round robin
over flows of htsim's FairPriorityQueue); `--quench-spray spray_random` draws each packet's next
hop at random instead of quench's round robin, and `--quench-spray spray_flow` cycles each flow
through the next hops in an order of its own per cycle (htsim's `-strat perm` made hop by hop);
`--htsim-strat ecmp_rr` has htsim's switches choose each packet's next hop in turn, one round
robin per switch shared by its flows (sim/datacenter/fat_tree_switch.cpp, `FatTreeSwitch::RR`,
reshuffled every five rounds), as quench's `spray` does, instead of each source cycling its own
permutation of the paths, and `--htsim-strat rand` draws each packet's path at random
(`SCATTER_RANDOM`); `--quench-pull-rate` sets quench's PULL spacing (htsim's counts a data
packet and an ACK, 1564 bytes). docs/validation.md, "Web-search FCT slowdown against htsim", has
the figures.

    .venv/bin/python benchmarks/compare_htsim_fct.py --htsim-src ~/csg-htsim --seeds 1,2,3
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fabric import (  # noqa: E402
    HTSIM_URL,
    PACKET_BYTES,
    RATE_MBPS,
    WORK,
    anchored_edit,
    build_htsim,
    fetch_source,
    timed_child,
)
from compare_htsim_fabric import HOST_PACKETS, NDP_HEADER_BYTES, fat_tree_by_links  # noqa: E402

NDP_PAYLOAD = PACKET_BYTES - NDP_HEADER_BYTES  # quench's NDP payload per packet (1436 bytes)
HOP_DELAY_S = 1e-6  # every link's propagation delay, both simulators (htsim's -hop_latency default)
TRIM_PACKETS = 8  # htsim's -q 8; quench's trim `data_limit`
INITIAL_WINDOW = 15  # htsim's -cwnd 15; quench's NDP default


def tx_s(size_bytes: float) -> float:
    """Serialization of `size_bytes` at the line rate."""
    return size_bytes * 8 / (RATE_MBPS * 1e6)


def hops(src: int, dst: int, k: int) -> int:
    """Links a k-ary fat-tree's shortest path crosses: 2 under one edge switch, 4 within a pod,
    6 through the core."""
    per_edge, per_pod = k // 2, k * k // 4
    if src // per_edge == dst // per_edge:
        return 2
    return 4 if src // per_pod == dst // per_pod else 6


def packets(size_bytes: float) -> int:
    return max(1, math.ceil(size_bytes / NDP_PAYLOAD))


def htsim_ideal_s(n_packets: int, n_hops: int) -> float:
    """fct.rs's ideal for htsim's whole packets: the first's store and forward over every hop,
    then the rest back to back."""
    return n_hops * (HOP_DELAY_S + tx_s(PACKET_BYTES)) + (n_packets - 1) * tx_s(PACKET_BYTES)


def host_index(name: str) -> int:
    return int(name.lstrip("h"))


# ---------------------------------------------------------------------------------------
# quench: the draws and its own run


def host_qdisc(kind: str) -> dict:
    """A host's own queue, never full: a FIFO ("droptail"); one that sends headers (ACKs,
    NACKs, PULLs) ahead of data as htsim's host queue (FairPriorityQueue) does: `trim` with a
    data limit no host reaches, whose header queue is served first; or one that serves its
    flows in turn, as htsim's FairPriorityQueue serves the flows of each priority
    (sim/queue.h: one `FairPullQueue`, a queue per flow taken round robin, per priority):
    `drr` (a packet per flow per turn) or `fq` (fair queueing, in which a 64-byte header
    finishes well before a flow's 1500-byte packet, nearly headers first)."""
    if kind == "fq":
        return {"kind": "fq", "limit": f"{HOST_PACKETS}p"}
    if kind == "drr":
        return {"kind": "drr", "limit": f"{HOST_PACKETS}p", "quantum": f"{PACKET_BYTES}B"}
    if kind == "trim":
        return {"kind": "trim", "data_limit": f"{HOST_PACKETS}p", "header_limit": f"{HOST_PACKETS * PACKET_BYTES}B"}
    return {"kind": "droptail", "limit": f"{HOST_PACKETS}p"}


def run_quench(a: argparse.Namespace, seed: int):
    """quench's run of the workload: its flows table and its trims."""
    from quench import Network, dist

    k = a.k
    net = Network(seed=seed, name=f"htsim-fct-k{k}")
    trim = {"kind": "trim", "data_limit": f"{TRIM_PACKETS}p"}
    fat_tree_by_links(net, k, trim, host_qdisc(a.quench_host_queue), trim)
    half = k // 2
    routers = [f"tor{i}" for i in range(k * half)] + [f"agg{p}_{i}" for p in range(k) for i in range(half)]
    for r in routers + [f"core{i}" for i in range(half * half)]:
        net.multipath(r, a.quench_spray)
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False)
    ndp = {"initial_window": INITIAL_WINDOW, **({"pull_rate": a.quench_pull_rate} if a.quench_pull_rate else {})}
    flow = {"kind": "ndp", "ndp": ndp}
    hosts = [f"h{i}" for i in range(k**3 // 4)]
    net.workload(
        matrix="all_to_all",
        hosts=hosts,
        load=a.load,
        size=dist.websearch(),
        flow=flow,
        stop=f"{a.arrivals_ms}ms",
        name="w",
    )
    res = net.run(duration=f"{a.duration_ms}ms")
    return res, float(res.links["marked_packets"].sum())


# ---------------------------------------------------------------------------------------
# htsim: the same flows from a connection matrix

MAIN_NDP = "datacenter/main_ndp.cpp"
# Declared after main_ndp.cpp's event list: a sink that prints when its flow's last byte has
# arrived (its cumulative ACK reaches the size, the test NdpSrc applies to the ACK it sends).
PEER_SINK = """EventList eventlist;
struct PeerNdpSink : NdpSink {
    PeerNdpSink(NdpPullPacer* pacer, uint32_t id, uint64_t size) : NdpSink(pacer), peer_id(id), peer_size(size) {}
    uint32_t peer_id;
    uint64_t peer_size;
    bool peer_done = false;
    void receivePacket(Packet& pkt) override {
        NdpSink::receivePacket(pkt);
        if (peer_done || !peer_size || _cumulative_ack < peer_size) return;
        peer_done = true;
        cout << "PEER_DONE " << peer_id << " " << eventlist.now() << endl;
    }
};"""


# NdpPullPacer's queue (ndp.h). GCC 12 in C++17 does not know `#elifdef`, so in a skipped
# group the line is ignored and the `#else` branch is built: PrioPullQueue, round robin over the
# flows of a priority (priopullqueue.cpp), every flow at one priority here; FAIR_PULL_QUEUE's
# FairPullQueue would be the same round robin.
PULL_QUEUES = """#ifdef FIFO_PULL_QUEUE
    FifoPullQueue<NdpPull> _pull_queue;
#elifdef FAIR_PULL_QUEUE
    FairPullQueue<NdpPull> _pull_queue;
#else
    PrioPullQueue<NdpPull> _pull_queue;
#endif"""


def build_htsim_ndp_sinks(src: str, pull_queue: str) -> Path:
    """htsim_ndp with PEER_SINK's sinks, in a copy of bench_fabric's build tree; kept by a hash
    of the edited sources. `pull_queue` "fifo" builds its pacers' PULL queue first come first
    served (ndp.h's FifoPullQueue, a library header: the copy's objects are all rebuilt)
    instead of htsim's round robin over flows (PULL_QUEUES)."""
    source = fetch_source(src)
    text = (source / "sim" / MAIN_NDP).read_text()
    text = anchored_edit(text, "EventList eventlist;", PEER_SINK, MAIN_NDP)
    sink = "ndpSnk = new NdpSink(pacers[dest]);"
    text = anchored_edit(text, sink, "ndpSnk = new PeerNdpSink(pacers[dest], crt->flowid, crt->size);", MAIN_NDP)
    ndp_h = (source / "sim/ndp.h").read_text()
    if pull_queue == "fifo":
        ndp_h = anchored_edit(ndp_h, PULL_QUEUES, "    FifoPullQueue<NdpPull> _pull_queue;", "ndp.h")
    binary = WORK / f"htsim_ndp_sinks-{hashlib.sha256((text + ndp_h).encode()).hexdigest()[:12]}"
    if binary.exists():
        return binary
    tree = WORK / f"ndp-{pull_queue}"
    if not (tree / "sim/libhtsim.a").exists():
        build_htsim(src, 1)  # bench_fabric's tree, libhtsim.a included
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(WORK / "build", tree)
    sim, datacenter = tree / "sim", tree / "sim/datacenter"
    if (sim / "ndp.h").read_text() != ndp_h:
        (sim / "ndp.h").write_text(ndp_h)
        for obj in [*sim.glob("*.o"), *datacenter.glob("*.o"), sim / "libhtsim.a"]:
            obj.unlink(missing_ok=True)
        subprocess.run(["make", "-j2", "libhtsim.a"], cwd=sim, check=True, stdout=subprocess.DEVNULL)
    (datacenter / "main_ndp.cpp").write_text(text)
    subprocess.run(["make", "-j2", "htsim_ndp"], cwd=datacenter, check=True, stdout=subprocess.DEVNULL)
    shutil.copy2(datacenter / "htsim_ndp", binary)
    return binary


def write_matrix(flows, k: int, path: Path) -> None:
    """The flows in ConnectionMatrix::load's tokenised format: start in picoseconds, size in
    bytes of whole 1500-byte packets, ids from 1 (0 is refused)."""
    rows = [f"Nodes {k**3 // 4}", f"Connections {len(flows)}"]
    for i, f in enumerate(flows.itertuples(), start=1):
        start_ps = round(f.start_s * 1e12)
        size = packets(f.bytes_requested) * PACKET_BYTES
        rows.append(f"{host_index(f.src)}->{host_index(f.dst)} id {i} start {start_ps} size {size}")
    path.write_text("\n".join(rows) + "\n")


def run_htsim(a: argparse.Namespace, flows, seed: int) -> tuple[dict[int, float], int, float]:
    """Each flow's last arrival in s by id, the packets retransmitted, and the run's wall
    seconds less its set-up (the same command run for 1 us, as bench_fabric.py measures it)."""
    binary = build_htsim_ndp_sinks(a.htsim_src, a.htsim_pull_queue)
    matrix = WORK / f"fct-k{a.k}-seed{seed}.cm"
    write_matrix(flows, a.k, matrix)

    def command(end_us: int) -> list[str]:
        args = ["-nodes", str(a.k**3 // 4), "-tm", str(matrix), "-end", str(end_us)]
        args += ["-q", str(TRIM_PACKETS), "-mtu", str(PACKET_BYTES), "-linkspeed", str(RATE_MBPS)]
        args += ["-cwnd", str(INITIAL_WINDOW), "-strat", a.htsim_strat, "-seed", str(seed)]
        return [str(binary), *args, "-o", str(WORK / "logout.dat")]

    out, wall, _ = timed_child(command(a.duration_ms * 1000), cwd=WORK)
    _, set_up, _ = timed_child(command(1), cwd=WORK)
    done = {int(m[1]): int(m[2]) / 1e12 for m in re.finditer(r"PEER_DONE (\d+) (\d+)", out)}
    rtx = re.search(r"Rtx: (\d+)", out)
    return done, int(rtx[1]) if rtx else -1, max(wall - set_up, 0.0)


def htsim_table(flows, done: dict[int, float], k: int):
    """htsim's completions as a flows table fct_slowdown reads: quench's sizes (the buckets),
    htsim's slowdown over its own ideal."""
    import pandas as pd

    rows = []
    for i, f in enumerate(flows.itertuples(), start=1):
        src, dst = host_index(f.src), host_index(f.dst)
        n_hops, n_packets = hops(src, dst, k), packets(f.bytes_requested)
        ideal = htsim_ideal_s(n_packets, n_hops)
        fct = done[i] - f.start_s if i in done else math.nan
        rows.append({"bytes_requested": f.bytes_requested, "ideal_fct_s": ideal, "slowdown": fct / ideal})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# The tables


def print_buckets(h_table, q_table) -> list[dict]:
    """Per size bucket: flows, completed, and p50/p95/p99 slowdown of each, with q/h."""
    print(
        f"{'bucket':<16} {'flows':>6} {'h done':>6} {'q done':>6}"
        + "".join(f" {'h ' + p:>8} {'q ' + p:>8} {'q/h':>6}" for p in ("p50", "p95", "p99"))
    )
    rows = []
    for bucket in h_table.index:
        h, q = h_table.loc[bucket], q_table.loc[bucket]
        cells = ""
        for p in ("p50", "p95", "p99"):
            cells += f" {h[p]:>8.3f} {q[p]:>8.3f} {q[p] / h[p]:>6.3f}"
        print(f"{bucket:<16} {int(h['flows']):>6} {int(h['completed']):>6} {int(q['completed']):>6}{cells}")
        rows.append({"bucket": bucket, **{f"h_{p}": h[p] for p in ("p50", "p95", "p99")}})
        rows[-1] |= {f"q_{p}": q[p] for p in ("p50", "p95", "p99")}
    return rows


def print_means(per_seed: list[list[dict]]) -> None:
    """Each bucket's percentiles averaged over seeds, min to max of q/h."""
    print(f"\nover {len(per_seed)} seeds: mean slowdown (q/h min to max)")
    for b, bucket in enumerate(r["bucket"] for r in per_seed[0]):
        cells = []
        for p in ("p50", "p95", "p99"):
            h = [s[b][f"h_{p}"] for s in per_seed]
            q = [s[b][f"q_{p}"] for s in per_seed]
            ratios = [y / x for x, y in zip(h, q, strict=True)]
            hm, qm = sum(h) / len(h), sum(q) / len(q)
            cells.append(f"{p} {hm:.3f} / {qm:.3f} = {qm / hm:.3f} ({min(ratios):.3f} to {max(ratios):.3f})")
        print(f"  {bucket:<16} " + "; ".join(cells))


def one_seed(a: argparse.Namespace, seed: int) -> list[dict]:
    from quench.fct import fct_slowdown

    res, trims = run_quench(a, seed)
    flows = res.flows.sort_values("flow")
    done, h_rtx, h_wall = run_htsim(a, flows, seed)
    q_table = fct_slowdown(flows)
    h_table = fct_slowdown(htsim_table(flows, done, a.k))
    q_rtx = int(flows["retransmitted_segments"].sum())
    sent = int(sum(packets(b) for b in flows["bytes_requested"]))
    print(
        f"\nseed {seed}: {len(flows)} flows, {sent} packets; htsim done {len(done)}, quench done "
        f"{int(flows['completion_s'].notna().sum())}"
    )
    print(f"retransmitted packets: htsim {h_rtx}, quench {q_rtx} (quench trims {trims:.0f})")
    q_wall = float(res.meta["wall_run_s"])
    print(
        f"speed, the same flows: quench's run loop {q_wall:.3f} s, htsim's run {h_wall:.3f} s (its process "
        f"less a 1-us run's); quench {h_wall / q_wall:.2f}x htsim's speed"
    )
    return print_buckets(h_table, q_table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim-src", default=HTSIM_URL, help="htsim checkout or git URL")
    ap.add_argument("--k", type=int, default=4, help="fat-tree k")
    ap.add_argument("--load", type=float, default=0.5, help="offered load of each sender's access link")
    ap.add_argument("--arrivals-ms", type=int, default=100, help="flows arrive over this long")
    ap.add_argument("--duration-ms", type=int, default=400, help="simulated time, both")
    ap.add_argument("--seeds", default="1", help="seeds, comma-separated: quench's draws and htsim's srand")
    ap.add_argument("--quench-pull-rate", default="", help="quench's PULL rate (default its link's)")
    ap.add_argument(
        "--quench-host-queue",
        choices=["droptail", "trim", "drr", "fq"],
        default="droptail",
        help="hosts' own queues (trim: headers first)",
    )
    ap.add_argument(
        "--quench-spray",
        choices=["spray", "spray_random", "spray_flow"],
        default="spray",
        help="switches' per-packet policy (spray_flow: each flow's own order, htsim's -strat perm)",
    )
    ap.add_argument(
        "--htsim-strat",
        choices=["perm", "ecmp_rr", "rand"],
        default="perm",
        help="htsim's path choice (ecmp_rr: its switches' round robin, quench's spray)",
    )
    ap.add_argument(
        "--htsim-pull-queue",
        choices=["fair", "fifo"],
        default="fair",
        help="htsim's pacer queue (its own: round robin)",
    )
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    print(
        f"k={a.k} fat-tree, web-search sizes, load {a.load}, arrivals over {a.arrivals_ms} ms, run "
        f"{a.duration_ms} ms; slowdown: FCT over the flow's ideal (quench's fct.rs)"
    )
    per_seed = [one_seed(a, int(seed)) for seed in a.seeds.split(",")]
    if len(per_seed) > 1:
        print_means(per_seed)


if __name__ == "__main__":
    main()
