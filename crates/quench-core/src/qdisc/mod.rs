//! Queue disciplines. A qdisc stores packets and decides which to drop, mark or send next; the
//! link around it transmits and keeps the statistics, so every discipline gets drop-by-reason
//! counting, sojourn times and the accounting identities for free.
//!
//! Adding a discipline is one file (a config struct with `deny_unknown_fields`, a `new(&cfg)`
//! that names any bad field, the [`Qdisc`] impl, its tests) plus one line in `registry!` below
//! (`boxed` unless it is as small as drop-tail: see `slot!`; `own` unless it keeps its packets
//! in the world's slab: see [`SlabEnqueue`]).
//!
//! Must not touch: the link, the world or any endpoint. A discipline sees the packets it is
//! given and its [`QdiscCx`] (clock, link rate, random stream, outboxes, the node's buffer
//! pool); it reads a transport's constants only where a packet's fields mean them
//! (`rate_advert.rs`, the assisted ideal's stamp; `trim.rs`, NDP's header bits in `packet.rs`).

pub mod choke;
pub mod classes;
pub mod classify;
pub mod codel;
pub mod droptail;
pub mod drr;
pub mod dualpi2;
pub mod dummynet;
pub mod fifo;
pub mod flow_queues;
pub mod fq;
pub mod fq_codel;
pub mod fq_pie;
pub mod fuzzball;
pub mod pie;
pub mod rate_advert;
pub mod red;
pub mod sfq;
pub mod step;
pub mod trim;

use crate::error::ConfigError;
use crate::packet::{FlowPriorities, NodeId, Packet};
use crate::rng::Rng;
use crate::slab::{EntryId, PacketSlab};
use crate::units::{BitRate, Time};
use serde::Serialize;
use std::collections::BTreeMap;

/// Why a packet was discarded. The order is the column order of result tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer was full on arrival (drop-tail).
    Overflow = 0,
    /// Discarded from the queue to make room for another source's packet.
    Preempted,
    /// An active queue manager's congestion drop below its hard limit: RED's early region,
    /// CoDel's control law (at dequeue), PIE's drop probability.
    Early,
    /// A forced drop of an active queue manager (RED above max_th).
    Forced,
    /// Lost on the wire by a link's loss module.
    LinkLoss,
    /// Corrupted on the wire and discarded by the receiving node (`wire.rs`).
    Corrupted,
    /// Queued at, or offered to, a link that went down (`changes.rs`): never sent.
    LinkDown,
    /// In transmission or propagation on a link when it went down: cut off on the wire.
    LinkCut,
}

impl DropReason {
    pub const ALL: [DropReason; 8] = [
        DropReason::Overflow,
        DropReason::Preempted,
        DropReason::Early,
        DropReason::Forced,
        DropReason::LinkLoss,
        DropReason::Corrupted,
        DropReason::LinkDown,
        DropReason::LinkCut,
    ];
    pub const COUNT: usize = Self::ALL.len();
    /// Whether the packet had left the queue (it was lost, corrupted or cut off on the wire):
    /// the link's identities count these among departures, the others among arrivals.
    pub fn on_the_wire(self) -> bool {
        matches!(self, DropReason::LinkLoss | DropReason::Corrupted | DropReason::LinkCut)
    }
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Preempted => "preempted",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::LinkLoss => "link_loss",
            DropReason::Corrupted => "corrupted",
            DropReason::LinkDown => "link_down",
            DropReason::LinkCut => "link_cut",
        }
    }
}

/// What a qdisc may touch while it runs: the clock, its own random stream, the link's rate,
/// and outboxes for drops and for control packets it originates (e.g. ICMP Source Quench).
pub struct QdiscCx<'a> {
    pub now: Time,
    pub link_rate: BitRate,
    pub rng: &'a mut Rng,
    pub(crate) drops: &'a mut Vec<(Packet, DropReason)>,
    pub(crate) emitted: &'a mut Vec<Packet>,
    pub(crate) marks: u64,
    pub(crate) monitors: &'a mut Vec<(&'static str, f64)>,
    /// Buffer accounting shared by the pooled queues of this link's node.
    pub node: &'a mut NodeBuffers,
    /// The node the queue belongs to (the source of packets it originates).
    pub node_id: NodeId,
    /// The slab that holds drop-tail's packets (`slab.rs`).
    pub(crate) slab: &'a mut PacketSlab,
    /// Each flow's priority (IEEE 802.1p), for a qdisc that keeps priorities apart.
    pub priorities: &'a FlowPriorities,
}

