//! The world: every component in a vector indexed by its typed id, one event queue, and one
//! dispatch `match`. Components never hold references to each other; they return what they
//! emit (packets, timers, drops) and the world routes it.
//!
//! An endpoint acts with the world as its [`Host`]: each packet it sends is routed at once, and
//! the verdict of the host's first queue comes back as the send's return value. While an
//! endpoint acts, the agents are out of the world (`run_agent`), so a packet that would reach
//! another endpoint in the same instant (delivered on the host itself, or a Source Quench the
//! host's own queue sends back) waits in `deferred` until the acting endpoint returns, and is
//! then handed over in the order it came.
//!
//! Equal-time order: the timers an endpoint arms while it acts are queued ahead of the events
//! its packets cause (they take sequence numbers reserved when it starts acting), the order
//! quench has always had: e.g. a constant-bit-rate source exactly at its link's rate finds
//! its previous datagram still in transmission, as it did when an activation's packets were
//! routed after it.

use crate::builder::FlowFactory;
use crate::flows::{Agents, Flows};
use crate::ip::{self, IpConfig, Reassembled, Reassembler};
use crate::link::{Link, LinkOutbox, TxStart};
use crate::packet::{AgentId, FlowId, LinkId, NodeId, Packet, Proto};
use crate::qdisc::NodeBuffers;
use crate::routing::Routes;
use crate::scenario::Budget;
use crate::sched::Scheduler;
use crate::slab::{EntryId, PacketSlab};
use crate::trace::flow_links::Fate;
use crate::trace::pcap::Captures;
use crate::trace::Recorder;
use crate::transport::icmp;
use crate::transport::{Admission, Agent, AgentCx, Endpoint, Host, Timer};
use crate::units::Time;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// A link finished serializing its current packet.
    TxDone(LinkId),
    /// The packet at the head of a link's propagation pipe reached the far end.
    Arrive(LinkId),
    /// A qdisc that said "not before t" may release a packet now.
    Wake(LinkId),
    Timer(AgentId, Timer),
    /// An application starts.
    Start(AgentId),
    /// The next arrival of a workload (its index) is due: its flow is built and starts.
    Arrival(u32),
    /// A host's reassembly timer: its index in `World::reassembly_timers`. The timer's
    /// fields live there so that an event takes 16 bytes and a heap entry 32.
    Reassembly(u32),
}

/// A reassembly timer: the host, and the datagram (source, identification) it started at a time.
#[derive(Clone, Copy, Debug)]
struct ReassemblyTimer {
    node: NodeId,
    src: NodeId,
    uid: u32,
    started: Time,
}

pub struct Node {
    pub name: String,
    pub is_router: bool,
}

/// What a node's IP layer did with fragments.
#[derive(Clone, Debug, Default)]
pub struct FragmentStats {
    pub datagrams_fragmented: u64,
    pub fragments_created: u64,
}

pub use crate::flows::FlowInfo;

pub struct World {
    pub(crate) now: Time,
    pub(crate) end: Time,
    pub(crate) seed: u64,
    pub(crate) sched: Scheduler<Event>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) links: Vec<Link>,
    /// The entries of every link's propagation pipe and drop-tail queue.
    slab: PacketSlab,
    pub(crate) routes: Routes,
    pub(crate) agents: Agents,
    pub(crate) flows: Flows,
    /// Builds the workloads' arrivals as they come.
    factory: FlowFactory,
    /// Arrivals scheduled so far: each takes its place among equal-time events from this
    /// count (`Scheduler::schedule_start`), as if every flow's start had been queued up front.
    arrivals_scheduled: u64,
    /// Arrivals that may have become reclaimable during the event being handled.
    maybe_reclaimable: Vec<FlowId>,
    /// How many arrivals may be in progress at once, and what stopped the arrivals when one
    /// more came (the run goes on without them; the caller reports it as the run's error).
    budget: Budget,
    pub(crate) budget_exceeded: Option<crate::ConfigError>,
    /// Per (host, destination): the senders of that host's flows to that destination that
    /// react to a Source Quench quoting it, in flow order.
    quench_senders: HashMap<(NodeId, NodeId), Vec<AgentId>>,
    pub(crate) rec: Recorder,
    pub(crate) pcap: Captures,
    pub(crate) unroutable_packets: u64,
    /// Per node: the buffer pool its pooled queues share.
    node_buffers: Vec<NodeBuffers>,
    pub(crate) ip: IpConfig,
    /// Per node: its reassembly state, made at the first fragment that reaches it (a host that
    /// never gets one, nearly all of them, holds a pointer rather than 96 bytes).
    pub(crate) reassembly: Vec<Option<Box<Reassembler>>>,
    pub(crate) fragmentation: Vec<FragmentStats>,
    fragments: Vec<Packet>,
    /// The pending reassembly timers' fields (`Event::Reassembly`), and the free places.
    reassembly_timers: Vec<ReassemblyTimer>,
    free_reassembly_timers: Vec<u32>,
    link_out: LinkOutbox,
    /// The endpoint acting now, if one is (the agents are then out of `agents`).
    acting: Option<AgentId>,
    /// Deliveries to endpoints that came while another endpoint was acting.
    deferred: Vec<Delivery>,
    /// Sequence numbers reserved for the timers the acting endpoint arms.
    timer_seqs: std::ops::Range<u64>,
    next_uid: u32,
    /// Ends of transmission carried out without an event (`Link::defer_done`); they count
    /// as executed events, so the count does not depend on this shortcut.
    settled_events: u64,
}

