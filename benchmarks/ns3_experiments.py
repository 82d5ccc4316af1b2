"""One-factor experiments behind the quench/ns-3 differences of docs/validation.md.

    QUENCH_NS3_VENV=... .venv/bin/python benchmarks/ns3_experiments.py EXPERIMENT [--seeds N]

Each experiment runs one shared scenario in both simulators and changes one factor in one of
them; it prints the figures of every variant (means over seeds). Experiments:

- `ssthresh`: RED without ECN (the scenario of compare_red.py: 16 NewReno/SACK flows, RED
  10/30/60, w_q 0.002, max_p 0.1) and the 4-flow drop-tail dumbbell. ns-3's NewReno sets
  ssthresh = BytesInFlight/2 (with SACK: RFC 6675's pipe, which leaves out SACKed and lost
  segments); quench halves FlightSize (snd_max - snd_una, RFC 5681 eq. 4). Variant: ns-3 with
  a NewReno whose GetSsThresh halves FlightSize (ns-3's m_highTxMark - m_lastAckedSeq).
- `default_tcp`: `scenarios/dumbbell.toml` (quench's default TCP: IW 3, abc_limit 2, no SACK)
  with quench's slow start at one segment per ACK (abc_limit 1, ns-3 NewReno's rule), ns-3
  with ABC L = 2 (quench's default) and ns-3 with FlightSize ssthresh.
- `codel_tcp`: `scenarios/dumbbell_codel.toml` likewise.
- `cubic`: CUBIC on the drop-tail dumbbell with each recovery (RFC 6675 / PRR) in both.
- `cubic_factors`: CUBIC with reno_friendly, fast_convergence or delayed ACKs off in both.
- `cubic_ss`: CUBIC's slow start: quench abc_limit 1, 2, 1000 against ns-3's TcpCubic (byte
  counting without a limit) and a TcpCubic with one segment per ACK; drop-tail and RED + ECN.
- `cubic_ecn`: the CUBIC + RED/ECN case of tests/test_ns3.py with ns-3's classic recovery, a
  1000-packet RED limit, forced marks instead of drops, beta 0.5 (`--only` picks variants).
- `cubic_ecn_trace`: that case's cwnd/ssthresh rows around each flow's timeout, from both
  simulators' cwnd tables.
- `cubic_ca`: CUBIC's congestion avoidance: quench against ns-3's TcpCubic and against ns-3
  with quench's window law (TcpCubicRfc); window reductions and repeats counted from the cwnd
  tables; delayed ACKs off, beta 0.5, SACK off (`--only` picks variants).
- `cubic_repeats`: that case's window reductions in both, and the bottleneck every 10 ms.
- `cubic_rules`: that case's reductions classified by where each lost byte was sent (before,
  during or after the flow's previous recovery), with one recovery rule changed at a time:
  ns-3's PRR counting a duplicate ACK by its SACK blocks only (TcpPrrSackDelivered), no
  reduction for data sent during the previous recovery (ns-3), limited transmit off, RFC 6675
  recovery, DupThresh 4 (both); `--only` picks cases ("as matched", "limited transmit off", ...).
- `vegas`: the two Vegas flows of scenarios/ns3_mixed.toml alone; quench with alpha 1 (ns-3's
  rounding), ns-3's Vegas rewritten with its round rule, rounding, RTT sample (smoothed or the
  ACK's own), baseRTT (with or without the handshake's sample) and slow start's round-end growth
  as switches (TcpVegasSwitches), the bottleneck delay varied.
- `vegas_drops`: those flows where quench's slow start overflows the buffer (bottleneck delay
  21, 22 ms; 19 ms without drops; `--delays` picks): ns-3 with quench's Vegas rules and its loss
  response changed (TcpVegasSwitches `HalfFlightLoss`: ssthresh FlightSize/2 instead of
  TcpVegas's cwnd - 1 segment; RFC 6937 PRR on RFC 6675's pipe), and with a round ending at
  an ACK up to 10 us before its end (`RoundEndSlack`); each flow's window and ssthresh in the
  first second and its window at 2, 10, 20 s; each flow's round ends to 0.25 s at 19 ms.
- `pie_profile`: PIE, FQ-PIE, CoDel or FQ-CoDel (`--aqm`) with 4 NewReno flows: the
  bottleneck's drops in each second in both, and their sums over the start-up and the rest;
  ns-3's sender is `--variant` (a `VARIANTS` key, as ns3_aqm.py's `--ns3-variant`).
- `pie_start`: that case's start-up per 100 ms (arrivals, drops, backlog, each flow's window).
- `fq_codel_windows`: FQ-CoDel at a 1,514-byte quantum in both, seed 1: the bottleneck's
  backlog from 3 s (mean and time at each length) and each flow's window (time-mean, fast
  retransmissions, congestion-avoidance climbs), quench with and without ns-3's 1-packet
  device queue (`--variant` as for pie_start).

ns3_aqm.py's `--ns3-variant` takes the ns-3 senders defined here: NewReno halving FlightSize
(`flightsize`), PRR on RFC 6675's pipe (`_rfc_pipe`), RecoverFS = FlightSize (`_rfc_prr`),
DeliveredData by SACK blocks only (`_rfc_prr_sack`), PRR's sndcnt in 64 bits (`_wide`),
RFC 6937's SSRB on every ACK (`_ssrb`, in 64 bits; `_ssrb32` in ns-3's 32), an ECE in
fast recovery or after a timeout leaving the state alone (`_ssrb_ece`), and a loss found during
ECN's window reduction starting fast recovery with that reduction's ssthresh (`_sack_cwr`,
`_ssrb_cwr`, `_ssrb_ece_cwr`: TcpNewRenoCwrLoss).
The ns-3 variants are C++ subclasses defined in the ns-3 child for the experiment only
(plan keys `experiment_cpp`, `tcp_types`); `quench ns3` never uses them.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile

import numpy as np
from ns3_aqm import MATCHED_TCP, RED  # the cross-check's settings, run from benchmarks/
from ns3_cpp import OPS_CPP

from quench import ns3
from quench.scenario import load_scenario, run_scenario
from quench.scenarios import dumbbell

# Shared by the controller and TcpPrrRfcPipe (each plan compiles a snippet once): per socket,
# the congestion state and ssthresh found by the controller's last request for ssthresh, and
# the recovery point of its last retransmission timeout.
ASKED_IN_CPP = r"""
#include "ns3/tcp-socket-state.h"
#include <map>
namespace quench_exp
{
inline std::map<const ns3::TcpSocketState*, std::pair<int, uint32_t>>& AskedIn()
{
    static std::map<const ns3::TcpSocketState*, std::pair<int, uint32_t>> m;
    return m;
}
inline std::map<const ns3::TcpSocketState*, ns3::SequenceNumber32>& TimeoutRecover()
{
    static std::map<const ns3::TcpSocketState*, ns3::SequenceNumber32> m;
    return m;
}
}
"""
# ns-3's TcpNewReno with RFC 5681 eq. 4 on entering fast recovery or CWR: ssthresh =
# max(FlightSize/2, 2 SMSS), FlightSize = highest sequence sent - highest cumulatively
# acknowledged (what quench's sender halves); at a retransmission timeout the pipe, as quench.
NEWRENO_FLIGHTSIZE_CPP = r"""
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
#include <map>
namespace quench_exp
{
class TcpNewRenoFlightSize : public ns3::TcpNewReno
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("quench_exp::TcpNewRenoFlightSize")
                                     .SetParent<ns3::TcpNewReno>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<TcpNewRenoFlightSize>();
        return tid;
    }
    TcpNewRenoFlightSize() = default;
    TcpNewRenoFlightSize(const TcpNewRenoFlightSize& o) = default;
    std::string GetName() const override { return "TcpNewRenoFlightSize"; }
    // ns-3 tells the controller it enters fast recovery (CongestionStateSet) just before it
    // asks for ssthresh; a timeout asks first and sets CA_LOSS after.
    void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb, const ns3::TcpSocketState::TcpCongState_t s) override
    {
        m_entering = s == ns3::TcpSocketState::CA_RECOVERY;
        if (s == ns3::TcpSocketState::CA_LOSS)
        {
            // For EceHoldsRecovery: TcpSocketBase::ReTxTimeout has just set its recovery point
            // (m_recover) to the highest sequence sent.
            TimeoutRecover()[ns3::PeekPointer(tcb)] = tcb->m_highTxMark;
        }
    }
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        // For TcpPrrRfcPipe's EceHoldsRecovery: the state and ssthresh this request found.
        AskedIn()[ns3::PeekPointer(tcb)] = {int(tcb->m_congState.Get()), tcb->m_ssThresh.Get()};
        // Entering fast recovery: FlightSize. Otherwise (a timeout, or ECN's CWR, where nothing
        // is SACKed and the two agree): ns-3's bytesInFlight, which quench also halves at a
        // timeout (sender/mod.rs, flight_at_timeout).
        uint32_t base = bytesInFlight;
        if (m_entering)
        {
            int32_t flight = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
            base = static_cast<uint32_t>(std::max(flight, 0));
            m_entering = false;
        }
        return std::max<uint32_t>(2 * tcb->m_segmentSize, base / 2);
    }
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<TcpNewRenoFlightSize>(this); }

  private:
    bool m_entering = false;
};
}
"""
# ns-3's TcpNewReno with RFC 3465 byte counting in slow start, L = 2 (quench's default): up to
# two segments per ACK instead of ns-3's one.
NEWRENO_ABC2_CPP = (
    OPS_CPP
    + r"""
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-state.h"
#include <algorithm>
namespace quench_exp
{
class TcpNewRenoAbc2 : public ns3::TcpNewReno
{
  public:
    QUENCH_EXP_OPS(TcpNewRenoAbc2, ns3::TcpNewReno, TcpCongestionOps)

