"""ns-3 side of the DCTCP check of docs/validation.md#dctcp: the scenario of
crates/quench-core/tests/dctcp.rs run with ns-3's TcpDctcp, and the queue measured per
sawtooth cycle the same way.

Run with the interpreter of an environment that has the ns-3 Python bindings:

    $QUENCH_NS3_VENV/bin/python benchmarks/ns3_dctcp.py [--flows 2,10,40]
        [--recovery prr|classic|classic_grow] [--dctcp ns3|floor|alpha_first|quench_ca]
        [--timestamps] [--json out.json]

Topology: N senders on their own 10 Gb/s, 10 us links into r1, r1 -> r2 the 10 Gb/s, 30 us
bottleneck, r2 -> d 10 Gb/s, 10 us (base RTT 100 us of propagation). The bottleneck device
r1 -> r2 has a RedQueueDisc as a step at K: QW = 1 (the average is the queue), MinTh = K,
MaxTh = K + 1, LInterm = 1 (max_p = 1), UseEcn, no hard drop, so an ECT arrival finding more
than K packets queued is marked; the device queue holds 1 packet, so the backlog sits in the
queue disc (the usual ns-3 RED set-up). TcpDctcp with its defaults (g = 1/16), delayed ACKs
off (DelAckCount 1), 1460-byte segments without the timestamp option (1500-byte IP packets,
as quench's), 16 MB socket buffers; flow i starts at 13·i us.

Measured from the queue disc's PacketsInQueue trace after a 0.05 s warm-up: a cycle runs from
one marking episode's start (the queue rises above K) to the next one's (after it has fallen
below K - 2); the medians of the cycles' peak, trough, amplitude and length, the marked
fraction (marked packets over the segments the sink received, whole run) and alpha, the mean of
TcpDctcp's estimates (its CongestionEstimate trace) after the warm-up; the entries into CWR per
flow per cycle, and the first flow's window growth between reductions (segments per ms); the
packets that entered the queue disc and their mean size (one 1500-byte packet per segment).
`--recovery classic` has ns-3 bring cwnd to ssthresh at once on ECN-Echo, as quench does;
`classic_grow` also grows the window through CWR, as quench does (GROW_IN_CWR_CPP); `--dctcp`
replaces TcpDctcp by an experiment's subclass (DCTCP_FLOOR_CPP, DCTCP_ALPHA_FIRST_CPP,
DCTCP_QUENCH_CA_CPP);
`--timestamps` keeps ns-3's default timestamp option, whose 1512-byte packets IPv4 fragments
into two (1500 + 32 bytes) at the 1500-byte MTU, so the queue disc counts two packets a segment.
"""

import argparse
import importlib.metadata
import json
import statistics
import sys

RATE_BPS = 10e9
ACCESS_DELAY_S = 10e-6
BOTTLENECK_DELAY_S = 30e-6
K = 65  # the DCTCP paper's marking threshold for 10 Gb/s (SIGCOMM 2010 section 4)
HYSTERESIS = 2
WARMUP_S = 0.05
SEGMENT_SIZE = 1460
SOCKET_BUF_BYTES = 16 << 20
PORT = 5000
# ns-3's recovery algorithms (TcpL4Protocol::RecoveryType), which also run its CWR reduction;
# `classic_grow` is the experiment below.
RECOVERY = {
    "prr": "ns3::TcpPrrRecovery",
    "classic": "ns3::TcpClassicRecovery",
    "classic_grow": "quench_exp::TcpClassicGrowInCwr",
}