/// Sequence numbers reserved per activation for the timers it arms: as many as the endpoint
/// with the most timers, the TCP sender with its timer table, queues in one activation.
pub(crate) const TIMER_SEQS_PER_ACTIVATION: u64 = crate::transport::tcp::TIMER_EVENTS_PER_ACTIVATION;
const _: () = assert!(TIMER_SEQS_PER_ACTIVATION >= 2 * crate::transport::tcp::SENDER_TIMERS as u64);

/// Released arrivals whose rows are written out at a time when records stream to disk. A row
/// and its finished flow take about 250 bytes, its column values as many again while written:
/// 8 Ki rows keep that under 5 MB, while a write per 8 Ki flows is nothing beside simulating them.
const FLOW_ROWS_CHUNK: usize = 8192;

/// Something an endpoint is to be handed once the one acting now has returned.
#[derive(Clone, Copy, Debug)]
enum Delivery {
    Packet(AgentId, Packet),
    SourceQuench(AgentId),
}

pub(crate) struct WorldParts {
    pub end: Time,
    pub seed: u64,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub routes: Routes,
    pub agents: Vec<Agent>,
    pub flows: Vec<FlowInfo>,
    pub factory: FlowFactory,
    pub budget: Budget,
    pub rec: Recorder,
    pub pcap: Captures,
    pub ip: IpConfig,
}

