"""The ns-3 side of `quench ns3`: run by path with the ns-3 environment's interpreter, never
imported by quench (importing ns-3 loads every ns-3 library through cppyy: ~8 s, ~600 MB).

    NS3_PYTHON ns3_child.py PLAN.json RESULT.json

PLAN.json is what `quench.ns3.translate` made of a scenario: plain numbers in SI units, every
setting explicit (see docs/validation.md, "quench ns3"). RESULT.json gets one record per link
direction, per flow, and the sampled queue of the recorded links. PLAN.json may also hold a
list of plans (seeds of one comparison): they run one after another in this one process, which
pays ns-3's start-up once, and RESULT.json gets the list of their results. Each run starts from
the state a fresh process would have (attribute defaults, address pool, random stream numbers
reset), so a plan gives the same result alone or in a list. Standard library and ns-3
only: this file must run in an environment that has neither quench nor its dependencies.
"""

import json
import os
import sys
import time

# Run by path, this file's folder comes first on sys.path, and quench's own ns3.py there would
# shadow the ns3 package of the wheel: take the folder off.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

# Per-packet bookkeeping is compiled C++ (through cppyy), not Python callbacks: the run loop
# stays ns-3's own.
STATS_CPP = r"""
#include "ns3/point-to-point-net-device.h"
#include "ns3/ppp-header.h"
#include "ns3/queue.h"
#include "ns3/queue-disc.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/packet-sink.h"
#include "ns3/bulk-send-application.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/tcp-header.h"
#include "ns3/socket.h"
#include "ns3/udp-socket-factory.h"
#include "ns3/inet-socket-address.h"
#include "ns3/random-variable-stream.h"
#include "ns3/uinteger.h"
#include "ns3/red-queue-disc.h"

#include <vector>

namespace quench_ns3
{
// RED's average (RedQueueDisc::m_qAvg) is private and has no accessor. An explicit template
// instantiation may name a private member ([temp.explicit]), and the friend function it
// defines hands the member pointer out: the average is read without changing ns-3.
struct RedAverage
{
    typedef double ns3::RedQueueDisc::*type;
    friend type Member(RedAverage);
};
template <typename Tag, typename Tag::type M>
struct MemberOf
{
    friend typename Tag::type Member(Tag) { return M; }
};
template struct MemberOf<RedAverage, &ns3::RedQueueDisc::m_qAvg>;

// ---- one record per link direction (a device and its root queue disc) ----
struct LinkStats
{
    ns3::Ptr<ns3::PointToPointNetDevice> dev;
    ns3::Ptr<ns3::QueueDisc> qdisc;
    double rateBps = 0;
    uint64_t txPackets = 0, txIpBytes = 0;
    double busyS = 0;
    // Time-weighted backlog: qdisc plus device queue (the packets waiting, not the one on the wire).
    uint64_t pkts = 0, bytes = 0, maxPkts = 0, maxBytes = 0;
    double lastT = 0, pktS = 0, byteS = 0;
    bool record = false;
    std::vector<double> qT;
    std::vector<uint64_t> qP, qB;
    // RED's average after every arrival (quench's `avg_queue` monitor), when monitored.
    ns3::Ptr<ns3::RedQueueDisc> red;
    std::vector<double> avgT, avgV;
};
std::vector<LinkStats> links;

void Account(LinkStats& l)
{
    double now = ns3::Simulator::Now().GetSeconds();
    l.pktS += l.pkts * (now - l.lastT);
    l.byteS += l.bytes * (now - l.lastT);
    l.lastT = now;
    uint64_t p = l.qdisc->GetNPackets() + l.dev->GetQueue()->GetNPackets();
    uint64_t b = l.qdisc->GetNBytes() + l.dev->GetQueue()->GetNBytes();
    if (p == l.pkts && b == l.bytes) return;
    l.pkts = p;
    l.bytes = b;
    if (p > l.maxPkts) l.maxPkts = p;
    if (b > l.maxBytes) l.maxBytes = b;
    if (l.record)
    {
        l.qT.push_back(now);
        l.qP.push_back(p);
        l.qB.push_back(b);
    }
}

struct LinkSink
{
    size_t i;
    void OnTx(ns3::Ptr<const ns3::Packet> p)
    {
        LinkStats& l = links[i];
        ns3::PppHeader ppp;
        l.txPackets++;
        l.txIpBytes += p->GetSize() - ppp.GetSerializedSize();
        // Busy time on the wire: the device transmits the PPP header too.
        l.busyS += p->GetSize() * 8.0 / l.rateBps;
        Account(l);
    }
    void OnQdisc(ns3::Ptr<const ns3::QueueDiscItem>) { Account(links[i]); }
    void OnDevice(ns3::Ptr<const ns3::Packet>) { Account(links[i]); }
    // An arrival RED accepted or dropped before enqueueing: the average it computed for it.
    void OnRedArrival(ns3::Ptr<const ns3::QueueDiscItem>)
    {
        LinkStats& l = links[i];
        l.avgT.push_back(ns3::Simulator::Now().GetSeconds());
        l.avgV.push_back((*l.red).*Member(RedAverage()));
    }
    void OnRedDrop(ns3::Ptr<const ns3::QueueDiscItem> item, const char*) { OnRedArrival(item); }
};
std::vector<LinkSink*> linkSinks;

// `traced`: keep the statistics above through trace callbacks on every packet; otherwise only
// the counters ns-3's queue disc and device queue keep themselves are read, at the end (a
// plan's `lean` mode).
size_t AddLink(ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<ns3::QueueDisc> qd, double rateBps, bool record, bool traced)
{
    LinkStats l;
    l.dev = ns3::DynamicCast<ns3::PointToPointNetDevice>(dev);
    l.qdisc = qd;
    l.rateBps = rateBps;
    l.record = record;
    links.push_back(l);
    auto* s = new LinkSink{links.size() - 1};
    linkSinks.push_back(s);
    if (!traced) return links.size() - 1;
    l.dev->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&LinkSink::OnTx, s));
    qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&LinkSink::OnQdisc, s));
    qd->TraceConnectWithoutContext("Dequeue", ns3::MakeCallback(&LinkSink::OnQdisc, s));
    qd->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&LinkSink::OnQdisc, s));
    l.dev->GetQueue()->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&LinkSink::OnDevice, s));
    l.dev->GetQueue()->TraceConnectWithoutContext("Dequeue", ns3::MakeCallback(&LinkSink::OnDevice, s));
    return links.size() - 1;
}

// Record RED's average on every arrival at link `i` (a RedQueueDisc): an arrival is either
// enqueued or dropped before it is (RED drops nothing after dequeue).
void MonitorRed(size_t i)
{
    LinkStats& l = links[i];
    l.red = ns3::DynamicCast<ns3::RedQueueDisc>(l.qdisc);
    if (!l.red) return;
    LinkSink* s = linkSinks[i];
    l.qdisc->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&LinkSink::OnRedArrival, s));
    l.qdisc->TraceConnectWithoutContext("DropBeforeEnqueue", ns3::MakeCallback(&LinkSink::OnRedDrop, s));
}

void Close()
{
    for (auto& l : links)
    {
        double now = ns3::Simulator::Now().GetSeconds();
        l.pktS += l.pkts * (now - l.lastT);
        l.byteS += l.bytes * (now - l.lastT);
        l.lastT = now;
    }
}

// ---- one record per TCP flow ----
struct FlowStats
{
    ns3::Ptr<ns3::Application> app, sink;
    double start = 0;
    uint64_t want = 0;  // bytes of a finite flow, 0 for an unlimited one
    double completion = -1;
    uint64_t rexmit = 0, timeouts = 0, recoveries = 0, packetsSent = 0, bytesSent = 0;
    ns3::SequenceNumber32 highest;
    bool sawData = false;
    uint32_t cwnd = 0;
    double srtt = -1;
    bool hooked = false;
    // The window over time (bytes), one row per change of cwnd or ssthresh, when recorded.
    bool record = false;
    uint32_t ssthresh = 0;
    std::vector<double> cwT;
    std::vector<uint32_t> cwC, cwS;
};
std::vector<FlowStats> flows;

struct FlowSink
{
    size_t i;
    void OnTx(ns3::Ptr<const ns3::Packet> p, const ns3::TcpHeader& h, ns3::Ptr<const ns3::TcpSocketBase>)
    {
        FlowStats& f = flows[i];
        uint32_t len = p->GetSize();
        if (len == 0) return;
        f.packetsSent++;
        f.bytesSent += len;
        ns3::SequenceNumber32 end = h.GetSequenceNumber() + len;
        if (f.sawData && end <= f.highest)
            f.rexmit++;
        else
        {
            f.highest = end;
            f.sawData = true;
        }
    }
    void OnState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now)
    {
        if (now == ns3::TcpSocketState::CA_RECOVERY) flows[i].recoveries++;
        if (now == ns3::TcpSocketState::CA_LOSS) flows[i].timeouts++;
    }
    void Row(FlowStats& f)
    {
        if (!f.record) return;
        f.cwT.push_back(ns3::Simulator::Now().GetSeconds());
        f.cwC.push_back(f.cwnd);
        f.cwS.push_back(f.ssthresh);
    }
    void OnCwnd(uint32_t, uint32_t now)
    {
        flows[i].cwnd = now;
        Row(flows[i]);
    }
    void OnSsthresh(uint32_t, uint32_t now)
    {
        flows[i].ssthresh = now;
        Row(flows[i]);
    }
    void OnRtt(ns3::Time, ns3::Time now) { flows[i].srtt = now.GetSeconds(); }
    void OnRx(ns3::Ptr<const ns3::Packet>, const ns3::Address&)
    {
        FlowStats& f = flows[i];
        if (f.want && f.completion < 0 &&
            ns3::DynamicCast<ns3::PacketSink>(f.sink)->GetTotalRx() >= f.want)
            f.completion = ns3::Simulator::Now().GetSeconds();
    }
};
std::vector<FlowSink*> flowSinks;

void Hook(size_t i)
{
    FlowStats& f = flows[i];
    auto sock = ns3::DynamicCast<ns3::TcpSocketBase>(ns3::DynamicCast<ns3::BulkSendApplication>(f.app)->GetSocket());
    if (!sock) return;
    FlowSink* s = flowSinks[i];
    sock->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&FlowSink::OnTx, s));
    sock->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&FlowSink::OnState, s));
    // The window's first row comes when the handshake sets the initial window; ssthresh
    // starts at the socket's initial value until the first reduction.
    ns3::UintegerValue ss;
    sock->GetAttribute("InitialSlowStartThreshold", ss);
    f.ssthresh = static_cast<uint32_t>(ss.Get());
    sock->TraceConnectWithoutContext("SlowStartThreshold", ns3::MakeCallback(&FlowSink::OnSsthresh, s));
    sock->TraceConnectWithoutContext("CongestionWindow", ns3::MakeCallback(&FlowSink::OnCwnd, s));
    sock->TraceConnectWithoutContext("RTT", ns3::MakeCallback(&FlowSink::OnRtt, s));
    f.hooked = true;
}

// `traced`: hook the socket's traces (retransmissions, recoveries, window); otherwise only the
// sink's own byte count is read, and its arrivals are watched only to time a finite flow's end.
size_t AddTcpFlow(ns3::Ptr<ns3::Application> app, ns3::Ptr<ns3::Application> sink, double start, uint64_t want,
                  bool record, bool traced)
{
    FlowStats f;
    f.record = record;
    f.app = app;
    f.sink = sink;
    f.start = start;
    f.want = want;
    flows.push_back(f);
    size_t i = flows.size() - 1;
    auto* s = new FlowSink{i};
    flowSinks.push_back(s);
    if (traced || want) sink->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&FlowSink::OnRx, s));
    if (!traced) return i;
    // The application creates its socket when it starts (an event at `start`, queued when the
    // node is initialized at time 0, after this one): hook it one nanosecond later.
    ns3::Simulator::Schedule(ns3::Seconds(start) + ns3::NanoSeconds(1), &Hook, i);
    return i;
}

uint64_t SinkRx(ns3::Ptr<ns3::Application> app) { return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx(); }

// ---- UDP sources: one datagram every size/rate seconds (CBR) or exponential gaps (Poisson) ----
struct UdpSource
{
    ns3::Ptr<ns3::Socket> socket;
    uint32_t payload = 0;
    double meanGapS = 0;
    bool poisson = false;
    double stop = 0;
    uint64_t sent = 0, sentBytes = 0;
    ns3::Ptr<ns3::ExponentialRandomVariable> gap;
};
std::vector<UdpSource*> udp;

void UdpSend(UdpSource* u)
{
    if (ns3::Simulator::Now().GetSeconds() >= u->stop) return;
    u->socket->Send(ns3::Create<ns3::Packet>(u->payload));
    u->sent++;
    u->sentBytes += u->payload;
    double g = u->poisson ? u->gap->GetValue() : u->meanGapS;
    ns3::Simulator::Schedule(ns3::Seconds(g), &UdpSend, u);
}

size_t AddUdp(ns3::Ptr<ns3::Node> node, ns3::Address dst, uint32_t payload, double meanGapS, bool poisson,
              double start, double stop)
{
    auto* u = new UdpSource;
    u->socket = ns3::Socket::CreateSocket(node, ns3::UdpSocketFactory::GetTypeId());
    u->socket->Connect(dst);
    u->payload = payload;
    u->meanGapS = meanGapS;
    u->poisson = poisson;
    u->stop = stop;
    u->gap = ns3::CreateObject<ns3::ExponentialRandomVariable>();
    u->gap->SetAttribute("Mean", ns3::DoubleValue(meanGapS));
    udp.push_back(u);
    ns3::Simulator::Schedule(ns3::Seconds(start), &UdpSend, u);
    return udp.size() - 1;
}

// Forget the previous run's records (its ns-3 objects went with Simulator::Destroy).
void Reset()
{
    links.clear();
    for (auto* s : linkSinks) delete s;
    linkSinks.clear();
    flows.clear();
    for (auto* s : flowSinks) delete s;
    flowSinks.clear();
    for (auto* u : udp) delete u;
    udp.clear();
}
}
"""

