"""Random loss on the wire (`loss`, ns-3's RateErrorModel) against ns-3: the experiments behind
docs/validation.md, "Random loss against ns-3".

    QUENCH_NS3_VENV=... .venv/bin/python benchmarks/ns3_loss.py EXPERIMENT [--seeds N] [--seed S]

The scenario is scenarios/ns3_loss.toml (four NewReno flows with timestamps, delayed ACKs, SACK
and PRR through a 10 Mb/s, 50 ms dumbbell losing 1 % of r1->r2's packets). Experiments:

- `trace`: one seed in ns-3 with every sender socket and every point-to-point device traced
  (compiled C++ in the ns-3 child, LossTracer below): each flow's congestion state changes,
  RTO, segments sent and ACKs received, and every packet a receive error model dropped (link,
  flow, sequence number, payload). Prints per flow the drops, the retransmissions dropped, the
  timeouts and, for the first timeouts of the worst flow, what was sent, lost and acknowledged
  before each.
- `mathis`: the Mathis et al. throughput MSS/RTT * sqrt(3/2)/sqrt(p) at the scenario's figures.
"""

from __future__ import annotations

import argparse
import collections
import copy
import math
import os
import statistics
import tempfile

from ns3_cpp import OPS_CPP

from quench import ns3
from quench.scenario import load_scenario, run_scenario

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "ns3_loss.toml")