/// Buffers shared by all pooled output queues of one node (a gateway-wide pool, as in the
/// Fuzzball): totals, bytes per source host, and deferred preemptions. Ordered maps keep
/// every choice deterministic. Every node has one, and only a node with a pooled queue fills
/// it: until its first packet it is a null pointer (8 bytes, where the pool takes 64; a
/// 10,000-flow dumbbell has 20,002 nodes).
#[derive(Clone, Debug, Default)]
pub struct NodeBuffers(Option<Box<Pool>>);

#[derive(Clone, Debug, Default)]
struct Pool {
    packets: u64,
    bytes: u64,
    by_source: BTreeMap<NodeId, u64>,
    debts: BTreeMap<NodeId, u32>,
}

impl NodeBuffers {
    fn pool(&mut self) -> &mut Pool {
        self.0.get_or_insert_with(Box::default)
    }

    /// Packets held in the node's pooled queues.
    pub fn packets(&self) -> u64 {
        self.0.as_ref().map_or(0, |p| p.packets)
    }

    /// Bytes held in the node's pooled queues.
    pub fn bytes(&self) -> u64 {
        self.0.as_ref().map_or(0, |p| p.bytes)
    }

    pub fn hold(&mut self, p: &Packet) {
        let pool = self.pool();
        pool.packets += 1;
        pool.bytes += p.size as u64;
        *pool.by_source.entry(p.src).or_default() += p.size as u64;
    }

    pub fn release(&mut self, p: &Packet) {
        let pool = self.0.as_mut().expect("released a packet never held");
        pool.packets -= 1;
        pool.bytes -= p.size as u64;
        let held = pool.by_source.get_mut(&p.src).expect("released a packet never held");
        *held -= p.size as u64;
        if *held == 0 {
            pool.by_source.remove(&p.src);
        }
    }

    pub fn queued_by(&self, src: NodeId) -> u64 {
        self.0.as_ref().and_then(|p| p.by_source.get(&src).copied()).unwrap_or(0)
    }

    /// The source with the most bytes queued (lowest id on ties).
    pub fn heaviest(&self) -> Option<NodeId> {
        let by_source = &self.0.as_ref()?.by_source;
        by_source.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(n, _)| *n)
    }

    /// The heaviest source if `arrival` were queued too; ties go to the arrival's source.
    pub fn heaviest_with(&self, arrival: &Packet) -> NodeId {
        let own = self.queued_by(arrival.src) + arrival.size as u64;
        match self.heaviest() {
            Some(h) if h != arrival.src && self.queued_by(h) > own => h,
            _ => arrival.src,
        }
    }

    /// Owe the discard of one of `src`'s packets queued elsewhere on this node.
    pub fn add_debt(&mut self, src: NodeId) {
        *self.pool().debts.entry(src).or_default() += 1;
    }

    /// Settle one debt of `src` (true: discard the packet in hand).
    pub fn pay_debt(&mut self, src: NodeId) -> bool {
        let Some(debts) = self.0.as_mut().map(|p| &mut p.debts) else { return false };
        match debts.get_mut(&src) {
            Some(n) => {
                *n -= 1;
                if *n == 0 {
                    debts.remove(&src);
                }
                true
            }
            None => false,
        }
    }
}

impl QdiscCx<'_> {
    /// Hand a packet back as discarded (the arriving one or one already queued).
    pub fn drop(&mut self, pkt: Packet, reason: DropReason) {
        self.drops.push((pkt, reason));
    }
    /// Count a congestion mark the qdisc set instead of dropping (ECN CE).
    pub fn note_mark(&mut self) {
        self.marks += 1;
    }
    /// Originate a control packet at this link's node (routed like any packet).
    pub fn emit(&mut self, pkt: Packet) {
        self.emitted.push(pkt);
    }
    /// Report an internal variable (e.g. RED's average queue, max_p) for the `monitors`
    /// table; recorded with the time and link when `record.monitors` is on.
    pub fn monitor(&mut self, name: &'static str, value: f64) {
        self.monitors.push((name, value));
    }
}

