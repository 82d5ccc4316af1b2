"""Swift and HPCC on a k = 4 fat-tree, quench beside htsim with the same flows on the same paths.
A benchmark-style script: it prints tables and checks nothing.

Scenarios (`--scenario`): an incast, hosts 1 to N (`--senders`) each sending `--flow-packets`
1500-byte packets (300: 450 KB) to host 0 from time 0, and a permutation of long flows (each
host sends to one other, a derangement drawn from the seed) for `--duration-us` (10 ms). Both
are written as htsim's connection matrix (`ConnectionMatrix::load`'s `s->d start 0 size B`) and
run by htsim's own drivers, built from `--htsim-src` in copies of bench_fabric.py's tree (each
edit anchored on a line of the source, failing loudly when the line has moved): `htsim_swift`
(sim/datacenter/main_swift.cpp) and `htsim_hpcc` (sim/datacenter/main_hpcc.cpp). Each draws one
path per flow at random (seeded) and sends the ACKs back over the reverse of the drawn path,
through the fabric's queues. The copies print each flow's data path and ACK path, and quench
pins its flow to the same two (flow keys `path` and `reverse_path`; htsim's queue names mapped
to fat_tree's as compare_htsim_fabric.py maps them). Links are 10 Gb/s with 1 µs of
propagation in both.

Edits to both drivers' copies: the seed (htsim_swift's is `srand(13)`, an argument here;
HPCCSrc's constructor reseeds `rand` from the time of day, so the HPCC copy reseeds it from the
seed and the flow's index before each path draw); a sink subclass that notes when a flow's last
byte arrives (quench's `response_time_s` is the same instant: completion is the last byte's
arrival, from the flow's start at 0); a sampler that reads every queue on the flows' paths each
100 ns (`SAMPLE_NS`) up to the last completion; a line per flow and per queue at the end.
quench's queue figures are its links' exact time averages (`mean_backlog_bytes`, scaled from the
run to the incast's last completion, after which the queue is empty) and maxima. htsim's queue
holds the packet being sent, quench's the packets waiting (up to 1500 bytes more in htsim's on
a busy port).

Swift (`--transport swift`), matched (htsim: sim/swift.cpp, SwiftSrc's constructor, and
main_swift.cpp):
- base target 20 µs, flow scaling over fs_range = 5·base = 100 µs between 0.1 and 100 packets,
  ai 1, beta 0.8, max_mdf 0.5, 5 timeouts in a row to the least window: quench's defaults,
  taken from htsim's.
- per hop: htsim's h is base/6.55 = 3.053 µs times the route's `hop_count()`, but the route a
  subflow holds is a `Route::clone()`, which starts its count at 0 (route.cpp: the clone is made
  with the `Route(int size)` constructor and its entries copied without counting): htsim's
  targets have no hop term. quench's `per_hop` is 0 and `base_target` 20 µs to match
  (`--quench-per-hop-us`, `--quench-base-target-us`); `--htsim-hop-count` makes the clone keep
  the count (h per link: 6 across the core), which quench matches with h per router (5) and a
  base of 20 + h µs.
- paths: main_swift.cpp draws a path, connects the flow on it, then `set_paths` moves the
  subflow to the first of its own shuffle of the paths (SwiftSrc::set_paths, permute_paths);
  the ACKs keep the reverse of the drawn path. The copy prints the path the data takes.
- windows: htsim's least window is 10 bytes (quench `min_cwnd` = 10/1500 packets), its most
  1000 packets (quench's default); the initial window is main_swift.cpp's `-cwnd 15` (quench
  `initial_window` 15); below a packet both pace one packet per srtt/cwnd.
- packets: 1500 bytes on the wire (htsim's whole packet is data, `-mtu 1500`; quench's 1460
  payload bytes and 40 of header), an ACK of 40 bytes per packet, a SYN first; fast recovery at
  the third duplicate ACK (htsim's SwiftSubflowSrc, NewReno-like), no SACK; RTO at least
  100 µs, 1 ms before the first sample.
- queues: htsim's switch queues are RandomQueue (main_swift.cpp's RANDOM) of `-q` packets
  (`--buffer`, 100); its random-drop band (main.h RANDOM_BUFFER, 3 packets) is set to 0 here:
  plain drop-tail. Its limit counts the packet on the wire, quench's the packets waiting:
  quench's are `-q` − 1 packets, in bytes. htsim's host queue is its FairScheduler, and the
  sender holds a packet while more than 2 of its own wait there (SwiftSubflowSrc::
  send_next_packet), so its send time, from which it measures the RTT, is when the packet
  reaches the head of a short queue; quench's sender holds a segment until its host queue is
  empty (TCP `small_queues = "nic"`; `--quench-small-queues ""` lets the window's whole release
  wait in a 100,000-packet fair queue, where it counts in the RTT).
- delay: htsim's sample is the whole RTT (the send time echoed), quench's the RTT less the
  receiver's ACK delay, 0 without delayed ACKs: the same sample. Per flow: the mean of the
  samples over its ACKs and of the window over its ACKs (htsim: a SwiftLogger that SwiftSrc
  calls after every ACK, the sample recovered exactly from the smoothed RTT's update,
  `_rtt = 7·_rtt/8 + delay/8`; quench: `mean_rtt_s` and the cwnd record), and the target at the
  mean window (htsim's flow scaling takes the window in whole packets, `cwnd/_mss` being an
  integer division; `--htsim-fractional-fs` gives it quench's fractional window).
Left different: htsim's RTO timers are scanned every 10 ms (SwiftRtxTimerScanner) and fire at
the first scan after the deadline; quench's fire at the deadline. quench's `rto.tick` matches
the scan (`--quench-rto-tick 10ms`; the tick coarsens only the timer's RTT estimator, Swift
reads exact samples, so the incasts' figures are those of exact timers when nothing times
out).
htsim's SYN is 1 byte. A Swift flow of htsim that times out with more than one packet lost
never completes: go-back-N resends the subflow's sequence from the hole, but only its first
packet with the data it had carried (`retransmit_packet`, `_dsn_map`); the packets after it
take new data (`send_next_packet`, `SwiftSrc::get_next_dsn`), so the data of the other lost
packets is never sent again and the data-level cumulative ACK stays at the hole.

HPCC (`--transport hpcc`), matched (htsim: sim/hpcc.cpp, its static constants, and
main_hpcc.cpp):
- T = 12 µs (HPCCSrc::_T; quench `base_rtt`), η = 0.95, max_stage 5, the NIC rate 10 Gb/s
  (`-linkspeed`; quench `line_rate`), the start window B·T = 15,000 bytes (both).
- W_AI: htsim adds one MSS (`_Wai = _mss`); quench's `rate_ai` is MSS·8/T, the same
  W_AI = R_AI·T. Neither has a lower bound below W_AI.
- packets: 1500 bytes on the wire: htsim `-mtu 1436` (its header, HPCCPacket::ACKSIZE, is 64
  bytes), quench's RoCE `mtu` 1456 (44 bytes of header); ACKs of 64 bytes in htsim, 48 in
  quench's RoCE; an ACK per packet; go-back-N from the first hole (htsim's NACK, quench's NAK);
  htsim's sender has no timeout.
- telemetry: a record per switch egress port (htsim's LosslessOutputQueue stamps queue bytes,
  transmitted bytes, time and rate as a packet leaves; quench's switches as it starts to
  leave), none at the host.
- queues: htsim's lossless switches (`-queue_type lossless_input`: PFC pauses an input at 15
  packets held and resumes it at 12 of htsim's 1436-byte data packets, `-pfc_thresholds 12 15`)
  with 100-packet output queues; quench's PFC with xoff and xon at the same bytes and drop-tail
  queues of 99 packets that PFC keeps far from full. Hosts: htsim's FairPriorityQueue, quench's
  100,000-packet fair queue.
- paths: main_hpcc.cpp's single-path branch (`-strat single`) leaves its routes without their
  endpoints (Route::add_endpoints only extends a route's reverse), so its first packet runs off
  its route (an assertion in Packet::sendOn): the copy appends the sink and the source.
htsim's HPCCSrc departs from the paper's Algorithm 1 and from its authors' simulator (and from
quench) in seven ways, and its switches' INT record in an eighth; each switch below gives htsim
the paper's rule, for experiments one at a time (`--experiments` runs them):
- `--htsim-hpcc-reference`: processAck sets `_cwnd`, which computeWind also reads as the
  reference window W_c, to every ACK's W, so W compounds per ACK (W_AI per ACK in the additive
  stage); the paper computes W from a W_c that moves once per RTT.
- `--htsim-hpcc-float-tau`: τ/T is a division of integers (0 or 1), so U is kept or replaced.
- `--htsim-hpcc-last-record`: the first ACK's hop records stay the reference L for ever (only a
  change of hop count replaces them), so txRate is the mean since the first ACK and the queue
  term min(qlen, the first ACK's qlen); the paper compares each ACK with the previous one. With
  L the previous ACK's, τ is an ACK's spacing, well under T, which an integer τ/T would turn
  into 0: this switch is run with the previous one.
- `--htsim-hpcc-cap`: htsim's W has no ceiling; the paper's is B·T.
- `--htsim-hpcc-qlen-after`: htsim's qlen counts the packet being stamped, which is leaving
  (the record is written before `_queuesize` drops); HPCC's switch (SwitchNotifyDequeue, after
  the dequeue) and quench stamp the queue it leaves behind. At T = 12 µs and 10 Gb/s the packet
  adds 0.1 to u.
- `--htsim-hpcc-send-below`: htsim sends while a whole packet fits under W (flight + MSS ≤ W);
  HPCC's RdmaQueuePair::IsWinBound, and quench, while the flight is below W.
- `--htsim-hpcc-send-on-ack`: htsim's pacer (HPCCSrc::doNextEvent) spends its send slot when
  the window holds the packet and sends only on its slots, a spacing apart; quench's NIC sends
  a packet the window held when an ACK opens it (a spacing after the last at the earliest).
- `--htsim-hpcc-stamp-at-start`: htsim's LosslessOutputQueue writes a packet's record as its
  transmission ends (completeService), when the queue also holds what arrived meanwhile (on a
  busy port, the packet that starts next); HPCC's switch (SwitchNotifyDequeue) and quench write
  it as the transmission starts, with the queue the packet leaves behind. The switch moves
  htsim's record to beginService, with that queue (so it also does what
  `--htsim-hpcc-qlen-after` does).
htsim's `_incStage` is never initialized. `--hpcc-wai-bytes` sets W_AI in both (htsim's
`_Wai`, quench's `rate_ai` = W_AI/T).
`--htsim-hpcc-round-at-snd-nxt` gives htsim quench's round: quench (cc/hpcc.rs) starts a round
at the first cumulative ACK that reaches the last update's snd_nxt, htsim (processAck) and
HPCC's reference (rdma-hw.cc, HandleAckHp: `ack_seq > m_lastUpdateSeq`) at the first beyond it,
the ACK of data sent after the update: with F packets in flight at an update, quench's round is
F ACKs, theirs F + 1.
`--busy-bin-us` (incast, HPCC): h0's link busy per bin, from every data packet's arrival at h0
(htsim's sink, quench's `delay` table), printed per run with `--flows`; the column "busy, all
on" is its mean from STEADY_FROM_US to the first completion.

    .venv/bin/python benchmarks/compare_htsim_delay.py --htsim-src ~/csg-htsim --transport swift \
        --scenario incast --senders 8,15 --seeds 1,2,3 --experiments
    .venv/bin/python benchmarks/compare_htsim_delay.py --htsim-src ~/csg-htsim --transport hpcc \
        --scenario permutation --seeds 1,2,3 --experiments
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
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fabric import HTSIM_URL, RATE_MBPS, WORK, anchored_edit, build_htsim, fetch_source, timed_child  # noqa: E402
from compare_htsim_fabric import fat_tree_by_links, quench_path  # noqa: E402

K = 4
HOSTS = K**3 // 4
WIRE_BYTES = 1500  # every data packet on the wire, both simulators
SAMPLE_NS = 100  # htsim's queue sampler period (a packet takes 1200 ns at 10 Gb/s)
HOST_PACKETS = 100_000  # quench's host queue: a limit no window reaches (htsim's never drops)

# Swift (htsim sim/swift.cpp, SwiftSrc::SwiftSrc)
SWIFT_BASE_US = 20.0
SWIFT_PER_HOP_US = SWIFT_BASE_US / 6.55
SWIFT_FS_RANGE_US = 5 * SWIFT_BASE_US
SWIFT_FS_MIN, SWIFT_FS_MAX = 0.1, 100.0
SWIFT_MIN_CWND_BYTES = 10  # htsim's _min_cwnd
SWIFT_INITIAL_WINDOW = 15  # main_swift.cpp's -cwnd default
SWIFT_HEADER = 40  # quench's TCP/IP header; htsim counts the whole packet as data
SWIFT_BUFFER = 100  # switch queue, packets (htsim -q)

# HPCC (htsim sim/hpcc.cpp, HPCCSrc's statics)
HPCC_T_US = 12.0
HPCC_HEADER_HTSIM = 64  # HPCCPacket::ACKSIZE, on every data packet and ACK
HPCC_HEADER_QUENCH = 44  # quench roce.rs DATA_HEADER_BYTES
HPCC_MSS = WIRE_BYTES - HPCC_HEADER_HTSIM  # htsim's data bytes per packet (-mtu)
PFC_HIGH, PFC_LOW = 15, 12  # main_hpcc.cpp's PFC thresholds, htsim data packets
HPCC_BUFFER = 100  # output queue, packets (htsim -q); PFC keeps it far below

DURATION_US = {"incast": 20_000, "permutation": 10_000}
# h0's link busy "while every flow is on": from here (the start's line-rate window and its PFC
# pauses are over by then in every incast run here) to the first completion
STEADY_FROM_US = 300
INCAST_PACKETS = 300


@dataclass(frozen=True)
class Setting:
    transport: str
    scenario: str
    senders: int = 8
    flow_packets: int = INCAST_PACKETS
    seed: int = 1
    duration_us: int = 20_000
    buffer: int = 0  # htsim -q, packets (0: the transport's default)
    quench_base_target_us: float = SWIFT_BASE_US
    quench_per_hop_us: float = 0.0  # htsim's target as it runs (Route::clone drops the hop count)
    htsim_hop_count: bool = False  # htsim: Route::clone keeps the hop count (h per link)
    htsim_fractional_fs: bool = False  # htsim: flow scaling from the fractional window (quench's)
    hpcc_reference: bool = False  # htsim: W_c moves once per RTT (the paper's)
    hpcc_last_record: bool = False  # htsim: L is the previous ACK's records
    hpcc_float_tau: bool = False  # htsim: tau/T as a real number
    hpcc_cap: bool = False  # htsim: W at most B.T
    hpcc_qlen_after: bool = False  # htsim: INT's qlen without the departing packet (quench's)
    hpcc_send_below: bool = False  # htsim: send while the flight is below W (quench's)
    hpcc_wai: int = 0  # both: W_AI in bytes (0: htsim's, one MSS)
    hpcc_send_on_ack: bool = False  # htsim: a packet the window held goes when an ACK opens it
    hpcc_stamp_at_start: bool = False  # htsim: INT stamped as a packet starts to leave (quench's)
    busy_bin_us: int = 0  # incast: h0's link busy per bin of this width (0: not measured)
    hpcc_round_at_snd_nxt: bool = False  # htsim: a round ends at the ACK of the update's snd_nxt (quench's)
    quench_pfc: bool = True
    quench_rto_tick: str = ""  # quench's RTO timer granularity ("": exact timers)
    # quench's TCP `small_queues`: "nic" holds a segment until its host queue is empty, as
    # htsim's Swift sender holds one while 3 of its packets wait in its FairScheduler; "" lets
    # the window's whole release wait in the host's queue
    quench_small_queues: str = "nic"
    label: str = ""


@dataclass
class FlowResult:
    src: int
    dst: int
    fwd: tuple[str, ...]  # quench switch names, edge to edge
    rev: tuple[str, ...]
    fct_s: float = math.nan
    delivered_bytes: float = 0.0  # on the wire
    sent_packets: float = 0.0
    mean_delay_us: float = math.nan  # Swift: per-ACK RTT sample
    mean_cwnd_pkts: float = math.nan  # Swift: per ACK
    target_hops: int = 0  # Swift: the hops its target counts (htsim: Route::hop_count, quench: routers)
    timeouts: int = 0


@dataclass
class RunResult:
    flows: list[FlowResult]
    queues: dict[str, tuple[float, float]] = field(default_factory=dict)  # "a->b": (mean, max) bytes
    drops: float = 0.0
    retransmits: float = 0.0
    pauses: float = 0.0
    arrivals: list[float] = field(default_factory=list)  # incast: each data packet's arrival at h0, s
    port_queue: tuple[float, float] = (math.nan, math.nan)  # htsim: h0's port, mean waiting at start, end


def buffer_of(s: Setting) -> int:
    return s.buffer or (SWIFT_BUFFER if s.transport == "swift" else HPCC_BUFFER)


# ---------------------------------------------------------------------------------------
# The flows


def flows_of(s: Setting) -> list[tuple[int, int]]:
    if s.scenario == "incast":
        return [(i, 0) for i in range(1, s.senders + 1)]
    rng = random.Random(s.seed)
    while True:  # a derangement: nobody sends to itself
        dst = list(range(HOSTS))
        rng.shuffle(dst)
        if all(i != d for i, d in enumerate(dst)):
            return list(enumerate(dst))


def write_matrix(pairs: list[tuple[int, int]], size: int, path: Path) -> None:
    rows = [f"{s}->{d} start 0 size {size}" for s, d in pairs]
    path.write_text("\n".join([f"Nodes {HOSTS}", f"Connections {len(pairs)}", *rows]) + "\n")


# ---------------------------------------------------------------------------------------
# htsim: shared C++ pieces

# Reads every queue on the flows' paths each SAMPLE_NS: the sum and the largest of its bytes,
# up to `stop` (the last completion, or the run's end).
PEER_SAMPLER = """
struct PeerSampler : EventSource {
    PeerSampler(EventList& ev, simtime_picosec period) : EventSource(ev, "peer_sampler"), period(period) {
        ev.sourceIsPendingRel(*this, 0);
    }
    simtime_picosec period;
    std::map<BaseQueue*, std::pair<double, mem_b>> stats, marked;
    uint64_t samples = 0, marked_samples = 0;
    bool stopped = false;
    // the figures up to now (a completion): a run whose last flow never completes is measured
    // up to the last completion it had
    void mark() { marked = stats; marked_samples = samples; }
    void doNextEvent() override {
        if (stopped) return;
        for (auto& e : stats) {
            mem_b b = e.first->queuesize();
            e.second.first += b;
            if (b > e.second.second) e.second.second = b;
        }
        samples++;
        eventlist().sourceIsPendingRel(*this, period);
    }
};
static unsigned peer_seed = 1;
static int peer_flows_left = 0;
static PeerSampler* peer_sampler = nullptr;
static void peer_done() {
    if (peer_sampler) peer_sampler->mark();
    if (--peer_flows_left == 0 && peer_sampler) peer_sampler->stopped = true;
}
static void peer_route(const char* tag, const Route* r) {
    cout << tag;
    for (size_t i = 0; i < r->size(); i++) {
        BaseQueue* q = dynamic_cast<BaseQueue*>(r->at(i));
        if (!q) continue;
        cout << " " << q->nodename();
        if (peer_sampler && !peer_sampler->stats.count(q)) peer_sampler->stats[q] = {0.0, 0};
    }
    cout << endl;
}
static void peer_report_queues() {
    bool partial = peer_sampler->marked_samples && !peer_sampler->stopped;
    auto& stats = partial ? peer_sampler->marked : peer_sampler->stats;
    uint64_t samples = partial ? peer_sampler->marked_samples : peer_sampler->samples;
    for (auto& e : stats)
        cout << "PEER_QUEUE " << e.second.first / samples << " " << e.second.second << " "
             << e.first->nodename() << endl;
}
"""


def parse_htsim(out: str, pairs: list[tuple[int, int]], wire_per_byte: float) -> RunResult:
    """Flows by index: PEER_FWD/PEER_REV (routes), PEER_FLOW (figures); PEER_QUEUE lines."""
    fwd = {int(m[1]): m[2] for m in re.finditer(r"PEER_FWD (\d+)(.*)", out)}
    rev = {int(m[1]): m[2] for m in re.finditer(r"PEER_REV (\d+)(.*)", out)}
    flows = []
    for i, (s, d) in enumerate(pairs):
        if i not in fwd or i not in rev:
            sys.exit(f"compare_htsim_delay: htsim printed no route for flow {i}:\n{out[-3000:]}")
        f_hops = quench_path(fwd[i].replace(" ", "") + " ", K)
        r_hops = quench_path(rev[i].replace(" ", "") + " ", K)
        flows.append(FlowResult(s, d, dedupe(f_hops)[:-1], dedupe(r_hops)[:-1]))
    for m in re.finditer(r"PEER_FLOW (\d+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+)", out):
        f = flows[int(m[1])]
        done_ps, delivered, sent = int(m[2]), float(m[3]), float(m[4])
        f.fct_s = done_ps / 1e12 if done_ps else math.nan
        f.delivered_bytes = delivered * wire_per_byte
        f.sent_packets = sent
        f.mean_delay_us, f.mean_cwnd_pkts, f.timeouts = float(m[5]), float(m[6]), int(float(m[7]))
        f.target_hops = int(m[8])
    queues = {}
    for m in re.finditer(r"PEER_QUEUE (\S+) (\S+) (.*)", out):
        name = m[3].replace(" ", "")
        if name.startswith("VirtualQueue"):  # a lossless input's PFC count, not a buffer of its own
            continue
        hop = quench_path(name + " ", K)
        src = re.search(r"(SRC|LS|US|CS)_?(\d+)->", name)
        if not hop or not src:
            continue
        frm = quench_path("->" + src[1] + src[2] + "(", K)
        if src[1] == "SRC":
            frm = (f"h{src[2]}",)
        queues[f"{frm[0]}->{hop[0]}"] = (float(m[1]), float(m[2]))
    return RunResult(flows, queues)


def dedupe(hops: tuple[str, ...]) -> tuple[str, ...]:
    """Consecutive repeats dropped (an input and an output queue may both name a switch)."""
    out: list[str] = []
    for h in hops:
        if not out or out[-1] != h:
            out.append(h)
    return tuple(out)


def make(target: str, cwd: Path) -> None:
    """`make -j1 target`, its output shown only if it fails."""
    done = subprocess.run(["nice", "-n", "10", "make", "-j1", target], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"compare_htsim_delay: make {target} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def build_tree(src: str, name: str, files: dict[str, str], lib_files: dict[str, str], target: str) -> Path:
    """A copy of bench_fabric's build tree with `files` (datacenter/) and `lib_files` (sim/)
    written where they differ; libhtsim.a rebuilt when a library file changed; the binary kept
    by a hash of every edited text."""
    tag = hashlib.sha256("".join(sorted(files.values()) + sorted(lib_files.values())).encode()).hexdigest()[:12]
    binary = WORK / f"{target}-{tag}"
    if binary.exists():
        return binary
    tree = WORK / name
    if not (tree / "sim/libhtsim.a").exists():
        build_htsim(src, 1)
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(WORK / "build", tree)
    sim, datacenter = tree / "sim", tree / "sim/datacenter"
    lib_changed = False
    for rel, text in lib_files.items():
        if (sim / rel).read_text() != text:
            (sim / rel).write_text(text)
            lib_changed = True
    if lib_changed:
        make("libhtsim.a", sim)
    for rel, text in files.items():
        (datacenter / rel).write_text(text)
    for obj in datacenter.glob("*.o"):
        obj.unlink()
    make(target, datacenter)
    shutil.copy2(datacenter / target, binary)
    return binary


def main_h(source: Path) -> str:
    text = (source / "sim/datacenter/main.h").read_text()
    text = re.sub(r"#define HOST_NIC \d+", f"#define HOST_NIC {RATE_MBPS}", text, count=1)
    return anchored_edit(text, "#define RANDOM_BUFFER 3", "#define RANDOM_BUFFER 0", "datacenter/main.h")


# ---------------------------------------------------------------------------------------
# htsim Swift

MAIN_SWIFT = "datacenter/main_swift.cpp"

# After every ACK SwiftSrc::log calls its logger (handle_ack logs once per ACK that reached
# adjust_cwnd; a timeout logs SWIFT_TIMEOUT). update_rtt has just run: _rtt = 7*_rtt/8 + delay/8
# (the first sample taken whole), from which the sample is recovered.
SWIFT_TYPES = """
struct PeerSwiftLogger : SwiftLogger {
    struct Figures {
        double delay = 0, cwnd = 0;
        uint64_t acks = 0;
        simtime_picosec rtt = 0;
        uint32_t timeouts = 0, hops = 0;
    };
    std::map<SwiftSrc*, Figures> figures;
    void logSwift(SwiftSubflowSrc& sub, SwiftEvent ev) override {
        Figures& f = figures[&sub._src];
        f.hops = sub._route->hop_count();  // what targetDelay multiplies h by
        if (ev == SWIFT_TIMEOUT) { f.timeouts++; return; }
        double sample = f.rtt ? 8.0 * (double)sub._rtt - 7.0 * (double)f.rtt : (double)sub._rtt;
        f.rtt = sub._rtt;
        f.delay += sample;
        f.cwnd += (double)sub._swift_cwnd / sub._src._mss;
        f.acks++;
    }
    // The route a flow's data takes: set_paths, after connect, moves the subflow to the first
    // of its own shuffle of the paths (SwiftSrc::set_paths, permute_paths)
    static const Route* route_of(SwiftSrc* s) { return s->_subs.at(0)->_route; }
};
static PeerSwiftLogger peer_logger;
// Every packet event of a Swift flow (data and ACKs share the flow): the drops, by type.
struct PeerDrops : TrafficLogger {
    uint64_t data = 0, acks = 0;
    void logTraffic(Packet& pkt, Logged&, TrafficEvent ev) override {
        if (ev != PKT_DROP) return;
        if (pkt.type() == SWIFT) data++; else acks++;
    }
};
static PeerDrops peer_drops;
struct PeerSwiftSink : SwiftSink {
    explicit PeerSwiftSink(uint64_t want) : want(want) {}
    uint64_t want;
    simtime_picosec done = 0;
    void receivePacket(Packet& pkt) override {
        SwiftSink::receivePacket(pkt);
        if (!done && want && _cumulative_data_ack >= want) { done = eventlist.now(); peer_done(); }
    }
};
struct PeerSwiftFlow { SwiftSrc* src; PeerSwiftSink* sink; };
static std::vector<PeerSwiftFlow> peer_swift;
"""


def edit_main_swift(text: str, s: Setting) -> str:
    p = MAIN_SWIFT
    text = anchored_edit(text, "EventList eventlist;", "EventList eventlist;\n" + PEER_SAMPLER + SWIFT_TYPES, p)
    text = anchored_edit(text, "srand(13);", "srand(peer_seed); cout.precision(15);", p)
    arg = '} else if (!strcmp(argv[i],"-conns")){'
    seed = '} else if (!strcmp(argv[i],"-seed")){\n            peer_seed = atoi(argv[i+1]);\n            i++;\n        '
    text = anchored_edit(text, arg, seed + arg, p)
    scanner = "SwiftRtxTimerScanner swiftRtxScanner(timeFromMs(10), eventlist);"
    sampler = f"\n    peer_sampler = new PeerSampler(eventlist, timeFromNs({SAMPLE_NS}));"
    text = anchored_edit(text, scanner, scanner + sampler, p)
    text = anchored_edit(
        text,
        "swiftSrc = new SwiftSrc(swiftRtxScanner, NULL, NULL, eventlist);",
        "swiftSrc = new SwiftSrc(swiftRtxScanner, &peer_logger, &peer_drops, eventlist);",
        p,
    )
    # A flow of -flowsize P sends P + 1 packets (set_flowsize adds an MSS): P is one less.
    want = "flowsize ? (uint64_t)(flowsize + 1) * Packet::data_packet_size() : 0"
    sink = f"swiftSnk = new PeerSwiftSink({want}); if (flowsize) peer_flows_left++;"
    text = anchored_edit(text, "swiftSnk = new SwiftSink();", sink, p)
    connect = "swiftSrc->connect(*routeout, *routein, *swiftSnk, timeFromUs((uint32_t)crt->start));"
    record = (
        "\n            peer_swift.push_back({swiftSrc, (PeerSwiftSink*)swiftSnk});"
        '\n            peer_route(("PEER_REV " + std::to_string(c)).c_str(), routein);'
    )
    text = anchored_edit(text, connect, connect + record, p)
    paths = "swiftSrc->set_paths(net_paths[src][dest]);"
    fwd = '\n        peer_route(("PEER_FWD " + std::to_string(c)).c_str(), PeerSwiftLogger::route_of(swiftSrc));'
    text = anchored_edit(text, paths, paths + fwd, p)
    report = (
        "while (eventlist.doNextEvent()) {\n    }\n"
        "    for (size_t i = 0; i < peer_swift.size(); i++) {\n"
        "        auto& f = peer_swift[i];\n"
        "        auto& g = peer_logger.figures[f.src];\n"
        '        cout << "PEER_FLOW " << i << " " << f.sink->done << " " << f.sink->_cumulative_data_ack << " "\n'
        '             << (double)f.src->_highest_dsn_sent / f.src->mss() << " "\n'
        '             << (g.acks ? g.delay / g.acks / 1e6 : 0) << " " << (g.acks ? g.cwnd / g.acks : 0) << " "\n'
        '             << g.timeouts << " " << g.hops << endl;\n'
        "    }\n"
        "    peer_report_queues();\n"
        '    cout << "PEER_DROPS " << peer_drops.data << " " << peer_drops.acks << endl;\n'
    )
    return anchored_edit(text, "while (eventlist.doNextEvent()) {\n    }\n", report, p)


def build_swift(src: str, s: Setting) -> Path:
    source = fetch_source(src)
    main = edit_main_swift((source / "sim" / MAIN_SWIFT).read_text(), s)
    swift_h = (source / "sim/swift.h").read_text()
    swift_h = anchored_edit(
        swift_h,
        "friend class SwiftLoggerSimple;",
        "friend class SwiftLoggerSimple;\n    friend struct PeerSwiftLogger;",
        "swift.h",
    )
    swift_h = anchored_edit(
        swift_h,
        "    friend class SwiftRtxTimerScanner;\n",
        "    friend class SwiftRtxTimerScanner;\n    friend struct PeerSwiftLogger;\n",
        "swift.h",
    )
    route = (source / "sim/route.cpp").read_text()
    if s.htsim_hop_count:
        clone = "    Route *copy = new Route(_hop_count);\n"
        route = anchored_edit(route, clone, clone + "    copy->_hop_count = _hop_count;\n", "route.cpp")
    swift = (source / "sim/swift.cpp").read_text()
    if s.htsim_fractional_fs:
        whole = "double fs_delay = _fs_alpha/sqrt(cwnd/_mss) + _fs_beta;"
        swift = anchored_edit(
            swift, whole, "double fs_delay = _fs_alpha/sqrt((double)cwnd/_mss) + _fs_beta;", "swift.cpp"
        )
    lib = {"swift.h": swift_h, "route.cpp": route, "swift.cpp": swift}
    return build_tree(src, "delay-swift", {"main_swift.cpp": main, "main.h": main_h(source)}, lib, "htsim_swift")


def run_htsim_swift(src: str, s: Setting, pairs: list[tuple[int, int]]) -> RunResult:
    binary = build_swift(src, s)
    matrix = WORK / f"delay-{s.scenario}-{s.seed}-{len(pairs)}.cm"
    write_matrix(pairs, 0, matrix)
    args = ["-nodes", str(HOSTS), "-tm", str(matrix), "-end", str(s.duration_us), "-q", str(buffer_of(s))]
    args += ["-mtu", str(WIRE_BYTES), "-linkspeed", str(RATE_MBPS), "-cwnd", str(SWIFT_INITIAL_WINDOW)]
    args += ["-seed", str(s.seed), "-o", str(WORK / "logout.dat")]
    if s.scenario == "incast":
        args += ["-flowsize", str(s.flow_packets - 1)]
    out, _, _ = timed_child([str(binary), *args], cwd=WORK)
    res = parse_htsim(out, pairs, 1.0)
    drops = re.search(r"PEER_DROPS (\d+) (\d+)", out)
    res.drops = float(drops[1]) if drops else math.nan
    return res


# ---------------------------------------------------------------------------------------
# htsim HPCC

MAIN_HPCC = "datacenter/main_hpcc.cpp"

HPCC_TYPES = """
struct PeerHpccSink : HPCCSink {
    explicit PeerHpccSink(uint64_t want) : want(want) {}
    uint64_t want;
    simtime_picosec done = 0;
    void receivePacket(Packet& pkt) override {
        HPCCSink::receivePacket(pkt);
        if (!done && want && _cumulative_ack >= want) { done = eventlist.now(); peer_done(); }
    }
};
struct PeerHpccFlow { HPCCSrc* src; PeerHpccSink* sink; };
static std::vector<PeerHpccFlow> peer_hpcc;
extern uint64_t peer_pauses;  // counted in the copy's queue_lossless_input.cpp
"""


def edit_main_hpcc(text: str, s: Setting) -> str:
    p = MAIN_HPCC
    text = anchored_edit(text, "EventList eventlist;", "EventList eventlist;\n" + PEER_SAMPLER + HPCC_TYPES, p)
    text = anchored_edit(text, "    srand(seed);\n", "    srand(seed); peer_seed = seed; cout.precision(15);\n", p)
    log = "Logfile logfile(filename.str(), eventlist);"
    sampler = f"\n    peer_sampler = new PeerSampler(eventlist, timeFromNs({SAMPLE_NS}));"
    text = anchored_edit(text, log, log + sampler, p)
    # HPCCSrc's constructor calls srand(time(NULL)): the path draw is reseeded per flow.
    new_src = "hpccSrc = new HPCCSrc(NULL, NULL, eventlist,linkspeed);"
    text = anchored_edit(text, new_src, new_src + " srand(peer_seed * 1000003u + c);", p)
    sink = "hpccSnk = new PeerHpccSink(crt->size); if (crt->size) peer_flows_left++;"
    text = anchored_edit(text, "hpccSnk = new HPCCSink();", sink, p)
    # The single-path branch's routes end without their endpoints (Route::add_endpoints only
    # extends a route's reverse), so a packet would run off its route: the copy appends them.
    if s.busy_bin_us:  # every data packet's arrival at its sink (h0 in the incast)
        rx = "        HPCCSink::receivePacket(pkt);\n"
        text = anchored_edit(text, rx, '        cout << "PEER_RX " << eventlist.now() << endl;\n' + rx, p)
    ends = "routeout->add_endpoints(hpccSrc, hpccSnk);"
    text = anchored_edit(text, ends, ends + " routeout->push_back(hpccSnk);", p)
    ends = "routein->add_endpoints(hpccSnk, hpccSrc);"
    text = anchored_edit(text, ends, ends + " routein->push_back(hpccSrc);", p)
    connect = "hpccSrc->connect(routeout, routein, *hpccSnk, timeFromUs((uint32_t)rand()%20));"
    record = (
        "\n            peer_hpcc.push_back({hpccSrc, (PeerHpccSink*)hpccSnk});"
        '\n            peer_route(("PEER_FWD " + std::to_string(c)).c_str(), routeout);'
        '\n            peer_route(("PEER_REV " + std::to_string(c)).c_str(), routein);'
    )
    text = anchored_edit(text, connect, connect + record, p)
    report = (
        '    cout << "Done" << endl;\n'
        "    for (size_t i = 0; i < peer_hpcc.size(); i++) {\n"
        "        auto& f = peer_hpcc[i];\n"
        '        cout << "PEER_FLOW " << i << " " << f.sink->done << " " << f.sink->_cumulative_ack << " "\n'
        '             << f.src->_packets_sent << " 0 0 0 0" << endl;\n'
        "    }\n"
        "    peer_report_queues();\n"
        '    cout << "PEER_PAUSES " << peer_pauses << endl;\n'
    )
    return anchored_edit(text, '    cout << "Done" << endl;\n', report, p)


def edit_hpcc_cpp(text: str, s: Setting) -> str:
    """htsim's HPCCSrc with the paper's rules, each on its switch."""
    p = "hpcc.cpp"
    ret = ""
    if s.hpcc_reference:
        # W from a reference W_c kept apart from the window the sender uses (processAck sets
        # _cwnd = W on every ACK); W_c moves only with updateWc, once per RTT.
        text = anchored_edit(
            text,
            "HPCCPacket::seq_t HPCCSrc::computeWind(",
            "static std::map<const void*, uint64_t> peer_wc_of;\nHPCCPacket::seq_t HPCCSrc::computeWind(",
            p,
        )
        setup = (
            "    if (!peer_wc_of.count(this)) peer_wc_of[this] = _cwnd;\n    uint64_t& peer_wc = peer_wc_of[this];\n"
        )
        text = anchored_edit(text, "    HPCCPacket::seq_t W;\n", "    HPCCPacket::seq_t W;\n" + setup, p)
        text = anchored_edit(
            text, "        W = _cwnd / (_U / _eta) + _Wai;", "        W = peer_wc / (_U / _eta) + _Wai;", p
        )
        text = anchored_edit(text, "        W = _cwnd + _Wai;", "        W = peer_wc + _Wai;", p)
    if s.hpcc_cap:
        ret += "    { uint64_t peer_cap = _T * _bitrate / pow(10,12) / 8; if (W > peer_cap) W = peer_cap; }\n"
    if s.hpcc_reference:
        ret += "    if (updateWc) peer_wc = W;\n"
    if ret:
        text = anchored_edit(text, "    return W; \n};", ret + "    return W; \n};", p)
    if s.hpcc_last_record:
        text = anchored_edit(
            text,
            "        tau = min (tau, _T);\n",
            "        for (i = 0;i<_link_count;i++)\n            _link_info[i] = ack._int_info[i];\n"
            "        tau = min (tau, _T);\n",
            p,
        )
    if s.hpcc_wai:
        text = anchored_edit(text, "    _Wai = _mss;\n", f"    _Wai = {s.hpcc_wai};\n", p)
    if s.hpcc_send_below:
        # HPCC's RdmaQueuePair::IsWinBound (and quench): a packet goes while the bytes in flight
        # are below W, where htsim's needs room for a whole packet under W
        text = anchored_edit(text, "if (_cwnd >= _flightsize + _mss) ", "if (_cwnd > _flightsize) ", p)
    if s.hpcc_send_on_ack:
        # htsim's pacer spends a send slot when the window holds the packet (_time_last_sent
        # moves on) and sends only on its slots; quench's NIC sends when an ACK opens the
        # window, a spacing after the last packet at the earliest. Here a held packet waits
        # for the next ACK, which sends it (the spacing since the last send has passed).
        text = anchored_edit(
            text,
            "            send_packet();\n\n        _time_last_sent = eventlist().now();\n",
            "            send_packet();\n        else { peer_held.insert(this); return; }\n"
            "        _time_last_sent = eventlist().now();\n",
            p,
        )
        held = "#include <set>\nstatic std::set<const void*> peer_held;\n"
        text = anchored_edit(text, "void HPCCSrc::processAck(", held + "void HPCCSrc::processAck(", p)
        ack = "    }\n\n    _pacing_rate = _cwnd * 8 * pow(10,12) / _T;\n    update_spacing();\n"
        resume = "    if (peer_held.erase(this)) eventlist().sourceIsPendingRel(*this, 0);\n"
        text = anchored_edit(text, ack, ack + resume, p)
    if s.hpcc_round_at_snd_nxt:
        # quench's round (cc/hpcc.rs: a cumulative ACK at least the update's snd_nxt) ends one
        # ACK before htsim's and HPCC's reference (rdma-hw.cc HandleAckHp: ack_seq >
        # m_lastUpdateSeq), which wait for the ACK of data sent after the update
        text = anchored_edit(text, "if (ackno > _last_update_seq){", "if (ackno >= _last_update_seq){", p)
    if s.hpcc_float_tau:
        text = anchored_edit(
            text, "_U = (1 - tau/_T)*_U + tau/_T*u;", "_U = (1 - (double)tau/_T)*_U + (double)tau/_T*u;", p
        )
    return text


# HPCC's switch (SwitchNotifyDequeue) and quench stamp a packet's record as its transmission
# starts, with the queue it leaves behind; htsim's LosslessOutputQueue stamps it as the
# transmission ends, when the queue also holds what arrived meanwhile: on a busy port, the
# packet that starts next.
INT_AT_START = """
    {
        Packet* pkt = _enqueued.back();  // the next to pop
        if (pkt->type() == HPCC) {
            HPCCPacket* h = dynamic_cast<HPCCPacket*>(pkt);
            assert(h->_int_hop < 5);
            h->_int_info[h->_int_hop]._queuesize = _queuesize - pkt->size();
            h->_int_info[h->_int_hop]._ts = eventlist().now();
            if (_switch) {
                h->_int_info[h->_int_hop]._switchID = _switch->getID();
                h->_int_info[h->_int_hop]._type = _switch->getType();
            }
            h->_int_info[h->_int_hop]._txbytes = _txbytes;
            h->_int_info[h->_int_hop]._linkrate = _bitrate;
            h->_int_hop++;
        }
    }
