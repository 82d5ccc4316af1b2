"""ns-3 side of the RED cross-check (see compare_red.py): a dumbbell whose bottleneck runs
ns-3's RedQueueDisc with explicit parameters, measured over a window after a warm-up.

Run with the interpreter of the isolated venv created by setup_ns3.sh:

    benchmarks/.venv-ns3/bin/python benchmarks/ns3_red.py --ecn off --json out.json

Topology and TCP as in ns3_dumbbell.py (whose helpers this reuses): s_i -> r1 -> r2 -> d_i,
access links 10x the bottleneck rate with 1 ms delay, NewReno with SACK, 1500-byte packets.
The bottleneck device r1->r2 gets a RedQueueDisc root queue disc and a 1-packet device queue
(the usual ns-3 RED set-up: with the default 100-packet device queue most of the backlog would
sit in the device queue, out of RED's sight). Every other device has no queue disc.

Counters are read at --warmup and at --duration; the reported figures are the differences.
RED's internal average (m_qAvg, a private member) is read through a member pointer, sampled
every --sample seconds together with the queue disc and device queue lengths.
"""

import argparse
import importlib.metadata
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ns3_dumbbell import (  # noqa: E402
    ACCESS_DELAY_S,
    ACCESS_QUEUE_PKTS,
    build_topology,
    configure_tcp,
    install_bulk_flows,
)

