"""Inside ns-3's TcpBbr, ACK by ACK: what each rate sample held and what BBR did with it.

    QUENCH_NS3_VENV=... .venv/bin/python benchmarks/ns3_bbr_trace.py SCENARIO.toml [--seed 1]
        [--duration 3s] [--set KEY=VALUE ...] [--rows FLOW --from 0.3 --to 1.4] [--linux-losses]
        [--linux-rate-sample] [--linux-recovery-exit]

Runs the scenario in ns-3 (through quench's translator) with every `bbr` flow's TcpBbr replaced
by TcpBbrTraced, a subclass that by default changes nothing and logs, for each ACK that reaches
`CongControl`, the rate sample (`TcpRateSample`: delivered, interval, prior delivered, acked
and SACKed bytes, bytes lost), BBR's private state before and after (packet conservation,
round count, the delivered count that ends the round, mode, target window, the bandwidth
filter's maximum and RTprop) and the socket's bytes marked lost (`TcpTxBuffer::GetLost`).
Private and protected members are read through member pointers that an explicit template
instantiation may name ([temp.explicit]), as quench's ns-3 child reads RED's average. Prints,
per flow (in the order of their first ACK), when it left STARTUP and with what bandwidth
estimate, then each fast recovery: its ACKs, how many carried an invalid sample
(`m_delivered < 0` or a zero interval: `UpdateBottleneckBandwidth` returns before
`UpdateRound`), the round starts inside it, when packet conservation ended and the window's
range; `--rows FLOW` prints that flow's per-ACK rows between `--from` and `--to` too.

Three switches each give one of ns-3's rules Linux's (each is also an attribute of TcpBbrTraced, for
`benchmarks/ns3_bbr.py --ns3-traced-bbr --ns3 quench_exp::TcpBbrTraced::NAME=bool:true`):
- `LinuxLosses` (`--linux-losses`): a sample's losses are the rise of the bytes marked lost
  (Linux `tp->lost - prior_lost`), where TcpSocketBase passes the absolute change of
  `GetLost()`, so that acknowledging a lost segment's repair also counts as a loss;
- `LinuxRateSample` (`--linux-rate-sample`): the socket's rate sample starts afresh on every
  ACK (TcpRateLinuxPerAck below), as Linux's lives on `tcp_ack`'s stack;
- `LinuxRecoveryExit` (`--linux-recovery-exit`): leaving fast recovery keeps BBR's window, at
  least the one saved on entry (Linux's `tcp_end_cwnd_reduction` skips a `cong_control`
  module), where TcpSocketBase::ProcessAck sets it to ssthresh.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import defaultdict
from pathlib import Path

from quench import ns3
from quench.scenario import load_scenario

TRACED_BBR_CPP = r"""
#include "ns3/tcp-bbr.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/tcp-rate-ops.h"
#include "ns3/simulator.h"
#include "ns3/node-list.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/object-vector.h"
#include "ns3/boolean.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
// Private and protected members, read through quench_ns3::MemberOf (python/quench/ns3_child.py,
// compiled before any experiment's code): each tag and its explicit instantiation must live in
// quench_ns3, where the friend Member that hands the member pointer out is defined.
namespace quench_ns3
{
#define QUENCH_MEMBER(TAG, CLASS, TYPE, FIELD)                                                  \
    struct TAG                                                                                  \
    {                                                                                           \
        typedef TYPE CLASS::*type;                                                              \
        friend type Member(TAG);                                                                \
    };                                                                                          \
    template struct MemberOf<TAG, &CLASS::FIELD>;
QUENCH_MEMBER(BbrConservation, ns3::TcpBbr, bool, m_packetConservation)
QUENCH_MEMBER(BbrRounds, ns3::TcpBbr, uint32_t, m_roundCount)
QUENCH_MEMBER(BbrNextRound, ns3::TcpBbr, uint32_t, m_nextRoundDelivered)
QUENCH_MEMBER(BbrMode, ns3::TcpBbr, ns3::TcpBbr::BbrMode_t, m_state)
QUENCH_MEMBER(BbrTarget, ns3::TcpBbr, uint32_t, m_targetCWnd)
QUENCH_MEMBER(BbrPriorCwnd, ns3::TcpBbr, uint32_t, m_priorCwnd)
QUENCH_MEMBER(BbrMaxBw, ns3::TcpBbr, ns3::TcpBbr::MaxBandwidthFilter_t, m_maxBwFilter)
QUENCH_MEMBER(BbrMinRtt, ns3::TcpBbr, ns3::TracedValue<ns3::Time>, m_minRtt)
QUENCH_MEMBER(SocketTcb, ns3::TcpSocketBase, ns3::Ptr<ns3::TcpSocketState>, m_tcb)
QUENCH_MEMBER(SocketRateOps, ns3::TcpSocketBase, ns3::Ptr<ns3::TcpRateOps>, m_rateOps)
QUENCH_MEMBER(RateSampleOf, ns3::TcpRateLinux, ns3::TcpRateOps::TcpRateSample, m_rateSample)
}