# Experiment: ns-3's TcpClassicRecovery (cwnd = ssthresh at once on ECN-Echo) with the window
# growing through CWR as in congestion avoidance. ns-3 3.44's TcpSocketBase calls no
# IncreaseWindow while in CA_CWR (only the recovery's DoRecovery), so its window stays at
# ssthresh for the round trip after each reduction, and on leaving CWR it sets cwnd = ssthresh
# again; quench (RFC 3168 section 6.1.2, RFC 8257 section 3.3) keeps growing the window after
# the reduction. Here DoRecovery in CWR grows cwnd by TcpLinuxReno's rule (TcpDctcp's parent:
# one segment per window of segments acknowledged) and raises ssthresh with it, so that the
# socket's cwnd = ssthresh on leaving CWR keeps the grown window (with cwnd = ssthresh the
# controller stays in congestion avoidance, as quench's with cwnd above ssthresh). No loss
# occurs in these runs, so loss recovery, which would be the classic one, is not reached.
GROW_IN_CWR_CPP = r"""
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
namespace quench_exp
{
class TcpClassicGrowInCwr : public ns3::TcpClassicRecovery
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("quench_exp::TcpClassicGrowInCwr")
                                     .SetParent<ns3::TcpClassicRecovery>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<TcpClassicGrowInCwr>();
        return tid;
    }
    TcpClassicGrowInCwr() = default;
    TcpClassicGrowInCwr(const TcpClassicGrowInCwr& o) = default;
    std::string GetName() const override { return "TcpClassicGrowInCwr"; }
    ns3::Ptr<ns3::TcpRecoveryOps> Fork() override { return ns3::CopyObject<TcpClassicGrowInCwr>(this); }
    void EnterRecovery(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t dupAckCount, uint32_t unAckDataCount,
                       uint32_t deliveredBytes) override
    {
        ns3::TcpClassicRecovery::EnterRecovery(tcb, dupAckCount, unAckDataCount, deliveredBytes);
        m_inCwr = tcb->m_congState == ns3::TcpSocketState::CA_CWR;
        m_count = 0;
    }
    void DoRecovery(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        ns3::TcpClassicRecovery::DoRecovery(tcb, deliveredBytes, isDupAck);
        if (!m_inCwr)
        {
            return;
        }
        uint32_t w = std::max<uint32_t>(1, tcb->m_cWnd / tcb->m_segmentSize);
        m_count += std::max<uint32_t>(1, deliveredBytes / tcb->m_segmentSize);
        if (m_count >= w)
        {
            tcb->m_cWnd += (m_count / w) * tcb->m_segmentSize;
            tcb->m_ssThresh = tcb->m_cWnd.Get();
            m_count %= w;
        }
    }
    void ExitRecovery(ns3::Ptr<ns3::TcpSocketState> tcb) override
    {
        ns3::TcpClassicRecovery::ExitRecovery(tcb);
        m_inCwr = false;
    }

  private:
    bool m_inCwr = false;
    uint32_t m_count = 0;
};
}  // namespace quench_exp
"""

TRACE_CPP = r"""
#include "ns3/queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/config.h"
#include "ns3/packet-sink.h"
#include "ns3/tcp-socket-state.h"
#include <vector>

namespace dctcp_xcheck
{
std::vector<double> qTime;
std::vector<uint32_t> qLen;
double alphaSum = 0;
uint64_t alphaCount = 0;
double warmup = 0;
uint64_t cwrEntries = 0;
std::vector<double> cwndTime;
std::vector<uint32_t> cwndBytes;

void OnCwnd(uint32_t, uint32_t now)
{
    if (ns3::Simulator::Now().GetSeconds() >= warmup)
    {
        cwndTime.push_back(ns3::Simulator::Now().GetSeconds());
        cwndBytes.push_back(now);
    }
}

void OnQueue(uint32_t, uint32_t now)
{
    qTime.push_back(ns3::Simulator::Now().GetSeconds());
    qLen.push_back(now);
}

void OnEstimate(uint32_t, uint32_t, double alpha)
{
    if (ns3::Simulator::Now().GetSeconds() >= warmup)
    {
        alphaSum += alpha;
        alphaCount++;
    }
}

uint64_t SinkRx(ns3::Ptr<ns3::Application> app)
{
    return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx();
}

void AttachQueue(ns3::Ptr<ns3::QueueDisc> q)
{
    q->TraceConnectWithoutContext("PacketsInQueue", ns3::MakeCallback(&OnQueue));
}

void OnCongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now)
{
    if (now == ns3::TcpSocketState::CA_CWR && ns3::Simulator::Now().GetSeconds() >= warmup)
    {
        cwrEntries++;
    }
}

void AttachEstimates()
{
    ns3::Config::ConnectWithoutContextFailSafe(
        "/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongestionOps/$ns3::TcpDctcp/CongestionEstimate",
        ns3::MakeCallback(&OnEstimate));
    ns3::Config::ConnectWithoutContextFailSafe("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                                               ns3::MakeCallback(&OnCongState));
    // The first sender's window (node 0 is the first sender).
    ns3::Config::ConnectWithoutContextFailSafe("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow",
                                               ns3::MakeCallback(&OnCwnd));
}

void ScheduleAttachEstimates(double at)
{
    ns3::Simulator::Schedule(ns3::Seconds(at), &AttachEstimates);
}
}  // namespace dctcp_xcheck
"""