"""


def stamp_at_start(text: str) -> str:
    """LosslessOutputQueue's INT record written in beginService instead of completeService."""
    p = "queue_lossless_output.cpp"
    text = anchored_edit(text, "if (pkt->type()==HPCC){", "if (pkt->type()==HPCC && false){", p)
    return anchored_edit(text, "    Queue::beginService();", INT_AT_START + "    Queue::beginService();", p)


def print_h0_port_queue(text: str) -> str:
    """The queue waiting at tor0's port to h0 (htsim's LS0->DST0) as each data packet's
    transmission starts and as it ends, the packet itself not counted."""
    p = "queue_lossless_output.cpp"
    port = 'pkt->type() == HPCC && _nodename.find("LS0->DST0") != string::npos'
    waiting = "_queuesize - pkt->size() << endl;"
    start = f'    {{ Packet* pkt = _enqueued.back(); if ({port}) cout << "PEER_QSTART " << {waiting} }}\n'
    text = anchored_edit(text, "    Queue::beginService();", start + "    Queue::beginService();", p)
    end = f'    if ({port}) cout << "PEER_QEND " << {waiting}\n'
    return anchored_edit(text, "    _queuesize -= pkt->size();", end + "    _queuesize -= pkt->size();", p)


def build_hpcc(src: str, s: Setting) -> Path:
    source = fetch_source(src)
    main = edit_main_hpcc((source / "sim" / MAIN_HPCC).read_text(), s)
    hpcc = edit_hpcc_cpp((source / "sim/hpcc.cpp").read_text(), s)
    # PFC pauses counted where an input queue sends one (LosslessInputQueue::receivePacket)
    lossless_in = (source / "sim/queue_lossless_input.cpp").read_text()
    pause = "        sendPause(1000);\n"
    lossless_in = anchored_edit(lossless_in, pause, "        peer_pauses++;\n" + pause, "queue_lossless_input.cpp")
    lossless_in = "#include <cstdint>\nuint64_t peer_pauses = 0;\n" + lossless_in
    lossless_out = (source / "sim/queue_lossless_output.cpp").read_text()
    if s.hpcc_qlen_after:
        # HPCC's switch (and quench's) stamps the queue the packet leaves behind
        qlen = "h->_int_info[h->_int_hop]._queuesize = _queuesize;"
        lossless_out = anchored_edit(
            lossless_out,
            qlen,
            "h->_int_info[h->_int_hop]._queuesize = _queuesize - pkt->size();",
            "queue_lossless_output.cpp",
        )
    if s.hpcc_stamp_at_start:
        lossless_out = stamp_at_start(lossless_out)
    if s.busy_bin_us:
        lossless_out = print_h0_port_queue(lossless_out)
    lib = {"hpcc.cpp": hpcc, "queue_lossless_input.cpp": lossless_in, "queue_lossless_output.cpp": lossless_out}
    return build_tree(src, "delay-hpcc", {"main_hpcc.cpp": main, "main.h": main_h(source)}, lib, "htsim_hpcc")