# Traces every TCP socket (hooked 5 ms into the run: the flows' applications create their
# sockets at 0-3 ms) and every point-to-point device's PhyRxDrop (where a ReceiveErrorModel's
# drops surface), one CSV row per event, into the file named by QUENCH_LOSS_LOG. Arm() is what
# the child calls for the plan's `experiment_cpp` registration (it calls GetTypeId() on the
# registered name); it schedules the hooking and the flush for this run.
LOSS_TRACER_CPP = r"""
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-header.h"
#include "ns3/ipv4-header.h"
#include "ns3/ppp-header.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/config.h"
#include "ns3/simulator.h"
#include "ns3/node.h"
#include <cstdio>
#include <cstdlib>
namespace quench_loss
{
std::FILE* out = nullptr;

struct SockHook
{
    uint32_t node;
    void OnTx(ns3::Ptr<const ns3::Packet> p, const ns3::TcpHeader& h, ns3::Ptr<const ns3::TcpSocketBase>)
    {
        if (p->GetSize() == 0) return;
        std::fprintf(out, "tx,%.9f,%u,%u,%u\n", ns3::Simulator::Now().GetSeconds(), node,
                     h.GetSequenceNumber().GetValue(), p->GetSize());
    }
    void OnRx(ns3::Ptr<const ns3::Packet> p, const ns3::TcpHeader& h, ns3::Ptr<const ns3::TcpSocketBase>)
    {
        if (!(h.GetFlags() & ns3::TcpHeader::ACK) || p->GetSize() != 0) return;
        std::fprintf(out, "ack,%.9f,%u,%u,%d\n", ns3::Simulator::Now().GetSeconds(), node,
                     h.GetAckNumber().GetValue(), h.HasOption(ns3::TcpOption::SACK) ? 1 : 0);
    }
    void OnState(ns3::TcpSocketState::TcpCongState_t a, ns3::TcpSocketState::TcpCongState_t b)
    {
        std::fprintf(out, "state,%.9f,%u,%d,%d\n", ns3::Simulator::Now().GetSeconds(), node, int(a), int(b));
    }
    void OnRto(ns3::Time, ns3::Time b)
    {
        std::fprintf(out, "rto,%.9f,%u,%.6f,0\n", ns3::Simulator::Now().GetSeconds(), node, b.GetSeconds());
    }
    void OnCwnd(uint32_t, uint32_t b)
    {
        std::fprintf(out, "cwnd,%.9f,%u,%u,0\n", ns3::Simulator::Now().GetSeconds(), node, b);
    }
    void OnSsth(uint32_t, uint32_t b)
    {
        std::fprintf(out, "ssth,%.9f,%u,%u,0\n", ns3::Simulator::Now().GetSeconds(), node, b);
    }
};

struct DevHook
{
    uint32_t node;  // the receiving node
    void OnDrop(ns3::Ptr<const ns3::Packet> p)
    {
        ns3::Ptr<ns3::Packet> c = p->Copy();
        ns3::PppHeader ppp;
        ns3::Ipv4Header ip;
        ns3::TcpHeader tcp;
        c->RemoveHeader(ppp);
        c->RemoveHeader(ip);
        if (ip.GetProtocol() != 6)
        {
            std::fprintf(out, "drop,%.9f,%u,0,0,0,0,%u\n", ns3::Simulator::Now().GetSeconds(), node, c->GetSize());
            return;
        }
        c->RemoveHeader(tcp);
        std::fprintf(out, "drop,%.9f,%u,%u,%u,%u,%u,%u\n", ns3::Simulator::Now().GetSeconds(), node,
                     tcp.GetSourcePort(), tcp.GetDestinationPort(), tcp.GetSequenceNumber().GetValue(),
                     tcp.GetAckNumber().GetValue(), c->GetSize());
    }
};

void HookAll()
{
    auto socks = ns3::Config::LookupMatches("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*");
    for (uint32_t i = 0; i < socks.GetN(); ++i)
    {
        auto s = ns3::DynamicCast<ns3::TcpSocketBase>(socks.Get(i));
        if (!s) continue;
        auto* h = new SockHook{s->GetNode()->GetId()};
        s->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&SockHook::OnTx, h));
        s->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&SockHook::OnRx, h));
        s->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&SockHook::OnState, h));
        s->TraceConnectWithoutContext("RTO", ns3::MakeCallback(&SockHook::OnRto, h));
        s->TraceConnectWithoutContext("CongestionWindow", ns3::MakeCallback(&SockHook::OnCwnd, h));
        s->TraceConnectWithoutContext("SlowStartThreshold", ns3::MakeCallback(&SockHook::OnSsth, h));
    }
    auto devs = ns3::Config::LookupMatches("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice");
    for (uint32_t i = 0; i < devs.GetN(); ++i)
    {
        auto d = ns3::DynamicCast<ns3::PointToPointNetDevice>(devs.Get(i));
        auto* h = new DevHook{d->GetNode()->GetId()};
        d->TraceConnectWithoutContext("PhyRxDrop", ns3::MakeCallback(&DevHook::OnDrop, h));
    }
}

void Flush()
{
    if (out) std::fclose(out);
    out = nullptr;
}

struct Arm
{
    static int GetTypeId()
    {
        const char* path = std::getenv("QUENCH_LOSS_LOG");
        out = std::fopen(path, "w");
        ns3::Simulator::Schedule(ns3::MilliSeconds(5), &HookAll);
        ns3::Simulator::ScheduleDestroy(&Flush);
        return 0;
    }
};
}
"""
TRACER = {"experiment_cpp": [(LOSS_TRACER_CPP, ["quench_loss.Arm"])]}

