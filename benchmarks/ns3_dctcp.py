"""ns-3 side of the DCTCP check of docs/validation.md#dctcp: the scenario of
crates/quench-core/tests/dctcp.rs run with ns-3's TcpDctcp, and the queue measured per
sawtooth cycle the same way; the same scenario and statistics in quench with --simulator quench.

Run with the interpreter of an environment that has the ns-3 Python bindings, or with quench's
for the same scenario and statistics in quench (`--simulator quench`):

    $QUENCH_NS3_VENV/bin/python benchmarks/ns3_dctcp.py [--flows 2,10,40]
        [--recovery prr|classic|classic_grow]
        [--dctcp ns3|floor|alpha_first|quench_ca|grown_ack|grown_ack_alpha|linux_ack]
        [--syn-not-ect] [--initial-window W] [--timestamps] [--json out.json]
    .venv/bin/python benchmarks/ns3_dctcp.py --simulator quench [--flows ...] [--initial-window W]
        [--json out.json]

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
Per flow, in both simulators (`windows`): the flows that reduce after the warm-up, the median
number of flows that reduce in a cycle, the time average of the sum of the windows, the mean
window just before and just after a reduction, the mean growth and time between a flow's
reductions (ns-3: every sender's CongestionWindow and CongState traces; quench: its cwnd and
tcp_events tables).
`--recovery classic` has ns-3 bring cwnd to ssthresh at once on ECN-Echo, as quench does;
`classic_grow` also grows the window through CWR, as quench does (GROW_IN_CWR_CPP); `--dctcp`
replaces TcpDctcp by an experiment's subclass (DCTCP_FLOOR_CPP, DCTCP_ALPHA_FIRST_CPP,
DCTCP_QUENCH_CA_CPP, DCTCP_GROWN_ACK_CPP); `--syn-not-ect` sends ns-3's SYN, pure ACKs and
retransmissions without ECT, as RFC 3168 section 6.1 has a Classic ECN sender do
(SYN_NOT_ECT_CPP; both simulators' DCTCP, as Linux's, sends every packet ECT);
`--initial-window` sets either simulator's initial window;
`--timestamps` keeps ns-3's default timestamp option, whose 1512-byte packets IPv4 fragments
into two (1500 + 32 bytes) at the 1500-byte MTU, so the queue disc counts two packets a segment.
"""

import argparse
import bisect
import importlib.metadata
import json
import statistics
import sys

from ns3_cpp import OPS_CPP

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
    QUENCH_EXP_OPS(TcpClassicGrowInCwr, ns3::TcpClassicRecovery, TcpRecoveryOps)
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
#include <string>
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
// Every sender's window and entries into CWR, the whole run (flow = the sender's node id).
uint32_t nFlows = 0;
std::vector<double> flowCwndTime;
std::vector<uint32_t> flowCwndFlow;
std::vector<uint32_t> flowCwndBytes;
std::vector<double> flowCwrTime;
std::vector<uint32_t> flowCwrFlow;

void OnFlowCwnd(uint32_t flow, uint32_t, uint32_t now)
{
    flowCwndTime.push_back(ns3::Simulator::Now().GetSeconds());
    flowCwndFlow.push_back(flow);
    flowCwndBytes.push_back(now);
}