impl World {
    pub(crate) fn assemble(p: WorldParts) -> World {
        let mut sched = Scheduler::default();
        let mut quench_senders: HashMap<(NodeId, NodeId), Vec<AgentId>> = HashMap::new();
        for (i, f) in p.flows.iter().enumerate() {
            sched.schedule_start(f.start, i as u64, Event::Start(f.sender));
            if p.agents[f.sender.index()].reacts_to_source_quench() {
                quench_senders.entry((f.src, f.dst)).or_default().push(f.sender);
            }
        }
        let (flows, agents) = Flows::listed(p.flows, p.agents);
        let mut world = World {
            now: Time::ZERO,
            end: p.end,
            seed: p.seed,
            sched,
            node_buffers: vec![NodeBuffers::default(); p.nodes.len()],
            reassembly: (0..p.nodes.len()).map(|_| None).collect(),
            fragmentation: vec![FragmentStats::default(); p.nodes.len()],
            fragments: Vec::new(),
            reassembly_timers: Vec::new(),
            free_reassembly_timers: Vec::new(),
            ip: p.ip,
            nodes: p.nodes,
            links: p.links,
            slab: PacketSlab::default(),
            routes: p.routes,
            arrivals_scheduled: flows.count() as u64,
            agents,
            flows,
            factory: p.factory,
            maybe_reclaimable: Vec::new(),
            budget: p.budget,
            budget_exceeded: None,
            quench_senders,
            rec: p.rec,
            pcap: p.pcap,
            unroutable_packets: 0,
            link_out: LinkOutbox::default(),
            acting: None,
            deferred: Vec::new(),
            timer_seqs: 0..0,
            next_uid: 0,
            settled_events: 0,
        };
        for w in 0..world.factory.workloads.len() {
            world.schedule_arrival(w);
        }
        for (l, link) in world.links.iter_mut().enumerate() {
            let id = LinkId(l as u32);
            link.quiet = !world.rec.records_hops(id) && !world.pcap.captures(id) && !link.has_device_queue();
        }
        world
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn events_executed(&self) -> u64 {
        let due = self.links.iter().filter(|l| l.deferred_done().is_some_and(|(at, _)| at <= self.now)).count();
        self.sched.executed() + self.settled_events + due as u64
    }

    /// Carry out link `l`'s deferred end of transmission if it would already have run.
    fn settle(&mut self, l: LinkId) {
        let link = &mut self.links[l.index()];
        if link.deferred_done().is_some_and(|(at, seq)| self.sched.has_passed(at, seq)) {
            link.settle_done(&mut self.slab);
            self.settled_events += 1;
        }
    }

    /// Run every event due at or before `horizon` (capped at the scenario's end).
    pub fn run_until(&mut self, horizon: Time) {
        let horizon = horizon.min(self.end);
        while let Some((t, ev)) = self.sched.pop_until(horizon) {
            self.now = t;
            self.dispatch(ev);
        }
        self.now = self.now.max(horizon);
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone(l) => self.on_tx_done(l),
            Event::Arrive(l) => self.on_arrive(l),
            Event::Wake(l) => {
                self.settle(l);
                self.links[l.index()].on_wake();
                self.start_tx(l);
            }
            Event::Timer(a, t) => self.run_agent(a, |ag, cx| ag.on_timer(t, cx)),
            Event::Start(a) => self.run_agent(a, |ag, cx| ag.on_start(cx)),
            Event::Arrival(w) => self.on_arrival(w as usize),
            Event::Reassembly(i) => {
                let r = self.reassembly_timers[i as usize];
                self.free_reassembly_timers.push(i);
                let re = self.reassembly[r.node.index()].as_mut().expect("a timer's host holds fragments");
                re.on_timeout(r.src, r.uid, r.started);
            }
        }
        if !self.maybe_reclaimable.is_empty() {
            self.reclaim_finished();
        }
    }

    /// Queue workload `w`'s next arrival, if it has one.
    fn schedule_arrival(&mut self, w: usize) {
        let Some(at) = self.factory.workloads[w].next_at() else { return };
        self.sched.schedule_start(Time::ZERO + at, self.arrivals_scheduled, Event::Arrival(w as u32));
        self.arrivals_scheduled += 1;
    }

    /// Build workload `w`'s arrival due now, start it, and queue the workload's next one.
    fn on_arrival(&mut self, w: usize) {
        if self.flows.arrivals_held() as u64 >= self.budget.active_flows {
            // No arrival is built or drawn from here on; the caller stops the run on seeing it.
            self.budget_exceeded.get_or_insert_with(|| self.budget.active_flows_exceeded(self.now));
            return;
        }
        let Some(spec) = self.factory.workloads[w].take() else { return };
        let ids = self.flows.next_ids();
        let (info, sender, receiver) = self.factory.build(&self.nodes, &self.links, &self.routes, ids, &spec);
        if sender.reacts_to_source_quench() {
            self.quench_senders.entry((info.src, info.dst)).or_default().push(ids.1);
        }
        self.rec.flow_arrived(ids.0, &info.name);
        self.flows.arrive(&mut self.agents, info, sender, receiver);
        self.schedule_arrival(w);
        self.run_agent(ids.1, |ag, cx| ag.on_start(cx));
    }

    /// A packet of flow `f` left the network: the flow may be reclaimable now.
    #[inline]
    fn packet_left(&mut self, f: FlowId) {
        if self.flows.left(f) {
            self.maybe_reclaimable.push(f);
        }
    }

    /// Reclaim the arrivals that finished during this event (see `flows.rs`).
    fn reclaim_finished(&mut self) {
        for f in std::mem::take(&mut self.maybe_reclaimable) {
            if !self.flows.reclaimable(&self.agents, f) {
                continue;
            }
            let info = self.flows.info(f);
            if let Some(senders) = self.quench_senders.get_mut(&(info.src, info.dst)) {
                let sender = info.sender;
                senders.retain(|a| *a != sender);
            }
            self.flows.reclaim(&mut self.agents, f);
        }
        self.spill_released_flows();
    }

