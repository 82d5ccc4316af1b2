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
//! Every packet crosses a node by one path (`forward`, then the per-hop pipeline `offer`),
//! whether an endpoint sent it, a qdisc originated it or it came off a pipe; see `HopRecords`
//! for how a quiet link skips the records.
//!
//! Scheduled link changes (`changes.rs`) are events too: the world applies each to its links
//! and, when a link went down or came up, has the routes computed again once routing has
//! converged (`routing_convergence`).
//!
//! PFC (`pfc.rs`) is told where a packet is admitted to a PFC switch's buffer (with the link
//! it came in by), where its transmission starts there and where it is dropped; the pause and
//! resume frames it answers are events that set a link's paused state.
//!
//! The world owns the event queue, what the links share (`LinkCx`: the packet slab, the
//! nodes' buffer pools) and the routing of what components emit; it does not build flows (its
//! `Arrivals` source does), write tables (`results.rs`, `flows.rs`), or look at a qdisc's kind
//! (the link asks the qdisc about its properties).
//!
//! Equal-time order: each event ranks by its content ([`Event`]'s `Ranked`): packets come off
//! pipes, then links end transmissions and qdiscs wake (choosing among every packet that
//! reached them by then), then hosts' and endpoints' timers, then flows' starts, each class in
//! the order of its component's id; docs/design.md ("Simultaneous events") gives the reasons.
//! E.g. a constant-bit-rate source exactly at its link's rate finds its previous datagram sent.

use crate::changes::{Change, Timetable};
use crate::dependencies::Dependencies;
use crate::flows::{Agents, Flows};
use crate::host_queue::HostQueues;
use crate::icmp;
use crate::ip::{self, IpConfig, Reassembled, Reassembler};
use crate::link::{EndOfTx, Link, LinkCx, TxEnd, TxStart};
use crate::packet::{AgentId, FlowId, LinkId, NodeId, Packet, Proto};
use crate::pfc::{Frame, Pfc};
use crate::qdisc::{Backlog, NodeBuffers};
use crate::routing::Routes;
use crate::scenario::Budget;
use crate::sched::{rank, Ranked, Scheduler, SUB_KEY_BITS};
use crate::slab::EntryId;
use crate::telemetry::{HopRecord, IntRecord, Telemetry};
use crate::trace::flow_links::Fate;
use crate::trace::pcap::Captures;
use crate::trace::Recorder;
use crate::transport::{Admission, Agent, AgentCx, Endpoint, Host, Timer};
use crate::units::{Bytes, Dur, Time};
use std::collections::HashMap;

/// What can happen at an instant. Among events due at the same instant the order is each
/// event's rank (`Ranked` below), a function of its content alone.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The packet at the head of a link's propagation pipe reached the far end.
    Arrive(LinkId),
    /// A packet on a link's wire with jitter or corruption (`wire.rs`) reached the far end:
    /// each has its own event, the earliest on the wire arrives.
    WireArrive(LinkId),
    /// A PFC pause frame for a link's priority reached the link's sending end (`pfc.rs`).
    /// Pause and resume are two kinds rather than one with a field: the priority fits beside
    /// the link id in the event's 16 bytes.
    PfcPause(LinkId, u8),
    /// A PFC resume frame for a link's priority reached the link's sending end.
    PfcResume(LinkId, u8),
    /// A link finished serializing its current packet.
    TxDone(LinkId),
    /// A qdisc that said "not before t" may release a packet now.
    Wake(LinkId),
    /// One of an endpoint's packets left its host's queue while it waited for room
    /// (`host_queue.rs`).
    HostRoom(AgentId),
    /// A host's reassembly timer: its index in `World::reassembly_timers`. The timer's
    /// fields live there so that an event takes 16 bytes and a heap entry 32.
    Reassembly(u32),
    Timer(AgentId, Timer),
    /// An application starts.
    Start(AgentId),
    /// The next arrival of a workload (its index) is due: its flow is built and starts.
    Arrival(u32),
    /// The next occurrence of a scheduled link change (its index in the timetable) is due.
    LinkChange(u32),
    /// Routing has converged after links went down or up: the routes are computed again.
    Reroute,
}

/// The equal-time order of events by class, first to last (docs/design.md, "Simultaneous
/// events"). The network's configuration at an instant holds for every packet of it; then
/// frames arrive; then links choose among what reached them; then endpoints act.
mod class {
    pub const CONFIGURATION: u8 = 0;
    pub const ARRIVE: u8 = 1;
    pub const TX_DONE: u8 = 2;
    pub const WAKE: u8 = 3;
    pub const HOST_ROOM: u8 = 4;
    pub const REASSEMBLY: u8 = 5;
    pub const TIMER: u8 = 6;
    pub const START: u8 = 7;
    pub const ARRIVAL: u8 = 8;
}

/// Sub-keys within the arrivals' class of one link: a link has a pipe or a wire, never both,
/// and its pause and resume frames come over the reverse direction, a pair of sub-keys per
/// priority (`PFC_PAUSE + PFC_STRIDE · priority`).
mod arrival {
    pub const PIPE: u32 = 0;
    pub const WIRE: u32 = 1;
    pub const PFC_PAUSE: u32 = 2;
    pub const PFC_RESUME: u32 = 3;
    pub const PFC_STRIDE: u32 = 2;
}

/// Bits of a timer's generation in its rank, below its kind's 8.
const TIMER_GENERATION_BITS: u32 = SUB_KEY_BITS - 8;

/// The order of components within a class at instant `at`: each id is XORed with a mask drawn
/// from the instant, a bijection of the ids, so keys stay unique and any two components come
/// in either order at half the instants. Ranked by id alone, the lower id would win every tie
/// (a fixed-priority arbiter): in lockstep traffic the same sender's packet would take the last
/// place of a full queue at every instant and the same other sender's be dropped. Switches
/// arbitrate among simultaneous inputs in rotation or at random (iSLIP's round robin; McKeown,
/// IEEE/ACM ToN 1999), never by fixed priority. The mask is SplitMix64's finalizer of the
/// instant (Steele, Lea and Flood, OOPSLA 2014), taken from no seeded stream: it depends on
/// nothing but the instant, so results do not depend on the order events were queued in.
#[inline(always)]
pub(crate) fn arbitration(at: Time, id: u32) -> u32 {
    id ^ (crate::rng::splitmix_at(at.0) >> 32) as u32
}

