"""RoCE at line rate over PFC on a k = 4 fat-tree, quench beside htsim on the same flows and
paths. A benchmark-style script: it prints tables and checks nothing.

htsim's `htsim_roce` (datacenter/main_roce.cpp in Broadcom/csg-htsim, built here from the
source given by `--htsim-src` in a copy of bench_fabric.py's build tree) runs RoCE's reliable
connection (sim/roce.cpp: go-back-N on a NAK, no congestion control: its RoceSrc sends one
packet every (MTU + 64) bytes' time at the link rate) over lossless queues
(`-queue_type lossless_input`, its default: sim/queue_lossless_input.cpp counts, per ingress
port, the bytes that came in by it and have not left the switch, and pauses the upstream
sender above the high threshold, resuming it below the low one; sim/queue_lossless_output.cpp
holds what it is told to). The flows are a connection matrix written by this script: an incast
(`--scenario incast`: hosts 1 to N, `--senders`, each send `--flow-packets` packets to host 0)
or a permutation (`--scenario permutation`: each host sends `--flow-packets` packets to another,
a derangement drawn from `--seeds`), all from time 0 (htsim's RoceSrc::connect starts a flow at
once whatever the matrix's start).

quench runs the same flows on the same paths (the flow keys `path` and `reverse_path`, set on the
scenario's flows, since `Network.roce` passes its keywords to the transport) with RoCE
(`Network.roce`) paced at the line rate: `cc = "dcqcn"` behind drop-tail queues that mark
nothing, so that no CNP ever arrives and DCQCN's rate stays at the line rate where it starts
(docs/validation.md, DCQCN: its clock wakes nothing before a CNP), and `window = False` (the
rate alone paces, as htsim's RoceSrc). PFC (`Network.pfc`) on every switch.

Settings matched, htsim's on the left (each a quench key or an htsim argument or edit):
  link rate       -linkspeed 100000 (Mb/s)            every link 100 Gb/s (`--rate-gbps`)
  link delay      -hop_latency 1 (µs, its default)    every link 1 µs
  switch latency  0 (source routes skip the switch)    0 (quench's switches forward at once)
  MTU             -mtu 1436: 1436 + 64 = 1500 bytes    `mtu = 1456`: 1456 + 44 = 1500 bytes
                  a packet                             (a wire size above the links' 1500-byte
                                                       MTU is fragmented by the host)
  flow size       P x 1436 bytes: P whole packets      P x 1456 bytes: P packets
  PFC high, low   -pfc_thresholds 12 15: pause above   `pfc(xoff = 15 x 1436 + 1 B, xon =
                  15 x 1436 bytes held, resume below   12 x 1436 - 1 B)`: pause at xoff or
                  12 x 1436                            more, resume at xon or less
  headroom        none needed: its queues never drop   drop-tail 1000-packet switch queues
                  (-q 1000: past it only a warning)    (`--buffer-packets`), far above what
                                                       PFC lets a port hold
  ACKs            one per packet, 64 bytes, through    one per packet, 48 bytes, pinned to
                  the fabric's lossless queues on the  the same reverse path
                  reverse path of the same index
  start           every flow at 0                      every flow at 0
  paths           a random one per flow (rand() from   pinned to htsim's (`path`)
                  -seed)

htsim edits (each anchored on a line of its source, failing loudly when absent): main_roce.cpp's
source-routed branch (`-strat single`) leaves the sink off the data route and the source off
the ACK route (`Route::add_endpoints` no longer appends them, so a packet's last hop asserts in
`Packet::sendOn`): the edit appends them; roce.cpp's RoceSrc reseeds the C library's generator
from the time of day in its constructor (`srand(time(NULL))`), which makes the path draws
differ run to run: removed, so `-seed` alone draws them; a sink that notes when the flow's last
byte arrives (quench's `response_time_s` is that arrival; htsim prints the ACK's return) and a
line per flow at the end (path, packets sent and resent, NAKs); counters in the lossless queues
(per ingress port: pause frames sent, time from each pause to its resume, the most bytes held;
per output queue: the most bytes queued, the packet being sent included, where quench's
`max_backlog_bytes` counts packets waiting only).

Figures per simulator: completion (last and mean, from 0 to the last byte's arrival), drops
(quench's links; htsim's overflow warnings), resent packets, pause frames and paused time summed
over links and for the most paused link, the most bytes a port held by ingress (PFC's count) and
by egress queue (the hottest port). `--per-link` prints every paused link of both.
`--htsim-ack-bytes 48` builds htsim with quench's ACK size, `--quench-pfc-shift 1500` lowers
quench's thresholds by one packet (htsim holds a packet until its transmission ends, quench
until it starts), `--quench-xon-default` gives quench its own xon: one simulator with a setting
of the other's. docs/validation.md, "PFC and RoCE at line rate against htsim", has the figures
and what the differences came from.

    .venv/bin/python benchmarks/compare_htsim_roce.py --htsim-src ~/csg-htsim --scenario incast \
        --senders 8,15
    .venv/bin/python benchmarks/compare_htsim_roce.py --htsim-src ~/csg-htsim \
        --scenario permutation --seeds 1,2,3 --flow-packets 1000
    .venv/bin/python benchmarks/compare_htsim_roce.py --htsim-src ~/csg-htsim \
        --scenario permutation --seeds 2 --flow-packets 1000 --htsim-ack-bytes 48 --quench-pfc-shift 1500
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fabric import HTSIM_URL, WORK, anchored_edit, build_htsim, fetch_source, timed_child  # noqa: E402
from compare_htsim_fabric import quench_path  # noqa: E402

K = 4  # fat-tree arity: htsim's FatTreeTopology derives it from -nodes (k³/4 hosts)
WIRE_BYTES = 1500  # a data packet on the wire, both: the fat-tree links' MTU in quench
HTSIM_HEADER = 64  # RocePacket::ACKSIZE, added to the MTU in each data packet (sim/rocepacket.h)
QUENCH_HEADER = 44  # quench's RoCE data headers (transport/roce.rs DATA_HEADER_BYTES)
HTSIM_MTU = WIRE_BYTES - HTSIM_HEADER  # htsim -mtu: also its PFC thresholds' unit
QUENCH_MTU = WIRE_BYTES - QUENCH_HEADER
PFC_HIGH, PFC_LOW = 15, 12  # main_roce.cpp's default -pfc_thresholds, in units of the MTU
RATE_GBPS = 100  # main.h HOST_NIC, htsim's default link rate
BUFFER_PACKETS = 1000  # both: no port comes near it (htsim's only warns past it)
FLOW_PACKETS = 300  # an incast flow: 300 x 1456 = 436,800 bytes in quench
DURATION_US = 20_000
MAIN_ROCE = "datacenter/main_roce.cpp"


@dataclass(frozen=True)
class Setting:
    rate_gbps: int = RATE_GBPS
    pfc_high: int = PFC_HIGH
    pfc_low: int = PFC_LOW
    quench_xon_default: bool = False  # quench's xon 3 KiB under xoff instead of htsim's low
    buffer_packets: int = BUFFER_PACKETS
    # htsim's ACK and NAK size (its own 64; quench's are 48)
    htsim_ack_bytes: int = HTSIM_HEADER
    # quench's xoff and xon lowered by this many bytes: htsim counts a packet held until its
    # transmission ends, quench until it starts
    quench_pfc_shift: int = 0


@dataclass
class Run:
    """One simulator's figures for one scenario."""

    fct_s: dict[tuple[int, int], float]
    sent: int
    resent: int
    drops: float
    ports: dict[tuple[str, str], tuple[int, float, int]]  # link -> pauses, paused s, max held
    egress_max: dict[tuple[str, str], int]  # link -> most bytes queued
    paths: dict[tuple[int, int], tuple[list[str], list[str]]]