  protected:
    uint32_t SlowStart(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        uint32_t n = std::min<uint32_t>(segmentsAcked, 2);
        tcb->m_cWnd += n * tcb->m_segmentSize;
        return segmentsAcked - n;
    }
};
}
"""
)
ABC2 = {
    "experiment_cpp": [(NEWRENO_ABC2_CPP, ["quench_exp.TcpNewRenoAbc2"])],
    "tcp_types": {"newreno": "quench_exp::TcpNewRenoAbc2"},
}
FLIGHTSIZE = {
    "experiment_cpp": [(ASKED_IN_CPP, []), (NEWRENO_FLIGHTSIZE_CPP, ["quench_exp.TcpNewRenoFlightSize"])],
    "tcp_types": {"newreno": "quench_exp::TcpNewRenoFlightSize"},
}


# ns-3's TcpTxBuffer::BytesInFlight (sent - SACKed - lost + retransmitted) keeps counting a
# retransmitted segment after it is SACKed (Update clears its lost mark, not its retransmitted
# one) until the cumulative ACK passes it; RFC 6675's SetPipe, and quench's pipe
# (sender/recovery.rs), count only unSACKed octets. Experiment: ns-3's PRR fed RFC 6675's pipe.
# Before each recovery step ns-3's bytes in flight are lowered by those SACKed retransmissions,
# and the window PRR sets is raised by the same amount afterwards, so that the room the socket
# computes (cwnd - its own BytesInFlight) is what RFC 6675's pipe would leave. The segments are
# read from the socket's send buffer (private members, reached through explicit instantiation,
# as the child reads RED's average), the socket found from its TcpSocketState on first use.
PRR_RFC_PIPE_CPP = r"""
#include "ns3/tcp-prr-recovery.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/tcp-tx-item.h"
#include "ns3/config.h"
#include "ns3/boolean.h"
#include <list>
#include <map>
namespace quench_exp
{
struct SentListTag { typedef std::list<ns3::TcpTxItem*> ns3::TcpTxBuffer::*type; friend type Get(SentListTag); };
struct SackedTag { typedef bool ns3::TcpTxItem::*type; friend type Get(SackedTag); };
struct TcbTag { typedef ns3::Ptr<ns3::TcpSocketState> ns3::TcpSocketBase::*type; friend type Get(TcbTag); };
struct DeliveredTag { typedef uint32_t ns3::TcpPrrRecovery::*type; friend type Get(DeliveredTag); };
struct RecoverFsTag { typedef uint32_t ns3::TcpPrrRecovery::*type; friend type Get(RecoverFsTag); };
struct PrrOutTag { typedef uint32_t ns3::TcpPrrRecovery::*type; friend type Get(PrrOutTag); };
template <typename Tag, typename Tag::type M>
struct Expose { friend typename Tag::type Get(Tag) { return M; } };
template struct Expose<SentListTag, &ns3::TcpTxBuffer::m_sentList>;
template struct Expose<SackedTag, &ns3::TcpTxItem::m_sacked>;
template struct Expose<TcbTag, &ns3::TcpSocketBase::m_tcb>;
template struct Expose<DeliveredTag, &ns3::TcpPrrRecovery::m_prrDelivered>;
template struct Expose<RecoverFsTag, &ns3::TcpPrrRecovery::m_recoveryFlightSize>;
template struct Expose<PrrOutTag, &ns3::TcpPrrRecovery::m_prrOut>;
struct RecoverTag { typedef ns3::SequenceNumber32 ns3::TcpSocketBase::*type; friend type Get(RecoverTag); };
template struct Expose<RecoverTag, &ns3::TcpSocketBase::m_recover>;
// The congestion state's value under its trace: EceHoldsRecovery puts the state back without
// reporting a transition (the child counts each entry into CA_LOSS or CA_RECOVERY as a
// timeout or a recovery, and ns-3's sender never left either).
typedef ns3::TcpSocketState::TcpCongState_t CongState;
struct CongStateTag { typedef CongState ns3::TracedValue<CongState>::*type; friend type Get(CongStateTag); };
template struct Expose<CongStateTag, &ns3::TracedValue<CongState>::m_v>;

// The socket whose state is `tcb` (ns-3 hands its recovery and congestion ops the state alone):
// the last of the nodes' TCP sockets that holds it.
inline ns3::TcpSocketBase* SocketOf(const ns3::TcpSocketState* tcb)
{
    ns3::TcpSocketBase* found = nullptr;
    auto all = ns3::Config::LookupMatches("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*");
    for (uint32_t i = 0; i < all.GetN(); ++i)
    {
        auto sock = ns3::DynamicCast<ns3::TcpSocketBase>(all.Get(i));
        if (sock && ns3::PeekPointer((*sock).*Get(TcbTag())) == tcb)
        {
            found = ns3::PeekPointer(sock);
        }
    }
    return found;
}

class TcpPrrRfcPipe : public ns3::TcpPrrRecovery
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid =
            ns3::TypeId("quench_exp::TcpPrrRfcPipe")
                .SetParent<ns3::TcpPrrRecovery>()
                .SetGroupName("Internet")
                .AddConstructor<TcpPrrRfcPipe>()
                .AddAttribute("RecoverFsFlightSize",
                              "RecoverFS = FlightSize at entry (RFC 6937, quench) instead of ns-3's",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpPrrRfcPipe::m_recoverFsFlightSize),
                              ns3::MakeBooleanChecker())
                .AddAttribute("SackDelivered",
                              "DeliveredData = the ACK's SACKed and cumulatively ACKed bytes only "
                              "(RFC 6937, quench), no extra segment per duplicate ACK",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpPrrRfcPipe::m_sackDelivered),
                              ns3::MakeBooleanChecker())
                .AddAttribute("SsrbEveryAck",
                              "the slow-start reduction bound (one MSS over DeliveredData) on every "
                              "ACK, as RFC 6937 and quench, not only on ACKs that cumulatively "
                              "acknowledge retransmitted data",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpPrrRfcPipe::m_ssrbEveryAck),
                              ns3::MakeBooleanChecker())
                .AddAttribute("Wide",
                              "PRR's sndcnt in 64-bit signed arithmetic: ns-3 3.44 multiplies "
                              "prr_delivered by ssthresh in 32 bits (wraps past 4 GiB) and "
                              "subtracts prr_out from prr_delivered unsigned (ns-3-dev tracker #1282)",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpPrrRfcPipe::m_wide),
                              ns3::MakeBooleanChecker())
                .AddAttribute("EceHoldsRecovery",
                              "an ACK with ECE during fast recovery or after a timeout leaves the "
                              "state, ssthresh and recovery point as they were (RFC 3168 section "
                              "6.1.2, quench, Linux); ns-3 3.44 enters CWR from either state",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpPrrRfcPipe::m_eceHolds),
                              ns3::MakeBooleanChecker());
        return tid;
    }

    void EnterRecovery(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t dupAckCount, uint32_t unAckDataCount,
                       uint32_t deliveredBytes) override
    {
        if (tcb->m_congState == ns3::TcpSocketState::CA_CWR && m_eceHolds)
        {
            // Called from TcpSocketBase::EnterCwr, which has already set ssthresh (asking the
            // controller, which noted the state it found), CA_CWR and the recovery point.
            auto [before, ssthresh] = AskedIn()[ns3::PeekPointer(tcb)];
            if (before == ns3::TcpSocketState::CA_RECOVERY || before == ns3::TcpSocketState::CA_LOSS)
            {
                tcb->m_ssThresh = ssthresh;
                tcb->m_congState.*Get(CongStateTag()) = CongState(before);
                FindSocket(tcb);
                if (m_socket)
                {
                    // The recovery point that EnterCwr moved: fast recovery's, or the last
                    // timeout's (in CA_LOSS duplicate ACKs are ignored until it is passed).
                    (*m_socket).*Get(RecoverTag()) = before == ns3::TcpSocketState::CA_RECOVERY
                                                         ? m_lossRecover
                                                         : TimeoutRecover()[ns3::PeekPointer(tcb)];
                }
                ++s_eceHeld[before == ns3::TcpSocketState::CA_LOSS];
                return;
            }
        }
        if (tcb->m_congState == ns3::TcpSocketState::CA_RECOVERY)
        {
            m_lossRecover = tcb->m_highTxMark; // TcpSocketBase::EnterRecovery's m_recover
        }
        ns3::TcpPrrRecovery::EnterRecovery(tcb, dupAckCount, unAckDataCount, deliveredBytes);
        if (m_recoverFsFlightSize)
        {
            this->*Get(RecoverFsTag()) = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
        }
    }
    TcpPrrRfcPipe() = default;
    TcpPrrRfcPipe(const TcpPrrRfcPipe& o) = default;
    std::string GetName() const override { return "TcpPrrRfcPipe"; }
    ns3::Ptr<ns3::TcpRecoveryOps> Fork() override { return ns3::CopyObject<TcpPrrRfcPipe>(this); }

    void DoRecovery(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        uint32_t extra = SackedRetransmitted(tcb);
        uint32_t inflight = tcb->m_bytesInFlight;
        uint32_t delivered = this->*Get(DeliveredTag());
        tcb->m_bytesInFlight = inflight - std::min(extra, inflight);
        // As TcpPrrSackDelivered (below): with SACK a duplicate ACK is counted by its SACK
        // blocks only.
        // ns-3 adds PRR-SSRB's MSS only on a "safe" ACK (m_isRetransDataAcked); SsrbEveryAck
        // presents every ACK as one.
        bool safe = tcb->m_isRetransDataAcked;
        if (m_wide)
        {
            SndCnt(tcb, deliveredBytes, isDupAck && !m_sackDelivered, safe || m_ssrbEveryAck);
        }
        else
        {
            tcb->m_isRetransDataAcked = safe || m_ssrbEveryAck;
            ns3::TcpPrrRecovery::DoRecovery(tcb, deliveredBytes, isDupAck && !m_sackDelivered);
            tcb->m_isRetransDataAcked = safe;
        }
        tcb->m_bytesInFlight = inflight;
        // PRR sets the window only for an ACK that counts as delivering data (its delivered
        // total then grows); otherwise it leaves the window as it was.
        if (this->*Get(DeliveredTag()) != delivered)
        {
            tcb->m_cWnd = tcb->m_cWnd + extra;
        }
    }

    static uint64_t s_calls, s_extraBytes;
    // ECE ACKs whose CWR EceHoldsRecovery undid: in fast recovery, after a timeout.
    static uint64_t s_eceHeld[2];

  private:
    // RFC 6937 section 3's sndcnt, as ns-3 3.44's TcpPrrRecovery computes it (one segment
    // more per duplicate ACK unless `dupAck` is false, the reduction bound's extra segment
    // where `ssrb`), but with every difference and product in signed 64 bits.
    void SndCnt(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t deliveredBytes, bool dupAck, bool ssrb)
    {
        uint32_t& prrDelivered = this->*Get(DeliveredTag());
        int64_t prrOut = this->*Get(PrrOutTag());
        int64_t recoverFs = std::max<uint32_t>(this->*Get(RecoverFsTag()), 1);
        int64_t mss = tcb->m_segmentSize;
        int64_t delivered = deliveredBytes;
        if (dupAck && prrDelivered < recoverFs)
        {
            delivered += mss;
        }
        if (delivered == 0)
        {
            return;
        }
        prrDelivered += delivered;
        int64_t pipe = tcb->m_bytesInFlight;
        int64_t ssthresh = tcb->m_ssThresh;
        int64_t sndcnt;
        if (pipe > ssthresh)
        {
            sndcnt = (int64_t(prrDelivered) * ssthresh + recoverFs - 1) / recoverFs - prrOut;
        }
        else
        {
            int64_t limit = std::max<int64_t>(int64_t(prrDelivered) - prrOut, delivered) + (ssrb ? mss : 0);
            sndcnt = std::min(limit, ssthresh - pipe);
        }
        // The fast retransmission goes whatever the count (as ns-3).
        sndcnt = std::max<int64_t>(sndcnt, prrOut > 0 ? 0 : mss);
        tcb->m_cWnd = uint32_t(pipe + sndcnt);
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    // The socket whose state `tcb` is (and its send buffer), looked up once.
    void FindSocket(ns3::Ptr<ns3::TcpSocketState> tcb)
    {
        if (!m_buffer || m_tcb != ns3::PeekPointer(tcb))
        {
            m_tcb = ns3::PeekPointer(tcb);
            m_socket = SocketOf(m_tcb);
            m_buffer = m_socket ? m_socket->GetTxBuffer() : nullptr;
        }
    }

    uint32_t SackedRetransmitted(ns3::Ptr<ns3::TcpSocketState> tcb)
    {
        FindSocket(tcb);
        uint32_t bytes = 0;
        if (m_buffer)
        {
            for (ns3::TcpTxItem* item : (*m_buffer).*Get(SentListTag()))
            {
                if (item->m_retrans && (*item).*Get(SackedTag()))
                {
                    bytes += item->GetSeqSize();
                }
            }
        }
        ++s_calls;
        s_extraBytes += bytes;
        return bytes;
    }
    ns3::Ptr<ns3::TcpTxBuffer> m_buffer;
    ns3::TcpSocketBase* m_socket = nullptr;
    const ns3::TcpSocketState* m_tcb = nullptr;
    ns3::SequenceNumber32 m_lossRecover{0};
    bool m_eceHolds = false;
    bool m_recoverFsFlightSize = false;
    bool m_sackDelivered = false;
    bool m_ssrbEveryAck = false;
    bool m_wide = false;
};
uint64_t TcpPrrRfcPipe::s_calls = 0;
uint64_t TcpPrrRfcPipe::s_eceHeld[2] = {0, 0};
uint64_t TcpPrrRfcPipe::s_extraBytes = 0;
}
"""


def with_switch(variant: dict, attribute: str) -> dict:
    """`variant` with one more boolean attribute default of an experiment class set to true."""
    return {**variant, "defaults": {**variant["defaults"], attribute: ("bool", True)}}


# FlightSize halving (as quench) and ns-3's PRR on RFC 6675's pipe; and the same with PRR's
# RecoverFS = FlightSize at entry as RFC 6937 and quench (ns-3's own TcpPrrRecovery takes its
# bytes in flight).
FLIGHTSIZE_RFC_PIPE = {
    "experiment_cpp": [*FLIGHTSIZE["experiment_cpp"], (PRR_RFC_PIPE_CPP, ["quench_exp.TcpPrrRfcPipe"])],
    "tcp_types": FLIGHTSIZE["tcp_types"],
    "defaults": {"ns3::TcpL4Protocol::RecoveryType": ("string", "quench_exp::TcpPrrRfcPipe")},
}
FLIGHTSIZE_RFC_PRR = with_switch(FLIGHTSIZE_RFC_PIPE, "quench_exp::TcpPrrRfcPipe::RecoverFsFlightSize")
# That, and PRR's DeliveredData counting SACKed bytes only (RFC 6937; ns-3 adds one segment per
# duplicate ACK, see TcpPrrSackDelivered below): ns-3's two recovery defects both corrected.
FLIGHTSIZE_RFC_PRR_SACK = with_switch(FLIGHTSIZE_RFC_PRR, "quench_exp::TcpPrrRfcPipe::SackDelivered")
# That, and PRR's sndcnt in 64-bit signed arithmetic (ns-3 3.44's wraps: ns-3-dev tracker #1282).
FLIGHTSIZE_RFC_PRR_SACK_WIDE = with_switch(FLIGHTSIZE_RFC_PRR_SACK, "quench_exp::TcpPrrRfcPipe::Wide")
# That, and PRR-SSRB's extra segment on every ACK in PRR's reduction bound (RFC 6937 section 3,
# quench's `recovery = "prr"`); ns-3 3.44 adds it only on an ACK that cumulatively acknowledges
# retransmitted data (its "safeACK", the rule of RFC 9937 section 7 and Linux's
# tcp_cwnd_reduction), PRR-CRB's bound otherwise.
FLIGHTSIZE_RFC_PRR_SACK_SSRB = with_switch(FLIGHTSIZE_RFC_PRR_SACK_WIDE, "quench_exp::TcpPrrRfcPipe::SsrbEveryAck")
# RFC 6937's PRR (above), and an ACK with ECE in fast recovery or after a timeout leaving the
# sender's state as it was (RFC 3168 section 6.1.2: one reduction per window of data; quench's
# and Linux's rule).
# ns-3 3.44's TcpSocketBase::ReceivedAck enters CWR from any state but CWR: a second ssthresh
# cut and the end of the loss recovery (its recovery point moves to the highest sequence sent).
FLIGHTSIZE_RFC_PRR_SACK_SSRB_ECE = with_switch(
    FLIGHTSIZE_RFC_PRR_SACK_SSRB, "quench_exp::TcpPrrRfcPipe::EceHoldsRecovery"
)
# SSRB on every ACK in ns-3 3.44's 32-bit arithmetic: prr_out passes prr_delivered once SSRB's extra
# segments have gone out, and the unsigned difference then wraps to a negative limit.
FLIGHTSIZE_RFC_PRR_SACK_SSRB32 = with_switch(FLIGHTSIZE_RFC_PRR_SACK, "quench_exp::TcpPrrRfcPipe::SsrbEveryAck")


# A loss found during ECN's window reduction (CA_CWR) handled as quench and Linux handle it:
# fast recovery, keeping the ssthresh that the reduction set (RFC 3168 section 6.1.2: one
# reduction per window of data; Linux's tcp_enter_recovery sets no new ssthresh while a CWR
# reduction is under way). ns-3 3.44's TcpSocketBase::DupAck counts duplicate ACKs in CA_CWR but
# acts only in CA_DISORDER (and CA_RECOVERY), so the sender stays in CWR, PRR setting its window
# only on ACKs that advance snd_una, until an ACK passes the CWR's recovery point or the
# retransmission timer expires. ns-3 always creates a plain
# TcpSocketBase (TcpL4Protocol::CreateSocket), whose DupAck and EnterRecovery are private and
# non-virtual; in CA_CWR the congestion controller's PktsAcked is the one hook called on every
# ACK, after DupAck has counted it. There this controller (ns-3's NewReno halving FlightSize,
# as the other variants) applies the entry test of DupAck's CA_DISORDER branch (the DupThresh-th
# duplicate ACK while no recovery point is active, or RFC 6675's IsLost(HighACK + 1)) to each
# duplicate ACK and calls the socket's own EnterRecovery, answering that call's request for
# ssthresh with the one in force. Needs PRR_RFC_PIPE_CPP first (its Expose template and tags).
CWR_LOSS_CPP = (
    OPS_CPP
    + r"""
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/config.h"
namespace quench_exp
{
struct DupAckCountTag { typedef uint32_t ns3::TcpSocketBase::*type; friend type Get(DupAckCountTag); };
struct RecoverActiveTag { typedef bool ns3::TcpSocketBase::*type; friend type Get(RecoverActiveTag); };
struct HighRxAckTag
{
    typedef ns3::TracedValue<ns3::SequenceNumber32> ns3::TcpSocketBase::*type;
    friend type Get(HighRxAckTag);
};
struct EnterRecoveryTag { typedef void (ns3::TcpSocketBase::*type)(uint32_t); friend type Get(EnterRecoveryTag); };
template struct Expose<DupAckCountTag, &ns3::TcpSocketBase::m_dupAckCount>;
template struct Expose<RecoverActiveTag, &ns3::TcpSocketBase::m_recoverActive>;
template struct Expose<HighRxAckTag, &ns3::TcpSocketBase::m_highRxAckMark>;
template struct Expose<EnterRecoveryTag, &ns3::TcpSocketBase::EnterRecovery>;

class TcpNewRenoCwrLoss : public TcpNewRenoFlightSize
{
  public:
    QUENCH_EXP_OPS(TcpNewRenoCwrLoss, TcpNewRenoFlightSize, TcpCongestionOps)

    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        // The base still runs (it clears its fast-recovery flag); inside our own EnterRecovery
        // call its answer is replaced by the ssthresh of the ECN reduction under way.
        uint32_t ssthresh = TcpNewRenoFlightSize::GetSsThresh(tcb, bytesInFlight);
        return m_keep ? tcb->m_ssThresh.Get() : ssthresh;
    }