impl Ranked for Event {
    /// Class, then the link, agent, workload, timetable entry or reassembly timer (ids are
    /// u32; among links, agents and reassembly timers in the instant's [`arbitration`] order),
    /// then a sub-key: for a timer its kind and the low bits of its generation. Every pending
    /// event of a link (one end of transmission, one pipe head's arrival, one wake-up, no two
    /// frames at one instant, see `pfc.rs`) or of a workload (its next arrival) is the only one
    /// of its class for that component, or equal to any other (a stale wake-up of the same link
    /// at the same time). Two timers of one agent and kind due at one instant whose generations
    /// agree in the low bits are 2^20 re-arms apart: the older is stale, a no-op, so their order
    /// cannot matter. Configuration, starts and workload arrivals keep their ids' order: flows
    /// listed first start first, and the reroute follows every change of its instant.
    #[inline(always)]
    fn rank(&self, at: Time) -> u64 {
        match *self {
            Event::Arrive(l) => rank(class::ARRIVE, arbitration(at, l.0), arrival::PIPE),
            // Every pending wire arrival of a link is the same event: each takes the wire's
            // earliest packet (by time, then by the order sent), whichever runs first.
            Event::WireArrive(l) => rank(class::ARRIVE, arbitration(at, l.0), arrival::WIRE),
            Event::PfcPause(l, p) => {
                rank(class::ARRIVE, arbitration(at, l.0), arrival::PFC_PAUSE + arrival::PFC_STRIDE * p as u32)
            }
            Event::PfcResume(l, p) => {
                rank(class::ARRIVE, arbitration(at, l.0), arrival::PFC_RESUME + arrival::PFC_STRIDE * p as u32)
            }
            Event::TxDone(l) => rank(class::TX_DONE, arbitration(at, l.0), 0),
            Event::Wake(l) => rank(class::WAKE, arbitration(at, l.0), 0),
            Event::HostRoom(a) => rank(class::HOST_ROOM, arbitration(at, a.0), 0),
            Event::Reassembly(i) => rank(class::REASSEMBLY, arbitration(at, i), 0),
            Event::Timer(a, t) => {
                let generation = t.generation & ((1 << TIMER_GENERATION_BITS) - 1);
                rank(class::TIMER, arbitration(at, a.0), (t.kind as u32) << TIMER_GENERATION_BITS | generation)
            }
            Event::Start(a) => rank(class::START, a.0, 0),
            Event::Arrival(w) => rank(class::ARRIVAL, w, 0),
            Event::LinkChange(i) => rank(class::CONFIGURATION, i, 0),
            // After every change due at its instant: the routes see them all.
            Event::Reroute => rank(class::CONFIGURATION, u32::MAX, 0),
        }
    }
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

/// A link's name, `from->to` by its nodes' names. The builder refuses a second link between two
/// nodes in one direction, so the name is unique; it is made when asked for rather than kept
/// in every link (at 10,000 flows a dumbbell has 40,002 links, each name an allocation).
pub(crate) fn link_name(nodes: &[Node], link: &Link) -> String {
    format!("{}->{}", nodes[link.from.index()].name, nodes[link.to.index()].name)
}

/// Whether `link` is the one named `name` (`link_name`), without making its name.
pub(crate) fn link_is_named(nodes: &[Node], link: &Link, name: &str) -> bool {
    name.strip_prefix(nodes[link.from.index()].name.as_str())
        .and_then(|rest| rest.strip_prefix("->"))
        .is_some_and(|to| to == nodes[link.to.index()].name)
}

/// Where a run's workload arrivals come from (the builder's flow factory). The world asks when
/// each workload's next arrival is due and has it built then; how a flow is built, from its
/// template to its endpoints, is not the world's business. `Send`, as the world is: the
/// bindings run it with Python's lock released.
pub(crate) trait Arrivals: Send {
    /// How many workloads the run has.
    fn workloads(&self) -> usize;
    /// When workload `w`'s next arrival is due, from the run's start, if it has one.
    fn next_at(&self, w: usize) -> Option<Dur>;
    /// Build workload `w`'s arrival due now, with the given ids, and move on to its next one;
    /// `None` if the workload has no more.
    fn build_next(
        &mut self,
        w: usize,
        net: (&[Node], &[Link], &Routes),
        ids: (FlowId, AgentId, AgentId),
    ) -> Option<(FlowInfo, Agent, Agent)>;
}

/// What a node's IP layer did with fragments.
#[derive(Clone, Debug, Default)]
pub struct FragmentStats {
    pub datagrams_fragmented: u64,
    pub fragments_created: u64,
}

pub use crate::flows::FlowInfo;

/// Hands the whole pages of freed memory back to the operating system. glibc keeps the small
/// blocks freed in the middle of its heap (the endpoints, each a box of about a kilobyte) for
/// later small requests, so without this the tables built after a release would come on top
/// of them; `malloc_trim` (glibc 2.8 and later) releases every whole free page, not only the
/// heap's top. Other allocators are left alone.
fn return_freed_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim takes no pointer and only releases memory that malloc holds free.
        unsafe {
            malloc_trim(0);
        }
    }
}

pub struct World {
    pub(crate) now: Time,
    pub(crate) end: Time,
    pub(crate) seed: u64,
    pub(crate) sched: Scheduler<Event>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) links: Vec<Link>,
    /// What the links share (the packet slab, the nodes' buffer pools, the outbox).
    link_cx: LinkCx,
    pub(crate) routes: Routes,
    pub(crate) agents: Agents,
    pub(crate) flows: Flows,
    /// Builds the workloads' arrivals as they come.
    arrivals: Box<dyn Arrivals>,
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
    pub(crate) ip: IpConfig,
    /// Per node: its reassembly state, made at the first fragment that reaches it (a host that
    /// never gets one, nearly all of them, holds a pointer rather than 96 bytes).
    pub(crate) reassembly: Vec<Option<Box<Reassembler>>>,
    pub(crate) fragmentation: Vec<FragmentStats>,
    fragments: Vec<Packet>,
    /// The pending reassembly timers' fields (`Event::Reassembly`), and the free places.
    reassembly_timers: Vec<ReassemblyTimer>,
    free_reassembly_timers: Vec<u32>,
    /// The endpoint acting now, if one is (the agents are then out of `agents`).
    acting: Option<AgentId>,
    /// Deliveries to endpoints that came while another endpoint was acting.
    deferred: Vec<Delivery>,
    next_uid: u32,
    /// Ends of transmission carried out without an event (`Link::defer_done`); they count
    /// as executed events, so the count does not depend on this shortcut.
    settled_events: u64,
    /// Links that may hold a deferred end with packets queued behind it (`Link::runs_unseen`):
    /// each run's slice settles them through its horizon, so that what is read between
    /// slices (snapshots, the summary tables) counts every start due by then.
    unseen: Vec<LinkId>,
    /// The links' scheduled changes (`changes.rs`).
    changes: Timetable,
    /// How long after a link goes down or up the routes are computed again.
    routing_convergence: Dur,
    /// The in-band telemetry records (`telemetry.rs`), once a flow collects them: until then
    /// no packet pays more than this test.
    telemetry: Option<Box<Telemetry>>,
    /// Listed flows that start when others complete (`dependencies.rs`); None when none does.
    dependencies: Option<Box<Dependencies>>,
    /// Priority-based flow control at the switches (`pfc.rs`), if the scenario asks for it.
    pfc: Option<Box<Pfc>>,
    /// The bytes of endpoints that hold their sends by their host's queue (`host_queue.rs`),
    /// once one does: until then no packet pays more than this test.
    host_queues: Option<Box<HostQueues>>,
    /// The link the packet being forwarded came in by; `None` for one a host or a qdisc sent.
    /// A PFC switch counts the packet against that link (`record_arrival`). Written at every
    /// forward rather than tested for PFC there: a store costs the run loop less than a branch.
    arrived_by: Option<LinkId>,
}