# ---------------------------------------------------------------------------------------
# htsim

# Declared in queue_lossless_input.cpp's copy and read by main_roce.cpp's: per ingress port.
PFC_STATS = """#include <map>
#include <string>
struct PeerPfcPort { std::string upstream; uint64_t pauses = 0; simtime_picosec paused_ps = 0, since = 0;
                     bool paused = false; mem_b max_held = 0; };
"""

INPUT_EDITS = [
    (
        "uint64_t LosslessInputQueue::_high_threshold = 0;",
        PFC_STATS + "std::map<const LosslessInputQueue*, PeerPfcPort> peer_pfc_ports;\n"
        "uint64_t LosslessInputQueue::_high_threshold = 0;",
    ),
    (
        "_wire = new CallbackPipe(wire_latency, eventlist, _remoteEndpoint);",
        "_wire = new CallbackPipe(wire_latency, eventlist, _remoteEndpoint);\n"
        "    peer_pfc_ports[this].upstream = peer->_name;",
    ),
    (
        "    _queuesize += pkt.size();\n",
        "    _queuesize += pkt.size();\n"
        "    if (_queuesize > peer_pfc_ports[this].max_held) peer_pfc_ports[this].max_held = _queuesize;\n",
    ),
    (
        "EthPausePacket* pkt = EthPausePacket::newpkt(wait,switchID);",
        "{ PeerPfcPort& s = peer_pfc_ports[this]; simtime_picosec now = eventlist().now();\n"
        "      if (wait > 0) { s.pauses++; s.since = now; s.paused = true; }\n"
        "      else if (s.paused) { s.paused_ps += now - s.since; s.paused = false; } }\n"
        "    EthPausePacket* pkt = EthPausePacket::newpkt(wait,switchID);",
    ),
]