TCP_TYPES = {
    "newreno": "ns3::TcpNewReno",
    "cubic": "ns3::TcpCubic",
    "vegas": "ns3::TcpVegas",
    "bbr": "ns3::TcpBbr",
    "dctcp": "ns3::TcpDctcp",
}
QDISC_TYPES = {
    "droptail": "ns3::FifoQueueDisc",
    "red": "ns3::RedQueueDisc",
    "codel": "ns3::CoDelQueueDisc",
    "fq_codel": "ns3::FqCoDelQueueDisc",
    "pie": "ns3::PieQueueDisc",
    "fq_pie": "ns3::FqPieQueueDisc",
}


def attr_value(ns, kind, value):
    """An ns-3 AttributeValue from the plan's (kind, value) pair."""
    if kind == "bool":
        return ns.BooleanValue(bool(value))
    if kind == "uint":
        return ns.UintegerValue(int(value))
    if kind == "double":
        return ns.DoubleValue(float(value))
    if kind == "time_s":
        return ns.TimeValue(ns.Seconds(float(value)))
    if kind == "size":
        return ns.QueueSizeValue(ns.QueueSize(value))
    if kind == "rate_bps":
        return ns.DataRateValue(ns.DataRate(int(value)))
    if kind == "string":
        return ns.StringValue(value)
    if kind == "type":
        return ns.TypeIdValue(ns.TypeId.LookupByName(value))
    raise ValueError(f"unknown attribute kind {kind}")