    void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked, const ns3::Time& rtt) override
    {
        TcpNewRenoFlightSize::PktsAcked(tcb, segmentsAcked, rtt);
        ns3::TcpSocketBase* sock = FindSocket(tcb);
        if (!sock)
        {
            return;
        }
        // Whether DupAck has just counted this ACK as a duplicate: the count moved since the
        // last ACK (ProcessAck resets it on any other ACK that advances snd_una, and leaves it
        // on one that neither advances nor SACKs).
        uint32_t dupAcks = (*sock).*Get(DupAckCountTag());
        bool dupAck = dupAcks > 0 && dupAcks != m_dupAcksSeen;
        m_dupAcksSeen = dupAcks;
        if (!dupAck || tcb->m_congState != ns3::TcpSocketState::CA_CWR)
        {
            return;
        }
        ns3::SequenceNumber32 highAck = ((*sock).*Get(HighRxAckTag())).Get();
        ns3::SequenceNumber32 recover = (*sock).*Get(RecoverTag());
        bool recoverActive = (*sock).*Get(RecoverActiveTag());
        bool third = dupAcks == sock->GetRetxThresh() && (highAck >= recover || !recoverActive);
        if (third || sock->GetTxBuffer()->IsLost(highAck))
        {
            m_keep = true;
            ++s_entered[third ? 0 : 1];
            // ReceivedAck stored this ACK's delivered bytes (its currentDelivered) in the state.
            ((*sock).*Get(EnterRecoveryTag()))(tcb->m_lastAckedSackedBytes);
            m_keep = false;
            m_dupAcksSeen = (*sock).*Get(DupAckCountTag());
        }
    }

    // Fast recoveries entered from CWR: on the DupThresh-th duplicate ACK, by IsLost.
    static uint64_t s_entered[2];

  private:
    ns3::TcpSocketBase* FindSocket(ns3::Ptr<ns3::TcpSocketState> tcb)
    {
        if (!m_socket || m_tcb != ns3::PeekPointer(tcb))
        {
            m_tcb = ns3::PeekPointer(tcb);
            m_socket = SocketOf(m_tcb);
        }
        return m_socket;
    }
    ns3::TcpSocketBase* m_socket = nullptr;
    const ns3::TcpSocketState* m_tcb = nullptr;
    uint32_t m_dupAcksSeen = 0;
    bool m_keep = false;
};
uint64_t TcpNewRenoCwrLoss::s_entered[2] = {0, 0};
}
"""
)


def with_cwr_loss(variant: dict) -> dict:
    """`variant` (one with TcpPrrRfcPipe) with NewReno's FlightSize rule as TcpNewRenoCwrLoss: a
    loss found in CA_CWR starts fast recovery with the ECN reduction's ssthresh."""
    return {
        **variant,
        "experiment_cpp": [*variant["experiment_cpp"], (CWR_LOSS_CPP, ["quench_exp.TcpNewRenoCwrLoss"])],
        "tcp_types": {"newreno": "quench_exp::TcpNewRenoCwrLoss"},
    }


# ns-3's two recovery defects corrected (flightsize_rfc_prr_sack), and a loss in CWR handled as
# quench does; and the same with PRR-SSRB's extra segment on every ACK (quench's "prr").
FLIGHTSIZE_RFC_PRR_SACK_CWR = with_cwr_loss(FLIGHTSIZE_RFC_PRR_SACK)
FLIGHTSIZE_RFC_PRR_SACK_SSRB_CWR = with_cwr_loss(FLIGHTSIZE_RFC_PRR_SACK_SSRB)
# That, and an ECE in fast recovery or after a timeout leaving the state alone (_ssrb_ece).
FLIGHTSIZE_RFC_PRR_SACK_SSRB_ECE_CWR = with_cwr_loss(FLIGHTSIZE_RFC_PRR_SACK_SSRB_ECE)


# The DRR quantum of ns-3's FQ-CoDel or FQ-PIE, set before the queue disc initializes (ns-3
# otherwise takes the device MTU, 1,500 B here; quench's default is Linux's 1,514 B). Used by
# ns3_aqm.py's --ns3-fq-quantum through the link's `experiment_quantum` plan key.
FQ_QUANTUM_CPP = r"""
#include "ns3/fq-codel-queue-disc.h"
#include "ns3/fq-pie-queue-disc.h"
namespace quench_exp
{
void SetFqQuantum(ns3::Ptr<ns3::QueueDisc> qd, uint32_t quantum)
{
    if (auto c = ns3::DynamicCast<ns3::FqCoDelQueueDisc>(qd))
    {
        c->SetQuantum(quantum);
    }
    else if (auto p = ns3::DynamicCast<ns3::FqPieQueueDisc>(qd))
    {
        p->SetQuantum(quantum);
    }
}
}
"""


def figures(res) -> dict:
    b = res.link("r1->r2")
    arrived = float(b["arrived_packets"])
    return {
        "util": float(b["utilization"]),
        "goodput": float(res.flows["goodput_bps"].sum()) / 1e6,
        "queue": float(b["mean_backlog_packets"]),
        "drops": float(b["dropped_packets"]),
        "marks": float(b["marked_packets"]),
        "rate": float(b["dropped_packets"] + b["marked_packets"]) / arrived,
        "timeouts": float(res.flows["timeouts"].sum()),
        "fast_rtx": float(res.flows["fast_retransmits"].sum()),
    }


def with_plan(plan: dict, extra: dict | None) -> dict:
    """The plan with an experiment's keys (experiment_cpp, tcp_types) and attribute defaults."""
    extra = extra or {}
    plan.update({k: v for k, v in extra.items() if k != "defaults"})
    plan["defaults"].update(extra.get("defaults", {}))
    return plan


def quench_runs(specs):
    return [figures(run_scenario(s, progress=False)) for s in specs]


def ns3_runs(specs, extra=None, defaults=None):
    """ns-3 runs of `specs`, with plan keys `extra` and ns-3 attribute defaults `defaults`
    ({path: (kind, value)}) on top of the translation."""
    plans = [ns3.translate(s) for s in specs]
    for p in plans:
        with_plan(p, extra)
        p["defaults"].update(defaults or {})
    raws = ns3.run_plans(plans)
    return [figures(ns3.to_results(p, r)) for p, r in zip(plans, raws)]


def report(title: str, rows: dict[str, list[dict]], digits: int = 4) -> None:
    """A markdown table of each variant's mean figures over its runs, to `digits` significant digits."""
    print(f"\n{title}")
    keys = list(next(iter(rows.values()))[0])
    print(f"| variant | {' | '.join(keys)} |")
    print("|---|" + "---|" * len(keys))
    for name, runs in rows.items():
        vals = [statistics.fmean(r[k] for r in runs) for k in keys]
        print(f"| {name} | {' | '.join(f'{v:.{digits}g}' for v in vals)} |")
    sys.stdout.flush()


def seeds(spec: dict, n: int) -> list[dict]:
    out = []
    for i in range(n):
        s = copy.deepcopy(spec)
        s["seed"] = int(spec.get("seed", 1)) + i
        out.append(s)
    return out


def red_spec(duration: str) -> dict:
    net = dumbbell(
        16,
        rate="10Mbps",
        rtt="50ms",
        cc={"kind": "newreno", "initial_window": 10, "abc_limit": 1},
        tcp=MATCHED_TCP,
        tcp_profile="rfc",
    )
    net.record(queues=False, drops=False, cwnd=False, rtt=False)
    spec = net.to_dict(duration)
    spec["links"][0]["qdisc"] = dict(RED)
    return spec


def exp_ssthresh(args) -> None:
    for title, spec in (
        ("RED, 16 NewReno/SACK flows, no ECN", red_spec(args.duration)),
        (
            "drop-tail 42p, 4 NewReno/SACK flows",
            dumbbell(
                4,
                rate="10Mbps",
                rtt="50ms",
                cc={"kind": "newreno", "initial_window": 10, "abc_limit": 1},
                tcp=MATCHED_TCP,
                tcp_profile="rfc",
            ).to_dict(args.duration),
        ),
    ):
        ss = seeds(spec, args.seeds)
        report(
            f"{title}, {args.duration}, seeds {args.seeds}",
            {
                "quench (FlightSize/2)": quench_runs(ss),
                "ns-3 (pipe/2, its default)": ns3_runs(ss),
                "ns-3 with FlightSize/2": ns3_runs(ss, FLIGHTSIZE),
            },
        )


def exp_default_tcp(args, path: str) -> None:
    spec = load_scenario(path)
    spec["duration"] = args.duration
    ss = seeds(spec, args.seeds)
    abc1 = copy.deepcopy(ss)
    for s in abc1:
        for f in s["flows"]:
            f["cc"] = {"kind": f["cc"], "abc_limit": 1} if isinstance(f["cc"], str) else {**f["cc"], "abc_limit": 1}
    report(
        f"{path}, {args.duration}, seeds {args.seeds}",
        {
            "quench (abc_limit 2)": quench_runs(ss),
            "quench abc_limit 1": quench_runs(abc1),
            "ns-3": ns3_runs(ss),
            "ns-3 with ABC L = 2": ns3_runs(ss, ABC2),
            "ns-3 with FlightSize/2": ns3_runs(ss, FLIGHTSIZE),
        },
    )


# ns-3's TcpCubic with RFC 5681's slow start, one segment per ACK (TcpCubic itself adds every
# segment an ACK covers: RFC 3465 byte counting without a limit).
CUBIC_SS1_CPP = (
    OPS_CPP
    + r"""
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-socket-state.h"
namespace quench_exp
{
class TcpCubicSs1 : public ns3::TcpCubic
{
  public:
    QUENCH_EXP_OPS(TcpCubicSs1, ns3::TcpCubic, TcpCongestionOps)
    void IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (tcb->m_cWnd < tcb->m_ssThresh)
        {
            if (segmentsAcked > 0)
            {
                tcb->m_cWnd += tcb->m_segmentSize;
            }
            return;
        }
        ns3::TcpCubic::IncreaseWindow(tcb, segmentsAcked);
    }
};
}
"""
)
CUBIC_SS1 = {
    "experiment_cpp": [(CUBIC_SS1_CPP, ["quench_exp.TcpCubicSs1"])],
    "tcp_types": {"cubic": "quench_exp::TcpCubicSs1"},
}
CLASSIC = {"ns3::TcpL4Protocol::RecoveryType": ("string", "ns3::TcpClassicRecovery")}