/// Released arrivals whose rows are written out at a time when records stream to disk. A row
/// and its finished flow take about 250 bytes, its column values as many again while written:
/// 8 Ki rows keep that under 5 MB, while a write per 8 Ki flows is nothing beside simulating them.
const FLOW_ROWS_CHUNK: usize = 8192;

/// Whether the per-hop pipeline ([`World::offer`]) records the hop: its flow's arrival and
/// departure counts, a watched flow's arrival, the queue's length, the capture, and a device
/// queue's filling. A type parameter rather than a flag, so that on a quiet link the steps are
/// compiled out and the one pipeline costs what a pipeline written for quiet links alone would.
trait HopRecords {
    const ON: bool;
}

/// A quiet link's hop (`Link::quiet`): nothing recorded, no device queue.
struct Quiet;

/// A hop that is recorded or captured, or whose link has a device queue.
struct Recorded;

impl HopRecords for Quiet {
    const ON: bool = false;
}

impl HopRecords for Recorded {
    const ON: bool = true;
}

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
    pub arrivals: Box<dyn Arrivals>,
    pub budget: Budget,
    pub rec: Recorder,
    pub pcap: Captures,
    pub ip: IpConfig,
    pub changes: Timetable,
    pub routing_convergence: Dur,
    pub dependencies: Option<Box<Dependencies>>,
    pub pfc: Option<Box<Pfc>>,
}

impl World {
    pub(crate) fn assemble(p: WorldParts) -> World {
        let mut sched = Scheduler::default();
        let mut quench_senders: HashMap<(NodeId, NodeId), Vec<AgentId>> = HashMap::new();
        for (i, f) in p.flows.iter().enumerate() {
            // A flow that waits for others starts when they complete (`flow_completed`).
            if !p.dependencies.as_ref().is_some_and(|d| d.waits(FlowId(i as u32))) {
                sched.schedule(f.start, Event::Start(f.sender));
            }
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
            reassembly: (0..p.nodes.len()).map(|_| None).collect(),
            fragmentation: vec![FragmentStats::default(); p.nodes.len()],
            fragments: Vec::new(),
            reassembly_timers: Vec::new(),
            free_reassembly_timers: Vec::new(),
            ip: p.ip,
            link_cx: LinkCx { node_buffers: vec![NodeBuffers::default(); p.nodes.len()], ..LinkCx::default() },
            nodes: p.nodes,
            links: p.links,
            routes: p.routes,
            agents,
            flows,
            arrivals: p.arrivals,
            maybe_reclaimable: Vec::new(),
            budget: p.budget,
            budget_exceeded: None,
            quench_senders,
            rec: p.rec,
            pcap: p.pcap,
            unroutable_packets: 0,
            acting: None,
            deferred: Vec::new(),
            next_uid: 0,
            settled_events: 0,
            unseen: Vec::new(),
            changes: p.changes,
            routing_convergence: p.routing_convergence,
            telemetry: None,
            dependencies: p.dependencies,
            pfc: p.pfc,
            host_queues: None,
            arrived_by: None,
        };
        if world.flows.any_listed(|f| f.telemetry.is_some()) {
            world.telemetry = Some(Box::default());
        }
        for (f, info) in world.flows.listed_infos() {
            world.link_cx.priorities.set(f, info.priority);
        }
        for w in 0..world.arrivals.workloads() {
            world.schedule_arrival(w);
        }
        for (i, at) in world.changes.first_times() {
            world.sched.schedule(at, Event::LinkChange(i));
        }
        let pipe_changes = world.changes.links_whose_pipe_changes();
        for l in 0..world.links.len() {
            let id = LinkId(l as u32);
            world.mark_quiet(id);
            world.links[l].arrival_known_at_start =
                pipe_changes.binary_search_by_key(&id.0, |c| c.0).is_err() && world.links[l].arrival_is_fixed();
            if world.pfc.as_deref().is_some_and(|p| p.serves_control_first() && p.watches(id)) {
                world.links[l].serve_control_first();
            }
        }
        world
    }

    /// Whether nothing follows a packet through link `l` but its statistics and the
    /// telemetry a switch stamps into the packet (`stamps_telemetry`). A link that is down is
    /// never quiet: its offers go by the recorded path, which refuses them.
    fn is_quiet_but_for_telemetry(&self, l: LinkId) -> bool {
        let link = &self.links[l.index()];
        !self.rec.records_hops(l)
            && !self.pcap.captures(l)
            && !link.has_device_queue()
            && !link.is_down()
            && !self.pfc.as_deref().is_some_and(|p| p.watches(l))
            && !self.counts_host_queue(l)
    }

    /// Set link `l`'s `quiet` (nothing but its own statistics follows a packet through it,
    /// `Link::quiet`) and `starts_unseen` from what records it now. A start that
    /// only stamps telemetry is seen by nobody before its packet arrives, as long as no table
    /// of stamps is kept (whose rows come in the order of the starts): the stamp can be
    /// written late, with the start's own time and the link's state then (`settle_while`).
    fn mark_quiet(&mut self, l: LinkId) {
        let (unseen, stamps) = (self.is_quiet_but_for_telemetry(l), self.stamps_telemetry(l));
        let link_quiet = unseen && !stamps;
        let starts_unseen = unseen && (!stamps || !self.rec.records_telemetry(l));
        let link = &mut self.links[l.index()];
        link.quiet = link_quiet;
        link.starts_unseen = starts_unseen;
    }

    /// Whether a transmission starting on link `l` may release a host-queue count: a host's
    /// own interface, once an endpoint's bytes are counted.
    fn counts_host_queue(&self, l: LinkId) -> bool {
        self.host_queues.is_some() && !self.nodes[self.links[l.index()].from.index()].is_router
    }

    /// Whether link `l` stamps in-band telemetry: a switch's egress (HPCC's switches stamp; a
    /// host's own interface does not), once a flow collects it.
    fn stamps_telemetry(&self, l: LinkId) -> bool {
        self.telemetry.is_some() && self.nodes[self.links[l.index()].from.index()].is_router
    }

    /// A flow that collects telemetry arrived: start keeping records, and take the switches'
    /// links off the quiet path, where nothing is stamped.
    #[cold]
    fn start_telemetry(&mut self) {
        self.telemetry = Some(Box::default());
        self.requiet_links();
    }

    /// Packet `uid` left the network other than at its destination: its telemetry record goes.
    #[inline]
    fn forget_telemetry(&mut self, uid: u32) {
        if let Some(t) = self.telemetry.as_deref_mut() {
            t.forget(uid);
        }
    }

    /// Packet `uid` was dropped: its telemetry record goes, and it leaves its host's count.
    #[inline]
    fn forget_dropped(&mut self, uid: u32) {
        self.forget_telemetry(uid);
        self.left_host_queue(uid);
    }

    /// Packet `uid` left its host's queue: wake its endpoint if it waited for that.
    #[inline]
    fn left_host_queue(&mut self, uid: u32) {
        if let Some(agent) = self.host_queues.as_deref_mut().and_then(|h| h.left(uid)) {
            self.sched.schedule(self.now, Event::HostRoom(agent));
        }
    }