namespace quench_exp
{
namespace field = quench_ns3; // the tags above; Member is found through them

// Linux's rate sample lives on tcp_ack's stack (`struct rate_sample rs = { .prior_delivered =
// 0 }`): every ACK starts a fresh one, takes its send and ACK phases from the first packet it
// delivers (tcp_rate_skb_delivered), and an ACK that delivers no timed packet gives an invalid
// sample (tcp_rate_gen: `!rs->prior_mstamp`). ns-3's TcpRateLinux keeps one sample across ACKs
// (m_rateSample) and renews it only from a packet sent after the one it holds, so a later ACK
// of the same flight reuses the phases measured at an earlier one, and an interval found
// shorter than the minimum RTT keeps the sample invalid (m_priorTime = 0) until a later flight
// is delivered. This subclass starts each ACK's sample afresh and changes nothing else.
class TcpRateLinuxPerAck : public ns3::TcpRateLinux
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("quench_exp::TcpRateLinuxPerAck")
                                     .SetParent<ns3::TcpRateLinux>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<TcpRateLinuxPerAck>();
        return tid;
    }
    void SkbDelivered(ns3::TcpTxItem* skb) override
    {
        if (m_ackStarts)
        {
            Fresh();
            m_ackStarts = false;
        }
        ns3::TcpRateLinux::SkbDelivered(skb);
    }
    const ns3::TcpRateOps::TcpRateSample& GenerateSample(uint32_t delivered,
                                                         uint32_t lost,
                                                         bool is_sack_reneg,
                                                         uint32_t priorInFlight,
                                                         const ns3::Time& minRtt) override
    {
        if (m_ackStarts)
        {
            Fresh(); // this ACK delivered no timed packet
        }
        m_ackStarts = true;
        return ns3::TcpRateLinux::GenerateSample(delivered, lost, is_sack_reneg, priorInFlight, minRtt);
    }

  private:
    void Fresh() { this->*Member(field::RateSampleOf{}) = ns3::TcpRateOps::TcpRateSample(); }
    bool m_ackStarts = true;
};

// The socket that owns `tcb`, found among every node's TCP sockets.
inline ns3::Ptr<ns3::TcpSocketBase> SocketOf(ns3::Ptr<ns3::TcpSocketState> tcb)
{
    for (auto node = ns3::NodeList::Begin(); node != ns3::NodeList::End(); ++node)
    {
        auto tcp = (*node)->GetObject<ns3::TcpL4Protocol>();
        if (!tcp)
        {
            continue;
        }
        ns3::ObjectVectorValue sockets;
        tcp->GetAttribute("SocketList", sockets);
        for (auto s = sockets.Begin(); s != sockets.End(); ++s)
        {
            auto sock = ns3::DynamicCast<ns3::TcpSocketBase>(s->second);
            if (sock && ns3::PeekPointer(sock)->*Member(field::SocketTcb{}) == tcb)
            {
                return sock;
            }
        }
    }
    return nullptr;
}