def run_htsim_hpcc(src: str, s: Setting, pairs: list[tuple[int, int]]) -> RunResult:
    binary = build_hpcc(src, s)
    size = s.flow_packets * HPCC_MSS if s.scenario == "incast" else 0
    matrix = WORK / f"delay-hpcc-{s.scenario}-{s.seed}-{len(pairs)}-{size}.cm"
    write_matrix(pairs, size, matrix)
    args = ["-nodes", str(HOSTS), "-tm", str(matrix), "-end", str(s.duration_us), "-q", str(buffer_of(s))]
    args += ["-mtu", str(HPCC_MSS), "-linkspeed", str(RATE_MBPS), "-strat", "single", "-queue_type", "lossless_input"]
    args += ["-pfc_thresholds", str(PFC_LOW), str(PFC_HIGH), "-seed", str(s.seed), "-o", str(WORK / "logout.dat")]
    out, _, _ = timed_child([str(binary), *args], cwd=WORK)
    res = parse_htsim(out, pairs, WIRE_BYTES / HPCC_MSS)
    rtx = re.search(r"New: (\d+) Rtx: (\d+)", out)
    res.retransmits = float(rtx[2]) / HPCC_MSS if rtx else math.nan  # htsim counts bytes there
    pauses = re.search(r"PEER_PAUSES (\d+)", out)
    res.pauses = float(pauses[1]) if pauses else math.nan
    res.arrivals = [int(m[1]) / 1e12 for m in re.finditer(r"PEER_RX (\d+)", out)]
    starts = [int(m[1]) for m in re.finditer(r"PEER_QSTART (\d+)", out)]
    ends = [int(m[1]) for m in re.finditer(r"PEER_QEND (\d+)", out)]
    if starts and ends:
        res.port_queue = (sum(starts) / len(starts), sum(ends) / len(ends))
    return res