void OnFlowCongState(uint32_t flow, ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now)
{
    if (now == ns3::TcpSocketState::CA_CWR)
    {
        flowCwrTime.push_back(ns3::Simulator::Now().GetSeconds());
        flowCwrFlow.push_back(flow);
    }
}

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
    for (uint32_t i = 0; i < nFlows; i++)
    {
        std::string socket = "/NodeList/" + std::to_string(i) + "/$ns3::TcpL4Protocol/SocketList/0/";
        ns3::Config::ConnectWithoutContextFailSafe(socket + "CongestionWindow", ns3::MakeBoundCallback(&OnFlowCwnd, i));
        ns3::Config::ConnectWithoutContextFailSafe(socket + "CongState", ns3::MakeBoundCallback(&OnFlowCongState, i));
    }
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
    QUENCH_EXP_OPS(TcpDctcpFloor, ns3::TcpDctcp, TcpCongestionOps)
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
# ns3_child.py reads RED's average (ALPHA_ACCESS_CPP, shared with DCTCP_GROWN_ACK_CPP). The
# two-segment floor of DCTCP_FLOOR_CPP is kept.
ALPHA_ACCESS_CPP = r"""
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-socket-state.h"
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

// alpha as PktsAcked is about to leave it for the ACK being processed (which carries ECE).
inline double UpdatedAlpha(ns3::TcpDctcp* d, ns3::Ptr<const ns3::TcpSocketState> tcb)
{
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
    return alpha;
}
}  // namespace quench_exp_alpha
"""
DCTCP_ALPHA_FIRST_CPP = r"""
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
namespace quench_exp
{
class TcpDctcpAlphaFirst : public ns3::TcpDctcp
{
  public:
    QUENCH_EXP_OPS(TcpDctcpAlphaFirst, ns3::TcpDctcp, TcpCongestionOps)
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        double alpha = quench_exp_alpha::UpdatedAlpha(this, tcb);
        uint32_t reduced = static_cast<uint32_t>((1 - alpha / 2.0) * tcb->m_cWnd);
        return std::max(reduced, 2 * tcb->m_segmentSize);
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
    QUENCH_EXP_OPS(TcpDctcpQuenchCa, ns3::TcpDctcp, TcpCongestionOps)
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


# Experiment: quench_ca with three orders on the ACK that reduces. ns-3 reduces the window the
# ACK found (EnterCwr, in ReceivedAck) and then, with quench_ca, PktsAcked in CWR grows the
# reduced window by that ACK too, MSS·MSS/cwnd of the smaller window, unscaled: at 3.5 segments
# and alpha 0.65, 0.42 of a segment. `linux_ack`: the window the ACK found is reduced and nothing
# grows on that ACK, as Linux's tcp_enter_cwr (called from tcp_fastretrans_alert before
# tcp_cong_control, which grows nothing in CWR) and quench (transport/tcp/sender on_ecn_echo
# scales the window the ACK found). `grown_ack`: the ACK grows the window first and the
# reduction scales the grown window, cwnd = min(the window before the ACK, ssthresh), so the
# ACK's growth enters the reduced window scaled by 1 - alpha/2 (0.19 of a segment) and nothing
# grows after it. Here GetSsThresh grows a copy of the window by the ACK as quench_ca's
# congestion avoidance (slow start below ssthresh) and reduces that (`grown_ack`) or the window
# itself (`linux_ack`), and the PktsAcked of the same ACK skips its growth. `grown_ack_alpha`
# also reduces with alpha updated by the ACK (DCTCP_ALPHA_FIRST_CPP's computation).
DCTCP_GROWN_ACK_CPP = r"""
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
namespace quench_exp
{
class TcpDctcpGrownAck : public TcpDctcpQuenchCa
{
  public:
    QUENCH_EXP_OPS(TcpDctcpGrownAck, TcpDctcpQuenchCa, TcpCongestionOps)
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        uint64_t mss = tcb->m_segmentSize;
        uint64_t cwnd = tcb->m_cWnd.Get();
        uint32_t segments = tcb->m_lastAckedSackedBytes / tcb->m_segmentSize;
        for (uint32_t i = 0; GrowFirst() && i < segments; i++)
        {
            cwnd += cwnd < tcb->m_ssThresh.Get() ? mss : std::max<uint64_t>(1, mss * mss / cwnd);
        }
        m_grownOnReduction = segments > 0;
        uint32_t reduced = static_cast<uint32_t>((1 - Alpha(tcb) / 2.0) * cwnd);
        return std::max(reduced, 2 * tcb->m_segmentSize);
    }
    void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked, const ns3::Time& rtt) override
    {
        if (m_grownOnReduction)
        {
            m_grownOnReduction = false;
            ns3::TcpDctcp::PktsAcked(tcb, segmentsAcked, rtt);  // alpha only
            return;
        }
        TcpDctcpQuenchCa::PktsAcked(tcb, segmentsAcked, rtt);
    }

  protected:
    // The ACK's growth in the reduced window (`grown_ack`) or Linux's and quench's order (none:
    // the ACK that enters CWR reduces the window it found, and tcp_cong_control grows nothing
    // in CWR).
    virtual bool GrowFirst() { return true; }
    virtual double Alpha(ns3::Ptr<const ns3::TcpSocketState> tcb)
    {
        return this->*Get(quench_exp_alpha::Alpha());  // ns-3's order: before the update (Get by ADL)
    }

  private:
    bool m_grownOnReduction = false;
};