    /// With records streaming to disk, write the released arrivals' rows out a chunk at a
    /// time, so the flows table does not grow in memory with the number of arrivals. A row is
    /// final once its flow is reclaimed; one that never completed has its goodput to the
    /// scenario's end, as a run that reaches its end reports it.
    fn spill_released_flows(&mut self) {
        let Some(chunk) = self.rec.streaming_chunk() else { return };
        if self.flows.released_len() < chunk.min(FLOW_ROWS_CHUNK) {
            return;
        }
        let (first, released) = self.flows.take_released();
        let rows = released.iter().enumerate().map(|(i, d)| (FlowId(first.0 + i as u32), &d.info, d.row.clone()));
        let table = crate::results::flow_rows(&self.nodes, self.end, rows);
        self.rec.spill_table(&table);
    }

    /// Let an endpoint act with the world as its host. The agents are out of the world while
    /// it acts (an endpoint never reaches another directly); what reached other endpoints
    /// meanwhile is handed over afterwards, in order.
    fn run_agent(&mut self, id: AgentId, act: impl FnOnce(&mut Agent, &mut AgentCx<World>)) {
        debug_assert!(self.acting.is_none(), "an endpoint acts while another does");
        let mut agents = std::mem::take(&mut self.agents);
        let Some(agent) = agents.get_mut(id) else {
            // A reclaimed endpoint's stale timer: the endpoint would have ignored it.
            self.put_back(agents);
            return;
        };
        let node = agent.node();
        self.acting = Some(id);
        self.timer_seqs = self.sched.reserve_block(TIMER_SEQS_PER_ACTIVATION);
        let mut cx = AgentCx::new(self.now, id, node, self);
        act(agent, &mut cx);
        self.acting = None;
        self.put_back(agents);
        let flow = FlowId(id.0 / 2);
        if self.flows.is_arrival(flow) {
            self.maybe_reclaimable.push(flow);
        }
        if !self.deferred.is_empty() {
            for delivery in std::mem::take(&mut self.deferred) {
                self.deliver(delivery);
            }
        }
    }

    /// Return the agents taken out for an activation. The placeholder `mem::take` left owns
    /// no memory: forgetting it skips the deque's drop glue, which costs 1 % of a run's
    /// instructions when run on every activation.
    #[inline]
    fn put_back(&mut self, agents: Agents) {
        let placeholder = std::mem::replace(&mut self.agents, agents);
        debug_assert!(placeholder.is_empty(), "the agents were out while an endpoint acted");
        std::mem::forget(placeholder);
    }

    /// Hand something to an endpoint now, or once the endpoint acting now has returned.
    fn deliver(&mut self, delivery: Delivery) {
        if self.acting.is_some() {
            self.deferred.push(delivery);
            return;
        }
        match delivery {
            Delivery::Packet(a, pkt) => self.run_agent(a, |ag, cx| ag.on_packet(pkt, cx)),
            Delivery::SourceQuench(a) => self.run_agent(a, |ag, cx| ag.on_source_quench(cx)),
        }
    }

    /// A packet is at node `at`: consume it there or send it one hop on; the answer is what
    /// the next queue did with it. Packets go by reference down to the queue or transmitter
    /// that stores them: each by-value call would copy all 96 bytes.
    fn forward(&mut self, at: NodeId, pkt: &Packet) -> Admission {
        if pkt.dst == at && pkt.frag.is_fragment() {
            self.reassemble(at, pkt);
        } else if pkt.dst == at && pkt.proto == Proto::Icmp {
            self.packet_left(pkt.flow);
            self.on_icmp(at, pkt);
        } else if pkt.dst == at && self.acting.is_none() {
            self.packet_left(pkt.flow);
            // Straight to the endpoint: through `deliver` the packet would be copied twice more.
            self.run_agent(pkt.dst_agent, |ag, cx| ag.on_packet(*pkt, cx));
        } else if pkt.dst == at {
            self.packet_left(pkt.flow);
            self.deferred.push(Delivery::Packet(pkt.dst_agent, *pkt));
        } else {
            let hop = self.routes.route(at, pkt);
            return self.forward_over(hop, pkt);
        }
        Admission::Accepted
    }

    /// Send a packet in transit on over `hop`, the link routing chose for it (once: a
    /// spraying switch's choice advances its turn), or count it unroutable.
    fn forward_over(&mut self, hop: Option<LinkId>, pkt: &Packet) -> Admission {
        if let Some(l) = hop {
            return self.enqueue(l, pkt);
        }
        self.packet_left(pkt.flow);
        self.unroutable_packets += 1;
        Admission::Accepted
    }