# ---------------------------------------------------------------------------------------
# quench


def quench_swift_keys(s: Setting) -> dict:
    """htsim's SwiftSrc and SwiftSubflowSrc in quench's TCP keys."""
    import quench

    cc = quench.swift(
        base_target=f"{s.quench_base_target_us * 1000:.0f}ns",
        per_hop=f"{s.quench_per_hop_us * 1000:.0f}ns",
        min_cwnd=SWIFT_MIN_CWND_BYTES / WIRE_BYTES,
        initial_window=SWIFT_INITIAL_WINDOW,
    )
    rto = {"min": "100us", "initial": "1ms", "max_backoffs": 1000}
    if s.quench_rto_tick:  # a tick also counts every RTT sample in whole ticks (rtt.rs, measure)
        rto |= {"tick": s.quench_rto_tick, "tick_rule": "after"}
    return {
        "cc": cc,
        "profile": "rfc",
        "mss": WIRE_BYTES - SWIFT_HEADER,
        "sack": False,
        "timestamps": False,
        "delayed_ack": {"enabled": False},
        "rtt_sampling": "every_ack",
        "rto": rto,
        **({"small_queues": s.quench_small_queues} if s.quench_small_queues else {}),
    }


def quench_hpcc_cc(s: Setting) -> dict:
    import quench

    wai = s.hpcc_wai or WIRE_BYTES - HPCC_HEADER_HTSIM  # htsim's W_AI is one MSS
    return quench.hpcc(
        base_rtt=f"{HPCC_T_US:g}us",
        line_rate=f"{RATE_MBPS}Mbps",
        rate_ai=f"{round(wai * 8 / (HPCC_T_US * 1e-6))}bps",  # R_AI = W_AI / T
        # htsim's fixed 64-byte header holds the hop records: no telemetry bytes on top
        int_on_wire=False,
    )