class TcpDctcpGrownAckAlpha : public TcpDctcpGrownAck
{
  public:
    QUENCH_EXP_OPS(TcpDctcpGrownAckAlpha, TcpDctcpGrownAck, TcpCongestionOps)

  protected:
    double Alpha(ns3::Ptr<const ns3::TcpSocketState> tcb) override
    {
        return quench_exp_alpha::UpdatedAlpha(this, tcb);
    }
};

class TcpDctcpLinuxAck : public TcpDctcpGrownAck
{
  public:
    QUENCH_EXP_OPS(TcpDctcpLinuxAck, TcpDctcpGrownAck, TcpCongestionOps)

  protected:
    bool GrowFirst() override { return false; }
};
}  // namespace quench_exp
"""


# Experiment: the SYN without ECT, as RFC 3168 section 6.1.1 has a Classic ECN sender send it.
# ns-3's TcpDctcp sets DctcpEcn mode, in which TcpSocketBase::AddSocketTags puts ECT on every
# packet it sends, the SYN included (as Linux's DCTCP, tcp_ecn_send_syn with tcp_ca_needs_ecn,
# and quench's, CongestionControl::ect_on_every_packet), so RED marks a SYN that arrives above
# K where it drops a non-ECT one. Here the controller (any
# of the variants, the template's argument) leaves the mode ClassicEcn after its Init: the SYN,
# pure ACKs and retransmissions go without ECT, data with it once ECN is negotiated. The
# receiver's RFC 8257 section 3.2 echo does not depend on the mode (CwndEvent of its TcpDctcp).
SYN_NOT_ECT_CPP = r"""
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-state.h"
#include <string>
namespace quench_exp
{
template <typename Base>
class SynNotEct : public Base
{
  public:
    static ns3::TypeId GetTypeId()
    {
        std::string base = Base::GetTypeId().GetName();
        std::string name = "quench_exp::SynNotEct_" + base.substr(base.rfind(':') + 1);
        static ns3::TypeId tid = ns3::TypeId(name)
                                     .SetParent<Base>()
                                     .SetGroupName("Internet")
                                     .template AddConstructor<SynNotEct<Base>>();
        return tid;
    }
    SynNotEct() = default;
    SynNotEct(const SynNotEct& o) = default;
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<SynNotEct<Base>>(this); }
    void Init(ns3::Ptr<ns3::TcpSocketState> tcb) override
    {
        Base::Init(tcb);
        tcb->m_ecnMode = ns3::TcpSocketState::ClassicEcn;
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
        choices=sorted(DCTCP_VARIANTS),
        default="ns3",
        help="experiments: ns-3's TcpDctcp with its reduction floored at two segments as Linux's and "
        "quench's (floor), or that and reducing with alpha updated by the ACK first, as quench (alpha_first), "
        "or floored with quench's congestion avoidance, also through CWR (quench_ca, with --recovery classic); "
        "grown_ack: quench_ca, and the ACK that reduces grows the window before the reduction and not after; "
        "grown_ack_alpha: that and alpha updated first; linux_ack: quench_ca, and the ACK that reduces grows "
        "nothing, the window it found reduced (Linux's and quench's order)",
    )
    ap.add_argument(
        "--syn-not-ect",
        action="store_true",
        help="ns-3: send the SYN, pure ACKs and retransmissions without ECT, as RFC 3168 section 6.1 (ns-3's and "
        "quench's DCTCP send every packet ECT, as Linux's): RED then drops a SYN that arrives above K (an experiment)",
    )
    ap.add_argument(
        "--initial-window",
        type=int,
        help="initial window in segments (default: each simulator's own, ns-3's InitialCwnd 10, quench's RFC 5681 "
        "3 for 1460-byte segments); it decides how soon the queue first exceeds K, while the later flows connect",
    )
    ap.add_argument(
        "--simulator",
        choices=("ns3", "quench"),
        default="ns3",
        help="quench: the same scenario and statistics in quench (run with quench's interpreter)",
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


def run(ns, n, duration, recovery="prr", timestamps=False, dctcp="ns3::TcpDctcp", initial_window=None):
    sd = ns.Config.SetDefault
    if initial_window is not None:
        sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(initial_window))
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
    for v in (x.flowCwndTime, x.flowCwndFlow, x.flowCwndBytes, x.flowCwrTime, x.flowCwrFlow):
        v.clear()
    x.nFlows = n
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
    cwnd_rows = list(zip(x.flowCwndTime, [int(f) for f in x.flowCwndFlow], [int(w) for w in x.flowCwndBytes]))
    reductions = list(zip(x.flowCwrTime, [int(f) for f in x.flowCwrFlow]))
    ns.Simulator.Destroy()
    per_cycle = cycles(times, lens)
    per_flow = windows(n, cwnd_rows, reductions, episode_starts(times, lens), duration)
    return (
        per_cycle
        | per_flow
        | {
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
    )


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


def episode_start_indices(q):
    """Indices in q, (time, packets) after the warm-up, where a marking episode starts: the
    queue rises above K after having fallen below K - HYSTERESIS."""
    starts, armed = [], True
    for i, (_, v) in enumerate(q):
        if armed and v > K:
            starts.append(i)
            armed = False
        elif not armed and v < K - HYSTERESIS:
            armed = True
    return starts


def episode_starts(times, lens):
    """The times at which the marking episodes (the cycles) start, after the warm-up."""
    q = [(t, v) for t, v in zip(times, lens, strict=True) if t >= WARMUP_S]
    return [q[i][0] for i in episode_start_indices(q)]


def windows(n, cwnd_rows, reductions, starts, duration):
    """Per-flow window statistics after the warm-up, the same for both simulators.
    cwnd_rows: (time, flow, cwnd bytes) in time order, each change of a sender's window;
    reductions: (time, flow) of each ECN reduction (ns-3: entry into CWR). A reduction's window
    before is the flow's last value before its time, after the last value at its time (all of
    that ACK's processing: ns-3 with quench_ca grows the reduced window by the same ACK)."""
    per_flow = [([], []) for _ in range(n)]
    for t, f, w in cwnd_rows:
        per_flow[f][0].append(t)
        per_flow[f][1].append(w)
    # Time average of the sum of the windows: what the flows may have in flight, C·RTT + queue.
    area = 0.0
    for ts, ws in per_flow:
        i = bisect.bisect_right(ts, WARMUP_S) - 1
        t0, w0 = WARMUP_S, ws[i] if i >= 0 else 0
        for t, w in zip(ts[i + 1 :], ws[i + 1 :], strict=True):
            area += w0 * (t - t0)
            t0, w0 = t, w
        area += w0 * (duration - t0)
    before, after, growth, gaps = [], [], [], []
    last = [None] * n
    reduced = sorted((t, f) for t, f in reductions if t >= WARMUP_S)
    for t, f in reduced:
        ts, ws = per_flow[f]
        b = ws[bisect.bisect_left(ts, t) - 1]
        a = ws[bisect.bisect_right(ts, t) - 1]
        before.append(b)
        after.append(a)
        if last[f] is not None:
            growth.append(b - last[f][1])
            gaps.append(t - last[f][0])
        last[f] = (t, a)
    flows_reducing = []
    for s0, s1 in zip(starts, starts[1:]):
        lo, hi = bisect.bisect_left(reduced, (s0, -1)), bisect.bisect_left(reduced, (s1, -1))
        flows_reducing.append(len({f for _, f in reduced[lo:hi]}))
    seg = SEGMENT_SIZE
    return {
        # Flows that reduce at least once after the warm-up (a flow that never connected does not).
        "flows_reducing": len({f for _, f in reduced}),
        "window_sum_segments": area / (duration - WARMUP_S) / seg,
        "window_before_reduction": statistics.fmean(before) / seg,
        "window_after_reduction": statistics.fmean(after) / seg,
        "growth_between_reductions": statistics.fmean(growth) / seg,
        "reduction_interval_us": statistics.fmean(gaps) * 1e6,
        "flows_reducing_per_cycle": statistics.median(flows_reducing),
    }


def cycles(times, lens):
    """Per-cycle medians, as crates/quench-core/tests/dctcp.rs computes them."""
    q = [(t, v) for t, v in zip(times, lens, strict=True) if t >= WARMUP_S]
    starts = episode_start_indices(q)
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


# The experiment classes behind --dctcp: (C++ definitions in order, the class to register).
DCTCP_VARIANTS = {
    "ns3": ((), None),
    "floor": ((DCTCP_FLOOR_CPP,), "TcpDctcpFloor"),
    "alpha_first": ((ALPHA_ACCESS_CPP, DCTCP_ALPHA_FIRST_CPP), "TcpDctcpAlphaFirst"),
    "quench_ca": ((DCTCP_QUENCH_CA_CPP,), "TcpDctcpQuenchCa"),
    "grown_ack": ((ALPHA_ACCESS_CPP, DCTCP_QUENCH_CA_CPP, DCTCP_GROWN_ACK_CPP), "TcpDctcpGrownAck"),
    "grown_ack_alpha": ((ALPHA_ACCESS_CPP, DCTCP_QUENCH_CA_CPP, DCTCP_GROWN_ACK_CPP), "TcpDctcpGrownAckAlpha"),
    "linux_ack": ((ALPHA_ACCESS_CPP, DCTCP_QUENCH_CA_CPP, DCTCP_GROWN_ACK_CPP), "TcpDctcpLinuxAck"),
}


def quench_scenario(n, duration, initial_window=None):
    """crates/quench-core/tests/dctcp.rs's scenario as a quench scenario dict; `initial_window`
    in segments (RFC 5681's when None)."""
    red = {
        "kind": "red",
        "min_th": K,
        "max_th": K + 1,
        "max_p": 1.0,
        "w_q": 1.0,
        "limit": "1000p",
        "signal": "mark",
        "forced": "mark",
    }
    rate, access, bottleneck = f"{RATE_BPS:.0f}bps", f"{ACCESS_DELAY_S * 1e6:g}us", f"{BOTTLENECK_DELAY_S * 1e6:g}us"
    links = [{"from": f"s{i}", "to": "r1", "rate": rate, "delay": access} for i in range(n)]
    links.append({"from": "r1", "to": "r2", "rate": rate, "delay": bottleneck, "qdisc": red})
    links.append({"from": "r2", "to": "d", "rate": rate, "delay": access})
    tcp = {
        "profile": "rfc",
        "ecn": True,
        "delayed_ack": {"enabled": False},
        "send_buffer": "16MB",
        "receive_window": "16MB",
    }
    cc = {"kind": "dctcp"} if initial_window is None else {"kind": "dctcp", "initial_window": initial_window}
    return {
        "hosts": [f"s{i}" for i in range(n)] + ["d"],
        "routers": ["r1", "r2"],
        "links": links,
        "duration": f"{duration}s",
        "seed": 1,
        "flows": [
            {"kind": "tcp", "src": f"s{i}", "dst": "d", "cc": cc, "start": f"{13 * i}us", "tcp": tcp} for i in range(n)
        ],
        "record": {"queues": True, "cwnd": True, "rtt": False, "drops": False, "monitors": False, "links": ["r1->r2"]},
    }


def run_quench(quench, n, duration, initial_window=None):
    """The same scenario and statistics in quench (its per-cycle figures as the Rust test's, with
    this script's medians and reduction count)."""
    results = quench.run_scenario(quench_scenario(n, duration, initial_window), progress=False)
    t = results.tables  # read while `results` (which owns the records on disk) is alive
    link = t.column("links", "link")[t.column("links", "name").index("r1->r2")]
    queue = zip(t.column("queue", "time_s"), t.column("queue", "link"), t.column("queue", "packets"), strict=True)
    q = [(qt, int(p)) for qt, ql, p in queue if ql == link]
    times, lens = [v[0] for v in q], [v[1] for v in q]
    # The event column holds names, or the codes of a table read back from disk.
    ecn_reduction = ("ecn_reduction", quench.results.TCP_EVENTS.index("ecn_reduction"))
    events = zip(t.column("tcp_events", "time_s"), t.column("tcp_events", "flow"), t.column("tcp_events", "event"))
    reductions = [(et, int(f)) for et, f, e in events if e in ecn_reduction]
    cwnd = zip(t.column("cwnd", "time_s"), t.column("cwnd", "flow"), t.column("cwnd", "cwnd"), strict=True)
    cwnd_rows = [(ct, int(f), int(w)) for ct, f, w in cwnd]
    row = t.column("links", "name").index("r1->r2")
    marked, departed = t.column("links", "marked_packets")[row], t.column("links", "departed_packets")[row]
    per_cycle = cycles(times, lens)
    per_flow = windows(n, cwnd_rows, reductions, episode_starts(times, lens), duration)
    after_warmup = sum(1 for et, _ in reductions if et >= WARMUP_S)
    return (
        per_cycle
        | per_flow
        | {
            "reductions_per_flow": after_warmup / n / per_cycle["cycles"],
            "flows": n,
            "marked_fraction": marked / departed,
            "marked": marked,
            "dropped": t.column("links", "dropped_packets")[row],
            "utilization": t.column("links", "utilization")[row],
        }
    )


def main():
    args = parse_args()
    flows = [int(n) for n in args.flows.split(",")]
    if args.simulator == "quench":
        import quench
        import quench.results

        results = [run_quench(quench, n, args.duration, args.initial_window) for n in flows]
        out = {"simulator": "quench", "version": quench.__version__, "results": results}
    else:
        from ns import ns

        ns.cppyy.cppdef(OPS_CPP)
        ns.cppyy.cppdef(TRACE_CPP)
        if args.recovery == "classic_grow":
            ns.cppyy.cppdef(GROW_IN_CWR_CPP)
            ns.cppyy.gbl.quench_exp.TcpClassicGrowInCwr.GetTypeId()  # registers the TypeId
        sources, cls = DCTCP_VARIANTS[args.dctcp]
        for source in sources:
            ns.cppyy.cppdef(source)
        base = ns.cppyy.gbl.ns3.TcpDctcp if cls is None else getattr(ns.cppyy.gbl.quench_exp, cls)
        if args.syn_not_ect:
            ns.cppyy.cppdef(SYN_NOT_ECT_CPP)
            base = ns.cppyy.gbl.quench_exp.SynNotEct[base]
        dctcp = str(base.GetTypeId().GetName())  # registers the TypeId
        results = [run(ns, n, args.duration, args.recovery, args.timestamps, dctcp, args.initial_window) for n in flows]
        out = {"simulator": "ns-3", "version": importlib.metadata.version("ns3"), "results": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