# Experiment: ns-3's TcpDctcp with the reduction floored at two segments. ns-3 3.44's
# TcpDctcp::GetSsThresh returns (1 - alpha/2)·cwnd with no floor; Linux's dctcp_ssthresh keeps
# at least 2 segments, and so does quench (cc/dctcp.rs). With windows of a few segments (N = 40)
# ns-3's can fall below two, where TcpLinuxReno's congestion avoidance (one segment per cwnd
# segments acknowledged, cwnd counted in whole segments, at least 1) grows it by a segment per ACK.
DCTCP_FLOOR_CPP = r"""
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
namespace quench_exp
{
class TcpDctcpFloor : public ns3::TcpDctcp
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("quench_exp::TcpDctcpFloor")
                                     .SetParent<ns3::TcpDctcp>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<TcpDctcpFloor>();
        return tid;
    }
    TcpDctcpFloor() = default;
    TcpDctcpFloor(const TcpDctcpFloor& o) = default;
    std::string GetName() const override { return "TcpDctcpFloor"; }
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<TcpDctcpFloor>(this); }
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(ns3::TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
    }
};
}  // namespace quench_exp
"""


# Experiment: the reduction with alpha brought up to date first. On an ACK that carries ECE and
# also ends an observation window, quench (cc/dctcp.rs, transport/tcp/sender) folds that window
# into alpha and then reduces with the new alpha; ns-3 3.44 reduces (EnterCwr, in ReceivedAck)
# before PktsAcked updates alpha, so with the old one. Here GetSsThresh computes the update that
# PktsAcked is about to make (this ACK's newly delivered bytes, all with ECE, counted in; the
# window ends if the ACK reaches m_nextSeq) and reduces with it; PktsAcked then makes the same
# update as before. TcpDctcp's counters are private: read through explicit instantiation, as
# ns3_child.py reads RED's average. The two-segment floor of DCTCP_FLOOR_CPP is kept.
DCTCP_ALPHA_FIRST_CPP = r"""
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
namespace quench_exp_alpha
{
template <typename Tag, typename Tag::type M>
struct Expose
{
    friend typename Tag::type Get(Tag) { return M; }
};
struct Alpha { typedef double ns3::TcpDctcp::*type; friend type Get(Alpha); };
struct Ecn { typedef uint32_t ns3::TcpDctcp::*type; friend type Get(Ecn); };
struct Total { typedef uint32_t ns3::TcpDctcp::*type; friend type Get(Total); };
struct Next { typedef ns3::SequenceNumber32 ns3::TcpDctcp::*type; friend type Get(Next); };
struct NextSet { typedef bool ns3::TcpDctcp::*type; friend type Get(NextSet); };
struct Gain { typedef double ns3::TcpDctcp::*type; friend type Get(Gain); };
template struct Expose<Alpha, &ns3::TcpDctcp::m_alpha>;
template struct Expose<Ecn, &ns3::TcpDctcp::m_ackedBytesEcn>;
template struct Expose<Total, &ns3::TcpDctcp::m_ackedBytesTotal>;
template struct Expose<Next, &ns3::TcpDctcp::m_nextSeq>;
template struct Expose<NextSet, &ns3::TcpDctcp::m_nextSeqFlag>;
template struct Expose<Gain, &ns3::TcpDctcp::m_g>;
}  // namespace quench_exp_alpha
namespace quench_exp
{
class TcpDctcpAlphaFirst : public ns3::TcpDctcp
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("quench_exp::TcpDctcpAlphaFirst")
                                     .SetParent<ns3::TcpDctcp>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<TcpDctcpAlphaFirst>();
        return tid;
    }
    TcpDctcpAlphaFirst() = default;
    TcpDctcpAlphaFirst(const TcpDctcpAlphaFirst& o) = default;
    std::string GetName() const override { return "TcpDctcpAlphaFirst"; }
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<TcpDctcpAlphaFirst>(this); }
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        using namespace quench_exp_alpha;
        ns3::TcpDctcp* d = this;
        double alpha = d->*Get(Alpha());
        uint32_t seg = tcb->m_segmentSize;
        uint32_t acked = (tcb->m_lastAckedSackedBytes / seg) * seg;
        ns3::SequenceNumber32 ackNumber = tcb->m_lastAckedSeq + acked;
        if (acked > 0 && d->*Get(NextSet()) && ackNumber >= d->*Get(Next()))
        {
            double total = double(d->*Get(Total())) + acked;
            double ecn = double(d->*Get(Ecn())) + acked;
            double g = d->*Get(Gain());
            alpha = (1.0 - g) * alpha + g * ecn / total;
        }
        uint32_t reduced = static_cast<uint32_t>((1 - alpha / 2.0) * tcb->m_cWnd);
        return std::max(reduced, 2 * seg);
    }
};
}  // namespace quench_exp
"""