pub enum Dequeued {
    Packet(Packet),
    /// A packet the discipline kept in the world's slab, handed over in its entry: the link
    /// makes that entry its transmitter's, so the packet is not copied.
    Held(EntryId),
    Empty,
    /// Packets wait, but none may leave before this time (pacers, shapers).
    NotBefore(Time),
}

impl Dequeued {
    /// The packet dequeued, if any, taken out of the slab if it came in its entry.
    pub fn into_packet(self, slab: &mut PacketSlab) -> Option<Packet> {
        match self {
            Dequeued::Packet(p) => Some(p),
            Dequeued::Held(id) => Some(slab.release(id)),
            Dequeued::Empty | Dequeued::NotBefore(_) => None,
        }
    }
}

/// Current occupancy of a queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: u64,
    pub bytes: u64,
}

/// Two queues' occupancy together (a discipline of several queues).
impl std::ops::Add for Backlog {
    type Output = Backlog;
    fn add(self, other: Backlog) -> Backlog {
        Backlog { packets: self.packets + other.packets, bytes: self.bytes + other.bytes }
    }
}

impl std::iter::Sum for Backlog {
    fn sum<I: Iterator<Item = Backlog>>(iter: I) -> Backlog {
        iter.fold(Backlog::default(), std::ops::Add::add)
    }
}

pub trait Qdisc {
    /// Take an arriving packet: queue it, or hand it (or another) to `cx.drop`.
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx);
    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued;
    fn backlog(&self) -> Backlog;

    /// Whether `pkt`, arriving at an idle link, would be the very next packet to leave with
    /// nothing decided or remembered on the way (an empty FIFO with room for it): the link may
    /// then send it without queueing it (`Link::cut_through`). Say yes only if enqueueing and
    /// dequeueing that packet would change no state but the backlog.
    fn passes_through(&self, _pkt: &Packet) -> bool {
        false
    }

    /// Whether a dequeue now would change nothing (an empty FIFO): the link may then settle an
    /// end of transmission without an event (`Link::defer_done`).
    fn dequeue_is_inert(&self) -> bool {
        false
    }

    /// Whether every dequeue, whenever it runs, only hands out a packet (or none): it never
    /// drops, marks, emits, monitors or asks to wait, draws nothing at random, and depends on
    /// nothing but what is queued. A quiet link may then start its transmissions late, when
    /// it is next touched, at the times they were due (`Link::runs_unseen`), and a busy
    /// queue's ends of transmission need no events.
    fn dequeue_is_plain(&self) -> bool {
        false
    }

    /// Whether the discipline queues priorities apart and serves around the ones PFC paused
    /// ([`Qdisc::set_paused`]); otherwise a paused priority stops the whole link.
    fn keeps_priorities_apart(&self) -> bool {
        false
    }

    /// PFC paused or resumed a priority on the link: `paused` holds bit `p` for each priority
    /// `p` paused now. Told only to a discipline that keeps priorities apart, which sends none
    /// of them until they are resumed.
    fn set_paused(&mut self, _paused: u8) {}
}

/// A discipline that keeps its packets in the world's slab (`fifo::SlabFifo`, `slab.rs`): a
/// packet arrives in the slab entry it has held since it entered the network, and joins the
/// queue in it without a copy. Only the disciplines registered as `slab` implement it; the
/// registry hands every other one the packet by value through [`Qdisc::enqueue`], so a
/// discipline with storage of its own never sees the slab.
pub trait SlabEnqueue: Qdisc {
    /// [`Qdisc::enqueue`] of the packet held in entry `id` of `cx.slab`.
    fn enqueue_held(&mut self, id: EntryId, cx: &mut QdiscCx);
}

/// How an arriving packet held in a slab entry reaches a discipline: in its entry (`slab`,
/// [`SlabEnqueue`]), or taken out of the slab and enqueued by value (`own`).
macro_rules! enqueue_held {
    (slab, $q:expr, $id:expr, $cx:expr) => {
        $q.enqueue_held($id, $cx)
    };
    (own, $q:expr, $id:expr, $cx:expr) => {{
        let pkt = $cx.slab.release($id);
        $q.enqueue(pkt, $cx)
    }};
}