OUTPUT_EDITS = [
    (
        "LosslessOutputQueue::LosslessOutputQueue(",
        "#include <map>\nstd::map<LosslessOutputQueue*, mem_b> peer_out_max;\n"
        "LosslessOutputQueue::LosslessOutputQueue(",
    ),
    (
        "    _queuesize += pkt.size();\n",
        "    _queuesize += pkt.size();\n    if (_queuesize > peer_out_max[this]) peer_out_max[this] = _queuesize;\n",
    ),
]

# RoceSrc's constructor reseeds rand()/random() from the clock: the path draws would change run
# to run.
ROCE_EDITS = [("    srand(time(NULL));\n    _pathid = random()%256;", "    _pathid = random()%256;")]

PEER_TYPES = (
    '#include <algorithm>\n#include "queue_lossless_output.h"\nEventList eventlist;\n'
    + PFC_STATS
    + """extern std::map<const LosslessInputQueue*, PeerPfcPort> peer_pfc_ports;
extern std::map<LosslessOutputQueue*, mem_b> peer_out_max;
// A sink that notes when the flow's last byte arrives (RoceSrc prints the ACK's return).
struct PeerRoceSink : RoceSink {
    uint64_t size = 0;
    simtime_picosec done_ps = 0;
    void receivePacket(Packet& pkt) override {
        RoceSink::receivePacket(pkt);
        if (!done_ps && _cumulative_ack >= size) done_ps = eventlist.now();
    }
};
struct PeerFlow { uint32_t from, to; RoceSrc* src; PeerRoceSink* sink; const Route* out; const Route* back; };
static std::vector<PeerFlow> peer_flows;
// The queues a route crosses (the host's and the switches' output queues), by name.
static void peer_route(const Route* r) {
    for (size_t i = 0; i < r->size(); i++) {
        PacketSink* s = r->at(i);
        if (dynamic_cast<BaseQueue*>(s) && !dynamic_cast<LosslessInputQueue*>(s) && !dynamic_cast<RoceSrc*>(s))
        {
            std::string n = s->nodename();
            std::replace(n.begin(), n.end(), ' ', '_');
            cout << n << ",";
        }
    }
    cout << " ";
}
"""
)

REPORT = """cout << "New: " << new_pkts << " Rtx: " << rtx_pkts << endl;
    cout.precision(15);
    for (auto& f : peer_flows) {
        cout << "PEER_FLOW " << f.from << " " << f.to << " " << f.sink->done_ps << " " << f.src->_packets_sent << " "
             << f.src->_rtx_packets_sent << " " << f.src->_nacks_received << " ";
        peer_route(f.out);
        peer_route(f.back);
        cout << endl;
    }
    for (auto& p : peer_pfc_ports) {
        simtime_picosec paused = p.second.paused_ps + (p.second.paused ? eventlist.now() - p.second.since : 0);
        cout << "PEER_PORT " << p.second.upstream << " " << p.second.pauses << " " << paused << " "
             << p.second.max_held << endl;
    }
    for (auto& q : peer_out_max) cout << "PEER_OUT " << q.first->nodename() << " " << q.second << endl;
"""


