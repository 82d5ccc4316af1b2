"""Fat-tree permutation and incast, quench beside htsim with the same per-flow paths. A
benchmark-style script: it prints tables and checks nothing.

htsim's `htsim_tcp` (datacenter/main_tcp.cpp in Broadcom/csg-htsim, built here from the source
given by `--htsim-src` with bench_fabric.py's helpers) runs a permutation of long TCP flows on a
k-ary fat-tree, each flow on one path drawn at random. The edits made to its copy (each anchored
on a line of the source, failing loudly when the line has moved): the run length, the seed (an
argument, `-seed`, so that one binary serves every seed: it draws the permutation and the
paths), the NIC rate (10 Gb/s), the random-drop band of its switch queues (`RANDOM_BUFFER`,
main.h: 3 packets, dropped with probability 0.1 above 5 of the 8 packets;
`--htsim-random-band 0` makes them plain drop-tail), a TcpSrc subclass that notes when a flow's
last packet is ACKed and counts its timeouts, and a line per flow printed at the end: source,
destination, the queues of its path, bytes sent (retransmissions included), bytes that reached
the sink, bytes delivered in order, completion and timeouts. `--scenario incast` replaces the
permutation by htsim's own `ConnectionMatrix::setIncast`: hosts 1 to N (`--senders`) each send
`--flow-packets` 1500-byte packets to host 0 (300 by default: 450 KB). `--scenario ndp-incast`
runs the same incast with htsim's `htsim_ndp` (datacenter/main_ndp.cpp, unedited: the incast is
a connection matrix in gen_incast.py's format) beside quench's `ndp` on `trim` switch ports,
sprayed; `--quench-pull-rate` sets quench's PULL rate (htsim's pacer spaces PULLs by a data
packet and an ACK, 1564 bytes).

quench then runs each flow on the same path, pinned with the flow key `path` (htsim's queue
names `LS<t>`, `US<a>`, `CS<c>` mapped to quench's `tor<t>`, `agg<pod>_<i>`, `core<j>`: htsim
links aggregation switch a to cores a mod k/2 + (k/2)·l, quench links agg<p>_<i> to cores
i·k/2 + m, so htsim's core c is quench's core (c mod k/2)·k/2 + c div k/2), with a TCP set as
close to htsim's TcpSrc as quench's keys allow (tcp.cpp: a SYN first, 1500-byte packets, initial
window 10, NewReno fast recovery, no SACK, an ACK per packet, RTO min 250 ms and initial 3 s,
checked by a 10 ms timer scanner, never giving up), 8-packet drop-tail buffers, 10 Gb/s links of
1 µs.

What differs, each settable so that either simulator can be run with the other's setting
(`--experiments` runs the permutation's one at a time): htsim's ACKs go straight back to the
sender (its reverse route holds only the source), quench's cross the fabric hop by hop unless
`--quench-direct-acks` gives each pair of hosts a link of their own for them; htsim's host NIC
queue never drops and serves ACKs first, quench's is a 100,000-packet fair queue
(`--quench-host-qdisc`, `--quench-host-buffer`) which fat_tree's access tier also puts on the
edge switch's port to the host, where htsim has an 8-packet switch queue
(`--quench-edge-buffer 7` builds the same fabric link by link with such a queue there); htsim's
8-packet limit counts the packet on the wire, quench's counts packets waiting
(`--quench-switch-buffer 7` matches); htsim's limits are bytes, so its 1-byte SYNs find room
where a packet slot would not (`--quench-byte-limits`); htsim times every packet by its own
send time, a retransmission's too, so its RTO returns to 250 ms at the first ACK after a timeout
(`--quench-timestamps`: RFC 7323 timing, which clears the backoff the same way; `--rto-max`
caps it instead; `--rto-tick`, `--quench-abc-limit` and `--htsim-timeouts-on-tick` swap the
timer's granularity, slow start's segments per ACK and htsim's offset after its scanner's tick);
htsim's scanner fires a timer at the first 10 ms tick after its deadline, quench's tick at the
last tick at or before it (BSD's counting of ticks): `--rto-tick-rule after` gives quench
htsim's rule, `--htsim-tick-before` gives htsim quench's;
after a timeout htsim's go-back-N rewinds `_highest_sent`, from which it then takes its recover
point, and halves its window for ssthresh, where quench takes both from the highest sequence
ever sent (`--htsim-recover-max`, `--htsim-flight-ssthresh` give htsim quench's rules); its
ACKs arrive the instant they are sent, quench's 2 ns later, every ACK alike
(`--htsim-ack-delay-ns`; `--quench-ack-link` sets quench's ACK links' rate and delay);
its random band (`--htsim-random-band 0` turns it off); its initial ssthresh
of 100 packets (`--htsim-unbounded-ssthresh`, as quench's); every flow starting at 0
(`--stagger-ns`).

Throughput is bytes delivered in order, on the wire (htsim counts a packet's 1500 bytes as data,
quench's payload bytes are scaled). Drops are data packets: htsim's switch queues do not count
theirs, so its figure is packets sent less packets that reached a sink less packets queued or on
a wire at the end; quench's comes from its links' drop counters, ACKs told apart by size. Per
flow, "lost" is sent less received less what waits in the sender's NIC queue (packets on the
path at the end count as lost there). An incast flow's completion is its last packet's ACK in
htsim (which arrives the instant the packet does) and the last byte's arrival in quench, both
from the flow's start, the handshake included. `--seeds` runs each seed and prints the mean,
min and max of every column. docs/validation.md, "Fat-tree permutation against htsim" and
"Incast against htsim", has the figures.

    .venv/bin/python benchmarks/compare_htsim_fabric.py --htsim-src ~/csg-htsim --experiments
    .venv/bin/python benchmarks/compare_htsim_fabric.py --htsim-src ~/csg-htsim --ks 8 \
        --quench-direct-acks --htsim-random-band 0 --quench-switch-buffer 7 --seeds 1,2,3,4,5
    .venv/bin/python benchmarks/compare_htsim_fabric.py --htsim-src ~/csg-htsim --scenario incast \
        --senders 8,15 --duration-ms 16000 --quench-direct-acks --htsim-random-band 0 \
        --quench-switch-buffer 7 --quench-edge-buffer 7 --quench-byte-limits --quench-timestamps
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fabric import (  # noqa: E402
    BUFFER_PACKETS,
    HTSIM_URL,
    PACKET_BYTES,
    RATE_MBPS,
    WORK,
    anchored_edit,
    build_htsim,
    fetch_source,
    timed_child,
)

SEED = 1
DURATION_MS = 200
ACK_BYTES = 40  # a bare TCP/IP header, as quench sends an ACK without options
TIMESTAMP_BYTES = 12  # RFC 7323's option with its two NOPs, out of each segment's payload
# htsim's host NIC queue (FairPriorityQueue, queue.cpp) never drops: past its FEEDER_BUFFER
# (1000 packets) it only prints its size. quench's stands in with a limit no window reaches
# (the receive window, 4 MiB, holds a flow under 2,900 packets).
HOST_PACKETS = 100_000
MAIN_TCP = "datacenter/main_tcp.cpp"
TOPOLOGY = "datacenter/fat_tree_topology.cpp"
# htsim's TcpSrc never gives up on a connection; quench's gives up after this many timeouts in a
# row (RFC 6298's and 4.3BSD's 12 by default).
NEVER_GIVE_UP = 1000
INCAST_PACKETS = 300  # 450 KB in 1500-byte packets, a short flow beside the permutation's long ones


@dataclass(frozen=True)
class Setting:
    """What each simulator is told; the defaults are the closest match."""

    label: str
    random_band: int = 3  # htsim main.h RANDOM_BUFFER, packets
    unbounded_ssthresh: bool = False  # htsim's TcpSrc starts at 100 packets
    host_qdisc: str = "fq"  # quench's access-link queue: "fq" lets ACKs pass the data
    host_buffer: int = HOST_PACKETS  # its limit, packets
    initial_window: int = 10  # quench, segments (htsim tcp.cpp: 10)
    rto_min: str = "250ms"  # quench (htsim tcp.cpp: 250 ms)
    # quench's RTO ceiling, backoff included ("" is its default, 60 s); htsim doubles its RTO at
    # a timeout but times the retransmission (no Karn's rule), whose ACK puts it back at 250 ms
    rto_max: str = ""
    # quench's RFC 7323 timestamps: every ACK, a retransmission's too, is timed by its echo and
    # clears the backoff, as htsim times each packet by its own send time (12 bytes of payload
    # less per packet)
    timestamps: bool = False
    rto_tick: str = "10ms"  # quench's timer granularity (htsim's TcpRtxTimerScanner: 10 ms)
    # quench's tick rule: "bsd" (a timer fires up to a tick before its deadline) or "after"
    # (at the first tick after it, as htsim's scanner)
    rto_tick_rule: str = "bsd"
    direct_acks: bool = False  # quench: ACKs over a link of their own, as htsim's skip the fabric
    # quench: that link's "rate/delay" ("": every ACK 2 ns, a whole number of them serializing)
    ack_link: str = ""
    # quench's switch queues, packets waiting: htsim's 8 count the packet on the wire as well
    fabric_buffer: int = BUFFER_PACKETS
    stagger_ns: int = 0  # both: host i's flow starts at i x this (htsim's all start at 0)
    seed: int = SEED  # both: htsim's srand (its permutation and path draw) and quench's Network
    # quench's edge-to-host queues, drop-tail packets waiting; 0: the host's own queue, which
    # fat_tree's access tier gives both directions of the host's link (htsim's LS->DST queue is
    # a switch queue of 8 packets; the permutation never queues there, an incast does)
    edge_buffer: int = 0
    # quench's slow start, segments per ACK at most (RFC 3465's L; 0 is its default, 2); htsim's
    # inflate_window counts at most one segment per ACK
    abc_limit: int = 0
    htsim_on_tick: bool = False  # htsim: timeouts fire on the scanner's tick, not just after it
    # htsim: a timer fires at the last tick at or before its deadline, on the tick, as quench's
    # (rtt.rs: a timer of whole ticks counted from the start of the tick it was armed in)
    # rather than at the first tick after it
    htsim_tick_before: bool = False
    # htsim: a timeout's ssthresh is half the data outstanding (quench's RFC 5681 FlightSize, from
    # the highest sequence sent) rather than half the window (TcpSrc::deflate_window)
    htsim_flight_ssthresh: bool = False
    # htsim: a timeout's recover point (no fast retransmit below it) is the highest sequence ever
    # sent, as quench's snd_max (RFC 6582), not TcpSrc's _highest_sent, which go-back-N rewinds
    htsim_recover_max: bool = False
    # htsim: after a timeout a fast retransmit needs an ACK beyond the recover point, as quench's
    # NewReno (RFC 6582: snd_una > recover_end), not one that reaches it (TcpSrc)
    htsim_strict_recover: bool = False
    # htsim: a pipe of this many ns before the sender on the ACKs' route (htsim's ACK arrives the
    # instant it is sent; quench's link of their own takes 2 ns: 1 ns and 40 bytes at 320 Gb/s)
    htsim_ack_delay_ns: int = 0
    byte_limits: bool = False  # quench's switch queues limited in bytes (htsim's: 8 x 1500 bytes)
    # htsim: a packet that reaches a switch queue at the instant another ends its transmission
    # finds that one still queued, as in quench (arrivals of an instant before its ends of
    # transmission); htsim's event list runs the end first where it was scheduled first
    htsim_arrival_first: bool = False
    incast: int = 0  # senders: hosts 1 to N each send flow_packets to host 0; 0 is the permutation
    flow_packets: int = INCAST_PACKETS  # an incast flow's size, 1500-byte packets


@dataclass(frozen=True)
class Flow:
    src: int
    dst: int
    switches: tuple[str, ...]  # quench names, edge to edge
    sent_pkts: float
    lost_pkts: float  # sent, less arrived, less still in its own NIC queue
    delivered_bytes: float
    fct_s: float = math.nan  # a sized flow's completion (its last packet delivered), from its start
    timeouts: int = 0


# ---------------------------------------------------------------------------------------
# htsim

# Declared before main_tcp.cpp's main: each flow's record, the seed argument, and a TcpSrc that
# notes when its last packet is ACKed (htsim prints that under one name for every flow) and
# counts its retransmission timeouts (the scanner's test, before TcpSrc's own hook runs).
PEER_TYPES = """#include <set>
EventList eventlist;
struct PeerTcpSrc : TcpSrc {
    explicit PeerTcpSrc(EventList& ev) : TcpSrc(NULL, NULL, ev) {}
    simtime_picosec finished_ps = 0;
    uint32_t timeouts = 0;
    void receivePacket(Packet& pkt) override {
        TcpSrc::receivePacket(pkt);
        if (!finished_ps && _last_acked >= _flow_size) finished_ps = eventlist().now();
    }
    void rtx_timer_hook(simtime_picosec now, simtime_picosec period) override {
        // TcpSrc's scanner fires a timer at the first tick after its deadline. quench's tick
        // (PEER_TICK_BEFORE) counts a timer of whole ticks from the start of the tick it was
        // armed in (rtt.rs, expiry): it fires at the last tick at or before the deadline, the
        // tick within one period of it.
        simtime_picosec due = _RFC2988_RTO_timeout;
        bool expired = due != timeInf && (PEER_TICK_BEFORE ? now + period > due : now > due);
        if (expired && _highest_sent != 0 && !_rtx_timeout_pending) timeouts++;
        if (!PEER_ON_TICK && !PEER_TICK_BEFORE) return TcpSrc::rtx_timer_hook(now, period);
        // TcpSrc's hook less its offset of (period - lateness) / 200 after the tick: every
        // flow whose deadline has passed times out on the tick itself, as quench's do.
        if (!expired || _highest_sent == 0 || _rtx_timeout_pending) return;
        _rtx_timeout_pending = true;
        eventlist().sourceIsPendingRel(*this, 0);
        _rto *= 2;
        _RFC2988_RTO_timeout = now + _rto;
    }
    // At a timeout TcpSrc rewinds _highest_sent (go-back-N), halves its window (1 segment
    // after a timeout before) and takes the rewound _highest_sent as _recoverq. quench's sender
    // keeps the highest sequence ever sent (snd_max) and takes both from it: PEER_FLIGHT_SSTHRESH
    // sets ssthresh to half the data outstanding up to it (RFC 5681's FlightSize), and
    // PEER_RECOVER_MAX records it as the point below which three duplicate ACKs start no fast
    // retransmit (RFC 6582's recover).
    uint64_t max_sent = 0;
    void doNextEvent() override {
        bool timeout = _rtx_timeout_pending && _established;
        if (_highest_sent > max_sent) max_sent = _highest_sent;
        uint64_t flight = max_sent > _last_acked ? max_sent - _last_acked : 0;
        TcpSrc::doNextEvent();
        if (PEER_FLIGHT_SSTHRESH && timeout) _ssthresh = std::max<uint64_t>(flight / 2, 2 * _mss);
        if (PEER_RECOVER_MAX && timeout) _recoverq = max_sent;
        // TcpSrc refuses a fast retransmit while _last_acked < _recoverq, so an ACK of exactly
        // everything sent before the timeout allows one; quench's NewReno (RFC 6582's "covers
        // more than recover") needs an ACK beyond it: one sequence number more.
        if (PEER_STRICT_RECOVER && timeout) _recoverq += 1;
    }
};
struct PeerFlow { PeerTcpSrc* src; TcpSink* sink; uint32_t from, to; const Route* route; };
static std::vector<PeerFlow> peer_flows;
static unsigned peer_seed = 1;
// A pipe's count of packets on the wire is protected: read through a derived type.
struct PeerPipe : Pipe {
    static int count(Pipe* p) { return static_cast<PeerPipe*>(p)->_count; }
};"""


def edit_main_tcp(text: str, duration_ms: int, setting: Setting) -> str:
    text = anchored_edit(
        text, "eventlist.setEndtime(timeFromSec(4));", f"eventlist.setEndtime(timeFromMs({duration_ms}));", MAIN_TCP
    )
    # The seed is an argument (one binary serves every seed); times it prints (a flow's finish,
    # in ms) to the picosecond.
    text = anchored_edit(text, "srand(time(NULL));", "srand(peer_seed); cout.precision(15);", MAIN_TCP)
    nodes = '} else if (!strcmp(argv[i],"-nodes")){'
    seed_arg = (
        '} else if (!strcmp(argv[i],"-seed")){\n            peer_seed = atoi(argv[i+1]);\n            i++;\n        '
    )
    text = anchored_edit(text, nodes, seed_arg + nodes, MAIN_TCP)
    new_src = "tcpSrc = new TcpSrc(NULL, NULL, eventlist);"
    peer_src = "tcpSrc = new PeerTcpSrc(eventlist);"
    if setting.unbounded_ssthresh:  # TcpSrc starts with ssthresh = 100 packets; quench has no such key
        peer_src += " tcpSrc->set_ssthresh(0xffffffff);"
    if setting.incast:
        text = edit_incast(text, setting)
        # After its SYN (sequence number 1) TcpSrc sends while _highest_sent <= b + 1 MSS + 1 and
        # finishes at an ACK of b + 1 MSS, for set_flowsize(b): b = P x 1500 - 1501 sends exactly
        # P packets and finishes at the P-th.
        peer_src += f" tcpSrc->set_flowsize({setting.flow_packets * PACKET_BYTES - PACKET_BYTES - 1});"
    text = anchored_edit(text, new_src, peer_src, MAIN_TCP)
    if setting.htsim_ack_delay_ns:
        ack_route = "routein = new Route();\n"
        delay = f"timeFromNs({setting.htsim_ack_delay_ns})"
        pipe = f"{ack_route} routein->push_back(new Pipe({delay}, eventlist));\n"
        text = anchored_edit(text, ack_route, pipe, MAIN_TCP)
    on_tick = f"#define PEER_ON_TICK {int(setting.htsim_on_tick)}\n"
    on_tick += f"#define PEER_TICK_BEFORE {int(setting.htsim_tick_before)}\n"
    on_tick += f"#define PEER_FLIGHT_SSTHRESH {int(setting.htsim_flight_ssthresh)}\n"
    on_tick += f"#define PEER_RECOVER_MAX {int(setting.htsim_recover_max)}\n"
    on_tick += f"#define PEER_STRICT_RECOVER {int(setting.htsim_strict_recover)}\n"
    text = anchored_edit(text, "EventList eventlist;", on_tick + PEER_TYPES, MAIN_TCP)
    connect = "tcpSrc->connect(*routeout, *routein, *tcpSnk, timeFromMs(extrastarttime));"
    record = "\n peer_flows.push_back({(PeerTcpSrc*)tcpSrc, tcpSnk, src, dest, routeout});"
    stagger_ns = setting.stagger_ns
    start = f"timeFromNs((double)src * {stagger_ns})" if stagger_ns else "timeFromMs(extrastarttime)"
    text = anchored_edit(text, connect, connect.replace("timeFromMs(extrastarttime)", start) + record, MAIN_TCP)
    report = (
        "while (eventlist.doNextEvent()) {\n"
        "    }\n"
        "    std::set<BaseQueue*> peer_queues;\n"
        "    std::set<Pipe*> peer_pipes;\n"
        "    for (auto& f : peer_flows) {\n"
        "        BaseQueue* nic = (BaseQueue*)f.route->at(0);\n"
        '        cout << "PEER_FLOW " << f.from << " " << f.to << " " << f.src->_packets_sent << " "\n'
        '             << f.sink->_packets << " " << f.sink->_cumulative_ack << " " << nic->queuesize() << " "\n'
        '             << f.src->finished_ps << " " << f.src->timeouts << " ";\n'
        # A route is (queue, pipe) per link, then the sink: the queues name the path.
        "        for (size_t i = 0; i + 1 < f.route->size(); i += 2) {\n"
        '            cout << f.route->at(i)->nodename() << ",";\n'
        "            peer_queues.insert((BaseQueue*)f.route->at(i));\n"
        "            peer_pipes.insert((Pipe*)f.route->at(i + 1));\n"
        "        }\n"
        "        cout << endl;\n"
        "    }\n"
        "    mem_b peer_queued = 0;\n"
        "    for (BaseQueue* q : peer_queues) peer_queued += q->queuesize();\n"
        "    for (Pipe* p : peer_pipes) peer_queued += (mem_b)PeerPipe::count(p) * Packet::data_packet_size();\n"
        '    cout << "PEER_QUEUED " << peer_queued << endl;\n'
    )
    return anchored_edit(text, "while (eventlist.doNextEvent()) {\n    }\n", report, MAIN_TCP)


def edit_incast(text: str, setting: Setting) -> str:
    """Hosts 1 to N each send to host 0 (htsim's ConnectionMatrix::setIncast) instead of the
    permutation; -conns is N."""
    return anchored_edit(text, "conns->setPermutation(no_of_conns);", "conns->setIncast(no_of_conns, 1);", MAIN_TCP)


# A switch queue under quench's order of an instant's events (docs/design.md, "Simultaneous
# events": a transmission that ends at t does not free room for a packet that arrives at t).
# htsim runs equal-time events in the order they were scheduled (EventList's multimap), and a
# queue's end of transmission, scheduled when the transmission began (1.2 us before), comes
# before a packet's arrival off a 1 us pipe: the arrival finds room. This queue drops such an
# arrival when the queue, the departed packet counted, would overflow.
PEER_ARRIVAL_FIRST = """#include "randomqueue.h"
struct PeerArrivalFirstQueue : RandomQueue {
    PeerArrivalFirstQueue(linkspeed_bps rate, mem_b size, EventList& ev, QueueLogger* log, mem_b band)
        : RandomQueue(rate, size, ev, log, band) {}
    simtime_picosec departed_at = timeInf;
    mem_b departed = 0;
    void completeService() override {
        mem_b before = _queuesize;
        RandomQueue::completeService();
        departed_at = eventlist().now();
        departed = before - _queuesize;
    }
    void receivePacket(Packet& pkt) override {
        if (departed_at == eventlist().now() && _queuesize + departed + pkt.size() > _maxsize) {
            pkt.free();
            return;
        }
        RandomQueue::receivePacket(pkt);
    }
};
"""


def edit_topology(text: str, setting: Setting) -> str:
    """fat_tree_topology.cpp as it is, or with its switch queues under quench's order of an
    instant's events (`htsim_arrival_first`)."""
    if not setting.htsim_arrival_first:
        return text
    alloc = "BaseQueue* FatTreeTopology::alloc_src_queue(QueueLogger* queueLogger){"
    text = anchored_edit(text, alloc, PEER_ARRIVAL_FIRST + alloc, TOPOLOGY)
    random = "return new RandomQueue(speed, queuesize, *_eventlist, queueLogger, memFromPkt(RANDOM_BUFFER));"
    return anchored_edit(text, random, random.replace("RandomQueue", "PeerArrivalFirstQueue"), TOPOLOGY)


def edit_main_h(text: str, random_band: int) -> str:
    text = re.sub(r"#define HOST_NIC \d+", f"#define HOST_NIC {RATE_MBPS}", text, count=1)
    return anchored_edit(text, "#define RANDOM_BUFFER 3", f"#define RANDOM_BUFFER {random_band}", "datacenter/main.h")


def build_peer_htsim(src: str, duration_ms: int, setting: Setting) -> Path:
    """htsim_tcp with this script's edits, in its own copy of bench_fabric's build tree (whose
    libhtsim.a it reuses); kept by a hash of the edited sources."""
    source = fetch_source(src)
    main_tcp = (source / "sim" / MAIN_TCP).read_text()
    edited_main = edit_main_tcp(main_tcp, duration_ms, setting)
    edited_h = edit_main_h((source / "sim/datacenter/main.h").read_text(), setting.random_band)
    topology = (source / "sim" / TOPOLOGY).read_text()
    edited_topology = edit_topology(topology, setting)
    # The topology's text enters the key only when edited: binaries built before are kept.
    key = edited_main + edited_h + (edited_topology if edited_topology != topology else "")
    binary = WORK / f"htsim_peer-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    if binary.exists():
        return binary
    tree = WORK / "peer"
    if not (tree / "sim/libhtsim.a").exists():
        build_htsim(src, 1)  # builds bench_fabric's tree, libhtsim.a included
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(WORK / "build", tree)
    datacenter = tree / "sim/datacenter"
    (datacenter / "main_tcp.cpp").write_text(edited_main)
    (datacenter / "main.h").write_text(edited_h)
    (datacenter / "fat_tree_topology.cpp").write_text(edited_topology)
    # main.h's constants reach the topology's objects too; the makefile does not track headers.
    for obj in datacenter.glob("*.o"):
        obj.unlink()
    subprocess.run(["make", "-j2", "htsim_tcp"], cwd=datacenter, check=True, stdout=subprocess.DEVNULL)
    shutil.copy2(datacenter / "htsim_tcp", binary)
    return binary


def quench_path(queues: str, k: int) -> tuple[str, ...]:
    """The nodes htsim's queues feed (e.g. "queue(10000Mb/s,12000bytes)US6->LS_7(0)" feeds
    edge switch 7), named as quench names them."""
    half = k // 2
    names = {
        "LS": lambda i: f"tor{i}",
        "US": lambda i: f"agg{i // half}_{i % half}",
        "CS": lambda i: f"core{(i % half) * half + i // half}",
        "DST": lambda i: f"h{i}",
    }
    return tuple(names[kind](int(i)) for kind, i in re.findall(r"->(LS|US|CS|DST)_?(\d+)\(", queues))


def run_htsim(src: str, k: int, duration_ms: int, setting: Setting) -> tuple[list[Flow], float]:
    """The flows and the data packets dropped: sent, less arrived, less queued or on a wire at
    the end."""
    binary = build_peer_htsim(src, duration_ms, setting)
    hosts = k**3 // 4
    conns = setting.incast or hosts
    args = ["-nodes", str(hosts), "-conns", str(conns), "-seed", str(setting.seed), "-o", str(WORK / "logout.dat")]
    out, _, _ = timed_child([str(binary), *args], cwd=WORK)
    flows, queued, unaccounted = [], re.search(r"PEER_QUEUED (\d+)", out), 0
    for line in out.splitlines():
        if "PEER_FLOW " in line:  # htsim may have left a progress dot before it
            _, s, d, sent, arrived, cum_ack, nic, finished_ps, timeouts, queues = line[
                line.index("PEER_FLOW ") :
            ].split()
            hops = quench_path(queues, k)
            unaccounted += int(sent) - int(arrived)
            lost = (int(sent) - int(arrived) - int(nic)) / PACKET_BYTES
            # Every flow starts at 0 unless staggered (host i at i x stagger).
            fct = (int(finished_ps) - int(s) * setting.stagger_ns * 1000) / 1e12 if int(finished_ps) else math.nan
            sent_pkts = int(sent) / PACKET_BYTES
            flows.append(Flow(int(s), int(d), hops[:-1], sent_pkts, lost, float(cum_ack), fct, int(timeouts)))
    if len(flows) != conns or not queued:
        sys.exit(f"compare_htsim_fabric: htsim printed {len(flows)} flows, expected {conns}:\n{out[-2000:]}")
    return flows, (unaccounted - int(queued[1])) / PACKET_BYTES


# ---------------------------------------------------------------------------------------
# quench


def data_packets(packets: float, size_bytes: float) -> float:
    """Full data packets among `packets` of `size_bytes` in all, the others bare ACKs."""
    return (size_bytes - ACK_BYTES * packets) / (PACKET_BYTES - ACK_BYTES)


# The ACK links' rate: 40 bytes take 1 ns (the fastest rate nanosecond time allows for them)
ACK_LINK_BPS = 320_000_000_000
ACK_PATH_NS = 2  # an ACK's time on its link, serialization and delay: 1 ns of each at 40 bytes


def ack_link(setting: Setting) -> tuple[str, str]:
    """The ACK links' rate and delay: an ACK takes ACK_PATH_NS in all, a whole number of
    nanoseconds of it to serialize. A link carries the fraction of a nanosecond left by one
    packet to the next (units.rs, BitRate::tx_time_with_remainder), so an ACK that took 1.3 ns
    (52 bytes, with timestamps, at 320 Gb/s) would arrive 2 or 3 ns after it was sent, by the
    count of ACKs its link had carried: a jitter that orders two flows' packets where htsim's,
    sent on ACKs that take no time, reach a queue in the same instant. Here every ACK takes the same
    whole number of nanoseconds (`--quench-ack-link` sets another rate and delay)."""
    if setting.ack_link:
        rate, delay = setting.ack_link.split("/")
        return rate, delay
    ack_bits = 8 * (ACK_BYTES + (TIMESTAMP_BYTES if setting.timestamps else 0))
    serialize_ns = math.ceil(ack_bits * 1e9 / ACK_LINK_BPS)
    return f"{ack_bits * 1e9 / serialize_ns:.0f}bps", f"{ACK_PATH_NS - serialize_ns}ns"


def add_ack_links(net, paths: list[Flow], setting: Setting) -> None:
    """A link from each receiver straight to its sender, for the ACKs alone: htsim's reverse
    route holds only the sender, so an ACK arrives the instant it is sent (here: ACK_PATH_NS
    later, every ACK alike; `ack_link`)."""
    rate, delay = ack_link(setting)
    pairs = {frozenset((f.src, f.dst)) for f in paths}
    for a, b in sorted(tuple(sorted(p)) for p in pairs):
        net.link(f"h{a}", f"h{b}", rate, delay)


def fat_tree_by_links(
    net, k: int, switch_qdisc: dict, host_qdisc: dict, edge_qdisc: dict, jitter: dict | None = None
) -> None:
    """fat_tree's nodes and links, in its order and names, each host's link with one queue per
    direction: `host_qdisc` host to edge, `edge_qdisc` edge to host; `jitter` (a link's
    `jitter` table) on every link, both ways."""
    half, rate, delay = k // 2, f"{RATE_MBPS}Mbps", "1us"
    wire = {"jitter": jitter, "reverse_jitter": jitter} if jitter else {}
    hosts = [f"h{i}" for i in range(k**3 // 4)]
    tors = [f"tor{p * half + e}" for p in range(k) for e in range(half)]
    aggs = [f"agg{p}_{a}" for p in range(k) for a in range(half)]
    net.hosts(*hosts).routers(*tors, *aggs, *(f"core{i}" for i in range(half * half)))
    for i, h in enumerate(hosts):
        net.link(h, tors[i // half], rate, delay, qdisc=host_qdisc, reverse_qdisc=edge_qdisc, **wire)
    for p in range(k):
        for e in range(half):
            for a in range(half):
                net.link(tors[p * half + e], f"agg{p}_{a}", rate, delay, qdisc=switch_qdisc, **wire)
    for p in range(k):
        for a in range(half):
            for m in range(half):
                net.link(f"agg{p}_{a}", f"core{a * half + m}", rate, delay, qdisc=switch_qdisc, **wire)


def switch_limit(packets: int, setting: Setting) -> str:
    """A switch queue's limit: packets, or as many full packets' bytes (htsim's queues count
    bytes, so a 1-byte SYN finds room among full-size packets where a packet slot would not)."""
    return f"{packets * PACKET_BYTES}B" if setting.byte_limits else f"{packets}p"


def run_quench(k: int, duration_ms: int, paths: list[Flow], setting: Setting) -> tuple[list[Flow], tuple[float, float]]:
    """The flows, and the data packets and ACKs dropped (every link's drops, told apart by
    size)."""
    from quench import Network

    net = Network(seed=setting.seed, name=f"htsim-peer-k{k}")
    buffer = {"kind": "droptail", "limit": switch_limit(setting.fabric_buffer, setting)}
    access = {"qdisc": {"kind": setting.host_qdisc, "limit": f"{setting.host_buffer}p"}}
    tcp_keys = htsim_like_tcp(setting.initial_window, setting.rto_min, setting.rto_max, setting.rto_tick)
    if setting.rto_tick_rule != "bsd":
        tcp_keys["rto"]["tick_rule"] = setting.rto_tick_rule
    tcp_keys["timestamps"] = setting.timestamps
    if setting.abc_limit:
        tcp_keys["cc"]["abc_limit"] = setting.abc_limit
    if setting.edge_buffer:
        edge = {"kind": "droptail", "limit": switch_limit(setting.edge_buffer, setting)}
        fat_tree_by_links(net, k, buffer, access["qdisc"], edge)
    else:
        net.fat_tree(k, f"{RATE_MBPS}Mbps", "1us", qdisc=buffer, access=access)
    # Only the end-of-run tables are read: no per-packet records.
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False)
    if setting.direct_acks:
        add_ack_links(net, paths, setting)
    for f in paths:
        route = [f"h{f.src}", *f.switches, f"h{f.dst}"]
        back = {"reverse_path": [f"h{f.dst}", f"h{f.src}"]} if setting.direct_acks else {}
        start = f"{f.src * setting.stagger_ns}ns"
        # An incast flow's packets carry 1460 payload bytes each, htsim's 1500 on the wire.
        size = {"bytes": setting.flow_packets * payload_bytes(setting)} if setting.incast else {}
        net.tcp(f"h{f.src}", f"h{f.dst}", name=f"f{f.src}", start=start, path=route, **back, **size, **tcp_keys)
    res = net.run(duration=f"{duration_ms}ms")
    rows, links = res.flows.set_index("name"), res.links.set_index(["from", "to"])
    flows = []
    for f in paths:
        r, nic = rows.loc[f"f{f.src}"], links.loc[(f"h{f.src}", f.switches[0])]
        nic_data = data_packets(float(nic["backlog_packets"]), float(nic["backlog_bytes"]))
        lost = float(r["packets_sent"]) - float(r["packets_received"]) - nic_data
        # htsim counts a packet's 1500 bytes as data; quench its 1460 payload bytes.
        on_wire = float(r["bytes_delivered"]) * PACKET_BYTES / payload_bytes(setting)
        fct, timeouts = float(r["response_time_s"]), int(r["timeouts"])
        flows.append(Flow(f.src, f.dst, f.switches, float(r["packets_sent"]), lost, on_wire, fct, timeouts))
    dropped = float(res.links["dropped_packets"].sum())
    data = data_packets(dropped, float(res.links["dropped_bytes"].sum()))
    return flows, (data, dropped - data)


def payload_bytes(setting: Setting) -> int:
    """Data bytes in a full 1500-byte packet."""
    return PACKET_BYTES - ACK_BYTES - (TIMESTAMP_BYTES if setting.timestamps else 0)


def htsim_like_tcp(initial_window: int, rto_min: str, rto_max: str = "", rto_tick: str = "10ms") -> dict:
    """quench's keys for htsim's TcpSrc (tcp.cpp): 1500-byte packets (MSS 1460 + 40 header
    bytes), no SACK, no delayed ACKs, its RTO bounds and its 10 ms timer scanner."""
    return {
        "profile": "rfc",
        "cc": {"kind": "newreno", "initial_window": initial_window},
        "mss": PACKET_BYTES - 40,
        "sack": False,
        "delayed_ack": {"enabled": False},
        "rto": {
            "min": rto_min,
            "initial": "3s",
            "tick": rto_tick,
            "max_backoffs": NEVER_GIVE_UP,
            **({"max": rto_max} if rto_max else {}),
        },
    }


# ---------------------------------------------------------------------------------------
# The table


def gbps(delivered_bytes: float, duration_ms: int) -> float:
    return delivered_bytes * 8 / (duration_ms / 1e3) / 1e9


def compare(
    h: list[Flow], h_drops: float, q: list[Flow], q_drops: tuple[float, float], duration_ms: int, verbose: bool
) -> dict:
    if verbose:
        print(
            f"{'flow':>10} {'path':<34} {'htsim Gb/s':>10} {'quench Gb/s':>11} {'diff':>7} {'h lost':>7} {'q lost':>7}"
        )
    diffs, line_diffs = [], []
    for a, b in zip(h, q, strict=True):
        ta, tb = gbps(a.delivered_bytes, duration_ms), gbps(b.delivered_bytes, duration_ms)
        diffs.append(abs(tb - ta) / ta if ta else float("inf"))
        line_diffs.append(abs(tb - ta) / (RATE_MBPS / 1e3))
        if verbose:
            flow = f"h{a.src}>h{a.dst}"
            diff = f"{(tb - ta) / ta:>+7.1%}" if ta else f"{'-':>7}"
            print(
                f"{flow:>10} {'-'.join(a.switches):<34} {ta:>10.3f} {tb:>11.3f} {diff}"
                f" {a.lost_pkts:>7.0f} {b.lost_pkts:>7.0f}"
            )
    total_h = gbps(sum(f.delivered_bytes for f in h), duration_ms)
    total_q = gbps(sum(f.delivered_bytes for f in q), duration_ms)
    return {
        "htsim_gbps": total_h,
        "quench_gbps": total_q,
        "ratio": total_q / total_h,
        "htsim_lost": h_drops,
        "quench_lost": q_drops[0],
        "quench_ack_drops": q_drops[1],
        "mean_diff": sum(diffs) / len(diffs),
        "max_diff": max(diffs),
        "mean_line_diff": sum(line_diffs) / len(line_diffs),
    }


def summary_line(label: str, s: dict) -> str:
    return (
        f"{label:<44} {s['htsim_gbps']:>8.2f} {s['quench_gbps']:>9.2f} {s['ratio']:>6.3f}"
        f" {s['htsim_lost']:>8.0f} {s['quench_lost']:>8.0f} {s['quench_ack_drops']:>8.0f}"
        f" {s['mean_diff']:>7.0%} {s['max_diff']:>7.0%} {s['mean_line_diff']:>6.1%}"
    )


SUMMARY_HEAD = (
    f"{'setting':<44} {'htsim':>8} {'quench':>9} {'q/h':>6} {'h lost':>8} {'q lost':>8} {'q ACKs':>8}"
    f" {'mean':>7} {'max':>7} {'mean':>6}\n"
    f"{'':<44} {'Gb/s':>8} {'Gb/s':>9} {'':>6} {'pkts':>8} {'pkts':>8} {'dropped':>8}"
    f" {'|diff|':>7} {'|diff|':>7} {'/line':>6}"
)

EXPERIMENTS = [
    Setting("as close as the keys allow"),
    Setting("quench: ACKs on a link of their own", direct_acks=True),
    Setting("+ htsim: drop-tail (no random band)", direct_acks=True, random_band=0),
    Setting("+ htsim: ssthresh unbounded", direct_acks=True, random_band=0, unbounded_ssthresh=True),
    Setting("+ quench: 7-packet switch queues", direct_acks=True, random_band=0, fabric_buffer=BUFFER_PACKETS - 1),
    Setting("quench: ACKs behind data (drop-tail NIC)", host_qdisc="droptail"),
    Setting("quench: 1000-packet drop-tail NIC", host_qdisc="droptail", host_buffer=1000),
]


def spread(values: list[float]) -> str:
    """Mean, min and max of a column over seeds."""
    return f"{sum(values) / len(values):.2f} ({min(values):.2f} to {max(values):.2f})"


def print_seed_spread(rows: list[dict], columns: list[tuple[str, str]]) -> None:
    print(f"over {len(rows)} seeds: mean (min to max)")
    for key, label in columns:
        print(f"  {label:<24} {spread([r[key] for r in rows])}")


PERMUTATION_SPREAD = [
    ("htsim_gbps", "htsim Gb/s"),
    ("quench_gbps", "quench Gb/s"),
    ("ratio", "quench / htsim"),
    ("htsim_lost", "htsim drops"),
    ("quench_lost", "quench drops"),
]


def permutation(a: argparse.Namespace, k: int, given: Setting, seeds: list[int]) -> None:
    fabric = f"{RATE_MBPS / 1e3:g} Gb/s, {BUFFER_PACKETS}-packet buffers"
    print(f"\nk={k}: {k**3 // 4} flows, {a.duration_ms} ms, {fabric}")
    lines, rows = [], []
    settings = EXPERIMENTS if a.experiments else [replace(given, seed=seed, label=f"seed {seed}") for seed in seeds]
    for setting in settings:
        h, h_drops = run_htsim(a.htsim_src, k, a.duration_ms, setting)
        q, q_drops = run_quench(k, a.duration_ms, h, setting)
        verbose = len(settings) == 1
        rows.append(compare(h, h_drops, q, q_drops, a.duration_ms, verbose=verbose))
        lines.append(summary_line(setting.label, rows[-1]))
        print(f"  {setting.label} done", file=sys.stderr)
    print(SUMMARY_HEAD)
    print("\n".join(lines))
    if len(seeds) > 1 and not a.experiments:
        print_seed_spread(rows, PERMUTATION_SPREAD)


# ---------------------------------------------------------------------------------------
# Incast


def incast_figures(flows: list[Flow], drops: float, flow_packets: int) -> dict:
    """The round (the last flow's completion), the spread of the flows' completions, goodput
    over the round (bytes on the wire) and the losses."""
    fcts = [f.fct_s for f in flows]
    done = sorted(t for t in fcts if not math.isnan(t))
    last = max(done) if len(done) == len(fcts) else math.nan
    return {
        "round_ms": last * 1e3,
        "first_ms": min(done) * 1e3 if done else math.nan,
        "median_ms": done[len(fcts) // 2] * 1e3 if len(done) > len(fcts) // 2 else math.nan,
        "goodput_mbps": len(flows) * flow_packets * PACKET_BYTES * 8 / last / 1e6,
        "completed": len(done),
        "drops": drops,
        "timeouts": sum(f.timeouts for f in flows),
        "timed_out_flows": sum(1 for f in flows if f.timeouts),
    }


def print_incast_flows(h: list[Flow], q: list[Flow]) -> None:
    print(f"{'flow':>9} {'path':<34} {'htsim ms':>9} {'quench ms':>9} {'h RTOs':>6} {'q RTOs':>6}")
    for a, b in zip(h, q, strict=True):
        path = "-".join(a.switches)
        print(
            f"{f'h{a.src}>h{a.dst}':>9} {path:<34} {a.fct_s * 1e3:>9.3f} {b.fct_s * 1e3:>9.3f}"
            f" {a.timeouts:>6} {b.timeouts:>6}"
        )


INCAST_COLUMNS = [
    ("round_ms", "round ms", ".3f"),
    ("first_ms", "first ms", ".3f"),
    ("median_ms", "median ms", ".3f"),
    ("goodput_mbps", "goodput Mb/s", ".1f"),
    ("completed", "flows done", ".0f"),
    ("drops", "drops", ".0f"),
    ("timeouts", "RTOs", ".0f"),
    ("timed_out_flows", "flows with RTO", ".0f"),
]


def incast(a: argparse.Namespace, k: int, senders: int, given: Setting, seeds: list[int]) -> None:
    hosts = k**3 // 4
    if not 0 < senders < hosts:
        sys.exit(f"compare_htsim_fabric: --senders {senders}: a k = {k} fat-tree has {hosts - 1} senders for host 0")
    print(f"\nk={k} incast: h1 to h{senders} each send {given.flow_packets} packets to h0, {a.duration_ms} ms")
    head = f"{'seed':>5} " + " ".join(f"{'h ' + label:>16} {'q ' + label:>16}" for _, label, _ in INCAST_COLUMNS)
    lines, rows = [head], []
    for seed in seeds:
        setting = replace(given, seed=seed, incast=senders, label=f"seed {seed}")
        h, h_drops = run_htsim(a.htsim_src, k, a.duration_ms, setting)
        q, q_drops = run_quench(k, a.duration_ms, h, setting)
        if len(seeds) == 1:
            print_incast_flows(h, q)
        hf, qf = incast_figures(h, h_drops, setting.flow_packets), incast_figures(q, q_drops[0], setting.flow_packets)
        cells = " ".join(f"{hf[key]:>16{fmt}} {qf[key]:>16{fmt}}" for key, _, fmt in INCAST_COLUMNS)
        lines.append(f"{seed:>5} {cells}")
        rows.append({**{f"h_{key}": v for key, v in hf.items()}, **{f"q_{key}": v for key, v in qf.items()}})
        rows[-1]["ratio"] = qf["round_ms"] / hf["round_ms"]
        print(f"  seed {seed} done", file=sys.stderr)
    print("\n".join(lines))
    spread_columns = [
        (f"{side}_{key}", f"{name} {label}")
        for key, label, _ in INCAST_COLUMNS
        for side, name in (("h", "htsim"), ("q", "quench"))
    ]
    print_seed_spread(rows, [*spread_columns, ("ratio", "round quench / htsim")])


# ---------------------------------------------------------------------------------------
# NDP incast


NDP_HEADER_BYTES = 64  # htsim's NdpPacket::ACKSIZE, quench's ndp::HEADER_BYTES


def build_htsim_ndp(src: str) -> Path:
    """htsim_ndp as its source has it (main_ndp.cpp takes its seed, link speed, MTU, queue and
    run length as arguments), built beside the TCP peer in a copy of bench_fabric's tree."""
    source = fetch_source(src)
    main_ndp = (source / "sim/datacenter/main_ndp.cpp").read_text()
    binary = WORK / f"htsim_ndp-{hashlib.sha256(main_ndp.encode()).hexdigest()[:12]}"
    if binary.exists():
        return binary
    tree = WORK / "ndp"
    if not (tree / "sim/libhtsim.a").exists():
        build_htsim(src, 1)
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(WORK / "build", tree)
    datacenter = tree / "sim/datacenter"
    (datacenter / "main_ndp.cpp").write_text(main_ndp)
    subprocess.run(["make", "-j2", "htsim_ndp"], cwd=datacenter, check=True, stdout=subprocess.DEVNULL)
    shutil.copy2(datacenter / "htsim_ndp", binary)
    return binary


def run_htsim_ndp(src: str, k: int, senders: int, packets: int, duration_ms: int, seed: int) -> list[float]:
    """Each flow's completion in s, by source: htsim's connection matrix (gen_incast.py's
    format) has hosts 1 to N send `packets` 1500-byte packets to host 0 from time 0."""
    binary = build_htsim_ndp(src)
    hosts = k**3 // 4
    matrix = WORK / f"incast-{hosts}-{senders}-{packets}.cm"
    rows = [f"{i}->0 start 0 size {packets * PACKET_BYTES}" for i in range(1, senders + 1)]
    matrix.write_text("\n".join([f"Nodes {hosts}", f"Connections {senders}", *rows]) + "\n")
    args = ["-nodes", str(hosts), "-tm", str(matrix), "-end", str(duration_ms * 1000), "-q", str(BUFFER_PACKETS)]
    args += ["-mtu", str(PACKET_BYTES), "-linkspeed", str(RATE_MBPS), "-cwnd", "15", "-strat", "perm"]
    out, _, _ = timed_child([str(binary), *args, "-seed", str(seed), "-o", str(WORK / "logout.dat")], cwd=WORK)
    done = {
        int(m[1]): float(m[2]) / 1e6 for m in re.finditer(r"Flow ndp_(\d+)_0 flow_id \d+ finished at ([\d.e+]+)", out)
    }
    return [done.get(i, math.nan) for i in range(1, senders + 1)]


def run_quench_ndp(
    k: int, senders: int, packets: int, duration_ms: int, seed: int, pull_rate: str, multipath: str = "spray_flow"
) -> tuple[list[float], float, float]:
    """Each flow's completion in s, the trims and the timeouts: NDP on `trim` switch ports
    (edge to host included, as htsim's composite queues), drop-tail host queues, packets
    sprayed over the fabric's paths (htsim's `-strat perm`)."""
    from quench import Network

    net = Network(seed=seed, name=f"htsim-ndp-k{k}")
    trim = {"kind": "trim", "data_limit": f"{BUFFER_PACKETS}p"}
    host = {"kind": "droptail", "limit": f"{HOST_PACKETS}p"}
    fat_tree_by_links(net, k, trim, host, trim)
    half = k // 2
    routers = [f"tor{i}" for i in range(k * half)] + [f"agg{p}_{a}" for p in range(k) for a in range(half)]
    for r in routers + [f"core{i}" for i in range(half * half)]:
        net.multipath(r, multipath)
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False)
    pull = {"pull_rate": pull_rate} if pull_rate else {}
    for i in range(1, senders + 1):
        net.ndp(f"h{i}", "h0", bytes=packets * (PACKET_BYTES - NDP_HEADER_BYTES), name=f"f{i}", **pull)
    res = net.run(duration=f"{duration_ms}ms")
    rows = res.flows.set_index("name")
    fcts = [float(rows.loc[f"f{i}", "response_time_s"]) for i in range(1, senders + 1)]
    return fcts, float(res.links["marked_packets"].sum()), float(res.flows["timeouts"].sum())


def ndp_incast(a: argparse.Namespace, k: int, senders: int, seeds: list[int]) -> None:
    ideal_ms = senders * a.flow_packets * PACKET_BYTES * 8 / (RATE_MBPS * 1e6) * 1e3
    print(f"\nk={k} NDP incast: h1 to h{senders} each send {a.flow_packets} packets to h0")
    print(f"N x size over the line rate: {ideal_ms:.3f} ms")
    head = ["h round ms", "q round ms", "q/h", "h first ms", "q first ms", "q trims", "q RTOs"]
    print(f"{'seed':>5} " + " ".join(f"{h:>11}" for h in head))
    ratios = []
    for seed in seeds:
        h = run_htsim_ndp(a.htsim_src, k, senders, a.flow_packets, a.duration_ms, seed)
        q, trims, timeouts = run_quench_ndp(
            k, senders, a.flow_packets, a.duration_ms, seed, a.quench_pull_rate, a.quench_multipath
        )
        ratios.append(max(q) / max(h))
        cells = [f"{max(h) * 1e3:.3f}", f"{max(q) * 1e3:.3f}", f"{ratios[-1]:.3f}", f"{min(h) * 1e3:.3f}"]
        cells += [f"{min(q) * 1e3:.3f}", f"{trims:.0f}", f"{timeouts:.0f}"]
        print(f"{seed:>5} " + " ".join(f"{c:>11}" for c in cells))
    print(f"round quench / htsim over {len(seeds)} seeds: {spread(ratios)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ks", default="4", help="fat-tree k values, comma-separated")
    ap.add_argument("--htsim-src", default=HTSIM_URL, help="htsim checkout or git URL")
    ap.add_argument("--duration-ms", type=int, default=DURATION_MS, help="simulated time")
    ap.add_argument("--htsim-random-band", type=int, default=3, help="htsim's RANDOM_BUFFER, packets")
    ap.add_argument("--htsim-timeouts-on-tick", action="store_true", help="no offset after the scanner's tick")
    ap.add_argument("--htsim-tick-before", action="store_true", help="htsim's timers on the tick before the deadline")
    ap.add_argument(
        "--htsim-flight-ssthresh", action="store_true", help="htsim's timeout ssthresh from the flight, as quench's"
    )
    ap.add_argument("--htsim-ack-delay-ns", type=int, default=0, help="htsim: delay on the ACKs' route, ns")
    ap.add_argument(
        "--htsim-strict-recover", action="store_true", help="htsim: fast retransmit after a timeout past recover only"
    )
    ap.add_argument("--htsim-recover-max", action="store_true", help="htsim's recover point: highest ever sent")
    ap.add_argument("--htsim-unbounded-ssthresh", action="store_true", help="htsim's initial ssthresh as quench's")
    ap.add_argument("--quench-host-qdisc", default="fq", help="host NIC queue's kind (fq, droptail)")
    ap.add_argument("--quench-host-buffer", type=int, default=HOST_PACKETS, help="host NIC queue, packets")
    ap.add_argument("--quench-switch-buffer", type=int, default=BUFFER_PACKETS, help="switch queues, packets")
    ap.add_argument("--stagger-ns", type=int, default=0, help="host i's flow starts at i x this, both")
    ap.add_argument(
        "--quench-edge-buffer", type=int, default=0, help="edge-to-host queues, packets (0: the host queue's)"
    )
    ap.add_argument("--quench-byte-limits", action="store_true", help="switch queues limited in bytes")
    ap.add_argument("--quench-direct-acks", action="store_true", help="ACKs over links of their own")
    ap.add_argument("--quench-ack-link", default="", help="those links' RATE/DELAY (default: 2 ns per ACK)")
    ap.add_argument("--initial-window", type=int, default=10, help="quench's initial window, segments")
    ap.add_argument("--rto-min", default="250ms", help="quench's minimum RTO")
    ap.add_argument(
        "--quench-multipath",
        default="spray_flow",
        help="NDP: the switches' policy (spray_flow: each flow its own cycle, htsim's -strat perm; spray)",
    )
    ap.add_argument("--quench-pull-rate", default="", help="NDP: the receiver's PULL rate (default its link's)")
    ap.add_argument("--quench-abc-limit", type=int, default=0, help="slow start's segments per ACK (0: quench's 2)")
    ap.add_argument("--quench-timestamps", action="store_true", help="RFC 7323 timestamps (every ACK timed)")
    ap.add_argument("--rto-tick", default="10ms", help="quench's RTO timer granularity (0: exact timers)")
    ap.add_argument("--rto-tick-rule", default="bsd", help="quench's tick rule: bsd, or after (htsim's)")
    ap.add_argument("--rto-max", default="", help="quench's maximum RTO, backoff included (default 60 s)")
    ap.add_argument("--experiments", action="store_true", help="the setting changes one at a time")
    ap.add_argument("--seeds", default=str(SEED), help="seeds, comma-separated: each draws htsim's flows and paths")
    ap.add_argument("--scenario", choices=["permutation", "incast", "ndp-incast"], default="permutation")
    ap.add_argument("--senders", default="8", help="incast: senders to host 0, comma-separated")
    ap.add_argument("--flow-packets", type=int, default=INCAST_PACKETS, help="incast: each flow's 1500-byte packets")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    given = Setting(
        "given",
        random_band=a.htsim_random_band,
        unbounded_ssthresh=a.htsim_unbounded_ssthresh,
        host_qdisc=a.quench_host_qdisc,
        host_buffer=a.quench_host_buffer,
        initial_window=a.initial_window,
        rto_min=a.rto_min,
        rto_max=a.rto_max,
        rto_tick=a.rto_tick,
        rto_tick_rule=a.rto_tick_rule,
        timestamps=a.quench_timestamps,
        byte_limits=a.quench_byte_limits,
        htsim_on_tick=a.htsim_timeouts_on_tick,
        htsim_tick_before=a.htsim_tick_before,
        htsim_flight_ssthresh=a.htsim_flight_ssthresh,
        htsim_recover_max=a.htsim_recover_max,
        htsim_strict_recover=a.htsim_strict_recover,
        htsim_ack_delay_ns=a.htsim_ack_delay_ns,
        abc_limit=a.quench_abc_limit,
        direct_acks=a.quench_direct_acks,
        ack_link=a.quench_ack_link,
        fabric_buffer=a.quench_switch_buffer,
        stagger_ns=a.stagger_ns,
        edge_buffer=a.quench_edge_buffer,
    )
    seeds = [int(seed) for seed in a.seeds.split(",")]
    for k in (int(k) for k in a.ks.split(",")):
        if a.scenario == "ndp-incast":
            for senders in (int(n) for n in a.senders.split(",")):
                ndp_incast(a, k, senders, seeds)
        elif a.scenario == "incast":
            for senders in (int(n) for n in a.senders.split(",")):
                incast(a, k, senders, replace(given, flow_packets=a.flow_packets), seeds)
        else:
            permutation(a, k, given, seeds)


if __name__ == "__main__":
    main()