def run_quench(s: Setting, paths: list[FlowResult]) -> RunResult:
    from quench import Network

    net = Network(seed=s.seed, name=f"htsim-{s.transport}-{s.scenario}")
    # htsim's limit counts the packet on the wire, quench's the packets waiting
    switch = {"kind": "droptail", "limit": f"{(buffer_of(s) - 1) * WIRE_BYTES}B"}
    host = {"kind": "fq", "limit": f"{HOST_PACKETS}p"}
    fat_tree_by_links(net, K, switch, host, switch)
    net.record(queues=False, sojourn=False, drops=False, cwnd=s.transport == "swift", rtt=False, segments=False)
    if s.transport == "hpcc" and s.quench_pfc:
        data = WIRE_BYTES - HPCC_HEADER_HTSIM  # htsim's thresholds are in its data packets
        net.pfc(f"{PFC_HIGH * data}B", xon=f"{PFC_LOW * data}B")
    for i, f in enumerate(paths):
        route = [f"h{f.src}", *f.fwd, f"h{f.dst}"]
        back = [f"h{f.dst}", *f.rev, f"h{f.src}"]
        if s.transport == "swift":
            size = {"bytes": s.flow_packets * (WIRE_BYTES - SWIFT_HEADER)} if s.scenario == "incast" else {}
            net.tcp(
                f"h{f.src}", f"h{f.dst}", name=f"f{i}", path=route, reverse_path=back, **size, **quench_swift_keys(s)
            )
        else:
            mtu = WIRE_BYTES - HPCC_HEADER_QUENCH
            size = s.flow_packets * mtu if s.scenario == "incast" else None
            # Network.roce passes its keywords to the transport; the routing keys every flow
            # takes (scenario.rs: path, reverse_path) go beside them, as Network.tcp puts them
            params = {"mtu": mtu, "ack_interval": 1}
            cc = quench_hpcc_cc(s)
            net._connection(
                "roce", f"h{f.src}", f"h{f.dst}", size, 0, f"f{i}", params, cc=cc, path=route, reverse_path=back
            )
    if s.busy_bin_us and s.scenario == "incast":  # every data packet's arrival (the delay table)
        net.record(delay=[f"f{i}" for i in range(len(paths))])
    res = net.run(duration=f"{s.duration_us}us")
    rows = res.flows.set_index("name")
    payload = WIRE_BYTES - (SWIFT_HEADER if s.transport == "swift" else HPCC_HEADER_QUENCH)
    flows = []
    cwnd = None
    if s.transport == "swift":
        cwnd = res.cwnd
    for i, f in enumerate(paths):
        r = rows.loc[f"f{i}"]
        g = FlowResult(f.src, f.dst, f.fwd, f.rev)
        g.fct_s = float(r["response_time_s"])
        g.delivered_bytes = float(r["bytes_delivered"]) * WIRE_BYTES / payload
        g.sent_packets = float(r["packets_sent"])
        g.timeouts = int(r["timeouts"])
        g.target_hops = len(f.fwd)  # Swift's hops: the routers on the forward path
        if s.transport == "swift":
            g.mean_delay_us = float(r["mean_rtt_s"]) * 1e6
            mine = cwnd[cwnd["flow_name"] == f"f{i}"]["cwnd"]
            g.mean_cwnd_pkts = float(mine.mean()) / (WIRE_BYTES - SWIFT_HEADER) if len(mine) else math.nan
        flows.append(g)
    out = RunResult(flows)
    links = res.links
    for name, mean, most in zip(links["name"], links["mean_backlog_bytes"], links["max_backlog_bytes"], strict=True):
        out.queues[name] = (float(mean), float(most))
    out.drops = float(links["dropped_packets"].sum())
    out.retransmits = float(res.flows["retransmitted_segments"].sum())
    out.pauses = float(links["pfc_pauses"].sum()) if "pfc_pauses" in links else 0.0
    if "delay" in res.tables:
        out.arrivals = [float(x) for x in res.tables["delay"]["time_s"]]
    return out