# ns-3's CUBIC with quench's congestion avoidance (RFC 9438 in floating point, cc/cubic.rs)
# instead of TcpCubic::Update's: per ACK the window grows by (target - cwnd)/cwnd per segment
# acknowledged, in bytes (a fraction carried), toward W_cubic(t + srtt) clamped to
# [cwnd, 1.5 cwnd], with the Reno-friendly estimate growing alpha = 3(1 - beta)/(1 + beta)
# segments per window, then 1 once back at the window before the event. TcpCubic instead adds
# one whole segment every `cnt` segments acknowledged, cnt = segCwnd/(target - segCwnd) with
# integer segments and target, never more than one segment per ACK (cnt >= 2), and evaluates
# the cubic at t + the minimum RTT. Slow start: one segment per ACK (as TcpCubicSs1 and quench's
# abc_limit = 1). The event rules are quench's too (W_max in fractional segments, fast
# convergence, ssthresh = max(beta cwnd, 2 segments), no plateau after a timeout). C = 0.4 and
# beta = 0.7: both simulators' defaults, which the experiment keeps.
CUBIC_RFC_CPP = (
    OPS_CPP
    + r"""
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/simulator.h"
#include <algorithm>
#include <cmath>
namespace quench_exp
{
class TcpCubicRfc : public ns3::TcpCubic
{
  public:
    QUENCH_EXP_OPS(TcpCubicRfc, ns3::TcpCubic, TcpCongestionOps)

    void IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (segmentsAcked == 0)
        {
            return;
        }
        if (tcb->m_cWnd < tcb->m_ssThresh)
        {
            tcb->m_cWnd += tcb->m_segmentSize;
            return;
        }
        const double mss = tcb->m_segmentSize;
        const double cwnd = tcb->m_cWnd / mss;
        const double now = ns3::Simulator::Now().GetSeconds();
        if (!m_inEpoch)
        {
            m_inEpoch = true;
            m_start = now;
            m_k = cwnd < m_wMax ? std::cbrt((m_wMax - cwnd) / kC) : 0.0;
            m_origin = cwnd < m_wMax ? m_wMax : cwnd;
            m_wEst = cwnd;
        }
        const double acked = segmentsAcked;
        const double t = now - m_start;
        const double alpha = m_wEst >= m_prior ? 1.0 : 3.0 * (1.0 - kBeta) / (1.0 + kBeta);
        m_wEst += alpha * acked / cwnd;
        double grown;
        if (Cubic(t) < m_wEst)
        {
            grown = std::max(m_wEst, cwnd);
        }
        else
        {
            double srtt = tcb->m_srtt.Get().GetSeconds();
            double target = std::clamp(Cubic(t + srtt), cwnd, 1.5 * cwnd);
            grown = cwnd + (target - cwnd) / cwnd * acked;
        }
        double bytes = (grown - cwnd) * mss + m_carry;
        double whole = std::trunc(bytes);
        m_carry = bytes - whole;
        tcb->m_cWnd += static_cast<uint32_t>(whole);
    }

    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t) override
    {
        const double cwnd = tcb->m_cWnd / static_cast<double>(tcb->m_segmentSize);
        m_prior = cwnd;
        m_wMax = cwnd < m_wMax ? cwnd * (1.0 + kBeta) / 2.0 : cwnd;
        m_inEpoch = false;
        m_carry = 0.0;
        return static_cast<uint32_t>(std::max(cwnd * kBeta, 2.0) * tcb->m_segmentSize);
    }

    // ns-3 asks for ssthresh at a timeout before it enters CA_LOSS: forget the plateau then.
    void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState>, const ns3::TcpSocketState::TcpCongState_t s) override
    {
        if (s == ns3::TcpSocketState::CA_LOSS)
        {
            m_wMax = 0.0;
            m_inEpoch = false;
        }
    }

  private:
    static constexpr double kC = 0.4;
    static constexpr double kBeta = 0.7;
    double Cubic(double t) const { return kC * std::pow(t - m_k, 3) + m_origin; }
    bool m_inEpoch = false;
    double m_start = 0.0, m_k = 0.0, m_origin = 0.0, m_wEst = 0.0;
    double m_wMax = 0.0, m_prior = 0.0, m_carry = 0.0;
};
}
"""
)
CUBIC_RFC = {
    "experiment_cpp": [(CUBIC_RFC_CPP, ["quench_exp.TcpCubicRfc"])],
    "tcp_types": {"cubic": "quench_exp::TcpCubicRfc"},
}


def matched(cc: str, flows: int, duration: str, ecn: bool = False) -> dict:
    net = dumbbell(
        flows,
        rate="10Mbps",
        rtt="50ms",
        cc={"kind": cc, "initial_window": 10, "abc_limit": 1},
        tcp={**MATCHED_TCP, "ecn": ecn},
        tcp_profile="rfc",
    )
    net.record(queues=False, drops=False, cwnd=False, rtt=False)
    return net.to_dict(duration)


CUBIC_SS1_RFC_PIPE = {
    "experiment_cpp": [
        *CUBIC_SS1["experiment_cpp"],
        (ASKED_IN_CPP, []),
        (PRR_RFC_PIPE_CPP, ["quench_exp.TcpPrrRfcPipe"]),
    ],
    "tcp_types": CUBIC_SS1["tcp_types"],
    "defaults": FLIGHTSIZE_RFC_PIPE["defaults"],
}


def exp_cubic(args) -> None:
    """CUBIC on the one-BDP drop-tail dumbbell with each recovery in both simulators: RFC
    6675's (quench `recovery = "standard"`, ns-3 TcpClassicRecovery) and PRR-SSRB (quench
    `"prr"`, ns-3 TcpPrrRecovery, ns-3's default)."""
    rows = {}
    for rec in ("standard", "prr"):
        spec = matched(args.cc, args.flows, args.duration)
        for f in spec["flows"]:
            f["tcp"]["recovery"] = rec
        ss = seeds(spec, args.seeds)
        rows[f"quench {rec}"] = quench_runs(ss)
        rows[f"ns-3 {'classic' if rec == 'standard' else 'PRR'}"] = ns3_runs(ss)
    report(f"{args.cc}, {args.flows} flows, drop-tail 1 BDP, {args.duration}, seeds {args.seeds}", rows)


def exp_cubic_factors(args) -> None:
    """CUBIC (standard recovery: ns-3 TcpClassicRecovery) with one of CUBIC's or TCP's options
    changed in both simulators at a time."""
    variants = {
        "as is": lambda f: None,
        "reno_friendly off": lambda f: f["cc"].update(reno_friendly=False),
        "fast_convergence off": lambda f: f["cc"].update(fast_convergence=False),
        "delayed ACK off": lambda f: f["tcp"].update(delayed_ack={"enabled": False}),
    }
    rows = {}
    for name, change in variants.items():
        spec = matched("cubic", args.flows, args.duration)
        for f in spec["flows"]:
            f["tcp"]["recovery"] = "standard"
            change(f)
        ss = seeds(spec, args.seeds)
        rows[f"quench, {name}"] = quench_runs(ss)
        rows[f"ns-3, {name}"] = ns3_runs(ss)
    report(f"CUBIC factors, {args.flows} flows, drop-tail 1 BDP, {args.duration}, seeds {args.seeds}", rows)


def exp_cubic_ss(args) -> None:
    """CUBIC's slow start: quench's abc_limit 1 (the matched setting so far), 2 and 1000 (no
    limit in effect) against ns-3's TcpCubic (byte counting without a limit) and ns-3's
    TcpCubic with one segment per ACK; on the drop-tail dumbbell and on RED with ECN."""
    red = matched("cubic", 4, args.duration, ecn=True)
    red["links"][0]["qdisc"] = {**RED, "signal": "mark"}
    for title, base in (
        (f"CUBIC slow start, {args.flows} flows, drop-tail 1 BDP", matched("cubic", args.flows, args.duration)),
        ("CUBIC slow start, 4 flows, RED + ECN", red),
    ):
        rows = {}
        for abc in (1, 2, 1000):
            spec = copy.deepcopy(base)
            for f in spec["flows"]:
                f["cc"]["abc_limit"] = abc
            ss = seeds(spec, args.seeds)
            rows[f"quench abc_limit {abc}"] = quench_runs(ss)
            if abc == 1:
                rows["ns-3 TcpCubic"] = ns3_runs(ss)
                rows["ns-3 TcpCubic, 1 segment per ACK"] = ns3_runs(ss, CUBIC_SS1)
        report(f"{title}, {args.duration}, seeds {args.seeds}", rows)


# A reduction within this long after the flow's previous one (about 4 round trips here) is
# counted as a repeat: a second window reduction for the same congestion episode.
REPEAT_WITHIN_S = 0.3


def reduction_figures(res) -> dict:
    """figures() with the window reductions counted from the cwnd table: every change of
    ssthresh (entries into recovery, timeouts), and those within REPEAT_WITHIN_S of the
    flow's previous one."""
    out = figures(res)
    cw = res.tables["cwnd"]
    total = repeats = 0
    for _, c in cw.groupby("flow"):
        ss = c["ssthresh"].to_numpy()
        t = c["time_s"].to_numpy()[1:][ss[1:] != ss[:-1]]
        total += len(t)
        repeats += int((t[1:] - t[:-1] < REPEAT_WITHIN_S).sum())
    rtx = float(res.flows["retransmitted_segments"].sum())
    out.update(reductions=float(total), repeats=float(repeats), retransmits=rtx)
    for k in ("marks", "rate", "goodput"):
        del out[k]
    return out


def exp_cubic_ca(args) -> None:
    """CUBIC's congestion avoidance: quench (RFC 9438, floating point) against ns-3's TcpCubic
    with one segment per ACK in slow start (TcpCubicSs1) and against ns-3 with quench's
    congestion avoidance (TcpCubicRfc); every other rule as matched so far (IW 10, slow start
    one segment per ACK, SACK, PRR); also with delayed ACKs off, and with beta = 0.5 in all.
    Window reductions are counted from the cwnd tables, with the repeats (a second reduction
    within REPEAT_WITHIN_S of the flow's last)."""
    for title, change in (
        ("as is", lambda f: None),
        ("delayed ACKs off", lambda f: f["tcp"].update(delayed_ack={"enabled": False})),
        ("beta 0.5", lambda f: f["cc"].update(beta=0.5)),
        ("SACK off", lambda f: f["tcp"].update(sack=False)),
    ):
        if args.only and title not in args.only:
            continue
        spec = matched("cubic", args.flows, args.duration)
        spec["record"]["cwnd"] = True
        for f in spec["flows"]:
            change(f)
        ss = seeds(spec, args.seeds)
        rows = {"quench (RFC 9438 floating point)": [reduction_figures(run_scenario(s, progress=False)) for s in ss]}
        for name, extra in (
            ("ns-3 TcpCubic, 1 segment per ACK in slow start", CUBIC_SS1),
            ("ns-3 with quench's congestion avoidance (TcpCubicRfc)", CUBIC_RFC),
            ("ns-3 TcpCubic, 1 segment per ACK, PRR on RFC 6675's pipe", CUBIC_SS1_RFC_PIPE),
        ):
            if title in ("beta 0.5", "SACK off") and extra is CUBIC_RFC:
                continue  # TcpCubicRfc fixes beta at 0.7
            plans = [with_plan(ns3.translate(s), extra) for s in ss]
            rows[name] = [reduction_figures(ns3.to_results(p, r)) for p, r in zip(plans, ns3.run_plans(plans))]
        report(
            f"CUBIC congestion avoidance, {args.flows} flows, drop-tail 1 BDP, {title}, {args.duration}, "
            f"seeds {args.seeds}",
            rows,
        )