def edit_main_roce(text: str) -> str:
    text = anchored_edit(text, "EventList eventlist;", PEER_TYPES, MAIN_ROCE)
    text = anchored_edit(text, "roceSnk = new RoceSink();", "roceSnk = new PeerRoceSink();", MAIN_ROCE)
    text = anchored_edit(
        text,
        "roceSnk->set_src(src);",
        "roceSnk->set_src(src);\n        ((PeerRoceSink*)roceSnk)->size = crt->size;",
        MAIN_ROCE,
    )
    text = anchored_edit(
        text,
        "routeout->add_endpoints(roceSrc, roceSnk);",
        "routeout->add_endpoints(roceSrc, roceSnk);\n            routeout->push_back(roceSnk);",
        MAIN_ROCE,
    )
    text = anchored_edit(
        text,
        "routein->add_endpoints(roceSnk, roceSrc);",
        "routein->add_endpoints(roceSnk, roceSrc);\n            routein->push_back(roceSrc);",
        MAIN_ROCE,
    )
    connect = "roceSrc->connect(routeout, routein, *roceSnk, timeFromUs((uint32_t)rand()%20));"
    record = (
        "\n            peer_flows.push_back({(uint32_t)src, (uint32_t)dest, roceSrc, (PeerRoceSink*)roceSnk,"
        " routeout, routein});"
    )
    text = anchored_edit(text, connect, connect + record, MAIN_ROCE)
    return anchored_edit(text, 'cout << "New: " << new_pkts << " Rtx: " << rtx_pkts << endl;', REPORT, MAIN_ROCE)


def edit_all(text: str, edits: list[tuple[str, str]], path: str) -> str:
    for anchor, replacement in edits:
        text = anchored_edit(text, anchor, replacement, path)
    return text


ACK_ROUTE = "p->set_route(flow,route,RocePacket::ACKSIZE,ackno);"  # RoceAck's and RoceNack's size


def edit_ack_bytes(text: str, ack_bytes: int) -> str:
    """rocepacket.h with ACKs and NAKs of `ack_bytes` (its own: ACKSIZE, 64, which is also what
    a data packet adds to the MTU)."""
    if ack_bytes == HTSIM_HEADER:
        return text
    if text.count(ACK_ROUTE) != 2:
        sys.exit(f"compare_htsim_roce: rocepacket.h: expected two {ACK_ROUTE!r}")
    return text.replace(ACK_ROUTE, ACK_ROUTE.replace("RocePacket::ACKSIZE", str(ack_bytes)))


def build_htsim_roce(src: str, ack_bytes: int = HTSIM_HEADER) -> Path:
    """htsim_roce with this script's edits, in its own copy of bench_fabric's build tree (the
    library files edited and rebuilt into its libhtsim.a); kept by a hash of the edits."""
    source = fetch_source(src)
    texts = {
        "rocepacket.h": edit_ack_bytes((source / "sim/rocepacket.h").read_text(), ack_bytes),
        "queue_lossless_input.cpp": edit_all(
            (source / "sim/queue_lossless_input.cpp").read_text(), INPUT_EDITS, "queue_lossless_input.cpp"
        ),
        "queue_lossless_output.cpp": edit_all(
            (source / "sim/queue_lossless_output.cpp").read_text(), OUTPUT_EDITS, "queue_lossless_output.cpp"
        ),
        "roce.cpp": edit_all((source / "sim/roce.cpp").read_text(), ROCE_EDITS, "roce.cpp"),
        MAIN_ROCE: edit_main_roce((source / "sim" / MAIN_ROCE).read_text()),
    }
    tag = hashlib.sha256("".join(texts.values()).encode()).hexdigest()[:12]
    binary = WORK / f"htsim_roce-{tag}"
    if binary.exists():
        return binary
    tree = WORK / "roce"
    if not (tree / "sim/libhtsim.a").exists():
        build_htsim(src, 1)  # bench_fabric's tree, libhtsim.a included
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(WORK / "build", tree)
    for name, text in texts.items():
        (tree / "sim" / name).write_text(text)
    for obj in ("roce.o", "rocepacket.o"):  # the makefile does not track rocepacket.h
        (tree / "sim" / obj).unlink(missing_ok=True)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(["make", "-j1", "libhtsim.a"], cwd=tree / "sim", check=True, **quiet)
    datacenter = tree / "sim/datacenter"
    (datacenter / "main_roce.o").unlink(missing_ok=True)
    (datacenter / "htsim_roce").unlink(missing_ok=True)
    subprocess.run(["make", "-j1", "htsim_roce"], cwd=datacenter, check=True, **quiet)
    shutil.copy2(datacenter / "htsim_roce", binary)
    return binary