# ---------------------------------------------------------------------------------------
# The tables


def swift_target_us(s: Setting, f: FlowResult, htsim: bool) -> float:
    """A flow's target at its mean window: base + h per hop its target counts + flow scaling
    (htsim's with the window in whole packets, its integer division)."""
    w = math.floor(f.mean_cwnd_pkts) if htsim and not s.htsim_fractional_fs else f.mean_cwnd_pkts
    alpha = SWIFT_FS_RANGE_US / (1 / math.sqrt(SWIFT_FS_MIN) - 1 / math.sqrt(SWIFT_FS_MAX))
    fs = alpha / math.sqrt(w) - alpha / math.sqrt(SWIFT_FS_MAX) if w > 0 else SWIFT_FS_RANGE_US
    fs = min(max(fs, 0.0), SWIFT_FS_RANGE_US)
    if htsim:
        return SWIFT_BASE_US + SWIFT_PER_HOP_US * f.target_hops + fs
    return s.quench_base_target_us + s.quench_per_hop_us * f.target_hops + fs


def figures(s: Setting, r: RunResult, htsim: bool) -> dict:
    fcts = [f.fct_s for f in r.flows]
    done = [t for t in fcts if not math.isnan(t)]
    out: dict = {"done": len(done), "drops": r.drops, "timeouts": sum(f.timeouts for f in r.flows)}
    duration_s = s.duration_us / 1e6
    if s.scenario == "incast":
        last = max(done) if len(done) == len(fcts) else math.nan
        out |= {"last_ms": last * 1e3, "mean_ms": sum(done) / len(done) * 1e3 if done else math.nan}
        total = sum(f.delivered_bytes for f in r.flows)
        out["util"] = total * 8 / (RATE_MBPS * 1e6) / last if last == last else math.nan
        hot = ["tor0->h0"]
        # the mean over the incast: htsim's sampler stops at its last completion; quench's mean is
        # over the run, and its queue is empty after the last completion
        scale = 1.0 if htsim or not done else duration_s / max(done)
    else:
        gbps = [f.delivered_bytes * 8 / duration_s / 1e9 for f in r.flows]
        out |= {"total_gbps": sum(gbps), "min_gbps": min(gbps), "max_gbps": max(gbps)}
        out["jain"] = sum(gbps) ** 2 / (len(gbps) * sum(g * g for g in gbps))
        out["util"] = sum(gbps) / len(gbps) / (RATE_MBPS / 1e3)
        hot = [q for q in r.queues if not q.startswith("h")]
        scale = 1.0
        # the most loaded link: its flows' data over its rate (every link of the path)
        load: dict[tuple[str, str], float] = {}
        for f, g in zip(r.flows, gbps, strict=True):
            nodes = [f"h{f.src}", *f.fwd, f"h{f.dst}"]
            for link in zip(nodes, nodes[1:], strict=False):
                load[link] = load.get(link, 0.0) + g
        out["max_link"] = max(load.values()) / (RATE_MBPS / 1e3)
    switch_queues = {q: v for q, v in r.queues.items() if q in hot}
    if switch_queues:
        busiest = max(switch_queues, key=lambda q: switch_queues[q][0])
        out["queue"] = busiest
        out["mean_q_kb"] = switch_queues[busiest][0] * scale / 1e3
        out["max_q_kb"] = max(v[1] for v in switch_queues.values()) / 1e3
    if s.transport == "swift":
        acks = [f for f in r.flows if f.mean_delay_us == f.mean_delay_us and f.mean_delay_us > 0]
        out["delay_us"] = sum(f.mean_delay_us for f in acks) / len(acks) if acks else math.nan
        out["cwnd_pkts"] = sum(f.mean_cwnd_pkts for f in acks) / len(acks) if acks else math.nan
        targets = [swift_target_us(s, f, htsim) for f in acks]
        out["target_us"] = sum(targets) / len(targets) if acks else math.nan
        out["over_target"] = sum(f.mean_delay_us / t for f, t in zip(acks, targets, strict=True)) / len(acks)
    else:
        out["retx"] = r.retransmits
        out["pauses"] = r.pauses
    if s.busy_bin_us and r.arrivals and done:
        out |= busy(s, r, min(done))
        out["q_start_kb"], out["q_end_kb"] = (q / 1e3 for q in r.port_queue)
    return out