/// How a discipline is stored in [`AnyQdisc`]: `inline` in the enum, or `boxed` behind a
/// pointer. An enum is as large as its largest variant, and every link holds one, so only
/// drop-tail (the common case, and small) is inline; the rest (up to several hundred bytes)
/// cost a pointer in the link and one indirection per call.
macro_rules! slot {
    (inline, $ty:ty) => { $ty };
    (boxed, $ty:ty) => { Box<$ty> };
}

/// Builds a value for its [`slot!`].
macro_rules! into_slot {
    (inline, $value:expr) => {
        $value
    };
    (boxed, $value:expr) => {
        Box::new($value)
    };
}

macro_rules! registry {
    ($($slot:ident $store:ident $variant:ident: $name:literal => $module:ident::$ty:ident($cfg:ident)),+ $(,)?) => {
        /// A qdisc as written in a scenario: `{ kind = "droptail", limit = "100p" }`.
        #[derive(Clone, Debug, Serialize)]
        // Deserialize: `tagged::deserialize_by_kind!` below, so that an error inside keeps its path.
        #[serde(tag = "kind")]
        pub enum QdiscSpec {
            $(#[serde(rename = $name)] $variant($module::$cfg),)+
        }

        /// Static dispatch over every registered discipline (a `match`, no virtual call);
        /// the large ones are boxed (see [`slot!`]).
        pub enum AnyQdisc {
            $($variant(slot!($slot, $module::$ty)),)+
        }

        $crate::tagged::deserialize_by_kind!(QdiscSpec, $($name => $variant),+);

        impl QdiscSpec {
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            pub fn build(&self) -> Result<AnyQdisc, ConfigError> {
                match self {
                    $(QdiscSpec::$variant(cfg) => Ok(AnyQdisc::$variant(into_slot!($slot, $module::$ty::new(cfg)?))),)+
                }
            }
            pub fn kind(&self) -> &'static str {
                match self {
                    $(QdiscSpec::$variant(_) => $name,)+
                }
            }
        }

        impl AnyQdisc {
            pub fn kind(&self) -> &'static str {
                match self { $(AnyQdisc::$variant(_) => $name,)+ }
            }

            /// Offer the packet held in entry `id` of `cx.slab` (see [`SlabEnqueue`]).
            #[inline]
            pub fn enqueue_held(&mut self, id: EntryId, cx: &mut QdiscCx) {
                if let AnyQdisc::DropTail(q) = self {
                    return q.enqueue_held(id, cx);
                }
                match self { $(AnyQdisc::$variant(q) => enqueue_held!($store, q, id, cx),)+ }
            }
        }

        /// The match over every discipline, out of line: each call below tries drop-tail, the
        /// common discipline and the one stored inline, first and inline, so that the code a
        /// drop-tail link runs does not grow with the number of disciplines registered. The
        /// backlog, which a link reads at every arrival and departure, also tries the step
        /// marker of datacenter fabrics (DCTCP's and DCQCN's switches) inline: 1 % of DCQCN's
        /// instructions over PFC for 0.1 % of drop-tail's (the other calls cost drop-tail 2.5 %).
        impl AnyQdisc {
            #[inline(never)]
            fn dequeue_any(&mut self, cx: &mut QdiscCx) -> Dequeued {
                match self { $(AnyQdisc::$variant(q) => q.dequeue(cx),)+ }
            }
            #[inline(never)]
            fn backlog_any(&self) -> Backlog {
                match self { $(AnyQdisc::$variant(q) => q.backlog(),)+ }
            }
            #[inline(never)]
            fn passes_through_any(&self, pkt: &Packet) -> bool {
                match self { $(AnyQdisc::$variant(q) => q.passes_through(pkt),)+ }
            }
            #[inline(never)]
            fn dequeue_is_inert_any(&self) -> bool {
                match self { $(AnyQdisc::$variant(q) => q.dequeue_is_inert(),)+ }
            }
            #[inline(never)]
            fn dequeue_is_plain_any(&self) -> bool {
                match self { $(AnyQdisc::$variant(q) => q.dequeue_is_plain(),)+ }
            }
        }

        impl Qdisc for AnyQdisc {
            #[inline]
            fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
                match self { $(AnyQdisc::$variant(q) => q.enqueue(pkt, cx),)+ }
            }
            #[inline(always)]
            fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
                match self {
                    AnyQdisc::DropTail(q) => q.dequeue(cx),
                    other => other.dequeue_any(cx),
                }
            }
            #[inline(always)]
            fn backlog(&self) -> Backlog {
                match self {
                    AnyQdisc::DropTail(q) => q.backlog(),
                    AnyQdisc::Step(q) => q.backlog(),
                    other => other.backlog_any(),
                }
            }
            #[inline(always)]
            fn passes_through(&self, pkt: &Packet) -> bool {
                match self {
                    AnyQdisc::DropTail(q) => q.passes_through(pkt),
                    other => other.passes_through_any(pkt),
                }
            }
            #[inline(always)]
            fn dequeue_is_inert(&self) -> bool {
                match self {
                    AnyQdisc::DropTail(q) => q.dequeue_is_inert(),
                    other => other.dequeue_is_inert_any(),
                }
            }
            #[inline(always)]
            fn dequeue_is_plain(&self) -> bool {
                match self {
                    AnyQdisc::DropTail(q) => q.dequeue_is_plain(),
                    other => other.dequeue_is_plain_any(),
                }
            }
            #[inline]
            fn keeps_priorities_apart(&self) -> bool {
                match self { $(AnyQdisc::$variant(q) => q.keeps_priorities_apart(),)+ }
            }
            fn set_paused(&mut self, paused: u8) {
                match self { $(AnyQdisc::$variant(q) => q.set_paused(paused),)+ }
            }
        }
    };
}