def main():
    plan_path, out_path = sys.argv[1], sys.argv[2]
    with open(plan_path) as f:
        plans = json.load(f)
    from ns import ns

    ns.cppyy.cppdef(STATS_CPP)
    q = ns.cppyy.gbl.quench_ns3
    if isinstance(plans, list):
        out = []
        for plan in plans:
            out.append(run_one(ns, q, plan))
            # What a fresh process would start the next run from: ns-3's attribute defaults,
            # its pool of assigned addresses, the numbering of random streams.
            ns.Config.Reset()
            ns.Ipv4AddressGenerator.Reset()
            ns.RngSeedManager.ResetNextStreamIndex()
            q.Reset()
    else:
        out = run_one(ns, q, plans)
    tmp = f"{out_path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, out_path)


_DEFINED = set()


def run_one(ns, q, plan):
    """Build, run and destroy one plan's simulation; its result record."""
    _define_experiment_classes(ns, plan)
    lean = bool(plan.get("lean"))
    ns.RngSeedManager.SetSeed(plan["rng_seed"])
    ns.RngSeedManager.SetRun(plan["rng_run"])
    for path, (kind, value) in plan["defaults"].items():
        ns.Config.SetDefault(path, attr_value(ns, kind, value))
    node = _nodes(ns, plan)
    devs = _links(ns, plan, node)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    link_ids = _queue_discs(ns, q, plan, devs, lean)
    tcp_rows, udp_rows = _flows(ns, q, plan, node, lean)
    snapshots, run_wall_s, run_cpu_s = _run(ns, q, plan, link_ids, tcp_rows, udp_rows)
    out = {
        "links": [],
        "flows": [None] * len(plan["flows"]),
        "queue": [],
        "cwnd": [],
        "monitors": [],
        "events": int(ns.Simulator.GetEventCount()),
        "run_wall_s": run_wall_s,
        "run_cpu_s": run_cpu_s,
        **snapshots,
    }
    _link_results(q, link_ids, lean, out)
    _flow_results(q, tcp_rows, udp_rows, lean, out)
    ns.Simulator.Destroy()
    return out