# ns-3's NewReno with one rule changed: the ACK that ends the loss state (CA_LOSS -> CA_OPEN,
# every retransmission of the timeout acknowledged) grows the window as slow start would (RFC
# 5681 section 3.1: cwnd += SMSS per ACK while cwnd < ssthresh), as quench's sender does;
# ns-3's socket calls neither PktsAcked's growth nor IncreaseWindow for that ACK, which the trace
# shows as a window left at one segment. CongestionStateSet is called before the socket stores
# the new state, so the old one is still in the TcpSocketState. The same over NewReno halving
# FlightSize (ns3_experiments.FLIGHTSIZE's class, which that plan compiles first).
LOSS_EXIT_CPP = (
    OPS_CPP
    + r"""
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-state.h"
namespace quench_exp
{
#define QUENCH_LOSS_EXIT_GROW(NAME, BASE)                                                              \
    class NAME : public BASE                                                                           \
    {                                                                                                  \
      public:                                                                                          \
        QUENCH_EXP_OPS(NAME, BASE, TcpCongestionOps)                                                   \
        void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,                                     \
                                const ns3::TcpSocketState::TcpCongState_t next) override               \
        {                                                                                              \
            if (tcb->m_congState == ns3::TcpSocketState::CA_LOSS && next == ns3::TcpSocketState::CA_OPEN && \
                tcb->m_cWnd < tcb->m_ssThresh)                                                         \
            {                                                                                          \
                ++s_grown;                                                                             \
                tcb->m_cWnd = tcb->m_cWnd + tcb->m_segmentSize;                                        \
            }                                                                                          \
            BASE::CongestionStateSet(tcb, next);                                                       \
        }                                                                                              \
        static uint64_t s_grown;                                                                       \
    };                                                                                                 \
    uint64_t NAME::s_grown = 0;
QUENCH_LOSS_EXIT_GROW(TcpNewRenoLossExit, ns3::TcpNewReno)
}
"""
)
LOSS_EXIT_FLIGHTSIZE_CPP = r"""
namespace quench_exp
{
QUENCH_LOSS_EXIT_GROW(TcpNewRenoFlightSizeLossExit, quench_exp::TcpNewRenoFlightSize)
}
"""
LOSS_EXIT = {
    "experiment_cpp": [(LOSS_EXIT_CPP, ["quench_exp.TcpNewRenoLossExit"])],
    "tcp_types": {"newreno": "quench_exp::TcpNewRenoLossExit"},
}


def loss_exit_flightsize() -> dict:
    from ns3_experiments import FLIGHTSIZE  # the ssthresh experiment's NewReno (FlightSize/2)

    return {
        "experiment_cpp": [
            *FLIGHTSIZE["experiment_cpp"],
            (LOSS_EXIT_CPP, []),
            (LOSS_EXIT_FLIGHTSIZE_CPP, ["quench_exp.TcpNewRenoFlightSizeLossExit"]),
        ],
        "tcp_types": {"newreno": "quench_exp::TcpNewRenoFlightSizeLossExit"},
    }


def loss_exit_quench_recovery() -> dict:
    """`loss_exit_flightsize`, and ns-3's PRR as quench's `recovery = "prr"` (RFC 6937 with
    RFC 6675's pipe: ns3_experiments' `FLIGHTSIZE_RFC_PRR_SACK_SSRB`)."""
    from ns3_experiments import FLIGHTSIZE_RFC_PRR_SACK_SSRB

    grown = loss_exit_flightsize()
    return {
        **grown,
        "experiment_cpp": [*FLIGHTSIZE_RFC_PRR_SACK_SSRB["experiment_cpp"], *grown["experiment_cpp"][-2:]],
        "defaults": FLIGHTSIZE_RFC_PRR_SACK_SSRB["defaults"],
    }


CA_NAMES = {0: "OPEN", 1: "DISORDER", 2: "CWR", 3: "RECOVERY", 4: "LOSS"}


def spec_for(seed: int, duration: str | None = None) -> dict:
    spec = load_scenario(SCENARIO)
    spec["seed"] = seed
    if duration:
        spec["duration"] = duration
    return spec


def ns3_traced(spec: dict, extra: dict | None = None):
    """Run `spec` in ns-3 with LossTracer; (results, event rows by kind, plan)."""
    plan = ns3.translate(spec)
    plan.update({k: v for k, v in TRACER.items()})
    if extra:
        plan["experiment_cpp"] = plan["experiment_cpp"] + extra.get("experiment_cpp", [])
        plan.update({k: v for k, v in extra.items() if k not in ("experiment_cpp", "defaults")})
        plan["defaults"].update(extra.get("defaults", {}))
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "loss.csv")
        os.environ["QUENCH_LOSS_LOG"] = log
        raw = ns3.run_plan(plan)
        rows = collections.defaultdict(list)
        with open(log) as f:
            for line in f:
                kind, *rest = line.rstrip("\n").split(",")
                rows[kind].append(rest)
    return ns3.to_results(plan, raw), rows, plan