# Experiment: ns-3's TcpDctcp with quench's congestion avoidance, floored as DCTCP_FLOOR_CPP.
# TcpLinuxReno (TcpDctcp's parent) counts the window in whole segments, w = floor(cwnd / MSS),
# and adds one segment per w segments acknowledged; quench adds MSS·MSS/cwnd bytes per ACK
# (cc/mod.rs aimd_growth; delayed ACKs are off here). At 3.5 segments ns-3 grows 1/3 of a
# segment per ACK, quench 1/3.5. The window also grows so through CWR (PktsAcked runs there),
# with ssthresh raised to it as in GROW_IN_CWR_CPP; run it with `--recovery classic`.
DCTCP_QUENCH_CA_CPP = r"""
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
namespace quench_exp
{
class TcpDctcpQuenchCa : public ns3::TcpDctcp
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("quench_exp::TcpDctcpQuenchCa")
                                     .SetParent<ns3::TcpDctcp>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<TcpDctcpQuenchCa>();
        return tid;
    }
    TcpDctcpQuenchCa() = default;
    TcpDctcpQuenchCa(const TcpDctcpQuenchCa& o) = default;
    std::string GetName() const override { return "TcpDctcpQuenchCa"; }
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<TcpDctcpQuenchCa>(this); }
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(ns3::TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
    }
    void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked, const ns3::Time& rtt) override
    {
        ns3::TcpDctcp::PktsAcked(tcb, segmentsAcked, rtt);
        if (tcb->m_congState == ns3::TcpSocketState::CA_CWR)
        {
            Grow(tcb, segmentsAcked);
            tcb->m_ssThresh = tcb->m_cWnd.Get();
        }
    }

  protected:
    void CongestionAvoidance(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        Grow(tcb, segmentsAcked);
    }

  private:
    static void Grow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked)
    {
        uint64_t mss = tcb->m_segmentSize;
        for (uint32_t i = 0; i < segmentsAcked; i++)
        {
            uint64_t add = std::max<uint64_t>(1, mss * mss / tcb->m_cWnd.Get());
            tcb->m_cWnd = tcb->m_cWnd.Get() + static_cast<uint32_t>(add);
        }
    }
};
}  // namespace quench_exp
"""


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flows", default="2,10,40", help="comma-separated flow counts")
    ap.add_argument("--duration", type=float, default=0.2, help="simulated seconds")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument(
        "--recovery",
        choices=sorted(RECOVERY),
        default="prr",
        help="how ns-3 brings cwnd down to ssthresh in CWR: over a round trip (PRR, its default, as "
        "Linux's tcp_cwnd_reduction) or at once (classic, as RFC 3168 section 6.1.2 and quench); "
        "classic_grow: at once, and the window grows through CWR as in quench (an experiment)",
    )
    ap.add_argument(
        "--dctcp",
        choices=("ns3", "floor", "alpha_first", "quench_ca"),
        default="ns3",
        help="experiments: ns-3's TcpDctcp with its reduction floored at two segments as Linux's and "
        "quench's (floor), or that and reducing with alpha updated by the ACK first, as quench (alpha_first), "
        "or floored with quench's congestion avoidance, also through CWR (quench_ca, with --recovery classic)",
    )
    ap.add_argument(
        "--timestamps",
        action="store_true",
        help="ns-3's default TCP timestamp option: 1512-byte packets, each fragmented into two at the "
        "1500-byte MTU (an experiment; quench's run has no timestamps)",
    )
    return ap.parse_args()


