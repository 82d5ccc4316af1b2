"""ns-3 reference run of the dumbbell benchmark (see bench_dumbbell.py).

Run with the interpreter of the isolated venv created by setup_ns3.sh:

    benchmarks/.venv-ns3/bin/python benchmarks/ns3_dumbbell.py \
        --flows 4 --rate 10000000 --duration 10 --buffer-pkts 42 --seed 1 --json out.json

Topology: s_i --(10x rate, 1 ms)--> r1 --(rate, rtt/2 - 2 ms)--> r2 --(10x rate, 1 ms)--> d_i,
one TCP NewReno (or, --cc cubic, TcpCubic) bulk transfer per pair, a single drop-tail FIFO of
--buffer-pkts packets at r1.
--sack on (default) is ns-3's default loss recovery: SACK + PRR + limited transmit. --sack off
runs classic RFC 6582 NewReno (no SACK, TcpClassicRecovery, no limited transmit).
quench_dumbbell.py simulates the same scenario and writes the same JSON keys.
"""

import argparse
import importlib.metadata
import json
import os
import resource
import sys
import time

ACCESS_RATE_FACTOR = 10
ACCESS_DELAY_S = 0.001
# Access links must never drop, so that the bottleneck FIFO is the only loss point.
ACCESS_QUEUE_PKTS = 100_000
SEGMENT_SIZE = 1460  # + 20 B IPv4 + 20 B TCP (timestamps off) = 1500 B IP packets
SOCKET_BUF_BYTES = 16 * 1024 * 1024
SINK_PORT = 9000


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flows", type=int, required=True)
    p.add_argument("--rate", type=int, required=True, help="bottleneck rate, bit/s")
    p.add_argument("--duration", type=float, required=True, help="simulated seconds")
    p.add_argument("--rtt", type=float, default=0.05, help="base RTT, seconds")
    p.add_argument("--buffer-pkts", type=int, required=True, help="bottleneck FIFO size, packets")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument(
        "--sack",
        choices=("on", "off"),
        default="on",
        help="on: SACK + PRR recovery + limited transmit (ns-3 default); "
        "off: classic NewReno (no SACK, TcpClassicRecovery, no limited transmit)",
    )
    p.add_argument("--cc", choices=("newreno", "cubic"), default="newreno", help="TcpNewReno or TcpCubic")
    p.add_argument(
        "--diag",
        action="store_true",
        help="also record bottleneck tx bytes and drops per 0.1 s and count repeated data "
        "segments on the bottleneck (adds per-packet work: not for timing runs)",
    )
    p.add_argument("--json", required=True, help="output file")
    args = p.parse_args()
    if args.rtt / 2 <= 2 * ACCESS_DELAY_S:
        p.error(f"--rtt must exceed {4 * ACCESS_DELAY_S} s (two 1 ms access hops each way)")
    return args