def flow_of_node(plan: dict) -> dict[int, int]:
    """ns-3 node id of each flow's sender -> flow index (nodes are created in plan order)."""
    ids = {n: i for i, n in enumerate(plan["nodes"])}
    return {ids[f["src"]]: k for k, f in enumerate(plan["flows"])}


def exp_trace(args) -> None:
    spec = spec_for(args.seed, args.duration)
    res, rows, plan = ns3_traced(spec)
    senders = flow_of_node(plan)
    ids = {n: i for i, n in enumerate(plan["nodes"])}
    names = {i: n for n, i in ids.items()}
    base = plan["base_port"]
    fl = res.flows
    print(f"ns-3, seed {args.seed}: goodput per flow Mb/s", [round(float(x) / 1e6, 3) for x in fl["goodput_bps"]])
    # Drops by receiving node; data drops by flow (destination port), ACK drops (source port).
    drops = rows["drop"]
    by_node = collections.Counter(names[int(r[1])] for r in drops)
    print("receive-error-model drops by receiving node:", dict(by_node))
    link = res.link("r1->r2")
    print(
        f"r1->r2 departed {int(link['departed_packets'])} packets; drops at r2 {by_node.get('r2', 0)} "
        f"= {by_node.get('r2', 0) / float(link['departed_packets']):.4%}"
    )
    for k in range(len(plan["flows"])):
        node = [n for n, f in senders.items() if f == k][0]
        tx = [(float(r[0]), int(r[2]), int(r[3])) for r in rows["tx"] if int(r[1]) == node]
        highest, sent_before = 0, set()
        retx = 0
        first_sent = {}
        for t, seq, ln in tx:
            if seq in sent_before:
                retx += 1
            sent_before.add(seq)
            first_sent.setdefault(seq, t)
            highest = max(highest, seq + ln)
        port = base + k
        data_drops = [r for r in drops if int(r[3]) == port and int(r[6]) > 0]
        ack_drops = [r for r in drops if int(r[2]) == port]
        # A dropped data segment is a retransmission if that sequence number was sent earlier.
        rexmit_drops = 0
        for r in data_drops:
            t, seq = float(r[0]), int(r[4])
            if first_sent.get(seq, t) < t - 0.03:
                rexmit_drops += 1
        states = [(float(r[0]), int(r[2]), int(r[3])) for r in rows["state"] if int(r[1]) == node]
        losses = [t for t, _, b in states if b == 4]
        recov = [t for t, _, b in states if b == 3]
        # Each timeout: the segment it retransmits (sent at the instant of the CA_LOSS entry),
        # whether its previous copy was dropped, and the window when the timer fired.
        dropped_at = collections.defaultdict(list)
        for r in data_drops:
            dropped_at[int(r[4])].append(float(r[0]))
        lost_copy, waited = 0, []
        cwnd_rows = [(float(r[0]), int(r[2])) for r in rows["cwnd"] if int(r[1]) == node]
        for t in losses:
            seq = next((s for tt, s, _ in tx if abs(tt - t) < 1e-9), None)
            prev = max((tt for tt, s, _ in tx if s == seq and tt < t - 1e-9), default=None)
            if prev is not None and any(prev <= d <= t for d in dropped_at[seq]):
                lost_copy += 1
            if prev is not None:
                waited.append(t - prev)
        one_seg = sum(1 for t in losses if last_before(cwnd_rows, t) <= MSS)
        # Each exit from CA_LOSS: whether the window changed at that instant, and the segments
        # the exiting ACK sent.
        exits = [t for t, a, b in states if a == 4 and b == 0]
        changed = sum(1 for t in exits if any(abs(tt - t) < 1e-9 for tt, _ in cwnd_rows))
        burst = [sum(1 for tt, _, _ in tx if abs(tt - t) < 1e-9) for t in exits]
        # Runs of timeouts less than 0.5 s apart: the loop's episodes.
        episodes, last = [], None
        for t in losses:
            if last is None or t - last > LOOP_GAP_S:
                episodes.append([t, t, 0])
            episodes[-1][1] = t
            episodes[-1][2] += 1
            last = t
        print(
            f"flow {k}: segments sent {len(tx)}, retransmitted {retx}, data dropped {len(data_drops)} "
            f"(of them retransmissions {rexmit_drops}), ACKs dropped {len(ack_drops)}, "
            f"fast recoveries {len(recov)}, timeouts {len(losses)}: the copy before lost in {lost_copy}, "
            f"cwnd 1 segment when it fired in {one_seg}, "
            f"median wait since the previous copy {statistics.median(waited) if waited else 0:.3f} s; "
            f"exits from CA_LOSS {len(exits)}, window changed at {changed}, segments the exiting ACK "
            f"sent {dict(collections.Counter(burst))}; runs of timeouts {len(episodes)}: "
            + ", ".join(f"{a:.2f}-{b:.2f} s ({n})" for a, b, n in episodes)
        )
    worst = int(fl["timeouts"].astype(float).idxmax()) if "timeouts" in fl else 0
    show_timeouts(rows, plan, worst, args.show)