class TcpBbrTraced : public ns3::TcpBbr
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid =
            ns3::TypeId("quench_exp::TcpBbrTraced")
                .SetParent<ns3::TcpBbr>()
                .SetGroupName("Internet")
                .AddConstructor<TcpBbrTraced>()
                .AddAttribute("LinuxLosses",
                              "a sample's losses are the rise of the bytes marked lost (Linux's "
                              "tp->lost - prior_lost), not the absolute change of GetLost()",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpBbrTraced::m_linuxLosses),
                              ns3::MakeBooleanChecker())
                .AddAttribute("LinuxRateSample",
                              "the socket's rate samples start afresh on every ACK, as Linux's "
                              "(TcpRateLinuxPerAck)",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpBbrTraced::m_linuxRateSample),
                              ns3::MakeBooleanChecker())
                .AddAttribute("LinuxRecoveryExit",
                              "leaving fast recovery keeps BBR's window, at least the one saved "
                              "on entry (Linux), where TcpSocketBase sets it to ssthresh",
                              ns3::BooleanValue(false),
                              ns3::MakeBooleanAccessor(&TcpBbrTraced::m_linuxRecoveryExit),
                              ns3::MakeBooleanChecker());
        return tid;
    }
    TcpBbrTraced() = default;
    TcpBbrTraced(const TcpBbrTraced&) = default;
    std::string GetName() const override { return "TcpBbrTraced"; }
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<TcpBbrTraced>(this); }

    void CongControl(ns3::Ptr<ns3::TcpSocketState> tcb,
                     const ns3::TcpRateOps::TcpRateConnection& rc,
                     const ns3::TcpRateOps::TcpRateSample& given) override
    {
        ns3::TcpRateOps::TcpRateSample rs = given;
        if (!m_txBuffer)
        {
            m_txBuffer = SocketOf(tcb)->GetTxBuffer();
        }
        uint32_t lost = m_txBuffer->GetLost();
        uint32_t rise = lost > m_lastLost ? lost - m_lastLost : 0;
        m_lastLost = lost;
        if (m_linuxLosses)
        {
            // TcpSocketBase::ReceivedAck passes |GetLost() after - before|: a lost segment
            // SACKed or acknowledged lowers GetLost() and counts as a loss too. Linux counts
            // only segments newly marked. The rise is taken over the whole ACK, so an ACK that
            // both marks and repairs counts the difference only.
            rs.m_bytesLoss = rise;
        }
        if (m_linuxRecoveryExit && m_lastState == ns3::TcpSocketState::CA_RECOVERY &&
            tcb->m_congState == ns3::TcpSocketState::CA_OPEN)
        {
            // TcpSocketBase::ProcessAck has just set cwnd = ssthresh: TcpBbr's initial 2^32 - 1
            // bytes until STARTUP ends, then the one-BDP window CheckDrain set. Linux skips
            // that step for a cong_control module (tcp_end_cwnd_reduction) and BBR takes
            // max(cwnd, prior_cwnd) (bbr_set_cwnd_to_recover_or_restore).
            tcb->m_cWnd = std::max(m_lastCwnd, this->*Member(field::BbrPriorCwnd{}));
        }
        m_lastState = tcb->m_congState.Get();
        uint32_t cwndBefore = tcb->m_cWnd.Get();
        bool conservationBefore = this->*Member(field::BbrConservation{});
        uint32_t roundsBefore = this->*Member(field::BbrRounds{});
        ns3::TcpBbr::CongControl(tcb, rc, rs);
        m_lastCwnd = tcb->m_cWnd.Get();
        unsigned long long maxBw = (this->*Member(field::BbrMaxBw{})).GetBest().GetBitRate();
        double minRtt = (this->*Member(field::BbrMinRtt{})).Get().GetSeconds();
        Log("A %.9f %p %d %u %u %u %d %.9f %u %u %u %d %d %u %u %u %d %u %u %u %u",
            ns3::Simulator::Now().GetSeconds(), (const void*)this, int(tcb->m_congState.Get()),
            cwndBefore, tcb->m_cWnd.Get(), tcb->m_bytesInFlight.Get(), rs.m_delivered,
            rs.m_interval.GetSeconds(), rs.m_priorDelivered, rs.m_ackedSacked, rs.m_bytesLoss,
            int(conservationBefore), int(this->*Member(field::BbrConservation{})), roundsBefore,
            this->*Member(field::BbrRounds{}), this->*Member(field::BbrNextRound{}),
            int(this->*Member(field::BbrMode{})), this->*Member(field::BbrTarget{}), lost, rise,
            tcb->m_ssThresh.Get());
        // The row ends in a second call: one fprintf given more arguments misreads the last
        // ones under cppyy's JIT.
        Log(" %llu %.9f\n", maxBw, minRtt);
    }

    void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                            const ns3::TcpSocketState::TcpCongState_t s) override
    {
        if (m_linuxRateSample && !m_rateSwapped && s == ns3::TcpSocketState::CA_OPEN)
        {
            // The handshake has just completed: no data has been sent, so the socket's rate
            // state is still empty and can be replaced.
            ns3::PeekPointer(SocketOf(tcb))->*Member(field::SocketRateOps{}) =
                ns3::CreateObject<TcpRateLinuxPerAck>();
            m_rateSwapped = true;
        }
        ns3::TcpBbr::CongestionStateSet(tcb, s);
        if (m_txBuffer && s == ns3::TcpSocketState::CA_LOSS)
        {
            // A timeout marks everything outstanding lost (TcpTxBuffer::SetSentListLost)
            // without an ACK: that rise is no ACK's loss.
            m_lastLost = m_txBuffer->GetLost();
        }
        Log("S %.9f %p %d %u\n", ns3::Simulator::Now().GetSeconds(), (const void*)this, int(s),
            tcb->m_cWnd.Get());
    }

  private:
    template <typename... A>
    static void Log(const char* format, A... a)
    {
        const char* path = std::getenv("QUENCH_EXP_LOG");
        if (!path)
        {
            return;
        }
        if (FILE* f = std::fopen(path, "a"))
        {
            std::fprintf(f, format, a...);
            std::fclose(f);
        }
    }

    bool m_linuxLosses = false;
    bool m_linuxRateSample = false;
    bool m_rateSwapped = false;
    bool m_linuxRecoveryExit = false;
    ns3::TcpSocketState::TcpCongState_t m_lastState = ns3::TcpSocketState::CA_OPEN;
    uint32_t m_lastCwnd = 0;
    ns3::Ptr<ns3::TcpTxBuffer> m_txBuffer;
    uint32_t m_lastLost = 0;
};
}
"""
TRACED_BBR = {
    "experiment_cpp": [(TRACED_BBR_CPP, ["quench_exp.TcpBbrTraced", "quench_exp.TcpRateLinuxPerAck"])],
    "tcp_types": {"bbr": "quench_exp::TcpBbrTraced"},
}
# TcpSocketState::TcpCongState_t in its declaration order (the rows' `state`; their `mode` is
# TcpBbr::BbrMode_t: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT).
CONG_STATES = ("open", "disorder", "cwr", "recovery", "loss")
ACK_FIELDS = (
    "time_s",
    "bbr",
    "state",
    "cwnd_before",
    "cwnd_after",
    "in_flight",
    "delivered",
    "interval_s",
    "prior_delivered",
    "acked_sacked",
    "bytes_loss",
    "conservation_before",
    "conservation_after",
    "rounds_before",
    "rounds_after",
    "next_round_delivered",
    "mode",
    "target_cwnd",
    "lost_out",
    "lost_rise",
    "ssthresh",
    "max_bw_bps",
    "min_rtt_s",
)


def read_log(path: str) -> tuple[dict[str, list[dict]], dict[str, list[tuple[float, str]]]]:
    """Per TcpBbr object (in order of first appearance): its ACK rows and its state changes."""
    acks: dict[str, list[dict]] = defaultdict(list)
    states: dict[str, list[tuple[float, str]]] = defaultdict(list)
    with open(path) as f:
        for line in f:
            kind, *rest = line.split()
            if kind == "A":
                row = dict(zip(ACK_FIELDS, rest))
                for k, v in row.items():
                    if k != "bbr":
                        row[k] = float(v) if k.endswith("_s") else int(v)
                acks[row["bbr"]].append(row)
            else:
                states[rest[1]].append((float(rest[0]), CONG_STATES[int(rest[2])]))
    return acks, states


def recoveries(rows: list[dict]) -> list[list[dict]]:
    """The flow's ACK rows grouped into runs of consecutive ACKs in CA_RECOVERY."""
    episodes, current = [], []
    for r in rows:
        if CONG_STATES[r["state"]] == "recovery":
            current.append(r)
        elif current:
            episodes.append(current)
            current = []
    if current:
        episodes.append(current)
    return episodes