# Per-packet trace sinks are compiled C++ (through cppyy) rather than Python callbacks, so
# the measurement adds no interpreter work to the timed run loop.
COUNTERS_CPP = r"""
#include "ns3/point-to-point-net-device.h"
#include "ns3/ppp-header.h"
#include "ns3/queue.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/packet-sink.h"
#include "ns3/simulator.h"
#include "ns3/ipv4-header.h"
#include "ns3/tcp-header.h"

#include <unordered_set>
#include <vector>

namespace dumbbell_bench
{
uint64_t txPackets = 0;
uint64_t txIpBytes = 0;
uint64_t queueDrops = 0;
uint64_t tcDrops = 0;
// Diagnostics (--diag only, off for timing runs): time series in bins of BIN_S seconds:
// bottleneck IP bytes transmitted, packets dropped.
const double BIN_S = 0.1;
std::vector<uint64_t> txIpBytesPerBin;
std::vector<uint64_t> dropsPerBin;

void Bump(std::vector<uint64_t>& v, uint64_t amount)
{
    size_t bin = static_cast<size_t>(ns3::Simulator::Now().GetSeconds() / BIN_S);
    if (bin >= v.size())
    {
        v.resize(bin + 1, 0);
    }
    v[bin] += amount;
}
// Data segments that crossed the bottleneck before (same source address and sequence number):
// retransmissions that got past the queue, whether needed or not.
uint64_t txRepeatPackets = 0;
std::unordered_set<uint64_t> seenSegments;
bool diag = false;

void OnPhyTxEnd(ns3::Ptr<const ns3::Packet> p)
{
    // The point-to-point device prepends a 2-byte PPP header; count IP bytes only.
    ns3::PppHeader ppp;
    p->PeekHeader(ppp);
    txPackets++;
    uint64_t ip = p->GetSize() - ppp.GetSerializedSize();
    txIpBytes += ip;
    if (!diag)
    {
        return;
    }
    Bump(txIpBytesPerBin, ip);

    ns3::Ptr<ns3::Packet> c = p->Copy();
    c->RemoveHeader(ppp);
    ns3::Ipv4Header iph;
    c->RemoveHeader(iph);
    ns3::TcpHeader tcph;
    c->RemoveHeader(tcph);
    if (c->GetSize() > 0)
    {
        uint64_t key = (static_cast<uint64_t>(iph.GetSource().Get()) << 32) |
                       tcph.GetSequenceNumber().GetValue();
        if (!seenSegments.insert(key).second)
        {
            txRepeatPackets++;
        }
    }
}

void OnQueueDrop(ns3::Ptr<const ns3::Packet>)
{
    queueDrops++;
    if (diag)
    {
        Bump(dropsPerBin, 1);
    }
}

void OnTcDrop(ns3::Ptr<const ns3::Packet>)
{
    tcDrops++;
    if (diag)
    {
        Bump(dropsPerBin, 1);
    }
}

void Attach(ns3::Ptr<ns3::NetDevice> dev)
{
    auto p2p = ns3::DynamicCast<ns3::PointToPointNetDevice>(dev);
    p2p->TraceConnectWithoutContext("PhyTxEnd", ns3::MakeCallback(&OnPhyTxEnd));
    p2p->GetQueue()->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&OnQueueDrop));
    // With no queue disc, flow control stops the device queue once it holds B packets and
    // the traffic-control layer discards further packets itself (TcDrop) instead of handing
    // them to the full queue, so most drop-tail losses show up here, not in Queue::Drop.
    // Only the bottleneck queue can fill, so counting all of r1's TcDrops is exact.
    dev->GetNode()->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop", ns3::MakeCallback(&OnTcDrop));
}

bool HasRootQueueDisc(ns3::Ptr<ns3::NetDevice> dev)
{
    auto tc = dev->GetNode()->GetObject<ns3::TrafficControlLayer>();
    return tc->GetRootQueueDiscOnDevice(dev) != nullptr;
}

uint64_t SinkTotalRx(ns3::Ptr<ns3::Application> app)
{
    return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx();
}
}
"""


def configure_tcp(ns, sack, cc="newreno"):
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpCubic" if cc == "cubic" else "ns3::TcpNewReno"))
    # quench's CUBIC has no HyStart (RFC 9406): slow start ends at the first loss in both.
    sd("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
    if sack:
        # ns-3's default loss recovery, stated explicitly: RFC 6937 proportional rate
        # reduction on top of the RFC 6675 SACK scoreboard, with RFC 3042 limited transmit.
        sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpPrrRecovery"))
        sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
        sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(True))
    else:
        # Classic RFC 6582 NewReno: no SACK, cwnd = ssthresh + 3 with inflation per dupack,
        # one hole repaired per partial ACK, no limited transmit.
        sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
        sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
        sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1.0)))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_SIZE))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUF_BYTES))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(SOCKET_BUF_BYTES))
    # Initial RTO of 1 s: the SYN timer is ConnTimeout; for data, before any RTT sample,
    # RTO = max(InitialEstimation + 4 * 0, MinRto) = 1 s.
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1.0)))
    sd("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Seconds(1.0)))


def p2p_helper(ns, rate_bps, delay_s, queue_pkts):
    helper = ns.PointToPointHelper()
    helper.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(rate_bps)))
    helper.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(delay_s)))
    helper.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{queue_pkts}p")))
    return helper