MSS = 1448
# Timeouts closer than this belong to one run of the loop (each lasts ~0.25 s: RTO 200 ms and
# one round trip).
LOOP_GAP_S = 0.5


def last_before(rows, t):
    """The value of the last (time, value) row strictly before `t` (0 if none)."""
    v = 0
    for tt, x in rows:
        if tt >= t - 1e-9:
            break
        v = x
    return v


def show_timeouts(rows, plan, k: int, n: int) -> None:
    """The events of flow `k`'s sender around its first `n` timeouts."""
    node = [nd for nd, f in flow_of_node(plan).items() if f == k][0]
    port = plan["base_port"] + k
    ev = []
    for kind in ("tx", "ack", "state", "rto", "cwnd", "ssth"):
        for r in rows[kind]:
            if int(r[1]) == node:
                ev.append((float(r[0]), kind, r[2:]))
    for r in rows["drop"]:
        if int(r[3]) == port or int(r[2]) == port:
            ev.append((float(r[0]), "DROP", r[1:]))
    ev.sort(key=lambda e: e[0])
    losses = [t for t, kind, r in ev if kind == "state" and int(r[1]) == 4]
    print(f"\nflow {k}: {len(losses)} timeouts; first at", [round(t, 3) for t in losses[:n]])
    shown = set()
    for t0 in losses[:n]:
        print(f"\n--- timeout at {t0:.6f}: events from {t0 - 0.6:.3f} to {t0 + 0.3:.3f}")
        for t, kind, r in ev:
            if t0 - 0.6 <= t <= t0 + 0.3 and (t, kind) not in shown:
                shown.add((t, kind))
                if kind == "state":
                    r = [CA_NAMES[int(r[0])], CA_NAMES[int(r[1])]]
                print(f"{t:.6f} {kind} {' '.join(r)}")


def row(res) -> dict:
    f = ns3.figures(res, "r1->r2")
    fl = res.flows
    return {
        "utilization": f["utilization"],
        "goodput Mb/s": f["goodput_mbps"],
        "Jain": f["jain"],
        "timeouts": float(fl["timeouts"].astype(float).sum()),
        "fast rtx": float(fl["fast_retransmits"].astype(float).sum()),
        "min flow Mb/s": float(fl["goodput_bps"].astype(float).min()) / 1e6,
        "srtt ms": float(fl["srtt_s"].astype(float).mean()) * 1e3,
    }


def with_tcp(spec: dict, **tcp) -> dict:
    s = copy.deepcopy(spec)
    for f in s["flows"]:
        f["tcp"] = {**f["tcp"], **tcp}
    return s


def ns3_variant(specs, extra: dict | None = None, defaults: dict | None = None):
    plans = [ns3.translate(s) for s in specs]
    for p in plans:
        if extra:
            p.update({k: v for k, v in extra.items() if k != "defaults"})
        p["defaults"].update({**(extra or {}).get("defaults", {}), **(defaults or {})})
    raws = ns3.run_plans(plans)
    return [row(ns3.to_results(p, r)) for p, r in zip(plans, raws)]