    /// An ICMP Source Quench reached host `at`. As 4.3BSD's tcp_ctlinput (in_pcbnotify with
    /// wildcard ports), every connection of the host to the quoted destination whose transport
    /// reacts to Source Quench (TCP's) is told, in flow order.
    fn on_icmp(&mut self, at: NodeId, pkt: &Packet) {
        let quoted = icmp::quoted(pkt);
        let Some(senders) = self.quench_senders.get(&(at, quoted.dst)) else { return };
        // A copy: delivering needs the world mutably (and may come back here).
        for a in senders.clone() {
            self.deliver(Delivery::SourceQuench(a));
        }
    }

    /// A fragment reached its destination host: hold it, or deliver the whole datagram.
    fn reassemble(&mut self, at: NodeId, frag: &Packet) {
        let re = self.reassembly[at.index()].get_or_insert_with(Box::default);
        match re.on_fragment(self.now, frag, &self.ip) {
            Reassembled::Datagram(whole) => {
                self.forward(at, &whole);
            }
            Reassembled::Held { timer: Some(t) } => {
                let timer = ReassemblyTimer { node: at, src: frag.src, uid: frag.uid, started: self.now };
                let i = match self.free_reassembly_timers.pop() {
                    Some(i) => {
                        self.reassembly_timers[i as usize] = timer;
                        i
                    }
                    None => {
                        self.reassembly_timers.push(timer);
                        self.reassembly_timers.len() as u32 - 1
                    }
                };
                self.sched.schedule(t, Event::Reassembly(i));
            }
            Reassembled::Held { timer: None } | Reassembled::Discarded => {}
        }
    }

    /// Send a packet onto link `l`, fragmenting it first if it exceeds the link's MTU. A
    /// fragmented datagram is refused if any of its fragments is (Linux's `ip_do_fragment`
    /// returns the first fragment's error; unlike Linux, the fragments after it still go).
    fn enqueue(&mut self, l: LinkId, pkt: &Packet) -> Admission {
        let link = &mut self.links[l.index()];
        if pkt.size as u64 > link.mtu.0 {
            debug_assert!(!pkt.frag.dont, "the builder rejects don't-fragment flows on paths that fragment");
            self.flows.fragmented(pkt.flow);
            let mut pieces = std::mem::take(&mut self.fragments);
            ip::fragment(pkt, link.mtu.0 as u16, link.fragment_rule, &mut pieces);
            let stats = &mut self.fragmentation[link.from.index()];
            stats.datagrams_fragmented += 1;
            stats.fragments_created += pieces.len() as u64;
            let mut admission = Admission::Accepted;
            for piece in pieces.drain(..) {
                if self.enqueue_one(l, &piece) == Admission::Refused {
                    admission = Admission::Refused;
                }
            }
            self.fragments = pieces;
            return admission;
        }
        self.enqueue_one(l, pkt)
    }

    #[inline]
    fn enqueue_one(&mut self, l: LinkId, pkt: &Packet) -> Admission {
        if self.links[l.index()].quiet {
            self.enqueue_quiet(l, pkt)
        } else {
            self.enqueue_recorded(l, pkt)
        }
    }

    /// `enqueue_one` on a link whose hops are recorded or captured, or that has a device
    /// queue. Out of line, so that the quiet path saves only the registers it uses.
    #[inline(never)]
    fn enqueue_recorded(&mut self, l: LinkId, pkt: &Packet) -> Admission {
        self.rec.flow_links.count(pkt.flow, l, pkt.size, Fate::Arrived);
        self.end_deferral(l);
        let link = &mut self.links[l.index()];
        let before = link.backlog();
        self.rec.watch_arrival(self.now, l, pkt, before.packets);
        if link.can_cut_through(pkt) && !self.rec.wants_queue(l) {
            // Queueing and dequeueing at once would record nothing and change nothing else.
            let done = link.cut_through(self.now, pkt, &mut self.slab);
            self.tx_started(l, done);
            return Admission::Accepted;
        }
        let id = self.slab.hold(*pkt);
        let admission =
            link.enqueue(self.now, id, &mut self.link_out, &mut self.node_buffers[link.from.index()], &mut self.slab);
        self.after_queue_change(l, Some(before));
        // A device queue takes what the qdisc releases at once, even while the link sends.
        let link = &self.links[l.index()];
        if link.ready_to_send() || link.has_device_queue() {
            self.start_tx(l);
        }
        admission
    }