def busy(s: Setting, r: RunResult, first_done_s: float) -> dict:
    """h0's link busy per bin (its data packets' arrivals at h0, each WIRE_BYTES long), and
    their mean over the bins from STEADY_FROM_US to the first completion."""
    width = s.busy_bin_us * 1e-6
    per_packet = WIRE_BYTES * 8 / (RATE_MBPS * 1e6)
    bins = [0.0] * (int(max(r.arrivals) / width) + 1)
    for t in r.arrivals:
        bins[int(t / width)] += per_packet / width
    steady = bins[math.ceil(STEADY_FROM_US * 1e-6 / width) : int(first_done_s / width)]
    return {"busy_bins": bins, "steady_busy": sum(steady) / len(steady) if steady else math.nan}


COLUMNS = {
    "incast": [
        ("last_ms", "last ms", ".3f"),
        ("mean_ms", "mean ms (done)", ".3f"),
        ("done", "flows done", ".0f"),
        ("util", "h0's link", ".3f"),
    ],
    "permutation": [
        ("total_gbps", "total Gb/s", ".2f"),
        ("min_gbps", "min Gb/s", ".3f"),
        ("max_gbps", "max Gb/s", ".3f"),
        ("jain", "Jain", ".4f"),
        ("max_link", "busiest link", ".3f"),
    ],
}
QUEUE_COLUMNS = [("mean_q_kb", "mean queue KB", ".2f"), ("max_q_kb", "max queue KB", ".2f"), ("drops", "drops", ".0f")]
SWIFT_COLUMNS = [("delay_us", "RTT us", ".2f"), ("target_us", "target us", ".2f"), ("over_target", "RTT/target", ".3f")]
SWIFT_COLUMNS += [("cwnd_pkts", "cwnd pkts", ".3f")]
SWIFT_COLUMNS += [("timeouts", "RTOs", ".0f")]
HPCC_COLUMNS = [("retx", "go-back-N pkts", ".0f"), ("pauses", "PFC pauses", ".0f")]


def columns(s: Setting) -> list[tuple[str, str, str]]:
    extra = SWIFT_COLUMNS if s.transport == "swift" else HPCC_COLUMNS
    if s.busy_bin_us and s.scenario == "incast":
        extra = [*extra, ("steady_busy", "busy, all on", ".3f")]
        extra += [("q_start_kb", "q at start KB", ".3f"), ("q_end_kb", "q at end KB", ".3f")]
    return [*COLUMNS[s.scenario], *QUEUE_COLUMNS, *extra]


def cell(v, fmt: str) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "-"
    return format(v, fmt)


def run_pair(a: argparse.Namespace, s: Setting) -> tuple[dict, dict, RunResult, RunResult]:
    pairs = flows_of(s)
    h = run_htsim_swift(a.htsim_src, s, pairs) if s.transport == "swift" else run_htsim_hpcc(a.htsim_src, s, pairs)
    q = run_quench(s, h.flows)
    return figures(s, h, True), figures(s, q, False), h, q


def print_flows(h: RunResult, q: RunResult, s: Setting) -> None:
    print(f"{'flow':>9} {'path':<34} {'h ms':>9} {'q ms':>9} {'h Gb/s':>8} {'q Gb/s':>8} {'h RTT':>7} {'q RTT':>7}")
    for a, b in zip(h.flows, q.flows, strict=True):
        dur = s.duration_us / 1e6
        print(
            f"{f'h{a.src}>h{a.dst}':>9} {'-'.join(a.fwd):<34} {a.fct_s * 1e3:>9.3f} {b.fct_s * 1e3:>9.3f}"
            f" {a.delivered_bytes * 8 / dur / 1e9:>8.3f} {b.delivered_bytes * 8 / dur / 1e9:>8.3f}"
            f" {a.mean_delay_us:>7.2f} {b.mean_delay_us:>7.2f}"
        )


def table(a: argparse.Namespace, settings: list[Setting], verbose: bool) -> None:
    """A row per simulator per setting and seed; with several seeds, each setting's mean over
    them (min to max of the first column's quench / htsim)."""
    cols = columns(settings[0])
    head = f"{'seed':>4} {'setting':<42} {'sim':>6} " + " ".join(f"{label:>14}" for _, label, _ in cols)
    rows, by_label = [], {}
    for s in settings:
        hf, qf, h, q = run_pair(a, s)
        if verbose:
            print_flows(h, q, s)
            for name, f in (("htsim", hf), ("quench", qf)):
                if "busy_bins" in f:
                    print(
                        f"h0's link busy per {s.busy_bin_us} us, {name}: "
                        + " ".join(f"{b:.2f}" for b in f["busy_bins"])
                    )
        for name, f in (("htsim", hf), ("quench", qf)):
            cells = " ".join(f"{cell(f.get(k, math.nan), fmt):>14}" for k, _, fmt in cols)
            rows.append(f"{s.seed:>4} {s.label:<42} {name:>6} {cells}")
        by_label.setdefault(s.label, []).append((hf, qf))
        print(f"  seed {s.seed} {s.label} done", file=sys.stderr)
    print(head)
    print("\n".join(rows))
    if len(settings) == len(by_label):
        return
    key = cols[0][0]
    print(f"\nmean over {len(next(iter(by_label.values())))} seeds (q/h of {cols[0][1]}: mean, min to max)")
    print(f"{'':>4} {'setting':<42} {'sim':>6} " + " ".join(f"{label:>14}" for _, label, _ in cols))
    for label, pairs in by_label.items():
        for side, name in ((0, "htsim"), (1, "quench")):
            means = []
            for k, _, fmt in cols:
                values = [p[side].get(k, math.nan) for p in pairs]
                values = [v for v in values if isinstance(v, (int, float)) and v == v]
                means.append(cell(sum(values) / len(values), fmt) if values else "-")
            print(f"{'':>4} {label:<42} {name:>6} " + " ".join(f"{m:>14}" for m in means))
        ratios = [p[1][key] / p[0][key] for p in pairs if p[0][key] and p[0][key] == p[0][key]]
        if ratios:
            mean = sum(ratios) / len(ratios)
            print(f"{'':>4} {'':<42} {'q/h':>6} {mean:>14.3f} ({min(ratios):.3f} to {max(ratios):.3f})")