LINK_NAME = re.compile(r"(SRC|LS|US|CS)_?(\d+)->(LS|US|CS|DST)_?(\d+)\(")


def quench_node(kind: str, i: int) -> str:
    half = K // 2
    if kind in ("SRC", "DST"):
        return f"h{i}"
    if kind == "LS":
        return f"tor{i}"
    if kind == "US":
        return f"agg{i // half}_{i % half}"
    return f"core{(i % half) * half + i // half}"


def link_of(name: str) -> tuple[str, str]:
    """quench's (from, to) for an htsim queue's name, e.g. "LS3->US5(0)"."""
    m = LINK_NAME.search(name)
    if not m:
        sys.exit(f"compare_htsim_roce: no link in htsim's queue name {name!r}")
    return quench_node(m[1], int(m[2])), quench_node(m[3], int(m[4]))


def route_nodes(queues: str, src: int) -> list[str]:
    """A route's nodes in quench's names, from its queues' names."""
    return [f"h{src}", *quench_path(queues, K)]


def run_htsim(src: str, flows: list[tuple[int, int]], packets: int, s: Setting, seed: int) -> Run:
    binary = build_htsim_roce(src, s.htsim_ack_bytes)
    hosts = K**3 // 4
    size = packets * HTSIM_MTU
    matrix = WORK / f"roce-{hashlib.sha256(repr((flows, size)).encode()).hexdigest()[:12]}.cm"
    rows = [f"{a}->{b} start 0 size {size}" for a, b in flows]
    matrix.write_text("\n".join([f"Nodes {hosts}", f"Connections {len(flows)}", *rows]) + "\n")
    args = ["-nodes", str(hosts), "-tm", str(matrix), "-strat", "single", "-mtu", str(HTSIM_MTU)]
    args += ["-linkspeed", str(s.rate_gbps * 1000), "-end", str(DURATION_US), "-q", str(s.buffer_packets)]
    args += ["-pfc_thresholds", str(s.pfc_low), str(s.pfc_high), "-seed", str(seed), "-o", str(WORK / "logout.dat")]
    out, _, _ = timed_child([str(binary), *args], cwd=WORK)
    fct, paths, sent, resent = {}, {}, 0, 0
    ports, egress = {}, {}
    for line in out.splitlines():
        if "PEER_FLOW " in line:
            f = line[line.index("PEER_FLOW ") :].split()
            a, b = int(f[1]), int(f[2])
            fct[(a, b)] = int(f[3]) / 1e12 if int(f[3]) else math.nan
            sent, resent = sent + int(f[4]), resent + int(f[5])
            out_path, back_path = route_nodes(f[7], a), route_nodes(f[8], b)
            paths[(a, b)] = (out_path, back_path)
        elif line.startswith("PEER_PORT "):
            _, upstream, pauses, paused_ps, held = line.split()
            ports[link_of(upstream)] = (int(pauses), int(paused_ps) / 1e12, int(held))
        elif line.startswith("PEER_OUT "):
            name, most = line[len("PEER_OUT ") :].rsplit(" ", 1)
            egress[link_of(name)] = int(most)
    if len(fct) != len(flows):
        sys.exit(f"compare_htsim_roce: htsim printed {len(fct)} flows, expected {len(flows)}:\n{out[-2000:]}")
    overflows = out.count("LOSSLESS not working")
    return Run(fct, sent, resent, float(overflows), ports, egress, paths)


# ---------------------------------------------------------------------------------------
# quench