    /// An endpoint holds its sends by its host's queue: count its packets, and take the
    /// hosts' links off the quiet path, where no transmission start is seen.
    #[cold]
    fn start_host_queues(&mut self) {
        self.host_queues = Some(Box::default());
        self.requiet_links();
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Whether a scheduled change may take a link down.
    pub(crate) fn changes_take_links_down(&self) -> bool {
        self.changes.takes_links_down()
    }

    /// Ends the packets on the wire and in the queues, and the pending events, which no
    /// table reads (`results::collect`): the slab keeps room for the most packets the network
    /// held at once.
    pub(crate) fn release_packets(&mut self) {
        self.link_cx = LinkCx::default();
        self.sched = Scheduler::default();
        self.deferred = Vec::new();
        return_freed_pages();
    }

    /// Ends the senders, receivers and flows, once the tables that read them are made
    /// (`results::collect`): at 10,000 flows they are most of the world, and the links' table
    /// is still to come.
    pub(crate) fn release_endpoints(&mut self) {
        self.agents = Agents::default();
        self.flows = Flows::default();
        self.quench_senders = HashMap::new();
        self.maybe_reclaimable = Vec::new();
        return_freed_pages();
    }

    /// Ends the links, once their table and captures are made.
    pub(crate) fn release_links(&mut self) {
        self.links = Vec::new();
        self.unseen = Vec::new();
        return_freed_pages();
    }

    pub fn events_executed(&self) -> u64 {
        let due = self.links.iter().filter(|l| l.deferred_done().is_some_and(|at| at <= self.now)).count();
        self.sched.executed() + self.settled_events + due as u64
    }

    /// Carry out link `l`'s deferred end of transmission if it would already have run, and,
    /// on a link that runs unseen, the starts and ends that follow it up to now.
    #[inline]
    fn settle(&mut self, l: LinkId) {
        let due = |sched: &Scheduler<Event>, at: Time| sched.has_passed(at, &Event::TxDone(l));
        if self.links[l.index()].deferred_done().is_some_and(|at| due(&self.sched, at)) {
            self.settle_while(l, due);
        }
    }

    /// Carry out link `l`'s deferred ends of transmission while `due` says their time has come
    /// (the first is due): each puts its packet in the pipe and, if the link runs unseen
    /// (`Link::runs_unseen`), starts the next queued packet at that instant, exactly as the
    /// end's event and `start_tx` would have (with the telemetry stamp such a start writes,
    /// `stamp_late_start`). An end that cannot be deferred (`Link::defer_done`) is queued as
    /// an event, or, if its instant has come already (ranked before the event that settles
    /// it), carried out here next.
    #[inline(never)]
    fn settle_while(&mut self, l: LinkId, due: impl Fn(&Scheduler<Event>, Time) -> bool) {
        while let Some(at) = self.links[l.index()].deferred_done().filter(|&at| due(&self.sched, at)) {
            let link = &mut self.links[l.index()];
            if let Some(head) = link.settle_done(&mut self.link_cx.slab) {
                self.sched.schedule(head, Event::Arrive(l));
            }
            self.settled_events += 1;
            // With nothing queued the end's `start_tx` would find nothing to start.
            if !link.runs_unseen() || link.queue_is_inert() {
                return;
            }
            let started = link.start_tx(at, &mut self.link_cx);
            if !link.quiet && matches!(started, TxStart::Started(_)) {
                self.stamp_late_start(l, at);
            }
            let link = &mut self.links[l.index()];
            match started {
                TxStart::Started(done) => match link.defer_done() {
                    EndOfTx::Event if !due(&self.sched, done) => return self.sched.schedule(done, Event::TxDone(l)),
                    EndOfTx::Event => link.defer_due_end(),
                    EndOfTx::Deferred => {}
                    EndOfTx::DeferredUntilArrival(arrival) => self.sched.schedule(arrival, Event::Arrive(l)),
                },
                TxStart::Idle => return,
                TxStart::Wait(_) => unreachable!("a plain dequeue never asks to wait"),
            }
        }
    }

    /// Settle every link that runs unseen through `horizon`: every event at or before it has
    /// run, so every end due by then would have too.
    fn settle_unseen_through(&mut self, horizon: Time) {
        let mut unseen = std::mem::take(&mut self.unseen);
        unseen.retain(|&l| {
            self.settle_while(l, |_, at| at <= horizon);
            let link = &mut self.links[l.index()];
            link.listed_unseen = link.deferred_done().is_some();
            link.listed_unseen
        });
        self.unseen = unseen;
    }

    /// Links' `quiet` is about to change (a recorder of theirs starts): settle every link up to
    /// now, then mark each again, then queue as events the ends a link that no longer runs
    /// unseen can no longer defer.
    fn requiet_links(&mut self) {
        for l in 0..self.links.len() {
            self.settle(LinkId(l as u32));
        }
        for l in 0..self.links.len() {
            let id = LinkId(l as u32);
            self.mark_quiet(id);
            if let Some(at) = self.links[l].recheck_deferral() {
                self.sched.schedule(at, Event::TxDone(id));
            }
        }
    }

    /// Run every event due at or before `horizon` (capped at the scenario's end).
    pub fn run_until(&mut self, horizon: Time) {
        let horizon = horizon.min(self.end);
        while let Some((t, ev)) = self.sched.pop_until(horizon) {
            self.now = t;
            self.dispatch(ev);
        }
        self.settle_unseen_through(horizon);
        self.now = self.now.max(horizon);
    }

    /// Always inlined into the run loop: a call per event, and the loop's registers saved
    /// around it, cost some 5 % of a run's instructions.
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone(l) => self.on_tx_done(l),
            Event::Arrive(l) => self.on_arrive(l),
            Event::WireArrive(l) => self.on_wire_arrive(l),
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
            Event::LinkChange(i) => self.on_link_change(i),
            Event::Reroute => self.reroute(),
            Event::PfcPause(l, p) => self.on_pfc_frame((l, p), Frame::Pause),
            Event::PfcResume(l, p) => self.on_pfc_frame((l, p), Frame::Resume),
            Event::HostRoom(a) => self.run_agent(a, |ag, cx| ag.on_host_room(cx)),
        }
        if !self.maybe_reclaimable.is_empty() {
            self.reclaim_finished();
        }
    }

    /// Queue workload `w`'s next arrival, if it has one.
    fn schedule_arrival(&mut self, w: usize) {
        let Some(at) = self.arrivals.next_at(w) else { return };
        self.sched.schedule(Time::ZERO + at, Event::Arrival(w as u32));
    }

    /// Build workload `w`'s arrival due now, start it, and queue the workload's next one.
    fn on_arrival(&mut self, w: usize) {
        if self.flows.arrivals_held() as u64 >= self.budget.active_flows {
            // No arrival is built or drawn from here on; the caller stops the run on seeing it.
            self.budget_exceeded.get_or_insert_with(|| self.budget.active_flows_exceeded(self.now));
            return;
        }
        let ids = self.flows.next_ids();
        let net = (&self.nodes[..], &self.links[..], &self.routes);
        let Some((info, sender, receiver)) = self.arrivals.build_next(w, net, ids) else { return };
        if sender.reacts_to_source_quench() {
            self.quench_senders.entry((info.src, info.dst)).or_default().push(ids.1);
        }
        if info.telemetry.is_some() && self.telemetry.is_none() {
            self.start_telemetry();
        }
        self.rec.flow_arrived(ids.0, &info.name);
        self.link_cx.priorities.set(ids.0, info.priority);
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

    /// Reclaim the arrivals that finished during this event (see `flows.rs`). The list keeps
    /// its room from one event to the next: a flow with one packet in the network at a time (an
    /// RDMA NIC's) joins it at nearly every ACK, and a list taken empty each time cost an
    /// allocation and a free per event (3 % of a DCQCN fabric's instructions).
    fn reclaim_finished(&mut self) {
        let mut candidates = std::mem::take(&mut self.maybe_reclaimable);
        for &f in &candidates {
            if !self.flows.reclaimable(&self.agents, f) {
                continue;
            }
            let info = self.flows.info(f);
            if let Some(senders) = self.quench_senders.get_mut(&(info.src, info.dst)) {
                let sender = info.sender;
                senders.retain(|a| *a != sender);
            }
            if let Some(t) = self.telemetry.as_deref_mut() {
                t.flow_ended(f);
            }
            if let Some(h) = self.host_queues.as_deref_mut() {
                h.forget(info.sender);
            }
            self.link_cx.priorities.forget(f);
            self.flows.reclaim(&mut self.agents, f);
        }
        candidates.clear();
        if self.maybe_reclaimable.is_empty() {
            self.maybe_reclaimable = candidates;
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
        let nodes = &self.nodes;
        let table = crate::flows::flow_rows(|n| nodes[n.index()].name.clone(), self.end, rows);
        self.rec.spill_table(&table);
    }

    /// A flow others wait for has just acted: if it has completed, start the flows that waited
    /// only for it, each its `start` after now.
    #[cold]
    #[inline(never)]
    fn flow_completed(&mut self, flow: FlowId) {
        let Some(at) = self.flows.completion(&self.agents, flow) else { return };
        let deps = self.dependencies.as_mut().expect("asked only when there are dependencies");
        for (f, start) in deps.completed(flow, at.max(self.now)) {
            let sender = self.flows.start_listed(f, start);
            self.sched.schedule(start, Event::Start(sender));
        }
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
        let mut cx = AgentCx::new(self.now, id, node, self);
        act(agent, &mut cx);
        self.acting = None;
        self.put_back(agents);
        let flow = FlowId(id.0 / 2);
        if self.flows.is_arrival(flow) {
            self.maybe_reclaimable.push(flow);
        }
        if self.dependencies.as_ref().is_some_and(|d| d.awaited(flow)) {
            self.flow_completed(flow);
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
            Delivery::Packet(a, pkt) => {
                self.run_agent(a, |ag, cx| ag.on_packet(pkt, cx));
                self.forget_telemetry(pkt.uid);
            }
            Delivery::SourceQuench(a) => self.run_agent(a, |ag, cx| ag.on_source_quench(cx)),
        }
    }

    /// A packet held in slab entry `id` is at node `at`: consume it there, or send it one hop
    /// on in its entry; the answer is what the next queue did with it. This is the one path
    /// of every packet through a node, whether an endpoint sent it, a qdisc originated it or
    /// it came off a link's pipe: the packet stays in the entry it took when it entered the
    /// network until it reaches its destination or is dropped, so a hop never copies it.
    /// Inlined into its callers (the end of a pipe, a send), with the quiet pipeline below it,
    /// so that a hop through a quiet link makes no call of its own.
    #[inline(always)]
    fn forward(&mut self, at: NodeId, id: EntryId) -> Admission {
        let pkt = self.link_cx.slab.held(id);
        if pkt.dst == at {
            let pkt = self.link_cx.slab.release(id);
            self.consume(at, &pkt);
            return Admission::Accepted;
        }
        let hop = self.routes.route(at, pkt, self.now);
        self.forward_over(hop, id)
    }

    /// A packet reached its destination host `at`: a fragment waits for its datagram, a
    /// Source Quench goes to the senders it names, anything else to its endpoint (now, or once
    /// the endpoint acting now has returned).
    #[inline(never)]
    fn consume(&mut self, at: NodeId, pkt: &Packet) {
        if pkt.frag.is_fragment() {
            self.reassemble(at, pkt);
            return;
        }
        self.packet_left(pkt.flow);
        self.rec.packet_arrived(self.now, pkt);
        if let Some(t) = self.telemetry.as_deref_mut() {
            t.on_arrival(pkt);
        }
        if pkt.proto == Proto::Icmp {
            self.on_icmp(at, pkt);
        } else if self.acting.is_none() {
            // Straight to the endpoint: through `deliver` the packet would be copied twice more.
            self.run_agent(pkt.dst_agent, |ag, cx| ag.on_packet(*pkt, cx));
            self.forget_telemetry(pkt.uid);
        } else {
            self.deferred.push(Delivery::Packet(pkt.dst_agent, *pkt));
        }
    }

    /// Send the packet in entry `id` on over `hop`, the link routing chose for it (once: a
    /// spraying switch's choice advances its turn), or count it unroutable.
    #[inline(always)]
    fn forward_over(&mut self, hop: Option<LinkId>, id: EntryId) -> Admission {
        if let Some(l) = hop {
            return self.enqueue(l, id);
        }
        let pkt = self.link_cx.slab.release(id);
        self.packet_left(pkt.flow);
        self.forget_dropped(pkt.uid);
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
            Reassembled::Datagram(whole) => self.consume(at, &whole),
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

    /// Offer the packet in entry `id` to link `l`, fragmenting it first if it exceeds the
    /// link's MTU. A quiet link (`Link::quiet`, nearly every link of a large network) takes
    /// the pipeline with nothing to record; any other the same pipeline with its records.
    /// Always inlined (see `forward`): as a call, every hop would save and restore the
    /// registers of the whole pipeline.
    #[inline(always)]
    fn enqueue(&mut self, l: LinkId, id: EntryId) -> Admission {
        let link = &self.links[l.index()];
        if self.link_cx.slab.held(id).size as u64 > link.mtu.0 {
            return self.enqueue_fragments(l, id);
        }
        if link.quiet {
            self.offer::<Quiet>(l, id)
        } else {
            self.offer_recorded(l, id)
        }
    }

    /// [`World::offer`] with the hop's records. Out of line, so that the quiet pipeline,
    /// inlined into its callers, saves only the registers it uses.
    #[inline(never)]
    fn offer_recorded(&mut self, l: LinkId, id: EntryId) -> Admission {
        if self.links[l.index()].is_down() {
            return self.refuse_while_down(l, id);
        }
        self.offer::<Recorded>(l, id)
    }

    /// A packet offered to link `l` while it is down (routing has not converged around it yet):
    /// dropped and recorded.
    #[cold]
    #[inline(never)]
    fn refuse_while_down(&mut self, l: LinkId, id: EntryId) -> Admission {
        self.links[l.index()].refuse_while_down(self.now, id, &mut self.link_cx);
        self.record_queue_change(l, None);
        Admission::Refused
    }

    /// The packet in entry `id` is too large for link `l`: send its fragments instead. A
    /// fragmented datagram is refused if any of its fragments is (Linux's `ip_do_fragment`
    /// returns the first fragment's error; unlike Linux, the fragments after it still go).
    #[cold]
    #[inline(never)]
    fn enqueue_fragments(&mut self, l: LinkId, id: EntryId) -> Admission {
        let pkt = self.link_cx.slab.release(id);
        debug_assert!(!pkt.frag.dont, "the builder rejects don't-fragment flows on paths that fragment");
        self.flows.fragmented(pkt.flow);
        let link = &self.links[l.index()];
        let mut pieces = std::mem::take(&mut self.fragments);
        ip::fragment(&pkt, link.mtu.0 as u16, link.fragment_rule, &mut pieces);
        let stats = &mut self.fragmentation[link.from.index()];
        stats.datagrams_fragmented += 1;
        stats.fragments_created += pieces.len() as u64;
        let quiet = link.quiet;
        let mut admission = Admission::Accepted;
        for piece in pieces.drain(..) {
            let id = self.link_cx.slab.hold(piece);
            let verdict = if quiet { self.offer::<Quiet>(l, id) } else { self.offer_recorded(l, id) };
            if verdict == Admission::Refused {
                admission = Admission::Refused;
            }
        }
        self.fragments = pieces;
        admission
    }

    /// The per-hop pipeline: offer the packet in entry `id` (within the MTU) to link `l`. An
    /// idle link whose qdisc lets the packet pass sends it at once, the entry becoming the
    /// transmitter's (`Link::cut_through`); otherwise the qdisc takes the entry, and the link
    /// starts sending if it may. `R` says whether the hop is recorded (see [`HopRecords`]).
    #[inline(always)]
    fn offer<R: HopRecords>(&mut self, l: LinkId, id: EntryId) -> Admission {
        self.end_deferral(l);
        let before = if R::ON { self.record_arrival(l, id) } else { None };
        let link = &mut self.links[l.index()];
        // A recorded queue must see the packet queue and leave: its length record changes.
        // So must a paused link's (`pfc.rs`; never a quiet one).
        let hold = R::ON && (self.rec.wants_queue(l) || link.is_paused());
        if link.can_cut_through(self.link_cx.slab.held(id)) && !hold {
            let done = link.cut_through(self.now, id, &mut self.link_cx.slab);
            self.tx_started(l, done);
            return Admission::Accepted;
        }
        let admission = self.links[l.index()].enqueue(self.now, id, &mut self.link_cx);
        self.after_queue_change(l, before);
        // A device queue takes what the qdisc releases at once, even while the link sends.
        let link = &self.links[l.index()];
        if link.ready_to_send() || (R::ON && link.has_device_queue()) {
            self.start_tx(l);
        }
        admission
    }

    /// Record the arrival of the packet in entry `id` at link `l` (its flow's hop count, a
    /// watched flow's arrival); returns the link's backlog before it if the link's queue
    /// length is recorded.
    #[inline(never)]
    fn record_arrival(&mut self, l: LinkId, id: EntryId) -> Option<Backlog> {
        let pkt = self.link_cx.slab.held(id);
        self.rec.flow_links.count(pkt.flow, l, pkt.size, Fate::Arrived);
        let link = &self.links[l.index()];
        self.rec.watch_arrival(self.now, l, pkt, || link.backlog().packets);
        let before = self.rec.wants_queue(l).then(|| link.backlog());
        let (key, size) = (pkt.wire_key(), pkt.size);
        if let Some(pfc) = self.pfc.as_deref_mut() {
            // The packet came off link `ingress` to this link's node, a PFC switch's if this
            // link leaves one; the switch counts it if its priority is lossless and it is not
            // of the control class.
            let priority = self.link_cx.priorities.of(pkt.flow);
            let counted = pfc.is_switch(self.links[l.index()].from) && pfc.counts(pkt, priority);
            if let Some(ingress) = self.arrived_by.take().filter(|_| counted) {
                if pfc.admit(key, ingress, priority, size).is_some() {
                    self.send_pfc_frame((ingress, priority), Frame::Pause);
                }
            }
        }
        before
    }

    /// A packet is about to be offered to link `l`: carry out the link's deferred end of
    /// transmission if it would already have run, or else queue it as an event (the packet
    /// may change what that end does).
    #[inline]
    fn end_deferral(&mut self, l: LinkId) {
        self.settle(l);
        if let Some(at) = self.links[l.index()].undefer_for_enqueue() {
            self.sched.schedule(at, Event::TxDone(l));
        }
    }

    fn start_tx(&mut self, l: LinkId) {
        let link = &mut self.links[l.index()];
        // The backlog before is wanted only for a queue record, never on a quiet link.
        let before = (!link.quiet && self.rec.wants_queue(l)).then(|| link.backlog());
        match link.start_tx(self.now, &mut self.link_cx) {
            TxStart::Started(done) => self.tx_started(l, done),
            TxStart::Idle => {}
            TxStart::Wait(t) => self.sched.schedule(t, Event::Wake(l)),
        }
        self.after_queue_change(l, before);
    }

    /// Link `l` started sending a packet, to end at `done`: queue (or defer) the end of
    /// transmission, and record the packet's sojourn and capture.
    fn tx_started(&mut self, l: LinkId, done: Time) {
        let link = &mut self.links[l.index()];
        match link.defer_done() {
            EndOfTx::Event => self.sched.schedule(done, Event::TxDone(l)),
            EndOfTx::Deferred => {}
            EndOfTx::DeferredUntilArrival(arrival) => self.sched.schedule(arrival, Event::Arrive(l)),
        }
        if link.deferred_done().is_some() && link.runs_unseen() && !link.listed_unseen {
            link.listed_unseen = true;
            self.unseen.push(l);
        }
        if !link.quiet {
            self.record_tx_start(l);
        }
    }

    /// The packet link `l` started sending: its departure count, sojourn, telemetry hop and
    /// capture (which shows the hop this switch just wrote).
    #[inline(never)]
    fn record_tx_start(&mut self, l: LinkId) {
        let link = &self.links[l.index()];
        let p = link.in_transmission(&self.link_cx.slab).expect("a transmission just started");
        self.rec.flow_links.count(p.flow, l, p.size, Fate::Departed);
        self.rec.sojourn(self.now, l, p.flow, self.now - p.enqueued_at, p.ecn);
        let (uid, key, flow) = (p.uid, p.wire_key(), p.flow);
        if self.stamps_telemetry(l) {
            self.stamp_telemetry(l, uid, flow, self.now);
        }
        if let Some(w) = self.pcap.get_mut(l) {
            let p = self.links[l.index()].in_transmission(&self.link_cx.slab).expect("in transmission");
            let info = self.flows.info(flow);
            let int = info.telemetry.filter(|h| h.on_wire);
            let record = int.and(self.telemetry.as_deref()).and_then(|t| t.record_of(uid));
            w.write(self.now, p, info.src, &info.handshake, int.map(|h| (h, record)), info.priority);
        }
        // A PFC switch holds what arrived at its own links only (`record_arrival`).
        let from = self.links[l.index()].from;
        let pfc = self.pfc.as_deref_mut().filter(|pfc| pfc.is_switch(from));
        if let Some(port) = pfc.and_then(|pfc| pfc.release(key)) {
            self.send_pfc_frame(port, Frame::Resume);
        }
        // Only a host's own interface counts its endpoints' packets.
        if self.counts_host_queue(l) {
            self.left_host_queue(uid);
        }
    }

    /// A link that runs unseen but is not quiet (it stamps telemetry, and nothing else sees a
    /// start: `mark_quiet`) started a packet late, in a settlement, at `at`: the stamp its
    /// start's event would have written then, from the link's state as it was then (nothing
    /// touched the link since, or it would have been settled). Out of line: a quiet link's
    /// settlement, the common one, does without it.
    #[inline(never)]
    fn stamp_late_start(&mut self, l: LinkId, at: Time) {
        debug_assert!(self.stamps_telemetry(l) && self.is_quiet_but_for_telemetry(l));
        let p = self.links[l.index()].in_transmission(&self.link_cx.slab).expect("a transmission just started");
        let (uid, flow) = (p.uid, p.flow);
        self.stamp_telemetry(l, uid, flow, at);
    }

    /// Switch egress `l` starts sending packet `uid` of `flow`: the hop it appends to the
    /// packet's telemetry record, if it gathers one, and its row in the telemetry table.
    fn stamp_telemetry(&mut self, l: LinkId, uid: u32, flow: FlowId, at: Time) {
        let link = &self.links[l.index()];
        let hop =
            HopRecord { queue: Bytes(link.backlog().bytes), tx_bytes: link.departed_bytes(), at, rate: link.rate() };
        if let Some(index) = self.telemetry.as_deref_mut().and_then(|t| t.stamp(uid, hop)) {
            self.rec.telemetry_hop(l, flow, uid, index, &hop);
        }
    }

    /// Record drops and the new queue length (when `before`, the backlog before the change,
    /// was taken for it); route control packets the qdisc originated.
    #[inline]
    fn after_queue_change(&mut self, l: LinkId, before: Option<Backlog>) {
        // Nearly always nothing to do: one test instead of four.
        if before.is_some() || !self.link_cx.out.is_empty() {
            self.record_queue_change(l, before);
        }
    }

    fn record_queue_change(&mut self, l: LinkId, before: Option<Backlog>) {
        if !self.link_cx.out.drops.is_empty() {
            let mut drops = std::mem::take(&mut self.link_cx.out.drops);
            for (p, reason) in drops.drain(..) {
                let fate = if reason.on_the_wire() { Fate::Lost } else { Fate::Dropped };
                self.rec.flow_links.count(p.flow, l, p.size, fate);
                self.rec.packet_dropped(self.now, l, &p, reason as u8);
                self.packet_left(p.flow);
                self.forget_dropped(p.uid);
                if let Some(port) = self.pfc.as_deref_mut().and_then(|pfc| pfc.release(p.wire_key())) {
                    self.send_pfc_frame(port, Frame::Resume);
                }
            }
            self.link_cx.out.drops = drops;
        }
        if !self.link_cx.out.monitors.is_empty() {
            for (name, value) in self.link_cx.out.monitors.drain(..) {
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
        if !self.link_cx.out.emitted.is_empty() {
            let from = link.from;
            let emitted = std::mem::take(&mut self.link_cx.out.emitted);
            for mut p in emitted {
                self.flows.sent(p.flow);
                p.uid = self.next_uid;
                self.next_uid = self.next_uid.wrapping_add(1);
                p.sent_at = self.now;
                let id = self.link_cx.slab.hold(p);
                self.arrived_by = None;
                self.forward(from, id);
            }
        }
    }

    fn on_tx_done(&mut self, l: LinkId) {
        match self.links[l.index()].finish_tx(self.now, &mut self.link_cx.slab) {
            TxEnd::Pipe(Some(arrival)) => self.sched.schedule(arrival, Event::Arrive(l)),
            TxEnd::Pipe(None) => {}
            TxEnd::OnWire(arrival) => self.sched.schedule(arrival, Event::WireArrive(l)),
            TxEnd::Lost(lost) => {
                let reason = crate::qdisc::DropReason::LinkLoss as u8;
                self.rec.flow_links.count(lost.flow, l, lost.size, Fate::Lost);
                self.rec.packet_dropped(self.now, l, &lost, reason);
                self.packet_left(lost.flow);
                self.forget_telemetry(lost.uid);
            }
            TxEnd::Cut => {}
        }
        self.start_tx(l);
    }

    fn on_arrive(&mut self, l: LinkId) {
        // Here, where `l` is at hand, rather than beside the forward below, across calls.
        self.arrived_by = Some(l);
        self.settle(l);
        let link = &mut self.links[l.index()];
        let (id, next) = link.deliver_head(&mut self.link_cx.slab);
        let to = link.to;
        if let Some(t) = next {
            self.sched.schedule(t, Event::Arrive(l));
        }
        if let Some(id) = id {
            self.forward(to, id);
        }
    }

    /// The PFC switch at link `l`'s far end sends a pause or resume for its `priority`: the
    /// frame takes effect at `l`'s sending end when `Pfc::frame_due` says.
    #[cold]
    fn send_pfc_frame(&mut self, (l, priority): (LinkId, u8), frame: Frame) {
        let pfc = self.pfc.as_deref_mut().expect("called in runs with PFC");
        let back = &self.links[pfc.reverse(l).index()];
        let at = pfc.frame_due((l, priority), self.now, back.transmission_ends(), back.rate(), back.delay);
        let event = match frame {
            Frame::Pause => Event::PfcPause(l, priority),
            Frame::Resume => Event::PfcResume(l, priority),
        };
        self.sched.schedule(at, event);
    }

    /// A pause or resume frame for link `l`'s `priority` reached its sending end: the link
    /// stops starting transmissions of the priority, or starts again.
    #[cold]
    #[inline(never)]
    fn on_pfc_frame(&mut self, (l, priority): (LinkId, u8), frame: Frame) {
        let pfc = self.pfc.as_deref_mut().expect("only runs with PFC send frames");
        if !pfc.frame_arrived(self.now, (l, priority), frame) {
            return;
        }
        let paused = frame == Frame::Pause;
        self.links[l.index()].set_paused(priority, paused);
        let paused_now = self.links[l.index()].paused_priorities();
        self.rec.monitor(self.now, l, "pfc_paused", paused_now as f64);
        if !paused {
            self.settle(l);
            self.start_tx(l);
        }
    }

    /// PFC's state, if the run has it.
    pub(crate) fn pfc(&self) -> Option<&Pfc> {
        self.pfc.as_deref()
    }
}

impl World {
    /// An arrival on a link with jitter or corruption (each packet has its own event): forward
    /// the earliest packet, or record the discard of a corrupted one at the receiving node.
    #[inline(never)]
    fn on_wire_arrive(&mut self, l: LinkId) {
        let link = &mut self.links[l.index()];
        let to = link.to;
        match link.arrive_on_wire(&mut self.link_cx.slab) {
            Ok(id) => {
                self.arrived_by = Some(l);
                self.forward(to, id);
            }
            Err(Some(corrupted)) => {
                let reason = crate::qdisc::DropReason::Corrupted as u8;
                self.rec.flow_links.count(corrupted.flow, l, corrupted.size, Fate::Lost);
                self.rec.packet_dropped(self.now, l, &corrupted, reason);
                self.packet_left(corrupted.flow);
                self.forget_telemetry(corrupted.uid);
            }
            // Cut off when the link went down: recorded then.
            Err(None) => {}
        }
    }

    /// A scheduled link change is due: apply it to each of its links, queue the entry's next
    /// occurrence, and queue the routes' recomputation if a link went down or came up.
    #[cold]
    #[inline(never)]
    fn on_link_change(&mut self, i: u32) {
        let (links, change, next) = self.changes.due(i);
        let links = links.to_vec();
        if let Some(at) = next.filter(|&at| at < self.end) {
            self.sched.schedule(at, Event::LinkChange(i));
        }
        let mut flipped = false;
        for l in links {
            flipped |= self.apply_change(l, change);
        }
        if flipped {
            self.sched.schedule(self.now + self.routing_convergence, Event::Reroute);
        }
    }

    /// Apply `change` to link `l`; whether the link went down or came up.
    fn apply_change(&mut self, l: LinkId, change: Change) -> bool {
        // What the link did before this instant did it at the rate and delay it had then.
        self.settle(l);
        let link = &mut self.links[l.index()];
        if let Some(rate) = change.rate {
            link.set_rate(rate);
        }
        if let Some(delay) = change.delay {
            link.set_delay(delay);
        }
        match change.up {
            Some(false) if !link.is_down() => {
                // The end of the transmission in progress must run as an event to discard it
                // (the link was settled above).
                if let Some(at) = self.links[l.index()].undefer_done() {
                    self.sched.schedule(at, Event::TxDone(l));
                }
                let before = self.links[l.index()].backlog();
                self.links[l.index()].go_down(self.now, &mut self.link_cx);
                self.mark_quiet(l);
                self.record_queue_change(l, Some(before));
                true
            }
            Some(true) if self.links[l.index()].is_down() => {
                self.links[l.index()].come_up();
                self.mark_quiet(l);
                // A qdisc that held packets back while the link was down may send them now.
                self.start_tx(l);
                true
            }
            _ => false,
        }
    }

    /// Routing has converged: compute the routes over the links that are up.
    #[cold]
    #[inline(never)]
    fn reroute(&mut self) {
        let ends: Vec<(NodeId, NodeId)> = self.links.iter().map(|l| (l.from, l.to)).collect();
        let links = &self.links;
        self.routes.recompute(&ends, &|i| !links[i].is_down());
    }
}

impl Host for World {
    fn send(&mut self, node: NodeId, mut pkt: Packet) -> Admission {
        pkt.uid = self.next_uid;
        self.next_uid = self.next_uid.wrapping_add(1);
        pkt.sent_at = self.now;
        self.flows.sent(pkt.flow);
        if let (Some(h), Some(agent)) = (self.host_queues.as_deref_mut(), self.acting) {
            if h.counts(agent) && pkt.dst != node {
                h.sent(agent, pkt.uid, pkt.size);
            }
        }
        if let Some(t) = self.telemetry.as_deref_mut() {
            let info = self.flows.info(pkt.flow);
            if let Some(header) = info.telemetry {
                t.on_send(&pkt, pkt.src == info.src, header);
            }
        }
        // Copied once, into the entry it keeps until it leaves the network.
        let id = self.link_cx.slab.hold(pkt);
        self.arrived_by = None;
        let admission = self.forward(node, id);
        if let Some(h) = self.host_queues.as_deref_mut() {
            h.offered();
        }
        admission
    }

    fn arm(&mut self, owner: AgentId, at: Time, timer: Timer) {
        self.sched.schedule(at, Event::Timer(owner, timer));
    }

    fn recorder(&mut self) -> &mut Recorder {
        &mut self.rec
    }

    fn telemetry(&self, uid: u32) -> Option<IntRecord> {
        self.telemetry.as_deref().and_then(|t| t.echo_of(uid)).copied()
    }

    fn count_host_queue(&mut self, agent: AgentId) {
        if self.host_queues.is_none() {
            self.start_host_queues();
        }
        self.host_queues.as_deref_mut().expect("started above").count(agent);
    }

    fn host_queued(&self, agent: AgentId) -> Bytes {
        self.host_queues.as_deref().map_or(Bytes(0), |h| h.queued(agent))
    }

    fn wake_on_host_room(&mut self, agent: AgentId) {
        if let Some(h) = self.host_queues.as_deref_mut() {
            h.wait(agent);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The world can move to another thread (the bindings run it with Python's lock released).
    #[test]
    fn the_world_is_send() {
        fn send<T: Send>() {}
        send::<super::World>();
    }

    /// An event fits 16 bytes, so an event-queue entry (16-byte key beside it) takes 32.
    #[test]
    fn events_stay_small() {
        assert!(std::mem::size_of::<super::Event>() <= 16, "{}", std::mem::size_of::<super::Event>());
    }

    /// No telemetry record outlives its packet: two HPCC flows start at line rate into a
    /// 4-packet buffer, so packets are dropped; once both transfers are done and the network
    /// is empty, no record is left, and every drop was of a packet that had one.
    #[test]
    fn telemetry_records_leave_with_their_packets() {
        let sc = crate::scenario::Scenario::from_json(
            r#"{"duration": "200ms", "seed": 1,
                "hosts": ["a", "b", "c"], "routers": ["r1", "r2"],
                "links": [
                  {"from": "a", "to": "r1", "rate": "10Gbps", "delay": "1us"},
                  {"from": "b", "to": "r1", "rate": "10Gbps", "delay": "1us"},
                  {"from": "r1", "to": "r2", "rate": "10Gbps", "delay": "1us", "qdisc": {"kind": "droptail", "limit": "4p"}},
                  {"from": "r2", "to": "c", "rate": "10Gbps", "delay": "1us"}],
                "flows": [
                  {"kind": "tcp", "src": "a", "dst": "c", "cc": "hpcc", "bytes": "2MB"},
                  {"kind": "tcp", "src": "b", "dst": "c", "cc": "hpcc", "bytes": "2MB"}]}"#,
        )
        .unwrap();
        let mut world = crate::builder::build(&sc).unwrap();
        world.run_until(world.end);
        let drops: u64 = world.links.iter().map(|l| l.stats_at(world.now).dropped_packets.iter().sum::<u64>()).sum();
        assert!(drops > 0, "the buffer must overflow for the test to mean anything");
        let flows = world.flows.listed_rows(&world.agents).filter(|(_, _, row)| row.completion.is_some()).count();
        assert_eq!(flows, 2, "both transfers complete");
        assert_eq!(world.telemetry.as_ref().map(|t| t.in_flight()), Some(0));
    }
}