def p2p(ns, delay_s, queue_pkts):
    h = ns.PointToPointHelper()
    h.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(int(RATE_BPS))))
    h.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(delay_s)))
    h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{queue_pkts}p")))
    return h


def run(ns, n, duration, recovery="prr", timestamps=False, dctcp="ns3::TcpDctcp"):
    sd = ns.Config.SetDefault
    # Without the timestamp option (12 bytes), as quench's run: a 1460-byte segment is a
    # 1500-byte IP packet. With it (ns-3's default) the packet is 1512 bytes, which IPv4
    # fragments at the 1500-byte MTU into 1500 + 32 bytes, two packets at the queue disc.
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(timestamps))
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue(dctcp))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName(RECOVERY[recovery])))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_SIZE))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUF_BYTES))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(SOCKET_BUF_BYTES))
    sd("ns3::RedQueueDisc::UseEcn", ns.BooleanValue(True))
    sd("ns3::RedQueueDisc::UseHardDrop", ns.BooleanValue(False))
    sd("ns3::RedQueueDisc::Gentle", ns.BooleanValue(False))
    sd("ns3::RedQueueDisc::QW", ns.DoubleValue(1.0))
    sd("ns3::RedQueueDisc::MinTh", ns.DoubleValue(K))
    sd("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(K + 1))
    sd("ns3::RedQueueDisc::LInterm", ns.DoubleValue(1.0))
    sd("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(SEGMENT_SIZE + 40))
    sd("ns3::RedQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize("1000p")))
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)

    senders, routers, dest = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(n)
    routers.Create(2)
    dest.Create(1)
    r1, r2, d = routers.Get(0), routers.Get(1), dest.Get(0)
    bottleneck = p2p(ns, BOTTLENECK_DELAY_S, 1).Install(r1, r2)
    access = [p2p(ns, ACCESS_DELAY_S, 1000).Install(senders.Get(i), r1) for i in range(n)]
    last = p2p(ns, ACCESS_DELAY_S, 1000).Install(r2, d)
    stack = ns.InternetStackHelper()
    for nodes in (senders, routers, dest):
        stack.Install(nodes)
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bottleneck)
    addr.SetBase(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.0"))
    d_iface = addr.Assign(last)
    for i in range(n):
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(access[i])
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    tc = ns.TrafficControlHelper()
    for devs in [bottleneck, last, *access]:
        tc.Uninstall(devs)
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc("ns3::RedQueueDisc")
    qdiscs = red.Install(ns.NetDeviceContainer(bottleneck.Get(0)))
    queue = qdiscs.Get(0)

    x = ns.cppyy.gbl.dctcp_xcheck
    x.qTime.clear()
    x.qLen.clear()
    x.alphaSum, x.alphaCount, x.warmup, x.cwrEntries = 0.0, 0, WARMUP_S, 0
    x.cwndTime.clear()
    x.cwndBytes.clear()
    x.AttachQueue(queue)

    sink = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo()
    ).Install(d)
    sink.Start(ns.Seconds(0.0))
    dest_addr = ns.InetSocketAddress(d_iface.GetAddress(1), PORT).ConvertTo()
    for i in range(n):
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", dest_addr)
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT_SIZE))
        app = bulk.Install(senders.Get(i))
        app.Start(ns.MicroSeconds(13 * i))
    # The sockets exist once the applications have started.
    x.ScheduleAttachEstimates(13e-6 * n + 1e-6)
    ns.Simulator.Stop(ns.Seconds(duration))
    ns.Simulator.Run()
    stats = queue.GetStats()
    marked, dropped = stats.nTotalMarkedPackets, stats.nTotalDroppedPackets
    arrivals = stats.nTotalReceivedPackets
    arrival_bytes = stats.nTotalReceivedBytes
    delivered = ns.cppyy.gbl.dctcp_xcheck.SinkRx(sink.Get(0)) / SEGMENT_SIZE
    times, lens = list(x.qTime), [int(v) for v in x.qLen]
    alpha = x.alphaSum / x.alphaCount if x.alphaCount else float("nan")
    cwr_entries = int(x.cwrEntries)
    growth = window_growth(list(x.cwndTime), [int(v) for v in x.cwndBytes])
    ns.Simulator.Destroy()
    per_cycle = cycles(times, lens)
    return per_cycle | {
        # ECN reductions (entries into CWR) per flow per cycle, after the warm-up.
        "reductions_per_flow": cwr_entries / n / per_cycle["cycles"],
        "cwnd_growth_segments_per_ms": growth,
        "flows": n,
        "marked_fraction": marked / delivered,
        "marked": marked,
        "queue_arrivals": arrivals,
        "queue_arrival_mean_bytes": arrival_bytes / arrivals if arrivals else float("nan"),
        "delivered_segments": delivered,
        "dropped": dropped,
        "alpha_mean": alpha,
        "utilization": delivered * (SEGMENT_SIZE + 40) * 8 / (RATE_BPS * duration),
    }