    /// `enqueue_one` on a quiet link (`Link::quiet`): the same steps less those that record
    /// or capture the hop, and with no device queue to fill.
    #[inline]
    fn enqueue_quiet(&mut self, l: LinkId, pkt: &Packet) -> Admission {
        // Copied once, into the entry it keeps through the queue and the transmitter.
        let id = self.slab.hold(*pkt);
        self.enqueue_quiet_held(l, id)
    }

    /// `enqueue_quiet` of a packet held in slab entry `id`: the entry becomes the transmitter's
    /// when the packet cuts through, and the qdisc's otherwise (`Qdisc::enqueue_held`).
    /// Always inlined into its two callers: as a call it cost 1 % more instructions on the
    /// small dumbbells than the two copies of these steps it replaces.
    #[inline(always)]
    fn enqueue_quiet_held(&mut self, l: LinkId, id: EntryId) -> Admission {
        self.end_deferral(l);
        let link = &mut self.links[l.index()];
        if link.can_cut_through(self.slab.held(id)) {
            let done = link.cut_through_held(self.now, id, &mut self.slab);
            self.tx_started(l, done);
            return Admission::Accepted;
        }
        let admission =
            link.enqueue(self.now, id, &mut self.link_out, &mut self.node_buffers[link.from.index()], &mut self.slab);
        self.after_queue_change(l, None);
        if self.links[l.index()].ready_to_send() {
            self.start_tx(l);
        }
        admission
    }

    /// A packet is about to be offered to link `l`: carry out the link's deferred end of
    /// transmission if it would already have run, or else queue it as an event in its
    /// reserved place (the packet may change what that end does).
    #[inline]
    fn end_deferral(&mut self, l: LinkId) {
        self.settle(l);
        if let Some((at, seq)) = self.links[l.index()].undefer_done() {
            self.sched.schedule_reserved(at, seq, Event::TxDone(l));
        }
    }

    fn start_tx(&mut self, l: LinkId) {
        let link = &mut self.links[l.index()];
        // The backlog before is wanted only for a queue record, never on a quiet link.
        let before = (!link.quiet).then(|| link.backlog());
        match link.start_tx(self.now, &mut self.link_out, &mut self.node_buffers[link.from.index()], &mut self.slab) {
            TxStart::Started(done) => self.tx_started(l, done),
            TxStart::Idle => {}
            TxStart::Wait(t) => self.sched.schedule(t, Event::Wake(l)),
        }
        self.after_queue_change(l, before);
    }

    /// Link `l` started sending a packet, to end at `done`: queue (or defer) the end of
    /// transmission, and record the packet's sojourn and capture.
    fn tx_started(&mut self, l: LinkId, done: Time) {
        let seq = self.sched.reserve();
        let link = &mut self.links[l.index()];
        if !link.defer_done(seq) {
            self.sched.schedule_reserved(done, seq, Event::TxDone(l));
        }
        if !link.quiet {
            self.record_tx_start(l);
        }
    }

    /// The packet link `l` started sending: its departure count, sojourn and capture.
    #[inline(never)]
    fn record_tx_start(&mut self, l: LinkId) {
        let link = &self.links[l.index()];
        let p = link.in_transmission(&self.slab).expect("a transmission just started");
        self.rec.flow_links.count(p.flow, l, p.size, Fate::Departed);
        self.rec.sojourn(self.now, l, p.flow, self.now - p.enqueued_at, p.ecn);
        if let Some(w) = self.pcap.get_mut(l) {
            let info = self.flows.info(p.flow);
            w.write(self.now, p, info.src, info.sack);
        }
    }

    /// Record drops and the new queue length (when `before`, the backlog before the change,
    /// was taken for it); route control packets the qdisc originated.
    #[inline]
    fn after_queue_change(&mut self, l: LinkId, before: Option<crate::qdisc::Backlog>) {
        // Nearly always nothing to do: one test instead of four.
        if before.is_some() || !self.link_out.is_empty() {
            self.record_queue_change(l, before);
        }
    }