# ns-3's TcpVegas rewritten with its rules as switches, for the experiment only:
# `SeqRounds` (ns-3 and Linux: a round ends when the ACK for the first byte sent after the
# previous round's end arrives; off: quench's, a round ends one RTT sample after it began,
# the sample of the ACK that closed the last round), `IntDiff` (ns-3: diff = segCwnd -
# floor(segCwnd * baseRtt / minRtt), whole segments; off: quench's real-valued
# segCwnd * (minRtt - baseRtt) / minRtt), `RawSamples` (off: TcpVegas's, the smoothed RTT
# TcpSocketBase hands PktsAcked; on: quench's and Linux's, each ACK's own sample, m_lastRtt),
# `HandshakeBase` (with RawSamples: whether the first smoothed RTT, which holds the SYN's
# sample, enters baseRTT as in TcpVegas), `RoundEndGrowth` (ns-3 and Linux: slow start
# grows on the ACK that ends a round when it stays in slow start; off: it does not),
# `HalfFlightLoss` (off: TcpVegas's answer to the socket's request for ssthresh on a loss,
# min(ssthresh, cwnd - 1 segment), the rule Linux's tcp_vegas.c uses only inside Vegas, whose
# loss response is Reno's tcp_reno_ssthresh, half cwnd; on: quench's Vegas, FlightSize/2 as
# RFC 5681 eq. 4) and `RoundEndSlack` (with quench's rounds: an ACK arriving this long before
# the round's end ends it; 0 by default). With QUENCH_EXP_LOG set it logs each round's first
# sample and end. Everything else as TcpVegas (alpha 2, beta 4,
# gamma 1, the scenario's values; its slow-start exit, decrement and ssthresh rules). With
# ns-3's settings it must give TcpVegas's figures exactly (checked by the experiment).
VEGAS_SWITCHES_CPP = r"""
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/simulator.h"
#include "ns3/boolean.h"
#include "ns3/nstime.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
namespace quench_exp
{
class TcpVegasSwitches : public ns3::TcpNewReno
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid =
            ns3::TypeId("quench_exp::TcpVegasSwitches")
                .SetParent<ns3::TcpNewReno>()
                .SetGroupName("Internet")
                .AddConstructor<TcpVegasSwitches>()
                .AddAttribute("SeqRounds", "rounds by sequence (ns-3) or by one RTT sample (quench)",
                              ns3::BooleanValue(true),
                              ns3::MakeBooleanAccessor(&TcpVegasSwitches::m_seqRounds),
                              ns3::MakeBooleanChecker())
                .AddAttribute("IntDiff", "diff in whole segments (ns-3) or real (quench)",
                              ns3::BooleanValue(true),
                              ns3::MakeBooleanAccessor(&TcpVegasSwitches::m_intDiff),
                              ns3::MakeBooleanChecker())
                .AddAttribute("RawSamples", "each ACK's own RTT sample (quench, Linux) instead of the smoothed RTT",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpVegasSwitches::m_rawSamples),
                              ns3::MakeBooleanChecker())
                .AddAttribute("RoundEndGrowth", "slow start grows on the ACK that ends a round (ns-3, Linux)",
                              ns3::BooleanValue(true),
                              ns3::MakeBooleanAccessor(&TcpVegasSwitches::m_roundEndGrowth),
                              ns3::MakeBooleanChecker())
                .AddAttribute("HandshakeBase", "with RawSamples, the first srtt (the SYN's sample) enters baseRTT",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpVegasSwitches::m_handshakeBase),
                              ns3::MakeBooleanChecker())
                .AddAttribute("HalfFlightLoss", "on a loss, ssthresh = FlightSize/2 (quench) "
                              "instead of TcpVegas's cwnd - 1 segment",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpVegasSwitches::m_halfFlightLoss),
                              ns3::MakeBooleanChecker())
                .AddAttribute("RoundEndSlack", "with quench's rounds, an ACK arriving this much before "
                              "the round's end ends it",
                              ns3::TimeValue(ns3::Seconds(0)),
                              ns3::MakeTimeAccessor(&TcpVegasSwitches::m_slack),
                              ns3::MakeTimeChecker());
        return tid;
    }
    TcpVegasSwitches() = default;
    TcpVegasSwitches(const TcpVegasSwitches& o) = default;
    std::string GetName() const override { return "TcpVegasSwitches"; }
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<TcpVegasSwitches>(this); }

    void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t, const ns3::Time& sample) override
    {
        ns3::Time rtt = sample;
        if (m_rawSamples)
        {
            // TcpSocketBase passes PktsAcked its smoothed RTT (tcb->m_srtt) and keeps the
            // ACK's own sample in tcb->m_lastRtt (unchanged on an ACK without one, Karn's rule:
            // none in the lossless runs compared here). TcpVegas's baseRTT, the minimum over
            // smoothed RTTs, is the first of them, mostly the handshake's sample (small SYN
            // packets, about one bottleneck transmission time below a data segment's):
            // HandshakeBase lets that first smoothed value into baseRTT.
            rtt = tcb->m_lastRtt.Get();
            if (m_handshakeBase && m_firstAck)
            {
                m_baseRtt = std::min(m_baseRtt, tcb->m_srtt.Get());
            }
            m_firstAck = false;
        }
        if (rtt.IsZero())
        {
            return;
        }
        bool first = m_cntRtt == 0;
        m_minRtt = std::min(m_minRtt, rtt);
        m_baseRtt = std::min(m_baseRtt, rtt);
        m_cntRtt++;
        m_lastRtt = rtt;
        if (!m_seqRounds && m_roundEnd.IsNegative())
        {
            m_roundEnd = ns3::Simulator::Now() + rtt;
        }
        if (first)
        {
            Log('B', rtt, tcb->GetCwndInSegments());
        }
    }

    void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb, const ns3::TcpSocketState::TcpCongState_t s) override
    {
        // ns-3 reports fast recovery's entry just before it asks for ssthresh; a timeout asks
        // first and reports CA_LOSS after.
        m_entering = s == ns3::TcpSocketState::CA_RECOVERY;
        m_doing = s == ns3::TcpSocketState::CA_OPEN;
        if (m_doing)
        {
            m_begSndNxt = tcb->m_nextTxSequence;
            m_cntRtt = 0;
            m_minRtt = ns3::Time::Max();
            m_roundEnd = ns3::Seconds(-1);
        }
    }

    void IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (!m_doing)
        {
            ns3::TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
            return;
        }
        bool over = m_seqRounds ? tcb->m_lastAckedSeq >= m_begSndNxt
                                : (!m_roundEnd.IsNegative() && ns3::Simulator::Now() + m_slack >= m_roundEnd);
        if (!over)
        {
            if (tcb->m_cWnd < tcb->m_ssThresh)
            {
                SlowStart(tcb, segmentsAcked);
            }
            return;
        }
        Log('E', m_minRtt, tcb->GetCwndInSegments());
        m_begSndNxt = tcb->m_nextTxSequence;
        if (m_cntRtt <= 2)
        {
            ns3::TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
        }
        else
        {
            uint32_t segCwnd = tcb->GetCwndInSegments();
            double ratio = m_baseRtt.GetSeconds() / m_minRtt.GetSeconds();
            uint32_t target = static_cast<uint32_t>(segCwnd * ratio);
            double diff = m_intDiff ? double(segCwnd - target) : segCwnd * (1.0 - ratio);
            if (diff > kGamma && tcb->m_cWnd < tcb->m_ssThresh)
            {
                segCwnd = std::min(segCwnd, target + 1);
                tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
                tcb->m_ssThresh = VegasSsThresh(tcb);
            }
            else if (tcb->m_cWnd < tcb->m_ssThresh)
            {
                if (m_roundEndGrowth)
                {
                    SlowStart(tcb, segmentsAcked);
                }
            }
            else if (diff > kBeta)
            {
                segCwnd--;
                tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
                tcb->m_ssThresh = VegasSsThresh(tcb);
            }
            else if (diff < kAlpha)
            {
                segCwnd++;
                tcb->m_cWnd = segCwnd * tcb->m_segmentSize;
            }
            tcb->m_ssThresh = std::max(tcb->m_ssThresh.Get(), 3 * tcb->m_cWnd.Get() / 4);
        }
        m_cntRtt = 0;
        m_minRtt = ns3::Time::Max();
        m_roundEnd = m_seqRounds ? ns3::Seconds(-1) : ns3::Simulator::Now() + m_lastRtt;
    }

    // The socket asks on a loss (fast recovery's entry, a timeout) or an ECN echo. TcpVegas
    // answers with its own rule, which keeps all but one segment of the window; HalfFlightLoss
    // answers as quench's Vegas (Reno's halving, RFC 5681 eq. 4: FlightSize = highest sequence
    // sent - highest cumulatively acknowledged at fast recovery's entry, ns-3's bytesInFlight
    // at a timeout, as quench's flight_at_timeout).
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        bool entering = m_entering;
        m_entering = false;
        if (!m_halfFlightLoss)
        {
            return VegasSsThresh(tcb);
        }
        uint32_t base = bytesInFlight;
        if (entering)
        {
            int32_t flight = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
            base = static_cast<uint32_t>(std::max(flight, 0));
        }
        return std::max<uint32_t>(2 * tcb->m_segmentSize, base / 2);
    }

  private:
    // With QUENCH_EXP_LOG set, each round's first RTT sample ('B': its time, the sample, the
    // round's end) and each round's end ('E': its time, the round's minimum, baseRTT, the
    // samples), appended to that file: time and RTTs in ns, the window in segments.
    void Log(char what, ns3::Time rtt, uint32_t cwnd) const
    {
        const char* path = std::getenv("QUENCH_EXP_LOG");
        if (!path)
        {
            return;
        }
        if (FILE* f = std::fopen(path, "a"))
        {
            std::fprintf(f, "%c %p %lld %lld %lld %u %u\n", what, (const void*)this,
                         (long long)ns3::Simulator::Now().GetNanoSeconds(), (long long)rtt.GetNanoSeconds(),
                         (long long)(what == 'B' ? m_roundEnd : m_baseRtt).GetNanoSeconds(), cwnd, m_cntRtt);
            std::fclose(f);
        }
    }

    // TcpVegas's ssthresh: below the window by one segment, at least two segments (also
    // Vegas's own rule when slow start ends or a round shrinks the window).
    uint32_t VegasSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb) const
    {
        return std::max(std::min(tcb->m_ssThresh.Get(), tcb->m_cWnd.Get() - tcb->m_segmentSize),
                        2 * tcb->m_segmentSize);
    }

    static constexpr double kAlpha = 2, kBeta = 4, kGamma = 1;
    bool m_seqRounds = true, m_intDiff = true, m_rawSamples = false, m_handshakeBase = false, m_roundEndGrowth = true,
         m_halfFlightLoss = false, m_doing = true, m_entering = false;
    bool m_firstAck = true;
    ns3::Time m_baseRtt = ns3::Time::Max(), m_minRtt = ns3::Time::Max();
    ns3::Time m_lastRtt, m_roundEnd = ns3::Seconds(-1), m_slack;
    uint32_t m_cntRtt = 0;
    ns3::SequenceNumber32 m_begSndNxt{0};
};
}
"""


def vegas_switches(
    seq_rounds: bool,
    int_diff: bool,
    raw: bool = False,
    syn_base: bool = False,
    end_growth: bool = True,
    half_flight: bool = False,
    slack_s: float = 0.0,
) -> tuple[dict, dict]:
    """Plan keys and attribute defaults running TcpVegasSwitches with these switches."""
    extra = {
        "experiment_cpp": [(VEGAS_SWITCHES_CPP, ["quench_exp.TcpVegasSwitches"])],
        "tcp_types": {"vegas": "quench_exp::TcpVegasSwitches"},
    }
    defaults = {
        "quench_exp::TcpVegasSwitches::SeqRounds": ("bool", seq_rounds),
        "quench_exp::TcpVegasSwitches::IntDiff": ("bool", int_diff),
        "quench_exp::TcpVegasSwitches::RawSamples": ("bool", raw),
        "quench_exp::TcpVegasSwitches::HandshakeBase": ("bool", syn_base),
        "quench_exp::TcpVegasSwitches::RoundEndGrowth": ("bool", end_growth),
        "quench_exp::TcpVegasSwitches::HalfFlightLoss": ("bool", half_flight),
        "quench_exp::TcpVegasSwitches::RoundEndSlack": ("time_s", slack_s),
    }
    return extra, defaults


def exp_cubic_repeats(args) -> None:
    """cubic_ca's case (4 flows, drop-tail, seed 1) for 12 s: each window reduction between 4
    and 12 s (time, flow, new ssthresh in segments) in quench and in ns-3's TcpCubic with one
    segment per ACK, and the bottleneck's backlog and drops every 10 ms over [5, 6) s."""
    spec = matched("cubic", args.flows, "12s")
    spec["record"]["cwnd"] = True
    spec["record"]["snapshots"] = [f"{5.0 + 0.01 * i:.2f}s" for i in range(1, 101)]
    runs = [("quench", run_scenario(spec, progress=False))]
    p = with_plan(ns3.translate(spec), CUBIC_SS1)
    runs.append(("ns-3 TcpCubic, 1 segment per ACK", ns3.to_results(p, ns3.run_plans([p])[0])))
    for name, r in runs:
        print(f"\n{name}")
        cw = r.tables["cwnd"]
        rows = []
        for k, c in cw.groupby("flow"):
            ss, t = c["ssthresh"].to_numpy(), c["time_s"].to_numpy()
            changed = np.nonzero(ss[1:] != ss[:-1])[0] + 1
            rows += [(round(float(t[i]), 3), int(k), round(float(ss[i]) / 1460, 1)) for i in changed if 4 <= t[i] < 12]
        print("  reductions (s, flow, ssthresh segments):", sorted(rows))
        ls = r.tables["link_snapshots"]
        ls = ls[ls["link_name"] == "r1->r2"].sort_values("time_s")
        print("  backlog every 10 ms from 5.01 s:", " ".join(str(int(x)) for x in ls["backlog_packets"]))
        drops = np.diff(ls["dropped_packets"].to_numpy(dtype=float))
        print("  drops per 10 ms from 5.01 s:   ", " ".join(str(int(x)) for x in drops))


# ns-3's TcpCubic (one segment per ACK in slow start, TcpCubicSs1) that records every window
# reduction and every exit from recovery, for the experiment only: the simulated time, the
# socket's controller, the new state, cwnd, HighACK (m_lastAckedSeq: the first unacknowledged
# byte, the one whose loss starts the recovery) and HighData (m_highTxMark); one line each,
# appended to the file named by QUENCH_EXP_LOG. `SkipSentInRecovery` (off by default): a
# recovery whose first lost byte was sent before the flow's previous recovery ended (HighACK
# below HighData at that exit) leaves the window and CUBIC's state as they are, i.e. the
# previous reduction is taken to cover losses of data sent during that recovery.
CUBIC_REPEATS_CPP = r"""
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/simulator.h"
#include "ns3/boolean.h"
#include <cstdio>
#include <cstdlib>
namespace quench_exp
{
class TcpCubicRepeats : public TcpCubicSs1
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid =
            ns3::TypeId("quench_exp::TcpCubicRepeats")
                .SetParent<TcpCubicSs1>()
                .SetGroupName("Internet")
                .AddConstructor<TcpCubicRepeats>()
                .AddAttribute("SkipSentInRecovery",
                              "no reduction for a loss of data sent before the previous recovery ended",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpCubicRepeats::m_skip),
                              ns3::MakeBooleanChecker());
        return tid;
    }
    TcpCubicRepeats() = default;
    TcpCubicRepeats(const TcpCubicRepeats& o) = default;
    std::string GetName() const override { return "TcpCubicRepeats"; }
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<TcpCubicRepeats>(this); }

    void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb, const ns3::TcpSocketState::TcpCongState_t s) override
    {
        if (s == ns3::TcpSocketState::CA_OPEN && m_inRecovery)
        {
            m_exitHighData = tcb->m_highTxMark.Get().GetValue();
            Log('X', tcb);
        }
        m_inRecovery = s == ns3::TcpSocketState::CA_RECOVERY;
        m_entering = m_inRecovery;
        TcpCubicSs1::CongestionStateSet(tcb, s);
    }

    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        bool entering = m_entering;
        m_entering = false;
        uint32_t highAck = tcb->m_lastAckedSeq.GetValue();
        if (entering && m_skip && m_exitHighData != 0 && highAck < m_exitHighData)
        {
            Log('S', tcb);
            return tcb->m_cWnd.Get();
        }
        Log(entering ? 'R' : 'T', tcb);
        return TcpCubicSs1::GetSsThresh(tcb, bytesInFlight);
    }

  private:
    void Log(char what, ns3::Ptr<const ns3::TcpSocketState> tcb) const
    {
        const char* path = std::getenv("QUENCH_EXP_LOG");
        if (!path)
        {
            return;
        }
        if (FILE* f = std::fopen(path, "a"))
        {
            std::fprintf(f, "%.6f %p %c %u %u %u\n", ns3::Simulator::Now().GetSeconds(), (const void*)this, what,
                         tcb->m_cWnd.Get(), tcb->m_lastAckedSeq.GetValue(), tcb->m_highTxMark.Get().GetValue());
            std::fclose(f);
        }
    }
    bool m_skip = false, m_inRecovery = false, m_entering = false;
    uint32_t m_exitHighData = 0;
};
}
"""