def window_growth(times, cwnd_bytes):
    """The first flow's window growth between reductions, segments per millisecond: the median
    over its climbs (runs of increases from one decrease to the next) of rise over duration."""
    slopes, start = [], 0
    for i in range(1, len(cwnd_bytes) + 1):
        if i == len(cwnd_bytes) or cwnd_bytes[i] < cwnd_bytes[i - 1]:
            if i - 1 > start and times[i - 1] > times[start]:
                rise = (cwnd_bytes[i - 1] - cwnd_bytes[start]) / SEGMENT_SIZE
                slopes.append(rise / ((times[i - 1] - times[start]) * 1e3))
            start = i
    return statistics.median(slopes) if slopes else float("nan")


def cycles(times, lens):
    """Per-cycle medians, as crates/quench-core/tests/dctcp.rs computes them."""
    q = [(t, v) for t, v in zip(times, lens, strict=True) if t >= WARMUP_S]
    starts, armed = [], True
    for i, (_, v) in enumerate(q):
        if armed and v > K:
            starts.append(i)
            armed = False
        elif not armed and v < K - HYSTERESIS:
            armed = True
    peaks, troughs, periods = [], [], []
    for a, b in zip(starts, starts[1:]):
        seg = [v for _, v in q[a:b]]
        peaks.append(max(seg))
        troughs.append(min(seg))
        periods.append(q[b][0] - q[a][0])
    area = sum(v * (t1 - t0) for (t0, v), (t1, _) in zip(q, q[1:]))
    mean_queue = area / (q[-1][0] - q[0][0])
    amplitudes = [p - t for p, t in zip(peaks, troughs, strict=True)]
    med = statistics.median_low
    return {
        "cycles": len(amplitudes),
        "amplitude": med(amplitudes),
        "peak": med(peaks),
        "trough": med(troughs),
        "period_us": statistics.median(periods) * 1e6,
        "mean_queue": mean_queue,
    }


def main():
    args = parse_args()
    from ns import ns

    ns.cppyy.cppdef(TRACE_CPP)
    if args.recovery == "classic_grow":
        ns.cppyy.cppdef(GROW_IN_CWR_CPP)
        ns.cppyy.gbl.quench_exp.TcpClassicGrowInCwr.GetTypeId()  # registers the TypeId
    dctcp = "ns3::TcpDctcp"
    if args.dctcp == "floor":
        ns.cppyy.cppdef(DCTCP_FLOOR_CPP)
        dctcp = "quench_exp::TcpDctcpFloor"
        ns.cppyy.gbl.quench_exp.TcpDctcpFloor.GetTypeId()  # registers the TypeId
    elif args.dctcp == "alpha_first":
        ns.cppyy.cppdef(DCTCP_ALPHA_FIRST_CPP)
        dctcp = "quench_exp::TcpDctcpAlphaFirst"
        ns.cppyy.gbl.quench_exp.TcpDctcpAlphaFirst.GetTypeId()
    elif args.dctcp == "quench_ca":
        ns.cppyy.cppdef(DCTCP_QUENCH_CA_CPP)
        dctcp = "quench_exp::TcpDctcpQuenchCa"
        ns.cppyy.gbl.quench_exp.TcpDctcpQuenchCa.GetTypeId()
    flows = [int(n) for n in args.flows.split(",")]
    results = [run(ns, n, args.duration, args.recovery, args.timestamps, dctcp) for n in flows]
    out = {"simulator": "ns-3", "version": importlib.metadata.version("ns3"), "results": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