    fn record_queue_change(&mut self, l: LinkId, before: Option<crate::qdisc::Backlog>) {
        if !self.link_out.drops.is_empty() {
            let mut drops = std::mem::take(&mut self.link_out.drops);
            for (p, reason) in drops.drain(..) {
                self.rec.flow_links.count(p.flow, l, p.size, Fate::Dropped);
                self.rec.packet_dropped(self.now, l, &p, reason as u8);
                self.packet_left(p.flow);
            }
            self.link_out.drops = drops;
        }
        if !self.link_out.monitors.is_empty() {
            for (name, value) in self.link_out.monitors.drain(..) {
                self.rec.monitor(self.now, l, name, value);
            }
        }
        let link = &self.links[l.index()];
        if let Some(before) = before.filter(|_| self.rec.wants_queue(l)) {
            let after = link.backlog();
            if after != before {
                self.rec.queue_len(self.now, l, after.packets, after.bytes);
            }
        }
        if !self.link_out.emitted.is_empty() {
            let from = link.from;
            let emitted = std::mem::take(&mut self.link_out.emitted);
            for mut p in emitted {
                self.flows.sent(p.flow);
                p.uid = self.next_uid;
                self.next_uid = self.next_uid.wrapping_add(1);
                p.sent_at = self.now;
                self.forward(from, &p);
            }
        }
    }

    fn on_tx_done(&mut self, l: LinkId) {
        match self.links[l.index()].finish_tx(self.now, &mut self.slab) {
            Ok(Some(arrival)) => self.sched.schedule(arrival, Event::Arrive(l)),
            Ok(None) => {}
            Err(lost) => {
                let reason = crate::qdisc::DropReason::LinkLoss as u8;
                self.rec.flow_links.count(lost.flow, l, lost.size, Fate::Lost);
                self.rec.packet_dropped(self.now, l, &lost, reason);
                self.packet_left(lost.flow);
            }
        }
        self.start_tx(l);
    }

    fn on_arrive(&mut self, l: LinkId) {
        self.settle(l);
        let link = &mut self.links[l.index()];
        let (id, next) = link.deliver_head(&mut self.slab);
        let to = link.to;
        if let Some(t) = next {
            self.sched.schedule(t, Event::Arrive(l));
        }
        self.forward_held(to, id);
    }

    /// `forward` of a packet that arrived at node `at` and is still held in the slab entry
    /// `id` (taken off its pipe). A packet passing through to a quiet link within its MTU goes
    /// down the same steps as `forward`, `enqueue` and `enqueue_quiet` would take, in its
    /// entry: when it cuts through, the entry becomes the next link's transmitter as it is,
    /// and otherwise the qdisc takes the entry (`Qdisc::enqueue_held`; drop-tail queues it
    /// without a copy). Every other packet is copied out (its entry freed) and forwarded.
    fn forward_held(&mut self, at: NodeId, id: EntryId) {
        let pkt = self.slab.held(id);
        let onward = if pkt.dst == at { None } else { self.routes.route(at, pkt) };
        let Some(l) = onward.filter(|l| {
            let link = &self.links[l.index()];
            link.quiet && pkt.size as u64 <= link.mtu.0
        }) else {
            let in_transit = pkt.dst != at;
            let pkt = self.slab.release(id);
            if in_transit {
                self.forward_over(onward, &pkt);
            } else {
                self.forward(at, &pkt);
            }
            return;
        };
        self.enqueue_quiet_held(l, id);
    }
}

impl Host for World {
    fn send(&mut self, node: NodeId, mut pkt: Packet) -> Admission {
        pkt.uid = self.next_uid;
        self.next_uid = self.next_uid.wrapping_add(1);
        pkt.sent_at = self.now;
        self.flows.sent(pkt.flow);
        self.forward(node, &pkt)
    }

    fn arm(&mut self, owner: AgentId, at: Time, timer: Timer) {
        match self.timer_seqs.next() {
            Some(seq) => self.sched.schedule_reserved(at, seq, Event::Timer(owner, timer)),
            // More timers than reserved (none of today's endpoints arms so many in one act).
            None => self.sched.schedule(at, Event::Timer(owner, timer)),
        }
    }

    fn recorder(&mut self) -> &mut Recorder {
        &mut self.rec
    }
}

#[cfg(test)]
mod tests {
    /// An event fits 16 bytes, so an event-queue entry (16-byte key beside it) takes 32.
    #[test]
    fn events_stay_small() {
        assert!(std::mem::size_of::<super::Event>() <= 16, "{}", std::mem::size_of::<super::Event>());
    }
}