def exp_variants(args) -> None:
    from ns3_experiments import FLIGHTSIZE, report  # the ssthresh experiment's NewReno (FlightSize/2)

    specs = [spec_for(args.seed + i, args.duration) for i in range(args.seeds)]
    dack40 = {"ns3::TcpSocket::DelAckTimeout": ("time_s", DELACK_SHORT_S)}
    only = set(args.only.split("|")) if args.only else None
    no_ts = [with_tcp(s, timestamps=False) for s in specs]
    variants = {
        "quench": lambda: [row(run_scenario(s, progress=False)) for s in specs],
        "quench, delayed-ACK timer 40 ms": lambda: [
            row(run_scenario(with_tcp(s, delayed_ack={"timeout": f"{DELACK_SHORT_S * 1e3:.0f}ms"}), progress=False))
            for s in specs
        ],
        "ns-3": lambda: ns3_variant(specs),
        "ns-3, delayed-ACK timer 40 ms": lambda: ns3_variant(specs, defaults=dack40),
        "ns-3, ssthresh FlightSize/2": lambda: ns3_variant(specs, FLIGHTSIZE),
        "ns-3, FlightSize/2 and 40 ms": lambda: ns3_variant(specs, FLIGHTSIZE, dack40),
        "ns-3, window grows on the ACK ending CA_LOSS": lambda: ns3_variant(specs, LOSS_EXIT),
        "ns-3, both": lambda: ns3_variant(specs, loss_exit_flightsize()),
        "ns-3, both, and its PRR as quench's": lambda: ns3_variant(specs, loss_exit_quench_recovery()),
        "quench, PRR as RFC 9937": lambda: [
            row(run_scenario(with_tcp(s, recovery="prr_rfc9937"), progress=False)) for s in specs
        ],
        "quench, no timestamps": lambda: [row(run_scenario(s, progress=False)) for s in no_ts],
        "ns-3, no timestamps": lambda: ns3_variant(no_ts),
        "ns-3, no timestamps, window grows on the ACK ending CA_LOSS": lambda: ns3_variant(no_ts, LOSS_EXIT),
    }
    rows = {name: run() for name, run in variants.items() if only is None or name in only}
    report(f"scenarios/ns3_loss.toml, seeds {args.seed}-{args.seed + args.seeds - 1}, means", rows, digits=3)


# A delayed-ACK timer well below the minimum RTO less the path's RTT (200 - 58 ms): Linux's
# TCP_DELACK_MIN (include/net/tcp.h, HZ/25 = 40 ms).
DELACK_SHORT_S = 0.040


def mathis() -> None:
    """Mathis et al. 1997: rate = MSS/RTT * C/sqrt(p), C = sqrt(3/2) with an ACK per segment and
    sqrt(3/(2b)) with an ACK per b segments (delayed ACKs, b = 2), at the scenario's MSS (1448 B
    with timestamps), an RTT of 58 ms (the 50 ms base and the queue; `variants` prints the
    flows' final smoothed RTT) and p = 0.01."""
    mss_bits, rtt, p = MSS * 8, 0.058, 0.01
    for b in (1, 2):
        c = math.sqrt(3 / (2 * b))
        rate = mss_bits / rtt * c / math.sqrt(p)
        print(f"Mathis, b = {b} (C = {c:.3f}): {rate / 1e6:.3f} Mb/s per flow, {4 * rate / 1e6:.2f} Mb/s for four")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=["trace", "variants", "mathis"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration", default=None)
    ap.add_argument("--only", default=None, help="variants to run, names separated by | (variants)")
    ap.add_argument("--show", type=int, default=2, help="timeouts to print in full (trace)")
    args = ap.parse_args()
    if args.experiment == "trace":
        exp_trace(args)
    elif args.experiment == "variants":
        exp_variants(args)
    else:
        mathis()


if __name__ == "__main__":
    main()