# ns-3's TcpPrrRecovery counts every duplicate ACK as one segment delivered
# (TcpPrrRecovery::DoRecovery adds one SMSS while its delivered total is under RecoverFS), on
# top of the bytes the ACK's SACK blocks newly cover; RFC 6937 section 3 takes DeliveredData
# from the change in snd.una and in SACKed bytes, and estimates one MSS per duplicate ACK only
# without SACK. With SACK each duplicate ACK is then counted twice and PRR sends about
# 2·ssthresh/RecoverFS (1.4 with CUBIC's 0.7) segments per segment delivered while pipe >
# ssthresh. Variant: ns-3's PRR with the duplicate ACK counted only by its SACK blocks (for
# runs with SACK only; quench's PRR, sender/prr.rs, counts the same way).
PRR_SACK_DELIVERED_CPP = (
    OPS_CPP
    + r"""
#include "ns3/tcp-prr-recovery.h"
namespace quench_exp
{
class TcpPrrSackDelivered : public ns3::TcpPrrRecovery
{
  public:
    QUENCH_EXP_OPS(TcpPrrSackDelivered, ns3::TcpPrrRecovery, TcpRecoveryOps)
    // Entering recovery calls this too (virtually), so every ACK is counted by its SACK blocks.
    void DoRecovery(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t deliveredBytes, bool) override
    {
        ns3::TcpPrrRecovery::DoRecovery(tcb, deliveredBytes, false);
    }
};
}
"""
)
PRR_SACK_DELIVERED = {
    "experiment_cpp": [(PRR_SACK_DELIVERED_CPP, ["quench_exp.TcpPrrSackDelivered"])],
    "defaults": {"ns3::TcpL4Protocol::RecoveryType": ("string", "quench_exp::TcpPrrSackDelivered")},
}

CUBIC_REPEATS = {
    "experiment_cpp": [*CUBIC_SS1["experiment_cpp"], (CUBIC_REPEATS_CPP, ["quench_exp.TcpCubicRepeats"])],
    "tcp_types": {"cubic": "quench_exp::TcpCubicRepeats"},
}


def repeat_origins(log_path: str) -> dict:
    """From TcpCubicRepeats's log: each flow's fast-recovery reductions (R) classified by where
    their first lost byte (HighACK at entry) was sent: before the flow's previous reduction
    (HighACK below that entry's HighData, RFC 6582's `recover`: the same window), during the
    previous recovery (below HighData at its exit), or after it; with the mean time from the
    previous exit. Skipped reductions (S) and timeouts (T) are counted apart."""
    rows: dict[str, list] = {}
    for line in open(log_path):
        t, who, what, cwnd, high_ack, high_data = line.split()
        rows.setdefault(who, []).append((float(t), what, int(cwnd), int(high_ack), int(high_data)))
    out = {"R": 0, "S": 0, "T": 0, "same window": 0, "sent in recovery": 0, "sent after": 0}
    gaps = []
    for events in rows.values():
        recover = exit_data = None
        exit_t = None
        for t, what, _, high_ack, high_data in events:
            if what in ("R", "S", "T"):
                out[what] += 1
            if what in ("R", "S") and recover is not None:
                if high_ack < recover:
                    out["same window"] += 1
                elif exit_data is not None and high_ack < exit_data:
                    out["sent in recovery"] += 1
                    gaps.append(t - exit_t)
                else:
                    out["sent after"] += 1
            if what == "R":
                recover, exit_data = high_data, None
            elif what == "X":
                exit_data, exit_t = high_data, t
            elif what == "T":
                recover = exit_data = None
    out["s from exit (sent in recovery)"] = statistics.fmean(gaps) if gaps else float("nan")
    return out


def quench_repeat_origins(res) -> dict:
    """repeat_origins() for a quench run, from its segment and TCP event records: at each fast
    retransmission HighACK is the highest cumulative ACK received so far and HighData the end of
    the highest segment sent; the recovery ends at the first ACK at or above that HighData."""
    seg, ev = res.tables["segments"], res.tables["tcp_events"]
    out = {"R": 0, "S": 0, "T": 0, "same window": 0, "sent in recovery": 0, "sent after": 0}
    gaps = []
    for k, s in seg.groupby("flow"):
        data, acks = s[s["is_ack"] == 0], s[s["is_ack"] == 1]
        dt, dend = data["time_s"].to_numpy(), np.maximum.accumulate((data["seq"] + data["len"]).to_numpy())
        at, aseq = acks["time_s"].to_numpy(), np.maximum.accumulate(acks["seq"].to_numpy())
        e = ev[ev["flow"] == k]
        recover = exit_data = exit_t = None
        for t, what in zip(e["time_s"], e["event"]):
            if what == "timeout":
                out["T"] += 1
                recover = exit_data = None
                continue
            if what != "fast_retransmit":
                continue
            out["R"] += 1
            i = np.searchsorted(at, t, side="right") - 1
            high_ack = int(aseq[i]) if i >= 0 else 0
            if recover is not None:
                if high_ack < recover:
                    out["same window"] += 1
                elif exit_data is not None and high_ack < exit_data:
                    out["sent in recovery"] += 1
                    gaps.append(t - exit_t)
                else:
                    out["sent after"] += 1
            recover = int(dend[np.searchsorted(dt, t, side="right") - 1])
            j = np.searchsorted(aseq, recover)
            if j < len(at):
                exit_t = float(at[j])
                exit_data = int(dend[np.searchsorted(dt, exit_t, side="right") - 1])
            else:
                exit_data = exit_t = None
    out["s from exit (sent in recovery)"] = statistics.fmean(gaps) if gaps else float("nan")
    return out


def exp_cubic_rules(args) -> None:
    """Which rule of ns-3 makes its CUBIC flows reduce twice: cubic_ca's case (4 flows,
    drop-tail, SACK, PRR, slow start one segment per ACK, seed 1) with ns-3's TcpCubic logging
    each reduction (TcpCubicRepeats) and quench's from its segment records, each reduction
    classified by where its lost byte was sent (repeat_origins); then one rule changed at a
    time: in ns-3 alone, no reduction for data sent before the previous recovery ended, and
    PRR counting a duplicate ACK by its SACK blocks only (TcpPrrSackDelivered); in both,
    limited transmit off, RFC 6675 recovery (ns-3 TcpClassicRecovery), DupThresh 4."""
    cases = [
        (
            "",
            lambda f: None,
            [
                ("", {}),
                (
                    ", no reduction for data sent before the previous recovery ended",
                    {"quench_exp::TcpCubicRepeats::SkipSentInRecovery": ("bool", True)},
                ),
                (", PRR counting a duplicate ACK by its SACK blocks only", PRR_SACK_DELIVERED),
            ],
        ),
        (", limited transmit off", lambda f: f["tcp"].update(limited_transmit=False), [("", {})]),
        (", RFC 6675 recovery", lambda f: f["tcp"].update(recovery="standard"), [("", {})]),
        (", dupthresh 4", lambda f: f["tcp"].update(dupack_threshold=4), [("", {})]),
    ]
    rows, origins = {}, {}
    for case, change, ns3_variants in cases:
        if args.only and case.lstrip(", ") not in args.only and not (case == "" and "as matched" in args.only):
            continue
        spec = matched("cubic", args.flows, args.duration)
        spec["record"].update(cwnd=True, segments=True)
        for f in spec["flows"]:
            change(f)
        q = run_scenario(spec, progress=False)
        rows[f"quench{case}"] = [reduction_figures(q)]
        origins[f"quench{case}"] = quench_repeat_origins(q)
        for variant, defaults in ns3_variants:
            name = f"ns-3{case}{variant}"
            with tempfile.TemporaryDirectory(prefix="quench-exp-") as tmp:
                os.environ["QUENCH_EXP_LOG"] = f"{tmp}/log.txt"
                p = with_plan(ns3.translate(spec), CUBIC_REPEATS)
                if "experiment_cpp" in defaults:  # a plan-key variant (another ns-3 class)
                    p["experiment_cpp"] = p["experiment_cpp"] + defaults["experiment_cpp"]
                    p["defaults"].update(defaults["defaults"])
                else:
                    p["defaults"].update(defaults)
                rows[name] = [reduction_figures(ns3.to_results(p, ns3.run_plans([p])[0]))]
                origins[name] = repeat_origins(f"{tmp}/log.txt")
                del os.environ["QUENCH_EXP_LOG"]
    report(f"CUBIC repeats, {args.flows} flows, drop-tail 1 BDP, {args.duration}, seed 1", rows)
    print("\nwhere each fast-recovery reduction's lost byte was sent (after the flow's first)")
    for name, o in origins.items():
        print(f"{name}: " + ", ".join(f"{k} {v:.3g}" for k, v in o.items()))


def vegas_figures(res) -> dict:
    out = figures(res)
    g = res.flows["goodput_bps"].to_numpy(dtype=float)
    out["jain"] = float(g.sum() ** 2 / (len(g) * (g**2).sum()))
    for k in ("marks", "rate", "fast_rtx"):
        del out[k]
    return out


def exp_vegas(args) -> None:
    """The two Vegas flows of scenarios/ns3_mixed.toml alone (delayed ACKs off, an RTT sample
    on every ACK, both starting at 0). ns-3's TcpVegas compares diff = segCwnd -
    floor(segCwnd * baseRtt / minRtt), the real diff rounded up to whole segments, with its
    integer alpha and beta: it grows while that is < alpha, i.e. while the real diff <= alpha - 1,
    and shrinks while it is > beta, i.e. while the real diff > beta. quench compares the real
    diff (alpha = 2, beta = 4: grow below 2). Variants: quench with alpha = 1 (ns-3's rule in
    real numbers); ns-3's Vegas rewritten with its round rule and its rounding as switches
    (TcpVegasSwitches), also with each ACK's own RTT sample instead of TcpSocketBase's smoothed
    RTT; delayed ACKs on; the bottleneck delay moved by 1 ms steps."""
    spec = load_scenario("scenarios/ns3_mixed.toml")
    spec["duration"] = args.duration
    spec["flows"] = [f for f in spec["flows"] if f["name"] in ("vegas0", "vegas1")]

    def quench_rows(specs):
        return [vegas_figures(run_scenario(x, progress=False)) for x in specs]

    # Every ns-3 run of the experiment in one child: (row, specs, plan keys, defaults).
    jobs, rows_at = [], {}

    def ns3_job(row, specs, extra=None, defaults=None):
        plans = []
        for x in specs:
            p = ns3.translate(x)
            p.update(extra or {})
            p["defaults"].update(defaults or {})
            plans.append(p)
        jobs.append((row, plans))

    tables = []
    for title, delack in (("delayed ACKs off", False), ("delayed ACKs on", True)):
        base = copy.deepcopy(spec)
        for f in base["flows"]:
            f["tcp"]["delayed_ack"] = {"enabled": delack}
        alpha1 = copy.deepcopy(base)
        for f in alpha1["flows"]:
            f["cc"]["alpha"] = 1.0
        ss = seeds(base, args.seeds)
        rows = {
            "quench, alpha 2 beta 4": quench_rows(ss),
            "quench, alpha 1 beta 4 (ns-3's rounding)": quench_rows(seeds(alpha1, args.seeds)),
        }
        name = f"Vegas, 2 flows, {title}, {args.duration}, seeds {args.seeds}"
        ns3_job((name, "ns-3 TcpVegas"), ss)
        if not delack:
            for seq, whole in ((True, True), (False, True), (True, False), (False, False)):
                label = (
                    f"ns-3 TcpVegasSwitches: rounds by {'sequence (ns-3)' if seq else 'RTT sample (quench)'}, "
                    f"diff {'whole segments (ns-3)' if whole else 'real (quench)'}"
                )
                ns3_job((name, label), ss, *vegas_switches(seq, whole))
            # TcpVegas's samples are TcpSocketBase's smoothed RTT, and its baseRTT the first
            # of them, which holds the SYN's sample: each ACK's own sample, with and without
            # that first one (quench: without; its baseRTT is the minimum of data samples).
            for seq, syn in ((True, True), (True, False), (False, True), (False, False)):
                label = (
                    f"ns-3 TcpVegasSwitches: rounds by {'sequence (ns-3)' if seq else 'RTT sample (quench)'}, "
                    f"each ACK's own sample, baseRTT {'with' if syn else 'without'} the handshake's"
                )
                ns3_job((name, label), ss, *vegas_switches(seq, True, True, syn))
            label = "ns-3 TcpVegasSwitches: quench's rules (its rounds, own samples, no handshake)"
            ns3_job((name, label), ss, *vegas_switches(False, True, True, False))
        tables.append((name, rows))
    # Where the flows settle inside the band depends on the path there: with delayed ACKs off
    # both simulators leave slow start above the band and take one segment off per round
    # until diff <= beta. The bottleneck delay moved by 1 ms steps (base RTT 38-46 ms).
    name = f"Vegas, 2 flows, delayed ACKs off, bottleneck delay varied, {args.duration}, seeds {args.seeds}"
    rows = {}
    for delay_ms in (17, 18, 19, 20, 21, 22):
        s = copy.deepcopy(spec)
        s["links"][0]["delay"] = f"{delay_ms}ms"
        ss = seeds(s, args.seeds)
        rows[f"quench, bottleneck delay {delay_ms} ms"] = quench_rows(ss)
        ns3_job((name, f"ns-3, bottleneck delay {delay_ms} ms"), ss)
        ns3_job((name, f"ns-3 rounds by RTT sample, bottleneck delay {delay_ms} ms"), ss, *vegas_switches(False, True))
        ns3_job(
            (name, f"ns-3 each ACK's own sample, baseRTT without the handshake's, bottleneck delay {delay_ms} ms"),
            ss,
            *vegas_switches(True, True, True, False),
        )
        ns3_job(
            (name, f"ns-3 with quench's rules, bottleneck delay {delay_ms} ms"),
            ss,
            *vegas_switches(False, True, True, False),
        )
    tables.append((name, rows))
    plans = [p for _, ps in jobs for p in ps]
    results = iter(ns3.run_plans(plans))
    for (table, row), ps in jobs:
        rows_at.setdefault(table, {})[row] = [vegas_figures(ns3.to_results(p, next(results))) for p in ps]
    for name, rows in tables:
        report(name, {**rows, **rows_at[name]})