def _define_experiment_classes(ns, plan):
    """Experiments only (benchmarks/ns3_experiments.py, never `quench.ns3.translate`): C++ code
    defining variants of ns-3 classes, and TCP controllers replaced by such a variant's TypeId."""
    for code, register in plan.get("experiment_cpp", []):
        if code not in _DEFINED:
            ns.cppyy.cppdef(code)
            _DEFINED.add(code)
        for path in register:  # "namespace.Class": its GetTypeId() registers the TypeId
            obj = ns.cppyy.gbl
            for part in path.split("."):
                obj = getattr(obj, part)
            obj.GetTypeId()


def _nodes(ns, plan):
    """The plan's nodes with the internet stack, by name."""
    names = plan["nodes"]
    nodes = ns.NodeContainer()
    nodes.Create(len(names))
    ns.InternetStackHelper().Install(nodes)
    return {n: nodes.Get(i) for i, n in enumerate(names)}


def _links(ns, plan, node):
    """Each link's point-to-point devices (device queue, loss models) and their addresses."""
    addresses = ns.Ipv4AddressHelper()
    devs = []
    for i, link in enumerate(plan["links"]):
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(int(link["rate_bps"]))))
        p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(int(link["mtu"])))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(link["delay_s"])))
        device_queue = link.get("device_queue", plan["device_queue"])
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize(device_queue)))
        d = p2p.Install(node[link["from"]], node[link["to"]])
        for j, loss in ((1, link["loss"]), (0, link["reverse_loss"])):
            if loss > 0:  # a receive error model on the far device drops what crossed the wire
                em = ns.CreateObject[ns.RateErrorModel]()
                em.SetAttribute("ErrorRate", ns.DoubleValue(loss))
                em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
                d.Get(j).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
        # One /30-sized subnet per link, from 10.0.0.0 up (a /24 each for readability).
        addresses.SetBase(ns.Ipv4Address(f"10.{i // 256}.{i % 256}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces = addresses.Assign(d)
        devs.append((d, ifaces))
    return devs


def _queue_discs(ns, q, plan, devs, lean):
    """Replace the default root queue disc (pfifo_fast) of every device with the translated
    one; (direction name, its index in the bookkeeping) of each."""
    tc_uninstall = ns.TrafficControlHelper()
    link_ids = []
    for (d, _), link in zip(devs, plan["links"]):
        tc_uninstall.Uninstall(d)
        for j, qd in ((0, link["qdisc"]), (1, link["reverse_qdisc"])):
            tc = ns.TrafficControlHelper()
            tc.SetRootQueueDisc(QDISC_TYPES[qd["kind"]])
            qdisc = tc.Install(ns.NetDeviceContainer(d.Get(j))).Get(0)
            # Attributes are read when the queue disc is initialized, as the run starts.
            for key, (kind, value) in qd["attributes"].items():
                qdisc.SetAttribute(key, attr_value(ns, kind, value))
            if "experiment_quantum" in qd:
                # Experiments only: an FQ queue disc's DRR quantum, which ns-3 takes from the
                # device MTU and sets by method, not attribute (the experiment's C++ defines
                # quench_exp::SetFqQuantum).
                ns.cppyy.gbl.quench_exp.SetFqQuantum(qdisc, int(qd["experiment_quantum"]))
            name = f"{link['from']}->{link['to']}" if j == 0 else f"{link['to']}->{link['from']}"
            i = q.AddLink(d.Get(j), qdisc, float(link["rate_bps"]), name in plan["record_queue"], not lean)
            link_ids.append((name, i))
            if name in plan.get("monitor_links", ()):
                q.MonitorRed(i)
    return link_ids


def _flows(ns, q, plan, node, lean):
    """Every flow's applications: (flow index, bookkeeping index) of the TCP flows, and (flow
    index, bookkeeping index, sink) of the UDP ones."""
    tcp_types = {**TCP_TYPES, **plan.get("tcp_types", {})}

    def address_of(n):
        """The first interface address of node `n` (hosts have one link in quench's sense of
        an address: any interface reaches them through global routing)."""
        ipv4 = node[n].GetObject[ns.Ipv4]()
        return ipv4.GetAddress(1, 0).GetLocal()

    tcp_rows, udp_rows = [], []
    for k, fl in enumerate(plan["flows"]):
        port = plan["base_port"] + k
        dst = ns.InetSocketAddress(address_of(fl["dst"]), port).ConvertTo()
        sink_factory = "ns3::TcpSocketFactory" if fl["kind"] == "tcp" else "ns3::UdpSocketFactory"
        sink = ns.PacketSinkHelper(sink_factory, ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        if fl["kind"] == "tcp":
            tcp_rows.append((k, _tcp_flow(ns, q, plan, node, fl, dst, sink, tcp_types, lean)))
        else:
            sink = sink.Install(node[fl["dst"]])
            sink.Start(ns.Seconds(0.0))
            i = q.AddUdp(
                node[fl["src"]], dst, int(fl["payload"]), fl["mean_gap_s"], fl["poisson"], fl["start_s"], fl["stop_s"]
            )
            udp_rows.append((k, i, sink.Get(0)))
    return tcp_rows, udp_rows


def _tcp_flow(ns, q, plan, node, fl, dst, sink_helper, tcp_types, lean):
    """A TCP flow's controller, sink and bulk sender; its bookkeeping index."""
    # The receiver's node too where the controller shapes the receiver (DCTCP's ECE echo of
    # RFC 8257 section 3.2 follows the receiving socket's own controller).
    for end in ("src", "dst") if fl.get("receiver_cc") else ("src",):
        ns.Config.Set(
            f"/NodeList/{node[fl[end]].GetId()}/$ns3::TcpL4Protocol/SocketType",
            ns.TypeIdValue(ns.TypeId.LookupByName(tcp_types[fl["cc"]])),
        )
    sink = sink_helper.Install(node[fl["dst"]])
    sink.Start(ns.Seconds(0.0))
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", dst)
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(int(fl["bytes"] or 0)))
    bulk.SetAttribute("SendSize", ns.UintegerValue(int(fl["send_size"])))
    app = bulk.Install(node[fl["src"]])
    app.Start(ns.Seconds(fl["start_s"]))
    return q.AddTcpFlow(
        app.Get(0), sink.Get(0), fl["start_s"], int(fl["bytes"] or 0), plan.get("record_cwnd", False), not lean
    )


def _run(ns, q, plan, link_ids, tcp_rows, udp_rows):
    """Run to the end, stopping at each snapshot instant to read every counter; the snapshots,
    and the run loop's own wall and CPU seconds (Simulator::Run, without building, snapshots or
    results), as quench's meta.json `wall_run_s`: what a speed comparison of the two loops
    times."""
    snapshots = {"link_snapshots": [], "flow_snapshots": []}
    run_wall_s = run_cpu_s = 0.0

    def run_to(at):
        nonlocal run_wall_s, run_cpu_s
        ns.Simulator.Stop(at - ns.Simulator.Now())
        wall, cpu = time.perf_counter(), time.process_time()
        ns.Simulator.Run()
        run_wall_s += time.perf_counter() - wall
        run_cpu_s += time.process_time() - cpu

    for t in plan.get("snapshots", []):
        # Run to the instant and read every counter there; the run goes on from it.
        run_to(ns.Seconds(t))
        take_snapshot(q, t, link_ids, tcp_rows, udp_rows, snapshots)
    run_to(ns.Seconds(plan["duration_s"]))
    q.Close()
    return snapshots, run_wall_s, run_cpu_s


def _link_results(q, link_ids, lean, out):
    """Each link direction's record, its sampled queue and its monitors, into `out`."""
    for name, i in link_ids:
        ls = q.links[i]
        out["links"].append(link_record(ls, name, lean))
        if ls.record:
            for t, p, b in zip(ls.qT, ls.qP, ls.qB):
                out["queue"].append((float(t), name, int(p), int(b)))
        for t, v in zip(ls.avgT, ls.avgV):
            out["monitors"].append((float(t), name, "avg_queue", float(v)))


def _flow_results(q, tcp_rows, udp_rows, lean, out):
    """Each flow's record and the TCP flows' cwnd rows, into `out`."""
    for k, i in tcp_rows:
        f = q.flows[i]
        out["flows"][k] = {
            "bytes_delivered": int(q.SinkRx(f.sink)),
            "completion_s": float(f.completion) if f.completion >= 0 else None,
        }
        if not lean:  # what only the socket's traces count
            out["flows"][k].update(
                bytes_sent=int(f.bytesSent),
                packets_sent=int(f.packetsSent),
                retransmitted_segments=int(f.rexmit),
                timeouts=int(f.timeouts),
                fast_retransmits=int(f.recoveries),
                final_cwnd_bytes=float(f.cwnd),
                srtt_s=float(f.srtt) if f.srtt >= 0 else None,
            )
        for t, c, ss in zip(f.cwT, f.cwC, f.cwS):
            out["cwnd"].append((float(t), k, int(c), int(ss)))
    for k, i, sink in udp_rows:
        u = q.udp[i]
        out["flows"][k] = {
            "bytes_delivered": int(q.SinkRx(sink)),
            "bytes_sent": int(u.sentBytes),
            "packets_sent": int(u.sent),
            "completion_s": None,
        }


# The point-to-point header every packet carries in ns-3's device queue and on its wire.
PPP_HEADER_BYTES = 2


def link_record(ls, name, lean):
    """One link direction's counters at the end of the run. A traced link carries the trace
    callbacks' statistics; a lean one only what its queue disc and device queue count
    themselves: departures are what left the device queue (its bytes carry the PPP header),
    and backlog integrals and maxima are unknown."""
    st, dq = ls.qdisc.GetStats(), ls.dev.GetQueue()
    if lean:
        gone = int(dq.GetTotalReceivedPackets()) - int(dq.GetTotalDroppedPackets()) - int(dq.GetNPackets())
        wire_bytes = int(dq.GetTotalReceivedBytes()) - int(dq.GetTotalDroppedBytes()) - int(dq.GetNBytes())
        departed = {
            "departed_packets": gone,
            "departed_bytes": wire_bytes - PPP_HEADER_BYTES * gone,
            "busy_s": wire_bytes * 8 / float(ls.rateBps),
            "packet_seconds": None,
            "byte_seconds": None,
            "max_backlog_packets": None,
            "max_backlog_bytes": None,
            "backlog_packets": int(ls.qdisc.GetNPackets()) + int(dq.GetNPackets()),
            "backlog_bytes": int(ls.qdisc.GetNBytes()) + int(dq.GetNBytes()),
        }
    else:
        departed = {
            "departed_packets": int(ls.txPackets),
            "departed_bytes": int(ls.txIpBytes),
            "busy_s": float(ls.busyS),
            "packet_seconds": float(ls.pktS),
            "byte_seconds": float(ls.byteS),
            "max_backlog_packets": int(ls.maxPkts),
            "max_backlog_bytes": int(ls.maxBytes),
            "backlog_packets": int(ls.pkts),
            "backlog_bytes": int(ls.bytes),
        }
    reasons = {}
    for kv in st.nDroppedPacketsBeforeEnqueue:
        reasons[str(kv.first)] = reasons.get(str(kv.first), 0) + int(kv.second)
    for kv in st.nDroppedPacketsAfterDequeue:
        reasons[str(kv.first)] = reasons.get(str(kv.first), 0) + int(kv.second)
    return {
        "name": name,
        "arrived_packets": int(st.nTotalReceivedPackets),
        "arrived_bytes": int(st.nTotalReceivedBytes),
        "dropped_packets": int(st.nTotalDroppedPackets),
        "dropped_bytes": int(st.nTotalDroppedBytes),
        "drop_reasons": reasons,
        "marked_packets": int(st.nTotalMarkedPackets),
        "device_queue_drops": int(dq.GetTotalDroppedPackets()),
        **departed,
    }


def take_snapshot(q, t, link_ids, tcp_rows, udp_rows, out):
    """Every link's and flow's counters now, as quench's `link_snapshots` / `flow_snapshots`
    rows (by link name and flow index). A link's busy time counts a packet on the wire whole,
    as it does at the end of a run."""
    q.Close()  # the backlog integrals brought up to now
    for name, i in link_ids:
        ls = q.links[i]
        st = ls.qdisc.GetStats()
        out["link_snapshots"].append(
            [
                t,
                name,
                int(st.nTotalReceivedPackets),
                int(st.nTotalReceivedBytes),
                int(ls.txPackets),
                int(ls.txIpBytes),
                int(st.nTotalDroppedPackets),
                int(st.nTotalDroppedBytes),
                int(st.nTotalMarkedPackets),
                float(ls.busyS),
                float(ls.pktS),
                float(ls.byteS),
                int(ls.pkts),
                int(ls.bytes),
            ]
        )
    for k, i in tcp_rows:
        f = q.flows[i]
        srtt = float(f.srtt) if f.srtt >= 0 else None
        row = [t, k, int(f.bytesSent), int(q.SinkRx(f.sink)), int(f.packetsSent), int(f.rexmit)]
        out["flow_snapshots"].append([*row, int(f.timeouts), int(f.recoveries), float(f.cwnd), srtt])
    for k, i, sink in udp_rows:
        u = q.udp[i]
        out["flow_snapshots"].append([t, k, int(u.sentBytes), int(q.SinkRx(sink)), int(u.sent), 0, 0, 0, None, None])


if __name__ == "__main__":
    main()