def run_quench(htsim: Run, packets: int, s: Setting, seed: int) -> Run:
    from quench import Network
    from quench.scenario import run_scenario

    net = Network(seed=seed, name="htsim-roce")
    buffer = {"kind": "droptail", "limit": f"{s.buffer_packets}p"}
    net.fat_tree(K, f"{s.rate_gbps}Gbps", "1us", qdisc=buffer, access={"qdisc": buffer})
    # htsim pauses above high x MTU bytes and resumes below low x MTU; quench at xoff or more
    # and at xon or less.
    shift = s.quench_pfc_shift
    xon = {} if s.quench_xon_default else {"xon": f"{s.pfc_low * HTSIM_MTU - 1 - shift}B"}
    net.pfc(f"{s.pfc_high * HTSIM_MTU + 1 - shift}B", **xon)
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False)
    order = list(htsim.paths)
    for a, b in order:
        net.roce(
            f"h{a}", f"h{b}", bytes=packets * QUENCH_MTU, name=f"f{a}_{b}", cc="dcqcn", mtu=QUENCH_MTU, window=False
        )
    spec = net.to_dict(f"{DURATION_US}us")
    for flow, key in zip(spec["flows"], order, strict=True):
        flow["path"], flow["reverse_path"] = htsim.paths[key]
    res = run_scenario(spec)
    rows = res.flows.set_index("name")
    fct = {key: float(rows.loc[f"f{key[0]}_{key[1]}", "response_time_s"]) for key in order}
    links = res.links
    ports, egress = {}, {}
    for r in links.to_dict("records"):
        link = (r["from"], r["to"])
        if r["pfc_pauses"] or r["pfc_max_ingress_bytes"]:
            ports[link] = (int(r["pfc_pauses"]), float(r["pfc_paused_s"]), int(r["pfc_max_ingress_bytes"]))
        egress[link] = int(r["max_backlog_bytes"])
    sent = int(res.flows["packets_sent"].sum())
    resent = int(res.flows["retransmitted_segments"].sum())
    return Run(fct, sent, resent, float(links["dropped_packets"].sum()), ports, egress, htsim.paths)


# ---------------------------------------------------------------------------------------
# The tables


def figures(r: Run) -> dict:
    done = [t for t in r.fct_s.values() if not math.isnan(t)]
    paused = max(r.ports.items(), key=lambda kv: kv[1][1], default=(None, (0, 0.0, 0)))
    hot_egress = max(r.egress_max.items(), key=lambda kv: kv[1], default=(None, 0))
    return {
        "last_us": max(done) * 1e6 if len(done) == len(r.fct_s) else math.nan,
        "mean_us": sum(done) / len(done) * 1e6 if done else math.nan,
        "first_us": min(done) * 1e6 if done else math.nan,
        "done": len(done),
        "drops": r.drops,
        "resent": r.resent,
        "pauses": sum(p[0] for p in r.ports.values()),
        "paused_links": sum(1 for p in r.ports.values() if p[0]),
        "paused_us": sum(p[1] for p in r.ports.values()) * 1e6,
        "most_paused": f"{'->'.join(paused[0])}" if paused[0] and paused[1][0] else "-",
        "most_paused_us": paused[1][1] * 1e6,
        "ingress_max": max((p[2] for p in r.ports.values()), default=0),
        "egress_max": hot_egress[1],
        "hot_port": "->".join(hot_egress[0]) if hot_egress[0] else "-",
    }


COLUMNS = [
    ("last_us", "last done us", ".2f"),
    ("mean_us", "mean done us", ".2f"),
    ("first_us", "first done us", ".2f"),
    ("done", "flows done", ".0f"),
    ("drops", "drops", ".0f"),
    ("resent", "resent pkts", ".0f"),
    ("pauses", "pause frames", ".0f"),
    ("paused_links", "links paused", ".0f"),
    ("paused_us", "paused us (sum)", ".2f"),
    ("most_paused", "most paused link", "s"),
    ("most_paused_us", "its paused us", ".2f"),
    ("ingress_max", "max ingress B", ".0f"),
    ("egress_max", "max egress B", ".0f"),
    ("hot_port", "hottest egress", "s"),
]


def print_table(h: dict, q: dict) -> None:
    print(f"{'':<18} {'htsim':>16} {'quench':>16} {'q/h':>7}")
    for key, label, fmt in COLUMNS:
        ratio = f"{q[key] / h[key]:>7.3f}" if fmt != "s" and h[key] else f"{'':>7}"
        print(f"{label:<18} {h[key]:>16{fmt}} {q[key]:>16{fmt}} {ratio}")