registry! {
    inline slab DropTail: "droptail" => droptail::DropTail(DropTailConfig),
    boxed own Fuzzball: "fuzzball" => fuzzball::Fuzzball(FuzzballConfig),
    boxed own Red: "red" => red::Red(RedConfig),
    boxed own Fq: "fq" => fq::Fq(FqConfig),
    boxed own Drr: "drr" => drr::Drr(DrrConfig),
    boxed own Sfq: "sfq" => sfq::Sfq(SfqConfig),
    boxed own Dummynet: "dummynet" => dummynet::Dummynet(DummynetConfig),
    boxed own Codel: "codel" => codel::Codel(CodelConfig),
    boxed own FqCodel: "fq_codel" => fq_codel::FqCodel(FqCodelConfig),
    boxed own Pie: "pie" => pie::Pie(PieConfig),
    boxed own FqPie: "fq_pie" => fq_pie::FqPie(FqPieConfig),
    boxed own Choke: "choke" => choke::Choke(ChokeConfig),
    boxed own DualPi2: "dualpi2" => dualpi2::DualPi2(DualPi2Config),
    boxed slab Step: "step" => step::Step(StepConfig),
    boxed slab Trim: "trim" => trim::Trim(TrimConfig),
    boxed slab Classes: "classes" => classes::Classes(ClassesConfig),
}

impl Default for QdiscSpec {
    fn default() -> Self {
        QdiscSpec::DropTail(droptail::DropTailConfig::default())
    }
}

#[cfg(test)]
pub(crate) mod harness {
    //! One property harness applied to every qdisc: conservation of packets and bytes, the
    //! accounting identity arrived = departed + dropped + backlog, and no negative backlog.
    use super::*;
    use crate::packet::{AgentId, FlowId, NodeId, Proto};

    /// Everything a `QdiscCx` borrows, owned, for driving a qdisc by hand in tests.
    pub struct Bench {
        pub rng: Rng,
        pub drops: Vec<(Packet, DropReason)>,
        pub emitted: Vec<Packet>,
        pub monitors: Vec<(&'static str, f64)>,
        pub node: NodeBuffers,
        /// Marks noted by the qdisc, accumulated by `after`.
        pub marks: u64,
        pub slab: PacketSlab,
        pub priorities: FlowPriorities,
    }

    impl Bench {
        pub fn new(seed: u64) -> Self {
            Bench {
                rng: Rng::from_seed(seed),
                drops: vec![],
                emitted: vec![],
                monitors: vec![],
                node: NodeBuffers::default(),
                marks: 0,
                slab: PacketSlab::default(),
                priorities: FlowPriorities::default(),
            }
        }