def exp_vegas_drops(args) -> None:
    """Where quench's Vegas slow start overflows the buffer (bottleneck delay 21 and 22 ms; 19
    ms for the queue): quench, and ns-3's Vegas with quench's rules (TcpVegasSwitches: its
    round, each ACK's own sample, baseRTT of data segments) with the loss response changed one
    part at a time. TcpVegas's ssthresh on a loss is cwnd - 1 segment (HalfFlightLoss: quench's
    FlightSize/2); ns-3's PRR counts its bytes in flight and its duplicate ACKs as data
    (FLIGHTSIZE_RFC_PRR_SACK_SSRB's recovery: RFC 6675's pipe, RecoverFS = FlightSize, SACKed
    bytes only, SSRB on every ACK, as quench's `recovery = "prr"`). `--quench-framing 2B`:
    quench's links (both directions) add ns-3's 2-byte PPP header to every packet on the wire;
    the ns-3 runs are unchanged. `--access-rate R`: the 100 Mb/s access links at R in both."""
    spec = load_scenario("scenarios/ns3_mixed.toml")
    spec["duration"] = args.duration
    spec["flows"] = [f for f in spec["flows"] if f["name"] in ("vegas0", "vegas1")]
    for ln in spec["links"]:
        if args.access_rate and ln["rate"] == "100Mbps":
            ln["rate"] = args.access_rate
    framing = args.quench_framing
    rfc_prr = {
        "experiment_cpp": [(ASKED_IN_CPP, []), (PRR_RFC_PIPE_CPP, ["quench_exp.TcpPrrRfcPipe"])],
        "defaults": FLIGHTSIZE_RFC_PRR_SACK_SSRB["defaults"],
    }

    spec["record"]["cwnd"] = True
    traces = []

    def figs(res, label: str = "quench") -> dict:
        # Each flow's window at the end of slow start: its peak and each ssthresh it set in
        # the first second (Vegas's slow-start exit, then the loss response), in segments;
        # and where it settles (its window at 2, 10 and 20 s).
        cw = res.tables["cwnd"]
        mss = int(spec["flows"][0]["tcp"].get("mss", 1460))
        for k in (0, 1):
            flow = cw[cw["flow"] == k]
            c = flow[flow["time_s"] < 1.0]
            steps = c[c["ssthresh"] < 2**31].drop_duplicates(["ssthresh"])
            later = [int(flow[flow["time_s"] <= t]["cwnd"].iloc[-1]) // mss for t in (2.0, 10.0, 20.0)]
            traces.append(
                f"{label}, flow {k}: peak cwnd {int(c['cwnd'].max()) // mss}, ssthresh "
                + ", ".join(f"{int(r.ssthresh) // mss} at {r.time_s:.3f} s" for r in steps.itertuples())
                + f"; cwnd at 2, 10, 20 s: {later}"
            )
        out = figures(res)
        g = res.flows["goodput_bps"].to_numpy(dtype=float)
        out["jain"] = float(g.sum() ** 2 / (len(g) * (g**2).sum()))
        out["drops per fast rtx"] = out["drops"] / out["fast_rtx"] if out["fast_rtx"] else float("nan")
        for k in ("marks", "rate"):
            del out[k]
        return out

    jobs, tables = [], []
    for delay_ms in args.delays or (19, 21, 22):
        s = copy.deepcopy(spec)
        s["links"][0]["delay"] = f"{delay_ms}ms"
        ss = seeds(s, args.seeds)
        name = f"Vegas, 2 flows, bottleneck delay {delay_ms} ms, {args.duration}, seeds {args.seeds}"
        qname = f"quench, framing {framing}" if framing else "quench"
        rows = {qname: [figs(run_scenario(framed(x, framing), progress=False), f"{delay_ms} ms, {qname}") for x in ss]}
        for label, half, recovery, whole, slack in (
            ("ns-3 with quench's rules (TcpVegas's ssthresh cwnd - 1, ns-3's PRR)", False, False, True, 0.0),
            ("ns-3 with quench's rules, ssthresh FlightSize/2", True, False, True, 0.0),
            ("ns-3 with quench's rules, RFC 6937 PRR on RFC 6675's pipe", False, True, True, 0.0),
            ("ns-3 with quench's rules, ssthresh FlightSize/2 and RFC 6937 PRR", True, True, True, 0.0),
            ("ns-3 with quench's rules, ssthresh FlightSize/2, RFC 6937 PRR, real diff", True, True, False, 0.0),
            (
                "ns-3 with quench's rules, ssthresh FlightSize/2, RFC 6937 PRR, "
                "a round ending at an ACK up to 10 us before its end",
                True,
                True,
                True,
                ROUND_END_SLACK_S,
            ),
        ):
            extra, defaults = vegas_switches(False, whole, True, False, True, half, slack)
            if recovery:
                extra = {**extra, "experiment_cpp": rfc_prr["experiment_cpp"] + extra["experiment_cpp"]}
                defaults = {**defaults, **rfc_prr["defaults"]}
            plans = []
            for x in ss:
                p = ns3.translate(x)
                p.update(extra)
                p["defaults"].update(defaults)
                plans.append(p)
            jobs.append((name, label, plans, f"{delay_ms} ms, {label}"))
        tables.append((name, rows))
    results = iter(ns3.run_plans([p for _, _, ps, _ in jobs for p in ps]))
    rows_at = dict(tables)
    for name, label, ps, trace in jobs:
        rows_at[name][label] = [figs(ns3.to_results(p, next(results)), trace) for p in ps]
    for name, rows in tables:
        report(name, rows)
    print("\neach flow's window in segments: the first second, and at 2, 10 and 20 s")
    print("\n".join(traces))
    vegas_first_rounds(spec, rfc_prr, framing=framing)


def framed(spec: dict, framing: str | None) -> dict:
    """`spec` with every link (a duplex link's both directions) adding `framing` bytes to each
    packet on the wire: the quench side of an experiment only (ns3.translate refuses it, as
    ns-3's point-to-point links add their 2-byte PPP header themselves)."""
    if not framing:
        return spec
    s = copy.deepcopy(spec)
    for ln in s["links"]:
        ln["framing_overhead"] = framing
    return s


# A round that ends at an ACK arriving this long before the round's end (vegas_drops): ns-3's
# first data segment waits on the sender's access link behind the handshake's last ACK, which
# ns-3 sends as a segment of its own (42 B at 100 Mb/s: 3.36 us; quench's first data segment
# carries that ACK), so its RTT is that much longer than the next window's first (quench's:
# equal), and where quench's first round ends at the ACK that arrives exactly at its end,
# ns-3's ends one ACK later.
ROUND_END_SLACK_S = 10e-6


def vegas_first_rounds(
    spec: dict, rfc_prr: dict, delay_ms: int = 19, until_s: float = 0.25, framing: str | None = None
) -> None:
    """Each Vegas round's end in its first `until_s` at `delay_ms`: quench's from its RTT
    samples (every ACK's; the handshake's, which its Vegas never sees, left out) by its round
    rule, ns-3's (quench's rules and loss response) from TcpVegasSwitches' log. A round ends at
    the first ACK at or after its first sample's time plus that sample; its minimum takes
    that ACK's sample too."""
    s = copy.deepcopy(spec)
    s["links"][0]["delay"] = f"{delay_ms}ms"
    s["duration"] = f"{until_s}s"
    s["record"].update(rtt=True, cwnd=False)
    print(f"\nVegas rounds' ends to {until_s} s, bottleneck delay {delay_ms} ms (ms; cwnd segments)")
    rtt = run_scenario(framed(s, framing), progress=False).tables["rtt"]
    for k in (0, 1):
        rows, end, mn, n, base = [], None, float("inf"), 0, float("inf")
        for t, r in rtt[rtt["flow"] == k][["time_s", "rtt_s"]].to_numpy()[1:]:
            base, mn, n = min(base, r), min(mn, r), n + 1
            if end is None:
                end = t + r
                rows.append(f"first sample {r * 1e3:.4f} at {t * 1e3:.4f}, round end {end * 1e3:.4f}")
            if t >= end:
                rows.append(f"end {t * 1e3:.4f}: min {mn * 1e3:.4f}, base {base * 1e3:.4f}, samples {n}")
                end, mn, n = t + r, float("inf"), 0
        print(f"quench{f', framing {framing}' if framing else ''}, flow {k}: " + "; ".join(rows))
    extra, defaults = vegas_switches(False, True, True, False, True, True)
    p = ns3.translate(s)
    p.update({**extra, "experiment_cpp": rfc_prr["experiment_cpp"] + extra["experiment_cpp"]})
    p["defaults"].update({**defaults, **rfc_prr["defaults"]})
    with tempfile.TemporaryDirectory(prefix="quench-exp-") as tmp:
        os.environ["QUENCH_EXP_LOG"] = f"{tmp}/log.txt"
        try:
            ns3.run_plans([p])
            lines = open(f"{tmp}/log.txt").read().split()
        finally:
            del os.environ["QUENCH_EXP_LOG"]
    flows: dict[str, list[str]] = {}
    for i in range(0, len(lines), 7):
        what, sock, now, r, other, cwnd, n = lines[i : i + 7]
        ms = [int(x) / 1e6 for x in (now, r, other)]
        rows = flows.setdefault(sock, [])
        if what == "B" and not rows:
            rows.append(f"first sample {ms[1]:.4f} at {ms[0]:.4f}, round end {ms[2]:.4f}")
        elif what == "E" and ms[0] <= until_s * 1e3:
            rows.append(f"end {ms[0]:.4f}: min {ms[1]:.4f}, base {ms[2]:.4f}, samples {n}, cwnd {cwnd}")
    for k, rows in enumerate(flows.values()):
        print(f"ns-3, socket {k}: " + "; ".join(rows))


def aqm_runs(aqm: str, duration: str, seed_list, record: dict, variant: dict | None = None):
    """quench and ns-3 (NewReno halving FlightSize, as quench, or `variant`) runs of ns3_aqm.py's
    TCP case."""
    import ns3_aqm

    specs = []
    for seed in seed_list:
        s = ns3_aqm.scenario("tcp", aqm, duration, "matched", {})
        s["seed"] = seed
        s["record"].update(record)
        specs.append(s)
    q = [run_scenario(s, progress=False) for s in specs]
    plans = [with_plan(ns3.translate(s), variant or FLIGHTSIZE) for s in specs]
    return q, [ns3.to_results(p, r) for p, r in zip(plans, ns3.run_plans(plans))]


def bottleneck_steps(res, key: str):
    """Per-interval increments of a bottleneck counter from the link snapshots."""
    ls = res.tables["link_snapshots"]
    ls = ls[ls["link_name"] == "r1->r2"].sort_values("time_s")
    return np.diff(np.concatenate([[0.0], ls[key].to_numpy(dtype=float)]))


VARIANTS = {
    "flightsize": FLIGHTSIZE,
    "flightsize_rfc_pipe": FLIGHTSIZE_RFC_PIPE,
    "flightsize_rfc_prr": FLIGHTSIZE_RFC_PRR,
    "flightsize_rfc_prr_sack": FLIGHTSIZE_RFC_PRR_SACK,
    "flightsize_rfc_prr_sack_ssrb": FLIGHTSIZE_RFC_PRR_SACK_SSRB,
    "flightsize_rfc_prr_sack_wide": FLIGHTSIZE_RFC_PRR_SACK_WIDE,
    "flightsize_rfc_prr_sack_ssrb32": FLIGHTSIZE_RFC_PRR_SACK_SSRB32,
    "flightsize_rfc_prr_sack_ssrb_ece": FLIGHTSIZE_RFC_PRR_SACK_SSRB_ECE,
    "flightsize_rfc_prr_sack_cwr": FLIGHTSIZE_RFC_PRR_SACK_CWR,
    "flightsize_rfc_prr_sack_ssrb_cwr": FLIGHTSIZE_RFC_PRR_SACK_SSRB_CWR,
    "flightsize_rfc_prr_sack_ssrb_ece_cwr": FLIGHTSIZE_RFC_PRR_SACK_SSRB_ECE_CWR,
}


def variant_of(args) -> dict:
    """The ns-3 sender of pie_profile / pie_start: `--variant`, `--rfc-pipe` its older spelling."""
    return VARIANTS["flightsize_rfc_pipe" if args.rfc_pipe else args.variant]


def exp_pie_profile(args) -> None:
    """Where PIE's (or FQ-PIE's) extra drops fall: ns3_aqm.py's TCP case (4 NewReno, ns-3 halving
    FlightSize as quench), the bottleneck's drops in each second, mean over seeds 1..N, and
    their sums over the start-up [0, 3) s and the rest."""
    dur = int(float(args.duration.rstrip("s")))
    q, n = aqm_runs(args.aqm, args.duration, range(1, args.seeds + 1), {"snapshots": "1s"}, variant_of(args))
    qa = np.mean([bottleneck_steps(r, "dropped_packets") for r in q], axis=0)
    na = np.mean([bottleneck_steps(r, "dropped_packets") for r in n], axis=0)
    print(f"\n{args.aqm}, 4 NewReno, {args.duration}, seeds 1..{args.seeds}: drops in each second (mean)")
    print("quench", " ".join(f"{x:.1f}" for x in qa))
    print("ns-3  ", " ".join(f"{x:.1f}" for x in na))
    print("| seconds | quench | ns-3 | diff |\n|---|---|---|---|")
    for a, b in ((0, 3), (3, dur), (0, dur)):
        qs, ns_ = qa[a:b].sum(), na[a:b].sum()
        print(f"| [{a}, {b}) | {qs:.1f} | {ns_:.1f} | {qs / ns_ - 1:+.1%} |")


def exp_pie_start(args) -> None:
    """PIE's start-up in both, seed 1, 3 s: per 100 ms the bottleneck's arrivals, drops and
    backlog (packets); each flow's cwnd and ssthresh (segments) every 100 ms from 0.6 s; and
    quench's drop_prob."""
    times = [f"{0.1 * i:.1f}s" for i in range(1, 31)]
    q, n = aqm_runs(args.aqm, "3s", [1], {"snapshots": times, "cwnd": True, "monitors": True}, variant_of(args))
    for name, r in (("quench", q[0]), ("ns-3", n[0])):
        print(f"\n{name}, {args.aqm}, seed 1: per 100 ms from 0.1 s")
        for key, label in (("arrived_packets", "arrivals"), ("dropped_packets", "drops")):
            print(f"  {label:9s}", " ".join(f"{int(x):4d}" for x in bottleneck_steps(r, key)))
        ls = r.tables["link_snapshots"]
        ls = ls[ls["link_name"] == "r1->r2"].sort_values("time_s")
        print("  backlog  ", " ".join(f"{int(x):4d}" for x in ls["backlog_packets"]))
        cw = r.tables["cwnd"]
        ts = np.arange(0.6, 2.3, 0.1)
        for k in range(4):
            c = cw[cw["flow"] == k]
            at = np.clip(np.searchsorted(c["time_s"].to_numpy(), ts) - 1, 0, len(c) - 1)
            w = c["cwnd"].to_numpy()[at] / 1460
            sst = np.minimum(c["ssthresh"].to_numpy()[at] / 1460, 999)
            print(
                f"  flow {k} cwnd", " ".join(f"{x:3.0f}" for x in w), "| ssthresh", " ".join(f"{x:3.0f}" for x in sst)
            )
        print("  flows' packets sent", r.flows["packets_sent"].tolist(), "timeouts", r.flows["timeouts"].tolist())
    m = q[0].tables["monitors"]
    m = m[m["name"] == "drop_prob"]
    print(
        "quench drop_prob every ~100 ms:",
        [(round(float(t), 1), round(float(v), 3)) for t, v in m[["time_s", "value"]].to_numpy()[::7]],
    )


def steady_backlog(res, since_s: float, until_s: float) -> tuple[float, np.ndarray]:
    """The bottleneck's time-mean backlog (packets) over [since_s, until_s) from the queue
    table, and the fraction of that time at each backlog 0, 1, 2, ..."""
    q = res.tables["queue"]
    q = q[q["link_name"] == "r1->r2"].sort_values("time_s", kind="stable")
    t, n = q["time_s"].to_numpy(), q["packets"].to_numpy().astype(int)
    held = np.diff(np.append(t, until_s))
    m = (t >= since_s) & (t < until_s)
    share = np.bincount(n[m], weights=held[m])
    return float(np.sum(n[m] * held[m]) / np.sum(held[m])), share / share.sum()


def window_climbs(res, flow: int, since_s: float) -> dict:
    """One flow's congestion-avoidance climbs from the cwnd table after `since_s`: runs of a
    non-decreasing window that start at or above ssthresh and last over 0.1 s; their median
    growth (segments per second) and mean start, peak and length, and the time-mean window."""
    mss = MATCHED_TCP["mss"]
    c = res.tables["cwnd"]
    c = c[c["flow"] == flow].sort_values("time_s", kind="stable")
    t, w, ss = c["time_s"].to_numpy(), c["cwnd"].to_numpy() / mss, c["ssthresh"].to_numpy() / mss
    end = float(t[-1])
    held = np.diff(np.append(t, end))
    after = t >= since_s
    slopes, starts, peaks, lengths = [], [], [], []
    i = 0
    while i < len(w) - 1:
        j = i
        while j + 1 < len(w) and w[j + 1] >= w[j]:
            j += 1
        if t[i] >= since_s and t[j] - t[i] > 0.1 and w[i] >= ss[i]:
            slopes.append((w[j] - w[i]) / (t[j] - t[i]))
            starts.append(w[i])
            peaks.append(w[j])
            lengths.append(t[j] - t[i])
        i = j + 1
    return {
        "mean_cwnd": float(np.sum(w[after] * held[after]) / np.sum(held[after])),
        "climbs": len(slopes),
        "growth": float(np.median(slopes)),
        "start": float(np.mean(starts)),
        "peak": float(np.mean(peaks)),
        "length_s": float(np.mean(lengths)),
    }


def exp_fq_codel_windows(args) -> None:
    """FQ-CoDel's queue in steady state, seed 1, `--duration` (30 s), ns-3's sender
    `--variant`, the DRR quantum 1,514 B in both (ns3_aqm.py's `--ns3-fq-quantum 1514B`), and
    quench with and without ns-3's 1-packet device queue: the bottleneck's time-mean backlog
    from 3 s and the share of time at each backlog, and per flow the time-mean window, fast
    retransmissions and congestion-avoidance climbs (window_climbs)."""
    import ns3_aqm

    dur = float(args.duration.rstrip("s"))
    spec = ns3_aqm.scenario("tcp", "fq_codel", args.duration, "matched", {})
    spec["seed"] = 1
    spec["record"]["cwnd"] = True
    plan = with_plan(ns3.translate(spec), variant_of(args))
    plan["experiment_cpp"] = [*plan.get("experiment_cpp", []), (FQ_QUANTUM_CPP, [])]
    plan["links"][0]["qdisc"]["experiment_quantum"] = 1514
    with_device = copy.deepcopy(spec)
    with_device["links"][0]["device_queue"] = 1
    runs = [
        ("quench", run_scenario(spec, progress=False)),
        ("quench, device_queue = 1", run_scenario(with_device, progress=False)),
        ("ns-3", ns3.to_results(plan, ns3.run_plan(plan))),
    ]
    print(f"\nFQ-CoDel, 4 NewReno, seed 1, {args.duration}, quantum 1,514 B, ns-3 sender {args.variant}")
    for name, r in runs:
        mean, share = steady_backlog(r, 3.0, dur)
        b = r.link("r1->r2")
        print(f"\n{name}: utilization {float(b['utilization']):.4f}, drops {int(b['dropped_packets'])}")
        print(f"  backlog from 3 s: mean {mean:.2f} packets; share of time at 0..12:")
        print("  " + " ".join(f"{k}:{x:.3f}" for k, x in enumerate(share[:13])))
        print("  | flow | mean cwnd | fast retransmits | climbs | growth seg/s | start | peak | length s |")
        for k in range(len(r.flows)):
            c = window_climbs(r, k, 3.0)
            fr = int(r.flows["fast_retransmits"].iloc[k])
            print(
                f"  | {k} | {c['mean_cwnd']:.2f} | {fr} | {c['climbs']} | {c['growth']:.2f} | {c['start']:.2f} "
                f"| {c['peak']:.2f} | {c['length_s']:.3f} |"
            )


def exp_cubic_ecn_trace(args) -> None:
    """The window of each flow around its timeout at the end of slow start, CUBIC on RED with
    ECN (tests/test_ns3.py's case, 10 s), from both simulators' cwnd tables: every row where
    cwnd or ssthresh changes between 1.4 and 2.2 s for flow 0, and the times cwnd = 1 MSS."""
    net = dumbbell(
        4,
        rate="10Mbps",
        rtt="50ms",
        cc={"kind": "cubic", "initial_window": 10, "abc_limit": 1},
        tcp={**MATCHED_TCP, "ecn": True},
        tcp_profile="rfc",
    )
    net.record(queues=False, drops=False, cwnd=True, rtt=False)
    spec = net.to_dict(args.duration)
    spec["links"][0]["qdisc"] = {**RED, "signal": "mark"}
    for name, res in (("quench", run_scenario(spec, progress=False)), ("ns-3", ns3.run_ns3(spec))):
        cw = res.tables["cwnd"]
        print(f"\n{name}: utilization {float(res.link('r1->r2')['utilization']):.4f}")
        for k in range(4):
            c = cw[cw["flow"] == k]
            print(f"  flow {k}: cwnd = 1 MSS at", [round(t, 3) for t in c[c["cwnd"] <= 1460]["time_s"].tolist()[:4]])
        c = cw[(cw["flow"] == 0) & (cw["time_s"] > 1.4) & (cw["time_s"] < 2.2)]
        print(c[["time_s", "cwnd", "ssthresh"]].drop_duplicates(["cwnd", "ssthresh"]).head(8).to_string(index=False))


def exp_cubic_ecn(args) -> None:
    """CUBIC on RED with ECN (tests/test_ns3.py): the RED limit 60 -> 1000 packets in both
    (no overflow drops), and ns-3's classic recovery."""
    base = matched("cubic", 4, args.duration, ecn=True)
    base["links"][0]["qdisc"] = {**RED, "signal": "mark"}
    big = copy.deepcopy(base)
    big["links"][0]["qdisc"]["limit"] = "1000p"
    # RED marks instead of dropping above max_th too (ns-3 UseHardDrop off): no loss at all.
    soft = copy.deepcopy(base)
    soft["links"][0]["qdisc"]["forced"] = "mark"
    soft["links"][0]["qdisc"]["limit"] = "1000p"
    # CUBIC's reduction set to NewReno's (beta 0.5).
    half = copy.deepcopy(base)
    for f in half["flows"]:
        f["cc"]["beta"] = 0.5
    rows = {}
    for name, spec in (
        ("", base),
        (", RED limit 1000p", big),
        (", forced marks, limit 1000p", soft),
        (", beta 0.5", half),
    ):
        if args.only and name not in args.only:
            continue
        ss = seeds(spec, args.seeds)
        rows[f"quench{name}"] = quench_runs(ss)
        rows[f"ns-3{name}"] = ns3_runs(ss)
        if not name:
            rows["ns-3 classic recovery"] = ns3_runs(ss, defaults=CLASSIC)
    report(f"CUBIC + RED/ECN, 4 flows, {args.duration}, seeds {args.seeds}", rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "experiment",
        choices=(
            "ssthresh",
            "default_tcp",
            "codel_tcp",
            "cubic",
            "cubic_factors",
            "cubic_ss",
            "cubic_ecn",
            "cubic_ecn_trace",
            "cubic_ca",
            "cubic_repeats",
            "cubic_rules",
            "vegas",
            "vegas_drops",
            "pie_profile",
            "pie_start",
            "fq_codel_windows",
        ),
    )
    p.add_argument("--flows", type=int, default=4)
    p.add_argument("--cc", default="cubic")
    p.add_argument(
        "--aqm", default="pie", choices=("pie", "fq_pie", "codel", "fq_codel"), help="pie_profile, pie_start"
    )
    p.add_argument("--only", action="append", help="cubic_ecn, cubic_ca: run only these variants")
    p.add_argument("--rfc-pipe", action="store_true", help="pie_profile, pie_start: ns-3's PRR on RFC 6675's pipe")
    p.add_argument(
        "--variant",
        choices=tuple(VARIANTS),
        default="flightsize",
        help="pie_profile, pie_start, fq_codel_windows: ns-3's sender (as ns3_aqm.py's --ns3-variant)",
    )
    p.add_argument("--delays", type=int, action="append", help="vegas_drops: bottleneck delays, ms")
    p.add_argument("--access-rate", help="vegas_drops: the access links' rate in both simulators (100Mbps)")
    p.add_argument(
        "--quench-framing",
        help="vegas_drops: bytes quench's links add to each packet on the wire (ns-3's PPP header: 2B)",
    )
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--duration", default="30s")
    args = p.parse_args()
    if args.experiment == "ssthresh":
        exp_ssthresh(args)
    elif args.experiment == "default_tcp":
        exp_default_tcp(args, "scenarios/dumbbell.toml")
    elif args.experiment == "codel_tcp":
        exp_default_tcp(args, "scenarios/dumbbell_codel.toml")
    elif args.experiment == "cubic":
        exp_cubic(args)
    elif args.experiment == "cubic_factors":
        exp_cubic_factors(args)
    elif args.experiment == "cubic_ss":
        exp_cubic_ss(args)
    elif args.experiment == "cubic_ecn_trace":
        exp_cubic_ecn_trace(args)
    elif args.experiment == "cubic_ca":
        exp_cubic_ca(args)
    elif args.experiment == "cubic_repeats":
        exp_cubic_repeats(args)
    elif args.experiment == "cubic_rules":
        exp_cubic_rules(args)
    elif args.experiment == "vegas":
        exp_vegas(args)
    elif args.experiment == "vegas_drops":
        exp_vegas_drops(args)
    elif args.experiment == "pie_profile":
        exp_pie_profile(args)
    elif args.experiment == "pie_start":
        exp_pie_start(args)
    elif args.experiment == "fq_codel_windows":
        exp_fq_codel_windows(args)
    else:
        exp_cubic_ecn(args)


if __name__ == "__main__":
    main()