RED_CPP = r"""
#include "ns3/point-to-point-net-device.h"
#include "ns3/ppp-header.h"
#include "ns3/queue.h"
#include "ns3/queue-disc.h"
#include "ns3/red-queue-disc.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/packet-sink.h"
#include "ns3/simulator.h"
#include "ns3/config.h"
#include "ns3/tcp-socket-state.h"

#include <map>
#include <string>
#include <vector>

namespace red_xcheck
{
// Read RedQueueDisc::m_qAvg (private) without editing ns-3: explicit template instantiation
// may name private members (C++ [temp.explicit]), and the friend function hands the pointer out.
struct AvgTag
{
    typedef double ns3::RedQueueDisc::*type;
    friend type Get(AvgTag);
};
template <typename Tag, typename Tag::type M>
struct Rob
{
    friend typename Tag::type Get(Tag) { return M; }
};
template struct Rob<AvgTag, &ns3::RedQueueDisc::m_qAvg>;

ns3::Ptr<ns3::RedQueueDisc> red;
ns3::Ptr<ns3::Queue<ns3::Packet>> devQueue;
std::vector<ns3::Ptr<ns3::Application>> sinks;
uint64_t txPackets = 0;
uint64_t txIpBytes = 0;
uint64_t devQueueDrops = 0;
uint64_t reverseDrops = 0;
uint64_t tcDrops = 0;

// Time-integrals over the sampling window (sampled every `step` seconds).
double sampleStep = 0;
double sampleEnd = 0;
uint64_t nSamples = 0;
double sumAvg = 0, sumQdisc = 0, sumDev = 0;

struct Snapshot
{
    double t = 0;
    uint64_t txPackets = 0, txIpBytes = 0, devQueueDrops = 0, tcDrops = 0;
    uint64_t recoveries = 0, rtos = 0;
    uint64_t received = 0, enqueued = 0, dropped = 0, marked = 0;
    std::map<std::string, uint64_t> drops, marks;
    std::vector<uint64_t> sinkRx;
};
std::vector<Snapshot> snaps;

void OnPhyTxEnd(ns3::Ptr<const ns3::Packet> p)
{
    ns3::PppHeader ppp;
    p->PeekHeader(ppp);
    txPackets++;
    txIpBytes += p->GetSize() - ppp.GetSerializedSize();
}
void OnDevQueueDrop(ns3::Ptr<const ns3::Packet>) { devQueueDrops++; }
void OnReverseDrop(ns3::Ptr<const ns3::Packet>) { reverseDrops++; }
void OnTcDrop(ns3::Ptr<const ns3::Packet>) { tcDrops++; }

// Entries into fast recovery and RTO loss state, summed over all senders.
uint64_t recoveries = 0;
uint64_t rtos = 0;
void OnCongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now)
{
    if (now == ns3::TcpSocketState::CA_RECOVERY) recoveries++;
    if (now == ns3::TcpSocketState::CA_LOSS) rtos++;
}
void HookSockets()
{
    ns3::Config::ConnectWithoutContext("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                                       ns3::MakeCallback(&OnCongState));
}

void TakeSnapshot()
{
    Snapshot s;
    s.t = ns3::Simulator::Now().GetSeconds();
    s.txPackets = txPackets;
    s.txIpBytes = txIpBytes;
    s.devQueueDrops = devQueueDrops;
    s.tcDrops = tcDrops;
    s.recoveries = recoveries;
    s.rtos = rtos;
    const ns3::QueueDisc::Stats& st = red->GetStats();
    s.received = st.nTotalReceivedPackets;
    s.enqueued = st.nTotalEnqueuedPackets;
    s.dropped = st.nTotalDroppedPackets;
    s.marked = st.nTotalMarkedPackets;
    for (const auto& kv : st.nDroppedPacketsBeforeEnqueue) s.drops[kv.first] += kv.second;
    for (const auto& kv : st.nDroppedPacketsAfterDequeue) s.drops[kv.first] += kv.second;
    for (const auto& kv : st.nMarkedPackets) s.marks[kv.first] += kv.second;
    for (auto& app : sinks) s.sinkRx.push_back(ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx());
    snaps.push_back(s);
}

void Sample()
{
    static double (ns3::RedQueueDisc::*avg) = Get(AvgTag());
    sumAvg += (*red).*avg;
    sumQdisc += red->GetNPackets();
    sumDev += devQueue->GetNPackets();
    nSamples++;
    if (ns3::Simulator::Now().GetSeconds() + sampleStep < sampleEnd)
    {
        ns3::Simulator::Schedule(ns3::Seconds(sampleStep), &Sample);
    }
}

void Setup(ns3::Ptr<ns3::NetDevice> r1dev, ns3::Ptr<ns3::NetDevice> r2dev, ns3::Ptr<ns3::QueueDisc> qd,
           double warmup, double end, double step)
{
    red = ns3::DynamicCast<ns3::RedQueueDisc>(qd);
    auto p2p = ns3::DynamicCast<ns3::PointToPointNetDevice>(r1dev);
    devQueue = p2p->GetQueue();
    p2p->TraceConnectWithoutContext("PhyTxEnd", ns3::MakeCallback(&OnPhyTxEnd));
    devQueue->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&OnDevQueueDrop));
    r1dev->GetNode()->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop", ns3::MakeCallback(&OnTcDrop));
    auto rev = ns3::DynamicCast<ns3::PointToPointNetDevice>(r2dev);
    rev->GetQueue()->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&OnReverseDrop));
    sampleStep = step;
    sampleEnd = end;
    ns3::Simulator::Schedule(ns3::Seconds(warmup), &TakeSnapshot);
    // Every sender's socket exists once its BulkSend app has started (by 16 ms).
    ns3::Simulator::Schedule(ns3::Seconds(0.5), &HookSockets);
    ns3::Simulator::Schedule(ns3::Seconds(warmup + step / 2), &Sample);
}

void AddSink(ns3::Ptr<ns3::Application> app) { sinks.push_back(app); }

bool HasRootQueueDisc(ns3::Ptr<ns3::NetDevice> dev)
{
    return dev->GetNode()->GetObject<ns3::TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev) != nullptr;
}
}
"""


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flows", type=int, default=16)
    p.add_argument("--rate", type=int, default=10_000_000, help="bottleneck rate, bit/s")
    p.add_argument("--rtt", type=float, default=0.05, help="base RTT, seconds")
    p.add_argument("--duration", type=float, default=60.0, help="simulated seconds")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds left out of the figures")
    p.add_argument("--min-th", type=float, default=10.0, help="packets")
    p.add_argument("--max-th", type=float, default=30.0, help="packets")
    p.add_argument("--limit", type=int, default=60, help="RED buffer, packets")
    p.add_argument("--max-p", type=float, default=0.1)
    p.add_argument("--w-q", type=float, default=0.002)
    p.add_argument("--mean-pkt", type=int, default=1500, help="bytes")
    p.add_argument("--ecn", choices=("on", "off"), default="off")
    p.add_argument("--sample", type=float, default=0.0001, help="sampling step of the queue, s")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", required=True)
    return p.parse_args()