        /// A context at `now` on a link of `link_rate`, for a queue of node 99.
        pub fn cx(&mut self, now: Time, link_rate: BitRate) -> QdiscCx<'_> {
            QdiscCx {
                now,
                link_rate,
                rng: &mut self.rng,
                drops: &mut self.drops,
                emitted: &mut self.emitted,
                marks: 0,
                monitors: &mut self.monitors,
                node: &mut self.node,
                node_id: NodeId(99),
                slab: &mut self.slab,
                priorities: &self.priorities,
            }
        }

        /// Enqueue `pkt`; returns the drop reason if the qdisc discarded something.
        pub fn offer(&mut self, q: &mut dyn Qdisc, pkt: Packet, now: Time, link_rate: BitRate) -> Option<DropReason> {
            let before = self.drops.len();
            let mut cx = self.cx(now, link_rate);
            q.enqueue(pkt, &mut cx);
            let marks = cx.marks;
            self.marks += marks;
            self.drops.get(before).map(|d| d.1)
        }

        pub fn take(&mut self, q: &mut dyn Qdisc, now: Time) -> Option<Packet> {
            let mut cx = self.cx(now, BitRate(1));
            q.dequeue(&mut cx).into_packet(cx.slab)
        }
    }

    pub fn packet(uid: u32, flow: u32, size: u16) -> Packet {
        Packet {
            uid,
            seq: uid as u64,
            ack: 0,
            sent_at: Time::ZERO,
            enqueued_at: Time::ZERO,
            src: NodeId(flow),
            dst: NodeId(1000),
            flow: FlowId(flow),
            dst_agent: AgentId(0),
            size,
            payload: size.saturating_sub(40),
            window: 0,
            proto: Proto::Udp,
            flags: 0,
            ecn: 0,
            sack: Default::default(),
            frag: Default::default(),
            ts_on: false,
            ts_ecr: 0,
        }
    }

    /// Drive `q` with a pseudo-random mix of arrivals and departures and check the invariants
    /// after every step. Returns (departed, dropped) packet counts.
    pub fn check_conservation(q: &mut dyn Qdisc, steps: usize, seed: u64) -> (u64, u64) {
        let mut rng = Rng::from_seed(seed);
        let mut qrng = Rng::from_seed(seed ^ 1);
        let (mut drops, mut emitted, mut monitors) = (Vec::new(), Vec::new(), Vec::new());
        let mut node = NodeBuffers::default();
        let mut slab = PacketSlab::default();
        let priorities = FlowPriorities::default();
        let (mut arrived, mut arrived_bytes) = (0u64, 0u64);
        let (mut departed, mut departed_bytes) = (0u64, 0u64);
        let (mut dropped, mut dropped_bytes) = (0u64, 0u64);
        let mut last_seq_of_flow = std::collections::HashMap::new();
        for step in 0..steps {
            let mut cx = QdiscCx {
                now: Time(step as u64 * 1000),
                link_rate: BitRate(10_000_000),
                rng: &mut qrng,
                drops: &mut drops,
                emitted: &mut emitted,
                marks: 0,
                monitors: &mut monitors,
                node: &mut node,
                node_id: NodeId(u32::MAX),
                slab: &mut slab,
                priorities: &priorities,
            };
            if rng.uniform() < 0.6 {
                let size = rng.range_inclusive(40, 1500) as u16;
                let flow = rng.range_inclusive(0, 4) as u32;
                arrived += 1;
                arrived_bytes += size as u64;
                q.enqueue(packet(step as u32, flow, size), &mut cx);
            } else if let Some(p) = q.dequeue(&mut cx).into_packet(cx.slab) {
                departed += 1;
                departed_bytes += p.size as u64;
                // Per-flow FIFO order: a flow's packets leave in arrival order.
                let prev = last_seq_of_flow.insert(p.flow, p.seq);
                assert!(prev.is_none_or(|s| s < p.seq), "flow {:?} reordered", p.flow);
            }
            monitors.clear();
            for (p, _) in drops.drain(..) {
                dropped += 1;
                dropped_bytes += p.size as u64;
            }
            let b = q.backlog();
            assert_eq!(arrived, departed + dropped + b.packets, "packet identity at step {step}");
            assert_eq!(arrived_bytes, departed_bytes + dropped_bytes + b.bytes, "byte identity at step {step}");
        }
        (departed, dropped)
    }
}