def experiments(base: Setting) -> list[Setting]:
    """Swift: the hop term each way, then quench's RTO tick. HPCC: htsim given the paper's
    rules one at a time, then together."""
    from dataclasses import replace

    if base.transport == "swift":
        nominal = SWIFT_BASE_US + SWIFT_PER_HOP_US
        return [
            replace(base, label="as htsim runs (no hop term)"),
            replace(
                base,
                label="quench: h per router, base + h",
                quench_base_target_us=nominal,
                quench_per_hop_us=SWIFT_PER_HOP_US,
            ),
            replace(
                base,
                label="+ htsim: h per link (hop count kept)",
                quench_base_target_us=nominal,
                quench_per_hop_us=SWIFT_PER_HOP_US,
                htsim_hop_count=True,
            ),
            replace(base, label="htsim: flow scaling from the fractional window", htsim_fractional_fs=True),
            replace(base, label="quench: window's release in the host queue", quench_small_queues=""),
            replace(base, label="quench: 10 ms RTO tick", quench_rto_tick="10ms"),
        ]
    # The paper's rules that htsim's HPCCSrc departs from, but for the two sending rules.
    all_six = dict(
        hpcc_qlen_after=True,
        hpcc_send_below=True,
        hpcc_reference=True,
        hpcc_last_record=True,
        hpcc_float_tau=True,
        hpcc_cap=True,
    )
    return [
        replace(base, label="as matched"),
        replace(base, label="htsim: W_c once per RTT", hpcc_reference=True),
        replace(base, label="htsim: tau/T real", hpcc_float_tau=True),
        # with L the previous ACK's, tau is an ACK's spacing, well under T: an integer tau/T
        # would keep U for ever, so this one comes with the real tau/T
        replace(base, label="htsim: + L = previous ACK's", hpcc_float_tau=True, hpcc_last_record=True),
        replace(base, label="htsim: W <= B.T", hpcc_cap=True),
        replace(base, label="htsim: qlen without the departing packet", hpcc_qlen_after=True),
        replace(base, label="htsim: sends while the flight is below W", hpcc_send_below=True),
        replace(base, label="htsim: a held packet goes at the ACK", hpcc_send_on_ack=True),
        replace(base, label="htsim: INT stamped as the packet starts", hpcc_stamp_at_start=True),
        replace(base, label="htsim: round ends at the ACK of snd_nxt", hpcc_round_at_snd_nxt=True),
        replace(base, label="htsim: all six", **all_six),
        replace(base, label="htsim: all seven", hpcc_send_on_ack=True, **all_six),
        replace(
            base,
            label="htsim: all seven + INT at the start",
            hpcc_stamp_at_start=True,
            hpcc_send_on_ack=True,
            **all_six,
        ),
    ]


def main() -> None:
    from dataclasses import replace

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim-src", default=HTSIM_URL, help="htsim checkout or git URL")
    ap.add_argument("--transport", choices=["swift", "hpcc"], default="swift")
    ap.add_argument("--scenario", choices=["incast", "permutation"], default="incast")
    ap.add_argument("--senders", default="8,15", help="incast: senders to host 0, comma-separated")
    ap.add_argument("--flow-packets", type=int, default=INCAST_PACKETS, help="incast: each flow's packets")
    ap.add_argument("--seeds", default="1", help="seeds, comma-separated: each draws the paths (and the permutation)")
    ap.add_argument("--duration-us", type=int, default=0, help="simulated time (default per scenario)")
    ap.add_argument("--buffer", type=int, default=0, help="htsim's switch queues, packets (quench's one less)")
    ap.add_argument("--quench-base-target-us", type=float, default=SWIFT_BASE_US, help="Swift's base target")
    ap.add_argument(
        "--quench-per-hop-us", type=float, default=0.0, help="Swift's per-hop term (htsim's, as it runs: 0)"
    )
    ap.add_argument("--htsim-fractional-fs", action="store_true", help="htsim: flow scaling from the fractional window")
    ap.add_argument("--htsim-hop-count", action="store_true", help="htsim: Route::clone keeps the hop count")
    ap.add_argument("--htsim-hpcc-reference", action="store_true", help="htsim: W_c moves once per RTT")
    ap.add_argument("--htsim-hpcc-last-record", action="store_true", help="htsim: L is the previous ACK's records")
    ap.add_argument("--htsim-hpcc-float-tau", action="store_true", help="htsim: tau/T as a real number")
    ap.add_argument("--htsim-hpcc-qlen-after", action="store_true", help="htsim: INT qlen without the departing packet")
    ap.add_argument("--htsim-hpcc-send-below", action="store_true", help="htsim: send while the flight is below W")
    ap.add_argument("--hpcc-wai-bytes", type=int, default=0, help="both: HPCC's W_AI (default htsim's, one MSS)")
    ap.add_argument("--htsim-hpcc-send-on-ack", action="store_true", help="htsim: a held packet goes at the ACK")
    ap.add_argument("--htsim-hpcc-cap", action="store_true", help="htsim: W at most B.T")
    ap.add_argument(
        "--htsim-hpcc-stamp-at-start", action="store_true", help="htsim: INT stamped as a packet starts to leave"
    )
    ap.add_argument(
        "--htsim-hpcc-round-at-snd-nxt", action="store_true", help="htsim: rounds end at the ACK of snd_nxt"
    )
    ap.add_argument("--quench-rto-tick", default="", help="quench's RTO tick, e.g. 10ms (htsim's scanner)")
    ap.add_argument("--quench-small-queues", default="nic", help='quench TCP small_queues ("" for none)')
    ap.add_argument("--quench-no-pfc", action="store_true", help="quench: no PFC (HPCC)")
    ap.add_argument("--busy-bin-us", type=int, default=0, help="incast, HPCC: h0's link busy per bin (us)")
    ap.add_argument("--experiments", action="store_true", help="the differences, one setting at a time")
    ap.add_argument("--flows", action="store_true", help="print every flow")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    base = Setting(
        a.transport,
        a.scenario,
        flow_packets=a.flow_packets,
        duration_us=a.duration_us or DURATION_US[a.scenario],
        buffer=a.buffer,
        quench_base_target_us=a.quench_base_target_us,
        quench_per_hop_us=a.quench_per_hop_us,
        htsim_hop_count=a.htsim_hop_count,
        htsim_fractional_fs=a.htsim_fractional_fs,
        hpcc_reference=a.htsim_hpcc_reference,
        hpcc_last_record=a.htsim_hpcc_last_record,
        hpcc_float_tau=a.htsim_hpcc_float_tau,
        hpcc_cap=a.htsim_hpcc_cap,
        hpcc_qlen_after=a.htsim_hpcc_qlen_after,
        hpcc_send_below=a.htsim_hpcc_send_below,
        hpcc_wai=a.hpcc_wai_bytes,
        hpcc_send_on_ack=a.htsim_hpcc_send_on_ack,
        hpcc_stamp_at_start=a.htsim_hpcc_stamp_at_start,
        hpcc_round_at_snd_nxt=a.htsim_hpcc_round_at_snd_nxt,
        busy_bin_us=a.busy_bin_us,
        quench_pfc=not a.quench_no_pfc,
        quench_rto_tick=a.quench_rto_tick,
        quench_small_queues=a.quench_small_queues,
    )
    seeds = [int(x) for x in a.seeds.split(",")]
    groups = [int(n) for n in a.senders.split(",")] if a.scenario == "incast" else [HOSTS]
    for n in groups:
        what = (
            f"{n}-to-1 incast of {a.flow_packets} packets"
            if a.scenario == "incast"
            else f"permutation of {n} long flows"
        )
        print(f"\n{a.transport}, k = {K} fat-tree, {what}, 10 Gb/s, {buffer_of(base)}-packet queues (htsim's -q)")
        settings = []
        for seed in seeds:
            s = replace(base, senders=n, seed=seed, label="as matched")
            settings += experiments(s) if a.experiments else [s]
        table(a, settings, a.flows)


if __name__ == "__main__":
    main()