def build_topology(ns, flows, rate, rtt, bottleneck_queue_pkts):
    """The dumbbell's nodes, links, addresses and routes with no queue disc anywhere, so each
    device's own DropTail queue is the only queue on the path. Returns (links, senders,
    receivers, receiver_ifaces); links[0] is r1 <-> r2."""
    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(flows)
    receivers.Create(flows)
    routers.Create(2)
    r1, r2 = routers.Get(0), routers.Get(1)

    access = p2p_helper(ns, ACCESS_RATE_FACTOR * rate, ACCESS_DELAY_S, ACCESS_QUEUE_PKTS)
    bottleneck = p2p_helper(ns, rate, rtt / 2 - 2 * ACCESS_DELAY_S, bottleneck_queue_pkts)

    links = [bottleneck.Install(r1, r2)]
    links += [access.Install(senders.Get(i), r1) for i in range(flows)]
    links += [access.Install(r2, receivers.Get(i)) for i in range(flows)]

    stack = ns.InternetStackHelper()
    for nodes in (senders, receivers, routers):
        stack.Install(nodes)

    # One /24 per link: 10.0.0.0 bottleneck, 10.1.i.0 sender access, 10.2.i.0 receiver access.
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addresses.Assign(links[0])
    for i in range(flows):
        addresses.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(links[1 + i])
    receiver_ifaces = []
    for i in range(flows):
        addresses.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        receiver_ifaces.append(addresses.Assign(links[1 + flows + i]))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # Ipv4AddressHelper::Assign installs a default pfifo_fast root queue disc on every device;
    # remove it everywhere so each device's own DropTail queue is the only queue on the path.
    tc = ns.TrafficControlHelper()
    for devices in links:
        tc.Uninstall(devices)
    return links, senders, receivers, receiver_ifaces


def install_bulk_flows(ns, flows, senders, receivers, receiver_ifaces, stop_s):
    """One unlimited BulkSend from sender i to receiver i, starting at i ms; returns the sinks."""
    stop = ns.Seconds(stop_s)
    sink_apps = []
    for i in range(flows):
        # The receiver's address on its access link is interface 1 (interface 0 is r2's).
        dest = ns.InetSocketAddress(receiver_ifaces[i].GetAddress(1), SINK_PORT).ConvertTo()
        sink = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), SINK_PORT).ConvertTo(),
        ).Install(receivers.Get(i))
        sink.Start(ns.Seconds(0.0))
        sink.Stop(stop)
        sink_apps.append(sink.Get(0))

        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", dest)
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT_SIZE))
        app = bulk.Install(senders.Get(i))
        app.Start(ns.MilliSeconds(i))
        app.Stop(stop)
    return sink_apps


def build(ns, args):
    """Create the dumbbell with its measurement hooks; return the per-flow sink apps."""
    configure_tcp(ns, args.sack == "on", args.cc)
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(args.seed)

    links, senders, receivers, receiver_ifaces = build_topology(ns, args.flows, args.rate, args.rtt, args.buffer_pkts)
    bench = ns.cppyy.gbl.dumbbell_bench
    for devices in links:
        for j in range(devices.GetN()):
            assert not bench.HasRootQueueDisc(devices.Get(j)), "queue disc still installed"

    bottleneck_dev = links[0].Get(0)  # r1's side: the r1 -> r2 direction carries the data
    bench.diag = args.diag
    bench.Attach(bottleneck_dev)

    stop = ns.Seconds(args.duration)
    sink_apps = install_bulk_flows(ns, args.flows, senders, receivers, receiver_ifaces, args.duration)
    ns.Simulator.Stop(stop)
    return sink_apps


def main():
    args = parse_args()
    # Importing the bindings (cppyy/cling loading every ns-3 library) takes several seconds;
    # it is part of the process wall time but not of wall_setup_s.
    from ns import ns

    ns.cppyy.cppdef(COUNTERS_CPP)
    t1 = time.perf_counter()
    sink_apps = build(ns, args)
    t2 = time.perf_counter()
    ns.Simulator.Run()
    t3 = time.perf_counter()

    bench = ns.cppyy.gbl.dumbbell_bench
    goodput = [bench.SinkTotalRx(app) * 8 / args.duration for app in sink_apps]
    result = {
        "simulator": "ns-3",
        "version": importlib.metadata.version("ns3"),
        "config": {k: v for k, v in vars(args).items() if k != "json"},  # the CLI flags
        "utilization": bench.txIpBytes * 8 / (args.rate * args.duration),
        "goodput_bps": goodput,
        "aggregate_goodput_bps": sum(goodput),
        "drops": bench.queueDrops + bench.tcDrops,
        "bottleneck_tx_packets": bench.txPackets,
        "events": ns.Simulator.GetEventCount(),
        "wall_setup_s": t2 - t1,
        "wall_run_s": t3 - t2,
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    if args.diag:
        result["diag"] = {
            "bin_s": bench.BIN_S,
            "bottleneck_tx_ip_bytes_per_bin": [int(b) for b in bench.txIpBytesPerBin],
            "drops_per_bin": [int(b) for b in bench.dropsPerBin],
            "bottleneck_tx_repeat_packets": bench.txRepeatPackets,
        }
    ns.Simulator.Destroy()

    tmp = f"{args.json}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, args.json)
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