def print_links(h: Run, q: Run) -> None:
    print(
        f"{'paused link':<16} {'h pauses':>8} {'q pauses':>8} {'h paused us':>11} {'q paused us':>11}"
        f" {'h held B':>9} {'q held B':>9}"
    )
    for link in sorted(set(h.ports) | set(q.ports)):
        a, b = h.ports.get(link, (0, 0.0, 0)), q.ports.get(link, (0, 0.0, 0))
        if a[0] or b[0]:
            print(
                f"{'->'.join(link):<16} {a[0]:>8} {b[0]:>8} {a[1] * 1e6:>11.2f} {b[1] * 1e6:>11.2f} {a[2]:>9} {b[2]:>9}"
            )


def print_flows(h: Run, q: Run) -> None:
    print(f"{'flow':>9} {'path':<44} {'htsim us':>9} {'quench us':>9}")
    for key in h.paths:
        path = "-".join(h.paths[key][0])
        print(f"{f'h{key[0]}>h{key[1]}':>9} {path:<44} {h.fct_s[key] * 1e6:>9.2f} {q.fct_s[key] * 1e6:>9.2f}")


def derangement(hosts: int, seed: int) -> list[tuple[int, int]]:
    """Each host sends to another, no two to the same: a permutation without fixed points."""
    rng = random.Random(seed)
    while True:
        dst = list(range(hosts))
        rng.shuffle(dst)
        if all(i != d for i, d in enumerate(dst)):
            return list(enumerate(dst))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim-src", default=HTSIM_URL, help="htsim checkout or git URL")
    ap.add_argument("--scenario", choices=["incast", "permutation"], default="incast")
    ap.add_argument("--senders", default="8,15", help="incast: senders to host 0, comma-separated")
    ap.add_argument("--flow-packets", type=int, default=FLOW_PACKETS, help="each flow's packets of 1500 bytes")
    ap.add_argument("--seeds", default="1", help="htsim's -seed (its path draws) and the permutation's draw")
    ap.add_argument("--rate-gbps", type=int, default=RATE_GBPS, help="every link's rate, both")
    ap.add_argument("--pfc-high", type=int, default=PFC_HIGH, help="pause threshold in MTUs, both")
    ap.add_argument("--pfc-low", type=int, default=PFC_LOW, help="resume threshold in MTUs, both")
    ap.add_argument("--quench-xon-default", action="store_true", help="quench's xon: its default, 3 KiB under xoff")
    ap.add_argument("--htsim-ack-bytes", type=int, default=HTSIM_HEADER, help="htsim's ACK size (quench's: 48)")
    ap.add_argument("--quench-pfc-shift", type=int, default=0, help="quench's xoff and xon lowered by these bytes")
    ap.add_argument("--per-link", action="store_true", help="every paused link and every flow of both")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    s = Setting(
        a.rate_gbps,
        a.pfc_high,
        a.pfc_low,
        a.quench_xon_default,
        htsim_ack_bytes=a.htsim_ack_bytes,
        quench_pfc_shift=a.quench_pfc_shift,
    )
    hosts = K**3 // 4
    runs = []
    for seed in (int(x) for x in a.seeds.split(",")):
        if a.scenario == "incast":
            runs += [
                (f"incast {n} to 1, seed {seed}", [(i, 0) for i in range(1, n + 1)], seed)
                for n in map(int, a.senders.split(","))
            ]
        else:
            runs.append((f"permutation of {hosts}, seed {seed}", derangement(hosts, seed), seed))
    for label, flows, seed in runs:
        h = run_htsim(a.htsim_src, flows, a.flow_packets, s, seed)
        q = run_quench(h, a.flow_packets, s, seed)
        ideal_us = a.flow_packets * WIRE_BYTES * 8 / (s.rate_gbps * 1e3)
        print(f"\n{label}: {len(flows)} flows of {a.flow_packets} packets, {s.rate_gbps} Gb/s, 1 us links")
        print(f"one flow's packets at the line rate: {ideal_us:.2f} us")
        print_table(figures(h), figures(q))
        if a.per_link:
            print_flows(h, q)
            print_links(h, q)


if __name__ == "__main__":
    main()