def build(ns, a):
    configure_tcp(ns, sack=True)
    ecn = a.ecn == "on"
    ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if ecn else "Off"))
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(a.seed)

    # RED needs a 1-packet device queue under it, or the device would hold the backlog unseen.
    links, senders, receivers, receiver_ifaces = build_topology(ns, a.flows, a.rate, a.rtt, 1)
    r1dev, r2dev = links[0].Get(0), links[0].Get(1)
    # The ACK direction keeps a large device queue (the 1-packet queue is for RED's side only).
    r2dev.GetQueue().SetMaxSize(ns.QueueSize(f"{ACCESS_QUEUE_PKTS}p"))

    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc(
        "ns3::RedQueueDisc",
        "MaxSize",
        ns.QueueSizeValue(ns.QueueSize(f"{a.limit}p")),
        "MinTh",
        ns.DoubleValue(a.min_th),
        "MaxTh",
        ns.DoubleValue(a.max_th),
        "QW",
        ns.DoubleValue(a.w_q),
        "LInterm",
        ns.DoubleValue(1.0 / a.max_p),
        "MeanPktSize",
        ns.UintegerValue(a.mean_pkt),
        "Gentle",
        ns.BooleanValue(True),
        "Wait",
        ns.BooleanValue(True),
        "ARED",
        ns.BooleanValue(False),
        "AdaptMaxP",
        ns.BooleanValue(False),
        "FengAdaptive",
        ns.BooleanValue(False),
        "NLRED",
        ns.BooleanValue(False),
        "UseEcn",
        ns.BooleanValue(ecn),
        "UseHardDrop",
        ns.BooleanValue(True),
        "LinkBandwidth",
        ns.DataRateValue(ns.DataRate(a.rate)),
        "LinkDelay",
        ns.TimeValue(ns.Seconds(a.rtt / 2 - 2 * ACCESS_DELAY_S)),
    )
    qdiscs = red.Install(ns.NetDeviceContainer(r1dev))
    x = ns.cppyy.gbl.red_xcheck
    for devices in links:
        for j in range(devices.GetN()):
            dev = devices.Get(j)
            want = dev == r1dev
            assert bool(x.HasRootQueueDisc(dev)) == want, "unexpected queue disc set-up"
    x.Setup(r1dev, r2dev, qdiscs.Get(0), a.warmup, a.duration, a.sample)

    stop = ns.Seconds(a.duration)
    for sink in install_bulk_flows(ns, a.flows, senders, receivers, receiver_ifaces, a.duration + 1):
        x.AddSink(sink)
    ns.Simulator.Stop(stop)


def snap_dict(s):
    return {
        "t": s.t,
        "tx_packets": s.txPackets,
        "tx_ip_bytes": s.txIpBytes,
        "dev_queue_drops": s.devQueueDrops,
        "tc_drops": s.tcDrops,
        "recoveries": s.recoveries,
        "rtos": s.rtos,
        "received": s.received,
        "enqueued": s.enqueued,
        "dropped": s.dropped,
        "marked": s.marked,
        "drops": {str(k): int(v) for k, v in s.drops},
        "marks": {str(k): int(v) for k, v in s.marks},
        "sink_rx": [int(v) for v in s.sinkRx],
    }


def main():
    a = parse_args()
    from ns import ns

    ns.cppyy.cppdef(RED_CPP)
    build(ns, a)
    ns.Simulator.Run()
    x = ns.cppyy.gbl.red_xcheck
    x.TakeSnapshot()  # at the stop time
    s0, s1 = (snap_dict(x.snaps[i]) for i in range(2))
    span = s1["t"] - s0["t"]
    d = lambda k: s1[k] - s0[k]  # noqa: E731
    reasons = lambda k: {r: s1[k].get(r, 0) - s0[k].get(r, 0) for r in set(s0[k]) | set(s1[k])}  # noqa: E731
    drops, marks = reasons("drops"), reasons("marks")
    arrived = d("received")
    goodput = [(b1 - b0) * 8 / span for b0, b1 in zip(s0["sink_rx"], s1["sink_rx"])]
    early = drops.get("Unforced drop", 0)
    forced = drops.get("Forced drop", 0)
    overflow = sum(v for k, v in drops.items() if k not in ("Unforced drop", "Forced drop"))
    result = {
        "simulator": "ns-3",
        "version": importlib.metadata.version("ns3"),
        "config": {k: v for k, v in vars(a).items() if k != "json"},
        "window_s": [s0["t"], s1["t"]],
        "arrived_packets": arrived,
        "early_drops": early,
        "forced_drops": forced,
        "overflow_drops": overflow,
        "early_marks": marks.get("Unforced mark", 0),
        "forced_marks": marks.get("Forced mark", 0),
        "drop_reasons": drops,
        "mark_reasons": marks,
        "red_avg_time_mean": x.sumAvg / x.nSamples,
        "qdisc_queue_time_mean": x.sumQdisc / x.nSamples,
        "device_queue_time_mean": x.sumDev / x.nSamples,
        "samples": int(x.nSamples),
        "utilization": d("tx_ip_bytes") * 8 / (a.rate * span),
        "bottleneck_tx_packets": d("tx_packets"),
        "aggregate_goodput_bps": sum(goodput),
        "goodput_bps": goodput,
        "tcp": {"fast_recoveries": d("recoveries"), "timeouts": d("rtos")},
        "other_drops": {
            "device_queue": d("dev_queue_drops"),
            "tc": d("tc_drops"),
            "reverse_device_queue": int(x.reverseDrops),
        },
    }
    ns.Simulator.Destroy()
    tmp = f"{a.json}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