def recovery_exits(rows: list[dict]) -> list[dict]:
    """The ACK rows that found the flow just out of fast recovery (the previous ACK's state
    CA_RECOVERY, this one's CA_OPEN): `cwnd_before` is the window the socket handed BBR."""
    return [
        r
        for prev, r in zip(rows, rows[1:])
        if CONG_STATES[prev["state"]] == "recovery" and CONG_STATES[r["state"]] == "open"
    ]


def startup_exit(rows: list[dict]) -> str:
    """When the flow left STARTUP (TcpBbr's mode 0) and the bandwidth estimate and RTprop it
    left with: an estimate far below the flow's share sets how long PROBE_BW takes to grow it."""
    left = next((r for r in rows if r["mode"] != 0), None)
    if left is None:
        return "still in STARTUP"
    return (
        f"left STARTUP at {left['time_s']:.3f} s with a bandwidth estimate of "
        f"{left['max_bw_bps'] / 1e6:.2f} Mb/s, RTprop {left['min_rtt_s'] * 1e3:.3f} ms"
    )


def describe(episode: list[dict], segment: int) -> str:
    """One recovery: ACKs, invalid samples, round starts, when conservation ended, the window."""
    invalid = sum(1 for r in episode if r["delivered"] < 0 or r["interval_s"] == 0)
    rounds = episode[-1]["rounds_after"] - episode[0]["rounds_before"]
    ended = next((r["time_s"] for r in episode if r["conservation_before"] and not r["conservation_after"]), None)
    held = sum(1 for r in episode if r["conservation_after"])
    w = [r["cwnd_after"] / segment for r in episode]
    return (
        f"{episode[0]['time_s']:.3f}-{episode[-1]['time_s']:.3f} s: {len(episode)} ACKs, "
        f"{invalid} invalid samples, {rounds} round starts, conservation after {held} ACKs"
        f"{'' if ended is None else f', ended at {ended:.3f} s'}; cwnd {min(w):.0f}-{max(w):.0f} segments"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", type=Path)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--duration", help="override the scenario's duration (e.g. 2s)")
    p.add_argument("--set", action="append", default=[], help="KEY=VALUE in the scenario, as ns3_bbr.py's --set")
    p.add_argument(
        "--linux-losses", action="store_true", help="TcpBbrTraced's LinuxLosses: a sample's losses as Linux counts them"
    )
    p.add_argument(
        "--linux-rate-sample",
        action="store_true",
        help="TcpBbrTraced's LinuxRateSample: each ACK's rate sample starts afresh, as Linux's",
    )
    p.add_argument(
        "--linux-recovery-exit",
        action="store_true",
        help="TcpBbrTraced's LinuxRecoveryExit: leaving fast recovery keeps BBR's window, as Linux",
    )
    p.add_argument("--rows", type=int, help="print this flow's (index among the BBR flows) per-ACK rows")
    p.add_argument("--from", dest="t0", type=float, default=0.0)
    p.add_argument("--to", dest="t1", type=float, default=float("inf"))
    args = p.parse_args()
    spec = load_scenario(args.scenario)
    spec["seed"] = args.seed
    if args.duration:
        spec["duration"] = args.duration
    from ns3_bbr import parse_value, set_key  # imported here: ns3_bbr imports this module

    for item in args.set:
        key, _, value = item.partition("=")
        set_key(spec, key, parse_value(value))
    plan = ns3.translate(spec)
    plan.update(TRACED_BBR)
    if args.linux_losses:
        plan["defaults"]["quench_exp::TcpBbrTraced::LinuxLosses"] = ("bool", True)
    if args.linux_rate_sample:
        plan["defaults"]["quench_exp::TcpBbrTraced::LinuxRateSample"] = ("bool", True)
    if args.linux_recovery_exit:
        plan["defaults"]["quench_exp::TcpBbrTraced::LinuxRecoveryExit"] = ("bool", True)
    segment = int(plan["resolved"]["flows"][0]["tcp"]["mss"])
    with tempfile.TemporaryDirectory(prefix="quench-bbr-trace-") as tmp:
        os.environ["QUENCH_EXP_LOG"] = f"{tmp}/log.txt"
        ns3.run_plans([plan])
        acks, states = read_log(f"{tmp}/log.txt")
    print(f"ns-3 TcpBbr, {args.scenario} seed {args.seed}: fast recoveries per BBR flow")
    for i, (bbr, rows) in enumerate(acks.items()):
        print(f"\nflow {i} ({len(rows)} ACKs; state changes: {len(states[bbr])})")
        print("  " + startup_exit(rows))
        for episode in recoveries(rows):
            print("  " + describe(episode, segment))
        exits = recovery_exits(rows)
        if exits:
            at_ssthresh = sum(1 for r in exits if r["cwnd_before"] == r["ssthresh"])
            print(
                f"  {len(exits)} exits from fast recovery: the socket set cwnd = ssthresh at {at_ssthresh}; "
                f"windows handed to BBR {sorted({round(r['cwnd_before'] / segment, 1) for r in exits})} segments, "
                f"targets {min(r['target_cwnd'] for r in exits) / segment:.0f}-"
                f"{max(r['target_cwnd'] for r in exits) / segment:.0f}"
            )
        if args.rows == i:
            print("  " + " ".join(ACK_FIELDS[2:]))
            for r in rows:
                if args.t0 <= r["time_s"] <= args.t1:
                    print(f"  {r['time_s']:.6f} " + " ".join(str(r[k]) for k in ACK_FIELDS[2:]))


if __name__ == "__main__":
    main()
