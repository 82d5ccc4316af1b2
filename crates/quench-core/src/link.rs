//! A unidirectional link: an output queue discipline, a serializer that transmits one packet at
//! a time at the link rate, and a propagation pipe. Only the head of the pipe has an event
//! pending, so the event heap stays small however long the pipe (htsim's design). The end of
//! a transmission needs no event of its own when nothing can happen then (see `defer_done`).
//!
//! Optional per-link framing overhead (bytes added to each packet's wire time, e.g. HDLC
//! framing on a serial line), an optional packet-rate limit (a channel that carries at most
//! `packet_rate` packets per second whatever their size, such as the ~9.1 packets/s SATNET
//! path of Jacobson's 1988 email), and the wire's effects of `wire.rs`: a loss module (packets
//! lost on the wire after transmission, Bernoulli or Gilbert-Elliott, drawn from the link's own
//! random stream), delay jitter and corruption. A link with jitter or corruption keeps its
//! packets on the wire in `wire.rs`'s `WireEffects` instead of its FIFO pipe, each with an
//! arrival event of its own (the world's `WireArrive`), since jitter may reorder them.
//!
//! A link whose capacity follows a trace (`capacity.rs`) asks the trace when each transmission
//! ends instead of its serializer. A link may change while the run goes (`changes.rs`): its
//! rate and delay for what it sends next, and whether it is up; going down, it drops what it
//! queued and marks what was in transmission or on the wire as cut, to be discarded when each
//! one's event comes (so no event is left without its packet). These, and a packet-rate limit,
//! live behind one pointer (`Dynamics`) that every other link leaves empty.
//!
//! The propagation pipes of all links, and their drop-tail queues, share one slab of entries
//! ([`PacketSlab`], owned by the world): a link holds the ends of its own lists of entries, so
//! memory follows the packets in flight in the whole network at once, not the sum of every
//! link's fullest moment (see `slab.rs`). No packet allocates.
//!
//! An optional device queue (`device_queue = N` packets, off when 0): a FIFO between the qdisc
//! and the transmitter, standing for Linux's driver transmit ring and ns-3's
//! `PointToPointNetDevice` queue. The transmitter takes packets from it; it takes packets
//! from the qdisc whenever it has room (Linux `qdisc_run` dequeues until the driver stops the
//! queue; ns-3's traffic control layer until the device queue reports itself full), so the
//! qdisc holds a backlog only once the device queue is full, and an AQM sees only its own
//! part of the queue. The packet in transmission is not in the device queue (as in ns-3). A
//! qdisc that answers "not before t" while the transmitter is busy is asked again when the
//! transmission ends. The link's backlog, its statistics and the queue table count both queues.
//!
//! Statistics kept here hold for every qdisc, and satisfy the identities
//! `arrived = departed + dropped_in_queue + backlog` and
//! `departed = delivered + lost_on_wire + corrupted + in_flight`.
//!
//! A link owns its queue, transmitter, pipe and statistics, and `LinkSpec`, how a scenario
//! writes a link. It acts only on itself and on what the world lends it for a step (the clock
//! and `LinkCx`), and never queues an event: it answers what it wants scheduled (`TxStart`,
//! `undefer_done`, `undefer_for_enqueue`, `recheck_deferral`).

use crate::capacity::{Capacity, CapacitySpec};
use crate::changes::LinkChangeSpec;
use crate::error::ConfigError;
use crate::ip::FragmentRule;
use crate::limits::{
    self, MAX_FRAMING_OVERHEAD, MAX_LIMIT_PACKETS, MAX_MTU, MAX_PACKET_RATE, MIN_MTU, MIN_PACKET_RATE,
};
use crate::packet::{FlowPriorities, NodeId, Packet};
use crate::qdisc::{AnyQdisc, Backlog, Dequeued, DropReason, NodeBuffers, Qdisc, QdiscCx, QdiscSpec};
use crate::rng::Rng;
use crate::slab::{EntryId, PacketSlab, SlabList};
use crate::transport::Admission;
use crate::units::{BitRate, Bytes, Dur, Serializer, Time};
use crate::wire::{JitterSpec, LossSpec, Sent, Wire, WireFate};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Ethernet's MTU, the default for every link.
const DEFAULT_MTU: Bytes = Bytes(1500);

/// A link between two nodes; with `duplex` (the default) it is a pair of unidirectional links
/// named "from->to" and "to->from" with the same rate, delay and MTU.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub from: String,
    pub to: String,
    pub rate: BitRate,
    pub delay: Dur,
    #[serde(default = "yes")]
    pub duplex: bool,
    /// Queue discipline of the from->to direction (and the reverse one unless overridden).
    #[serde(default)]
    pub qdisc: QdiscSpec,
    /// Boxed, as are the capacity traces below: nearly every link goes without, and a
    /// 10,000-flow scenario holds 20,000 link specs while its network is built.
    #[serde(default)]
    pub reverse_qdisc: Option<Box<QdiscSpec>>,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Loss on the from->to direction: a Bernoulli probability, or a model (`wire.rs`).
    #[serde(default)]
    pub loss: LossSpec,
    /// Loss on the to->from direction.
    #[serde(default)]
    pub reverse_loss: LossSpec,
    /// Delay jitter on the from->to direction (`wire.rs`); none by default, and left out of
    /// the written scenario then, as are the keys below at their defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_jitter: Option<JitterSpec>,
    /// Probability that a packet is corrupted on the from->to wire (discarded on arrival).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub corrupt: f64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub reverse_corrupt: f64,
    /// Bytes of link-layer framing added to every packet's transmission time.
    #[serde(default)]
    pub framing_overhead: Bytes,
    /// At most this many packets per second, whatever their size (both directions).
    #[serde(default)]
    pub packet_rate: Option<f64>,
    /// How datagrams larger than the MTU are cut: "rfc791" (8-byte offsets) or "unaligned".
    #[serde(default)]
    pub fragmentation: FragmentRule,
    /// Packets of a device queue under the qdisc (both directions; link.rs): Linux's driver
    /// ring, ns-3's device queue. 0 (the default) for none; left out of the written scenario
    /// then, so scenarios without one record what they always did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub device_queue: u32,
    /// The from->to direction's capacity over time, from a trace (`capacity.rs`); `rate` is
    /// then the nominal rate the qdisc is told. None by default,
    /// and left out of the written scenario then, as are the keys below at their defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Box<CapacitySpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_capacity: Option<Box<CapacitySpec>>,
    /// Changes of this link's rate, delay or state during the run, both directions
    /// (`changes.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<LinkChangeSpec>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

fn yes() -> bool {
    true
}
fn default_mtu() -> Bytes {
    DEFAULT_MTU
}

impl LinkSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rate.0 == 0 {
            return Err(ConfigError::new("rate", "must be positive"));
        }
        if self.mtu < MIN_MTU {
            return Err(ConfigError::new("mtu", format!("{} is below the IPv4 minimum of {MIN_MTU}", self.mtu)));
        }
        if self.mtu > MAX_MTU {
            return Err(ConfigError::new("mtu", format!("{} exceeds {MAX_MTU}, the largest IPv4 datagram", self.mtu)));
        }
        if self.framing_overhead > MAX_FRAMING_OVERHEAD {
            return Err(ConfigError::new(
                "framing_overhead",
                format!("{} exceeds {MAX_FRAMING_OVERHEAD}, the largest framing quench accepts", self.framing_overhead),
            ));
        }
        if let Some(why) =
            limits::too_fast_for_nanoseconds(self.rate, self.smallest_frame(), "the smallest packet with framing")
        {
            return Err(ConfigError::new("rate", why));
        }
        if self.device_queue as u64 > MAX_LIMIT_PACKETS {
            let why = format!("{} packets exceeds {MAX_LIMIT_PACKETS}, the most a buffer may hold", self.device_queue);
            return Err(ConfigError::new("device_queue", why));
        }
        self.loss.validate("loss")?;
        self.reverse_loss.validate("reverse_loss")?;
        for (key, p) in [("corrupt", self.corrupt), ("reverse_corrupt", self.reverse_corrupt)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ConfigError::new(key, format!("probability {p} is not in [0, 1]")));
            }
        }
        for (key, j) in [("jitter", &self.jitter), ("reverse_jitter", &self.reverse_jitter)] {
            j.as_ref().map_or(Ok(()), |j| j.validate(key))?;
        }
        if self.packet_rate.is_some_and(|r| !(MIN_PACKET_RATE..=MAX_PACKET_RATE).contains(&r)) {
            return Err(ConfigError::new(
                "packet_rate",
                format!(
                    "{} must be between {MIN_PACKET_RATE:e} and {MAX_PACKET_RATE:e} packets per second",
                    limits::shown(self.packet_rate.unwrap_or_default())
                ),
            ));
        }
        if self.from == self.to {
            return Err(ConfigError::new("to", format!("a link from '{}' to itself", self.from)));
        }
        for (key, c) in [("capacity", &self.capacity), ("reverse_capacity", &self.reverse_capacity)] {
            c.as_ref().map_or(Ok(()), |c| c.validate(key))?;
        }
        Ok(())
    }

    /// Check the link's schedule against the run's `duration`.
    pub fn validate_schedule(&self, duration: Dur) -> Result<(), ConfigError> {
        let traced = self.capacity.is_some() || self.reverse_capacity.is_some();
        for (i, change) in self.schedule.iter().enumerate() {
            let key = format!("schedule[{i}]");
            if change.link.is_some() {
                return Err(ConfigError::new(format!("{key}.link"), "a link's own schedule names no link"));
            }
            if traced && change.rate.is_some() {
                let why = "the link's capacity follows its trace: a rate change has nothing to change";
                return Err(ConfigError::new(format!("{key}.rate"), why));
            }
            change.validate(duration, self.smallest_frame()).map_err(|e| e.within(&key))?;
        }
        Ok(())
    }

    /// The smallest packet the link sends, with its framing.
    pub fn smallest_frame(&self) -> Bytes {
        Bytes(limits::SMALLEST_PACKET.0 + self.framing_overhead.0)
    }
}

/// A link's statistics at one instant ([`Link::stats_at`]): the counters every packet updates
/// (read through `Deref`, e.g. `stats.arrived_packets`) and the drops by reason.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub counters: LinkCounters,
    pub dropped_packets: [u64; DropReason::COUNT],
    pub dropped_bytes: [u64; DropReason::COUNT],
}

/// The statistics the per-packet path updates. The drops by reason are counted apart
/// ([`Drops`]), in room taken at a link's first drop.
#[derive(Clone, Debug, Default)]
pub struct LinkCounters {
    pub arrived_packets: u64,
    pub arrived_bytes: u64,
    pub departed_packets: u64,
    pub departed_bytes: u64,
    pub delivered_packets: u64,
    pub marked_packets: u64,
    /// Time the transmitter spent sending (for utilization).
    pub busy: Dur,
    pub sojourn_sum: Dur,
    pub sojourn_max: Dur,
    /// Integral of the backlog over time, in packet·ns and byte·ns (for time-averaged queue).
    pub backlog_packet_ns: u128,
    pub backlog_byte_ns: u128,
    pub max_backlog_packets: u64,
    pub max_backlog_bytes: u64,
    last_change: Time,
}

impl std::ops::Deref for LinkStats {
    type Target = LinkCounters;
    fn deref(&self) -> &LinkCounters {
        &self.counters
    }
}

impl LinkStats {
    pub fn dropped_in_queue(&self) -> u64 {
        Self::in_queue(&self.dropped_packets)
    }
    pub fn dropped_in_queue_bytes(&self) -> u64 {
        Self::in_queue(&self.dropped_bytes)
    }
    fn in_queue(by_reason: &[u64; DropReason::COUNT]) -> u64 {
        DropReason::ALL.iter().filter(|r| !r.on_the_wire()).map(|&r| by_reason[r as usize]).sum()
    }
}

/// Packets and bytes dropped, by reason.
#[derive(Clone, Debug, Default)]
struct Drops {
    packets: [u64; DropReason::COUNT],
    bytes: [u64; DropReason::COUNT],
}

/// The packets of room a device queue reserves when it is built; beyond them it grows as
/// packets arrive, so memory follows the packets queued, not the limit (a limit of 10⁹ would
/// otherwise reserve ~100 GB up front). 256 is a common driver transmit ring (e1000's default)
/// and ns-3's 100-packet device queue fits, so the usual sizes never reallocate in a run.
const DEVICE_QUEUE_RESERVED: usize = 256;

/// A FIFO between the qdisc and the transmitter (see the module header).
struct DeviceQueue {
    /// Capacity in packets (at least 1).
    limit: usize,
    packets: VecDeque<Packet>,
    /// When each of `packets` came from the qdisc, in the same order: a packet's time in the
    /// queue (from `Packet::enqueued_at`, its arrival at the qdisc) splits there into its time
    /// in the qdisc and its time in the device queue.
    entered: VecDeque<Time>,
    /// Bytes in `packets`.
    bytes: u64,
    /// Time the departed packets spent in the device queue: the sum and the longest.
    sojourn_sum: Dur,
    sojourn_max: Dur,
}

impl DeviceQueue {
    fn push(&mut self, p: Packet, now: Time) {
        self.bytes += p.size as u64;
        self.packets.push_back(p);
        self.entered.push_back(now);
    }

    /// The head, leaving for the transmitter now.
    fn pop(&mut self, now: Time) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        let entered = self.entered.pop_front().expect("one entry time per packet");
        self.bytes -= p.size as u64;
        let waited = now - entered;
        self.sojourn_sum = self.sojourn_sum + waited;
        self.sojourn_max = self.sojourn_max.max(waited);
        Some(p)
    }
}

/// Where a link's departed packets waited, when it has a device queue: the sums and the
/// longest waits in the device queue (the rest of each packet's sojourn was in the qdisc).
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceSojourn {
    pub sum: Dur,
    pub max: Dur,
}

impl LinkCounters {
    /// Advance the backlog integrals to `now` with the backlog held since the last change.
    fn integrate(&mut self, now: Time, held: Backlog) {
        let dt = (now - self.last_change).0 as u128;
        self.backlog_packet_ns += held.packets as u128 * dt;
        self.backlog_byte_ns += held.bytes as u128 * dt;
        self.last_change = now;
    }
}

/// What becomes of the end of a transmission just started ([`Link::defer_done`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndOfTx {
    /// The caller queues it as an event.
    Event,
    /// It is carried out when the link is next touched, at the latest by the pipe's head
    /// arrival, already queued.
    Deferred,
    /// It is carried out when the link is next touched, at the latest by its own packet's
    /// arrival at the far end, at this time, which the caller queues now.
    DeferredUntilArrival(Time),
}

/// One link's pipe: a FIFO list of entries in the [`PacketSlab`].
#[derive(Default)]
struct Pipe {
    list: SlabList,
    /// The arrival time of the last packet in (the tail), for `Link::defer_done`.
    tail_at: Time,
}

/// What a link with a packet-rate limit, or whose capacity or state changes, keeps (a pointer
/// in every other link).
#[derive(Default)]
struct Dynamics {
    /// Shortest time between the starts of two transmissions (packet-rate limit), or zero.
    min_packet_gap: Dur,
    /// The trace that sets when transmissions end, if any (`capacity.rs`); the serializer's
    /// rate is then only the nominal rate.
    trace: Option<Capacity>,
    /// The link is down (`changes.rs`): it takes no packet and starts no transmission.
    down: bool,
    /// The packet in transmission was cut off when the link went down (its drop is recorded);
    /// the end of its transmission discards it.
    tx_cut: bool,
    /// The first packets of the pipe were cut off when the link went down (their drops are
    /// recorded): each is discarded when its arrival comes, so every event stays in place.
    pipe_cut: u32,
    /// The priorities the far end's switch has paused on this link (`pfc.rs`), bit `p` for
    /// priority `p`: it takes packets into its queue but starts no transmission of data of a
    /// paused priority until it is resumed; of none at all, if its qdisc keeps no classes
    /// apart (`Qdisc::keeps_priorities_apart`).
    paused: u8,
    /// The control band of a link that serves PFC's control class first
    /// ([`Link::serve_control_first`]): packets that carry no data, in arrival order, sent
    /// before anything the qdisc holds and while the link is paused.
    control: Option<ControlBand>,
}

/// A link's control band: slab entries in arrival order and their bytes.
#[derive(Default)]
struct ControlBand {
    entries: VecDeque<EntryId>,
    bytes: u64,
}

/// The most packets a control band holds. Control packets are small and leave before any
/// data, so the band stays short in any fabric whose data queues are bounded; the bound keeps
/// a misconfigured run from holding them without limit (past it, one is dropped as an
/// overflow).
const CONTROL_BAND_LIMIT: usize = 10_000;

impl Dynamics {
    /// How long a transmission of `wire` bytes that starts now takes: by the trace if there is
    /// one, else at the serializer's rate; no less than the packet-rate limit's gap.
    #[inline(never)]
    fn tx_time(&mut self, now: Time, wire: Bytes, serializer: &mut Serializer) -> Dur {
        let tx = match &mut self.trace {
            None => serializer.next_tx_time(wire),
            Some(trace) => trace.tx_end(now, wire) - now,
        };
        tx.max(self.min_packet_gap)
    }
}

/// What became of a packet at the end of its transmission ([`Link::finish_tx`]).
#[derive(Debug, PartialEq)]
pub enum TxEnd {
    /// It joined the fixed-delay pipe; the arrival time to schedule if it became the head.
    Pipe(Option<Time>),
    /// It is on a wire with jitter or corruption, arriving then (an event of its own).
    OnWire(Time),
    /// Lost on the wire.
    Lost(Packet),
    /// Cut off when the link went down (its drop already recorded).
    Cut,
}

/// What happened when the link looked for the next packet to send.
pub enum TxStart {
    /// Transmission started; it completes at the given time.
    Started(Time),
    Idle,
    /// The qdisc holds packets but releases none before this time.
    Wait(Time),
}

pub struct Link {
    pub from: NodeId,
    pub to: NodeId,
    pub delay: Dur,
    pub mtu: Bytes,
    pub framing_overhead: Bytes,
    pub fragment_rule: FragmentRule,
    pub qdisc: AnyQdisc,
    stats: LinkCounters,
    // The parts a plain link (no drops, no loss module, no device queue: at 10,000 flows
    // nearly all of a dumbbell's 40,002 links) does without cost it a pointer each, not
    // their room: 136 bytes a link.
    /// Drops by reason; room is taken at the link's first drop.
    drops: Option<Box<Drops>>,
    /// Loss, jitter and corruption (`wire.rs`), if the direction has any of them.
    wire: Option<Box<Wire>>,
    /// The device queue, if there is one.
    device: Option<Box<DeviceQueue>>,
    /// A packet-rate limit, a capacity trace and the state of a link that may go down, if it
    /// has any of them.
    dynamics: Option<Box<Dynamics>>,
    serializer: Serializer,
    qdisc_rng: Rng,
    /// The packet in transmission: an entry of the world's slab, which the end of the
    /// transmission puts on the pipe's list as it is, without copying the packet.
    transmitting: Option<EntryId>,
    /// When the packet in transmission finishes.
    tx_done_at: Time,
    /// A wake-up for a qdisc that said "not before t" is pending.
    wake_pending: bool,
    /// The end of the transmission in progress is deferred: no event is queued for it (its
    /// place among equal-time events is its rank's, known without one).
    done_deferred: bool,
    /// A packet's arrival at the far end is known when its transmission starts: the link has
    /// a delay, no wire, and no scheduled change of its delay or state (set by the world,
    /// which knows the timetable). See [`Link::defer_done`].
    pub(crate) arrival_known_at_start: bool,
    /// The arrival of the packet in transmission was queued when it started
    /// ([`EndOfTx::DeferredUntilArrival`]): its end, whenever carried out, queues none.
    arrival_queued: bool,
    /// The propagation pipe: packets sent and not yet arrived, in the [`PacketSlab`].
    pipe: Pipe,
    /// Nothing but the link's own statistics follows a packet through this link: no record
    /// or capture of its hops, no device queue (set by the world once its recorder is known).
    /// The world's per-hop path then skips every optional step at once.
    pub(crate) quiet: bool,
    /// Nothing sees a transmission start but the link's own statistics and, on a switch's
    /// link, the telemetry stamped into the packet, of which no table is kept (set by the
    /// world with `quiet`): what [`Link::runs_unseen`] asks of a link's records.
    pub(crate) starts_unseen: bool,
    /// On the world's list of links that run unseen with a deferred end (`World::unseen`).
    pub(crate) listed_unseen: bool,
}

/// What a link acts with besides itself and the clock, owned by the world and lent for each
/// step it asks of a link: the outbox the link fills, every node's buffer pool, and the slab
/// that holds the packets of every pipe, drop-tail queue and transmitter. One struct passed by
/// reference: the per-packet calls into a link take two arguments besides the link.
#[derive(Default)]
pub struct LinkCx {
    pub out: LinkOutbox,
    pub node_buffers: Vec<NodeBuffers>,
    pub slab: PacketSlab,
    /// Each flow's priority, for the qdiscs that keep priorities apart and for PFC.
    pub priorities: FlowPriorities,
}

/// Scratch buffers a link fills while it runs; owned by the world and reused.
#[derive(Default)]
pub struct LinkOutbox {
    pub drops: Vec<(Packet, DropReason)>,
    pub emitted: Vec<Packet>,
    pub monitors: Vec<(&'static str, f64)>,
}

impl LinkOutbox {
    /// Nothing dropped, emitted or monitored since the world last emptied the buffers.
    pub fn is_empty(&self) -> bool {
        self.drops.is_empty() && self.emitted.is_empty() && self.monitors.is_empty()
    }
}

pub struct LinkParams {
    pub from: NodeId,
    pub to: NodeId,
    pub rate: BitRate,
    pub delay: Dur,
    pub mtu: Bytes,
    pub framing_overhead: Bytes,
    pub min_packet_gap: Dur,
    pub fragment_rule: FragmentRule,
    pub loss: LossSpec,
    pub jitter: Option<JitterSpec>,
    /// Probability that a packet is corrupted on the wire.
    pub corrupt: f64,
    /// Packets the device queue under the qdisc holds; 0 for none.
    pub device_queue: u32,
    /// A capacity trace, if the direction has one.
    pub capacity: Option<CapacitySpec>,
}

impl Link {
    /// A link with its discipline and its random streams: the qdisc's, the loss module's, and
    /// that of the jitter and corruption draws.
    pub fn new(p: LinkParams, qdisc: AnyQdisc, qdisc_rng: Rng, (loss_rng, wire_rng): (Rng, Rng)) -> Self {
        Link {
            from: p.from,
            to: p.to,
            delay: p.delay,
            mtu: p.mtu,
            framing_overhead: p.framing_overhead,
            fragment_rule: p.fragment_rule,
            qdisc,
            stats: LinkCounters::default(),
            drops: None,
            // Without a module a stream is never drawn from, so it is not kept.
            wire: Wire::new(&p.loss, p.jitter, p.corrupt, (loss_rng, wire_rng)),
            device: (p.device_queue > 0).then(|| {
                let limit = p.device_queue as usize;
                let reserved = limit.min(DEVICE_QUEUE_RESERVED);
                Box::new(DeviceQueue {
                    limit,
                    packets: VecDeque::with_capacity(reserved),
                    entered: VecDeque::with_capacity(reserved),
                    bytes: 0,
                    sojourn_sum: Dur::ZERO,
                    sojourn_max: Dur::ZERO,
                })
            }),
            dynamics: (p.capacity.is_some() || !p.min_packet_gap.is_zero()).then(|| {
                let trace = p.capacity.as_ref().map(Capacity::new);
                Box::new(Dynamics { min_packet_gap: p.min_packet_gap, trace, ..Default::default() })
            }),
            serializer: Serializer::new(p.rate),
            qdisc_rng,
            transmitting: None,
            tx_done_at: Time::ZERO,
            wake_pending: false,
            done_deferred: false,
            arrival_known_at_start: false,
            arrival_queued: false,
            pipe: Pipe::default(),
            quiet: false,
            starts_unseen: false,
            listed_unseen: false,
        }
    }

    pub fn rate(&self) -> BitRate {
        self.serializer.rate()
    }

    /// Shortest time between the starts of two transmissions (a packet-rate limit), or zero.
    pub fn min_packet_gap(&self) -> Dur {
        self.dynamics.as_ref().map_or(Dur::ZERO, |d| d.min_packet_gap)
    }

    /// Packets and bytes waiting to be sent: the qdisc's, the device queue's and the control
    /// band's.
    pub fn backlog(&self) -> Backlog {
        let mut q = self.qdisc.backlog();
        if let Some(d) = &self.device {
            q.packets += d.packets.len() as u64;
            q.bytes += d.bytes;
        }
        if let Some(band) = self.dynamics.as_ref().and_then(|d| d.control.as_ref()) {
            q.packets += band.entries.len() as u64;
            q.bytes += band.bytes;
        }
        q
    }

    /// Serve PFC's control class first (`pfc.rs`, `control = "priority"`): packets that carry
    /// no data wait in a band of their own, which the link sends before anything its qdisc
    /// or device queue holds, and also while the far end has paused it.
    pub fn serve_control_first(&mut self) {
        self.dynamics.get_or_insert_with(Box::default).control = Some(ControlBand::default());
    }

    /// The control band, if the link has one and `pkt` belongs in it.
    fn control_band_for(&mut self, pkt: &Packet) -> Option<&mut ControlBand> {
        self.dynamics.as_mut()?.control.as_mut().filter(|_| crate::pfc::is_control(pkt))
    }

    /// Whether the link has a device queue under its qdisc.
    pub fn has_device_queue(&self) -> bool {
        self.device.is_some()
    }

    /// The time departed packets spent in the device queue, if the link has one.
    pub fn device_sojourn(&self) -> Option<DeviceSojourn> {
        self.device.as_ref().map(|d| DeviceSojourn { sum: d.sojourn_sum, max: d.sojourn_max })
    }

    /// Whether the device queue, if any, is empty.
    fn device_is_empty(&self) -> bool {
        self.device.as_ref().is_none_or(|d| d.packets.is_empty())
    }

    pub fn is_transmitting(&self) -> bool {
        self.transmitting.is_some()
    }

    /// Packets sent and not yet arrived (in transmission, in the pipe or on the wire), but for
    /// those cut off when the link went down, which count as dropped.
    pub fn in_flight(&self) -> u64 {
        let on_wire = self.wire.as_ref().map_or(0, |w| w.len());
        let cut = self.dynamics.as_ref().map_or(0, |d| d.pipe_cut as u64 + d.tx_cut as u64);
        self.pipe.list.len() as u64 + on_wire + self.transmitting.is_some() as u64 - cut
    }

    /// Offer the packet held in slab entry `id` to the queue; the answer says whether the queue
    /// kept it. Drops (of it or of queued packets) and control packets the qdisc originates
    /// land in `out`.
    pub fn enqueue(&mut self, now: Time, id: EntryId, lcx: &mut LinkCx) -> Admission {
        let held = self.backlog();
        self.stats.integrate(now, held);
        let pkt = lcx.slab.held_mut(id);
        pkt.enqueued_at = now;
        let (uid, size) = (pkt.uid, pkt.size);
        self.stats.arrived_packets += 1;
        self.stats.arrived_bytes += size as u64;
        if self.dynamics.is_some() {
            if let Some(admission) = self.enqueue_control(id, lcx) {
                return admission;
            }
        }
        let (qdisc, mut cx) = self.qdisc_cx(now, lcx);
        qdisc.enqueue_held(id, &mut cx);
        let marks = cx.marks;
        self.count_verdicts(marks, &lcx.out.drops);
        self.note_max_backlog();
        if lcx.out.drops.iter().any(|(p, _)| p.uid == uid) {
            Admission::Refused
        } else {
            Admission::Accepted
        }
    }

    /// The longest queue so far takes in the one just grown.
    #[inline]
    fn note_max_backlog(&mut self) {
        let b = self.backlog();
        self.stats.max_backlog_packets = self.stats.max_backlog_packets.max(b.packets);
        self.stats.max_backlog_bytes = self.stats.max_backlog_bytes.max(b.bytes);
    }

    /// The packet in entry `id`, if it belongs in the control band: queued there (or dropped
    /// as an overflow if the band is full); None if it goes to the qdisc.
    #[cold]
    fn enqueue_control(&mut self, id: EntryId, lcx: &mut LinkCx) -> Option<Admission> {
        let size = lcx.slab.held(id).size;
        let band = self.control_band_for(lcx.slab.held(id))?;
        if band.entries.len() >= CONTROL_BAND_LIMIT {
            self.count_drop(size, DropReason::Overflow);
            lcx.out.drops.push((lcx.slab.release(id), DropReason::Overflow));
            return Some(Admission::Refused);
        }
        band.entries.push_back(id);
        band.bytes += size as u64;
        self.note_max_backlog();
        Some(Admission::Accepted)
    }

    /// If idle, take the next packet from the control band or the qdisc and start sending it
    /// (then [`Link::in_transmission`] is that packet, for capture and sojourn records).
    pub fn start_tx(&mut self, now: Time, lcx: &mut LinkCx) -> TxStart {
        if self.dynamics.is_some() {
            if let Some(start) = self.start_control_or_hold(now, lcx) {
                return start;
            }
        }
        if self.device.is_some() {
            return self.start_tx_from_device(now, lcx);
        }
        if self.transmitting.is_some() {
            return TxStart::Idle;
        }
        let held = self.qdisc.backlog();
        self.stats.integrate(now, held);
        let (qdisc, mut cx) = self.qdisc_cx(now, lcx);
        let next = qdisc.dequeue(&mut cx);
        let marks = cx.marks;
        self.count_verdicts(marks, &lcx.out.drops);
        match next {
            Dequeued::Packet(p) => TxStart::Started(self.begin_tx(now, lcx.slab.hold(p), &lcx.slab)),
            Dequeued::Held(id) => TxStart::Started(self.begin_tx(now, id, &lcx.slab)),
            Dequeued::Empty => TxStart::Idle,
            Dequeued::NotBefore(t) => {
                self.wake_pending = true;
                TxStart::Wait(t)
            }
        }
    }

    /// A link with dynamics: start its control band's first packet if the link is up and
    /// idle; answers Idle if it is down, or paused with a qdisc that keeps no priorities apart;
    /// None if the qdisc is to be asked (it serves around the paused priorities itself).
    #[cold]
    fn start_control_or_hold(&mut self, now: Time, lcx: &mut LinkCx) -> Option<TxStart> {
        let d = self.dynamics.as_deref().expect("called with dynamics");
        if d.down {
            return Some(TxStart::Idle);
        }
        let paused = d.paused;
        let has_control = d.control.as_ref().is_some_and(|b| !b.entries.is_empty());
        if has_control && self.transmitting.is_none() {
            let held = self.backlog();
            self.stats.integrate(now, held);
            let band = self.dynamics.as_mut().and_then(|d| d.control.as_mut()).expect("checked above");
            let id = band.entries.pop_front().expect("checked above");
            band.bytes -= lcx.slab.held(id).size as u64;
            return Some(TxStart::Started(self.begin_tx(now, id, &lcx.slab)));
        }
        (paused != 0 && !self.qdisc.keeps_priorities_apart()).then_some(TxStart::Idle)
    }

    /// With a device queue: refill it from the qdisc, and if the transmitter is idle start its
    /// head and refill the place it left. Called after every enqueue (the device queue takes
    /// what the qdisc releases at once) and whenever the transmitter may start.
    fn start_tx_from_device(&mut self, now: Time, lcx: &mut LinkCx) -> TxStart {
        let held = self.backlog();
        self.stats.integrate(now, held);
        // A wake-up already scheduled answers for the qdisc until it comes.
        let scheduled = self.wake_pending;
        let wait = if scheduled { None } else { self.fill_device(now, lcx) };
        if self.transmitting.is_some() {
            return wait.map_or(TxStart::Idle, TxStart::Wait);
        }
        let d = self.device.as_mut().expect("called with a device queue");
        let Some(p) = d.pop(now) else {
            return wait.map_or(TxStart::Idle, TxStart::Wait);
        };
        let done = self.begin_tx(now, lcx.slab.hold(p), &lcx.slab);
        if !scheduled {
            // The place just freed is filled now. A "not before" in this call schedules no
            // wake-up (the answer is `Started`): the qdisc is asked again when this
            // transmission ends, which runs as an event because the qdisc is not empty.
            self.fill_device(now, lcx);
            self.wake_pending = false;
        }
        TxStart::Started(done)
    }

    /// Move packets from the qdisc into the device queue until it is full or the qdisc has
    /// none to give; returns the qdisc's "not before" time if it gave that answer.
    fn fill_device(&mut self, now: Time, lcx: &mut LinkCx) -> Option<Time> {
        while self.device.as_ref().is_some_and(|d| d.packets.len() < d.limit) {
            let (qdisc, mut cx) = self.qdisc_cx(now, lcx);
            let next = qdisc.dequeue(&mut cx);
            let marks = cx.marks;
            self.count_verdicts(marks, &lcx.out.drops);
            match next {
                Dequeued::Packet(_) | Dequeued::Held(_) => {
                    let p = next.into_packet(&mut lcx.slab).expect("a packet");
                    self.device.as_mut().expect("checked by the loop").push(p, now);
                }
                Dequeued::Empty => return None,
                Dequeued::NotBefore(t) => {
                    self.wake_pending = true;
                    return Some(t);
                }
            }
        }
        None
    }

    /// The qdisc and the context it acts in: the one place a `QdiscCx` is built. (A closure
    /// run inside the context instead cost an extra copy of the dequeued packet.)
    #[inline]
    fn qdisc_cx<'a>(&'a mut self, now: Time, lcx: &'a mut LinkCx) -> (&'a mut AnyQdisc, QdiscCx<'a>) {
        let cx = QdiscCx {
            now,
            link_rate: self.serializer.rate(),
            rng: &mut self.qdisc_rng,
            drops: &mut lcx.out.drops,
            emitted: &mut lcx.out.emitted,
            marks: 0,
            monitors: &mut lcx.out.monitors,
            node: &mut lcx.node_buffers[self.from.index()],
            node_id: self.from,
            slab: &mut lcx.slab,
            priorities: &lcx.priorities,
        };
        (&mut self.qdisc, cx)
    }

    /// Count what the qdisc marked and dropped while it acted.
    #[inline]
    fn count_verdicts(&mut self, marks: u64, drops: &[(Packet, DropReason)]) {
        self.stats.marked_packets += marks;
        for (p, reason) in drops {
            self.count_drop(p.size, *reason);
        }
    }

    fn count_drop(&mut self, size: u16, reason: DropReason) {
        let d = self.drops.get_or_insert_with(Box::default);
        d.packets[reason as usize] += 1;
        d.bytes[reason as usize] += size as u64;
    }

    /// Whether the transmitter would take a packet now: idle, and no wake-up pending.
    pub fn ready_to_send(&self) -> bool {
        !self.is_transmitting() && !self.wake_pending
    }

    /// The wake-up a qdisc asked for (`TxStart::Wait`) has come.
    pub fn on_wake(&mut self) {
        self.wake_pending = false;
    }

    /// Whether a packet arriving now would leave the queue at once, with nothing to decide:
    /// the transmitter is idle and the qdisc lets it pass (`Qdisc::passes_through`: an empty FIFO with room).
    pub fn can_cut_through(&self, pkt: &Packet) -> bool {
        self.qdisc.passes_through(pkt) && self.ready_to_send() && self.device_is_empty()
    }

    /// Send the packet held in slab entry `id`, for which [`Link::can_cut_through`] holds,
    /// without storing it in the queue: the entry becomes the transmitter's as it is, and the
    /// statistics are those of an enqueue followed at once by a dequeue (the queue held
    /// nothing until now, held this one packet for no time, and holds nothing after).
    /// Returns when the transmission ends.
    #[inline(always)]
    pub fn cut_through(&mut self, now: Time, id: EntryId, slab: &mut PacketSlab) -> Time {
        let size = slab.held(id).size;
        self.stats.integrate(now, Backlog::default());
        self.stats.arrived_packets += 1;
        self.stats.arrived_bytes += size as u64;
        self.stats.max_backlog_packets = self.stats.max_backlog_packets.max(1);
        self.stats.max_backlog_bytes = self.stats.max_backlog_bytes.max(size as u64);
        slab.held_mut(id).enqueued_at = now;
        self.transmitting = Some(id);
        self.account_tx(now, Dur(0), size)
    }

    /// Start sending a packet just taken from the queue, held in entry `id`; returns when the
    /// transmission ends.
    #[inline]
    fn begin_tx(&mut self, now: Time, id: EntryId, slab: &PacketSlab) -> Time {
        let p = slab.held(id);
        let (sojourn, size) = (now - p.enqueued_at, p.size);
        self.transmitting = Some(id);
        self.account_tx(now, sojourn, size)
    }

    /// The statistics of a transmission that starts now, after `sojourn` in the queue, of a
    /// packet of `size` bytes; returns when it ends. Always inlined: the per-hop pipeline of a
    /// cut-through and a dequeue both run it, and as a call it cost 2 % of a run's instructions.
    #[inline(always)]
    fn account_tx(&mut self, now: Time, sojourn: Dur, size: u16) -> Time {
        self.stats.sojourn_sum = self.stats.sojourn_sum + sojourn;
        self.stats.sojourn_max = self.stats.sojourn_max.max(sojourn);
        self.stats.departed_packets += 1;
        self.stats.departed_bytes += size as u64;
        let wire = Bytes(size as u64 + self.framing_overhead.0);
        let tx = match &mut self.dynamics {
            None => self.serializer.next_tx_time(wire),
            Some(d) => d.tx_time(now, wire, &mut self.serializer),
        };
        self.stats.busy = self.stats.busy + tx;
        self.tx_done_at = now + tx;
        self.tx_done_at
    }

    /// Bytes this link has started sending since the run began.
    pub fn departed_bytes(&self) -> u64 {
        self.stats.departed_bytes
    }

    /// The packet being sent, if any.
    pub fn in_transmission<'a>(&self, slab: &'a PacketSlab) -> Option<&'a Packet> {
        self.transmitting.map(|id| slab.held(id))
    }

    /// The packet being sent has left the transmitter: lose it on the wire, or put it in the
    /// propagation pipe, or on a wire with jitter or corruption (see [`TxEnd`]).
    pub fn finish_tx(&mut self, now: Time, slab: &mut PacketSlab) -> TxEnd {
        let id = self.transmitting.take().expect("finish_tx without a packet in transmission");
        let arrival_queued = std::mem::take(&mut self.arrival_queued);
        if let Some(d) = self.dynamics.as_mut().filter(|d| d.tx_cut) {
            d.tx_cut = false;
            slab.release(id);
            return TxEnd::Cut;
        }
        if let Some(wire) = &mut self.wire {
            match wire.send(now, self.delay, id) {
                Sent::Lost => {
                    let lost = slab.release(id);
                    self.count_drop(lost.size, DropReason::LinkLoss);
                    return TxEnd::Lost(lost);
                }
                Sent::Arrives(at) => return TxEnd::OnWire(at),
                Sent::Pipe => {}
            }
        }
        // The transmitter's entry joins the pipe as it is. A pipe is first in, first out: after
        // the delay falls (`set_delay`), a packet arrives no earlier than the one before it.
        let arrival = (now + self.delay).max(self.pipe.tail_at);
        slab.append(&mut self.pipe.list, arrival, id);
        self.pipe.tail_at = arrival;
        // A queued arrival found the pipe empty at the end: the packet is its head.
        debug_assert!(!arrival_queued || (self.pipe.list.len() == 1 && arrival == now + self.delay));
        TxEnd::Pipe((self.pipe.list.len() == 1 && !arrival_queued).then_some(arrival))
    }

    /// Whether the end of the transmission just started can go without an event: nothing can
    /// be lost (a loss draw and its drop record belong at the end's place in the event order),
    /// what the end starts next needs no event either (nothing, because a dequeue now would
    /// change nothing, `Qdisc::dequeue_is_inert`: an empty FIFO, and a later enqueue queues
    /// the event; or the next packet of a queue that runs unseen, [`Link::runs_unseen`]), and
    /// something is sure to touch the link after the end (whose handler settles the end
    /// first, `World::settle`): the pipe's head arrival if the pipe will still hold a packet
    /// then, or else, where the packet's arrival is known now
    /// ([`Link::arrival_known_at_start`]), that arrival itself, queued by the caller now
    /// rather than by the end: the same event at the same instant and rank.
    pub fn defer_done(&mut self) -> EndOfTx {
        #[cfg(test)]
        if !DEFERRAL.with(|on| on.get()) {
            return EndOfTx::Event;
        }
        self.done_deferred = self.wire.is_none() && self.next_start_needs_no_event();
        if !self.done_deferred {
            return EndOfTx::Event;
        }
        if !self.pipe.list.is_empty() && self.pipe.tail_at > self.tx_done_at {
            return EndOfTx::Deferred;
        }
        // The pipe is empty by the end (its last packet arrives no later, and an arrival
        // ranks before an end of the same instant), so the packet will be its head.
        self.done_deferred = self.arrival_known_at_start;
        self.arrival_queued = self.arrival_known_at_start;
        match self.arrival_known_at_start {
            true => EndOfTx::DeferredUntilArrival(self.tx_done_at + self.delay),
            false => EndOfTx::Event,
        }
    }

    /// Whether a packet's arrival at the far end follows from its end of transmission alone,
    /// whatever the link's schedule (the world adds: no scheduled change of its delay or
    /// state): a delay to cross, so the arrival comes after the end in the event order, and
    /// no wire to lose, delay or corrupt it.
    pub(crate) fn arrival_is_fixed(&self) -> bool {
        !self.delay.is_zero() && self.wire.is_none()
    }

    /// Whether what an end of transmission starts next needs no event: nothing (the queue
    /// is inert), or a packet of a queue that runs unseen.
    fn next_start_needs_no_event(&self) -> bool {
        self.queue_is_inert() || (self.device_is_empty() && self.runs_unseen())
    }

    /// Whether this link's transmissions may start late, whenever the link is next touched,
    /// at the times they were due: nothing sees a start but the link's own statistics
    /// (`quiet`), the qdisc's dequeue does nothing but hand out its packet
    /// (`Qdisc::dequeue_is_plain`), and no change of rate, state or pause is scheduled for it
    /// (`dynamics`). A busy drop-tail queue's ends of transmission then need no events.
    pub fn runs_unseen(&self) -> bool {
        self.starts_unseen && self.dynamics.is_none() && self.qdisc.dequeue_is_plain()
    }

    /// Whether a dequeue now would change nothing (`Qdisc::dequeue_is_inert`) and neither a
    /// device queue nor a control band holds a packet: a start now would find nothing to send.
    pub fn queue_is_inert(&self) -> bool {
        self.device_is_empty() && self.qdisc.dequeue_is_inert() && self.control_band_is_empty()
    }

    fn control_band_is_empty(&self) -> bool {
        let band = self.dynamics.as_ref().and_then(|d| d.control.as_ref());
        band.is_none_or(|b| b.entries.is_empty())
    }

    /// The deferred end of the transmission in progress, if it is deferred: its time.
    pub fn deferred_done(&self) -> Option<Time> {
        self.done_deferred.then_some(self.tx_done_at)
    }

    /// A packet is about to join the queue while the end of the transmission in progress is
    /// deferred: that end must now run as an event, at the time this returns, unless the
    /// queue runs unseen (its settlement starts the packet; see [`Link::defer_done`]).
    pub fn undefer_for_enqueue(&mut self) -> Option<Time> {
        if self.runs_unseen() {
            return None;
        }
        self.undefer_done()
    }

    /// The end of the transmission in progress must run as an event (the link is going
    /// down, and the end discards its packet): the time to queue it at, if it was deferred.
    pub fn undefer_done(&mut self) -> Option<Time> {
        let deferred = self.deferred_done();
        self.done_deferred = false;
        deferred
    }

    /// The link may have stopped running unseen (its `quiet` changed): if its deferred end
    /// would now start a packet that needs an event, stop deferring it and return its time,
    /// for the caller to queue as an event.
    pub fn recheck_deferral(&mut self) -> Option<Time> {
        let end = self.deferred_done().filter(|_| !self.next_start_needs_no_event());
        if end.is_some() {
            self.done_deferred = false;
        }
        end
    }

    /// Carry out a deferred end of transmission whose time has passed: the packet joins the
    /// pipe. Returns when the pipe's head arrives if the pipe was empty (an end carried out
    /// at its own instant after an event ranked above it, see `World::settle`; a deferred
    /// end always finds a packet in the pipe).
    pub fn settle_done(&mut self, slab: &mut PacketSlab) -> Option<Time> {
        self.done_deferred = false;
        match self.finish_tx(self.tx_done_at, slab) {
            TxEnd::Pipe(head) => head,
            TxEnd::Cut => None,
            TxEnd::OnWire(_) | TxEnd::Lost(_) => unreachable!("an end is deferred only on a link without a wire"),
        }
    }

    /// Mark the end of the transmission in progress as deferred: its instant has come within
    /// the settlement that started it (`World::settle`), which carries it out next.
    pub fn defer_due_end(&mut self) {
        debug_assert!(self.transmitting.is_some());
        self.done_deferred = true;
    }

    /// Pop the packet at the head of the pipe (it has arrived at `to`); returns it, or None if
    /// it was cut off when the link went down, and the arrival time of the next one, if any.
    pub fn deliver_head(&mut self, slab: &mut PacketSlab) -> (Option<EntryId>, Option<Time>) {
        assert!(!self.pipe.list.is_empty(), "delivery event with an empty pipe");
        let (id, next) = slab.take(&mut self.pipe.list);
        if let Some(d) = self.dynamics.as_mut().filter(|d| d.pipe_cut > 0) {
            d.pipe_cut -= 1;
            slab.release(id);
            return (None, next);
        }
        self.stats.delivered_packets += 1;
        (Some(id), next)
    }

    /// Whether packets may be corrupted on this link.
    pub fn corrupts(&self) -> bool {
        self.wire.as_ref().is_some_and(|w| w.corrupts())
    }

    /// The earliest packet on a wire with jitter or corruption has arrived at `to`: its entry,
    /// or, if it was corrupted, the packet itself, taken out of the slab and counted as a drop
    /// of its own reason (the receiving node discards it; it is not delivered).
    pub fn arrive_on_wire(&mut self, slab: &mut PacketSlab) -> Result<EntryId, Option<Packet>> {
        let wire = self.wire.as_mut().expect("a wire arrival on a link without wire effects");
        let (id, fate) = wire.arrive();
        match fate {
            WireFate::Delivered => {
                self.stats.delivered_packets += 1;
                Ok(id)
            }
            WireFate::Corrupted => {
                let p = slab.release(id);
                self.count_drop(p.size, DropReason::Corrupted);
                Err(Some(p))
            }
            WireFate::Cut => {
                slab.release(id);
                Err(None)
            }
        }
    }

    /// Whether the link is down (`changes.rs`).
    pub fn is_down(&self) -> bool {
        self.dynamics.as_ref().is_some_and(|d| d.down)
    }

    /// Whether the far end has paused any priority of the link (`pfc.rs`).
    pub fn is_paused(&self) -> bool {
        self.paused_priorities() != 0
    }

    /// The priorities the far end has paused, bit `p` for priority `p`.
    pub fn paused_priorities(&self) -> u8 {
        self.dynamics.as_ref().map_or(0, |d| d.paused)
    }

    /// A pause frame for `priority` (`paused`) or a resume took effect: the transmission in
    /// progress, if any, ends as planned (IEEE 802.1Qbb pauses between frames); no packet of
    /// data of the priority starts while it is paused (the control band's still do), nor of
    /// any other if the qdisc keeps no priorities apart. The caller starts the transmitter
    /// again on a resume.
    pub fn set_paused(&mut self, priority: u8, paused: bool) {
        let d = self.dynamics.get_or_insert_with(Box::default);
        d.paused = if paused { d.paused | 1 << priority } else { d.paused & !(1 << priority) };
        if self.qdisc.keeps_priorities_apart() {
            self.qdisc.set_paused(d.paused);
        }
    }

    /// When the transmission in progress ends, if one is in progress: a MAC control frame
    /// such as a pause waits for it.
    pub fn transmission_ends(&self) -> Option<Time> {
        self.transmitting.map(|_| self.tx_done_at)
    }

    /// Transmissions that start from now on go at `rate`; the one in progress ends as planned
    /// (ns-3's `DataRate` attribute, set on a device mid-run, acts so).
    pub fn set_rate(&mut self, rate: BitRate) {
        self.serializer = Serializer::new(rate);
    }

    /// Packets whose transmission ends from now on take `delay` to cross; those on the wire
    /// keep theirs.
    pub fn set_delay(&mut self, delay: Dur) {
        self.delay = delay;
    }

    /// The link goes down now: everything on it is dropped into `lcx.out.drops`, what was
    /// queued as `LinkDown` (as Linux resets a device's qdisc when its carrier goes, in
    /// `dev_deactivate`) and what was on the wire as `LinkCut`. The packets in transmission and
    /// on the wire stay where they are, marked, until their events come and discard them, so
    /// no event is left without its packet. A qdisc that holds packets back ("not before t")
    /// keeps those until the link is up again.
    pub fn go_down(&mut self, now: Time, lcx: &mut LinkCx) {
        if self.is_down() {
            return;
        }
        let held = self.backlog();
        self.stats.integrate(now, held);
        let d = self.dynamics.get_or_insert_with(Box::default);
        d.down = true;
        let mut cut: Vec<Packet> = Vec::new();
        if let Some(id) = self.transmitting.filter(|_| !d.tx_cut) {
            d.tx_cut = true;
            cut.push(*lcx.slab.held(id));
        }
        cut.extend(lcx.slab.iter(&self.pipe.list).skip(d.pipe_cut as usize).copied());
        d.pipe_cut = self.pipe.list.len();
        if let Some(wire) = &mut self.wire {
            cut.extend(wire.cut_all().into_iter().map(|id| *lcx.slab.held(id)));
        }
        for p in cut {
            self.count_drop(p.size, DropReason::LinkCut);
            lcx.out.drops.push((p, DropReason::LinkCut));
        }
        self.flush_queue(now, lcx);
    }

    /// Drop what the device queue and the qdisc hold, as `LinkDown`; drops the qdisc makes
    /// itself while it is emptied keep their own reasons.
    fn flush_queue(&mut self, now: Time, lcx: &mut LinkCx) {
        if let Some(band) = self.dynamics.as_mut().and_then(|d| d.control.as_mut()) {
            band.bytes = 0;
            let flushed: Vec<EntryId> = band.entries.drain(..).collect();
            for id in flushed {
                let p = lcx.slab.release(id);
                self.count_drop(p.size, DropReason::LinkDown);
                lcx.out.drops.push((p, DropReason::LinkDown));
            }
        }
        if let Some(d) = &mut self.device {
            d.bytes = 0;
            d.entered.clear();
            let flushed: Vec<Packet> = d.packets.drain(..).collect();
            for p in flushed {
                self.count_drop(p.size, DropReason::LinkDown);
                lcx.out.drops.push((p, DropReason::LinkDown));
            }
        }
        loop {
            let before = lcx.out.drops.len();
            let (qdisc, mut cx) = self.qdisc_cx(now, lcx);
            let next = qdisc.dequeue(&mut cx);
            let marks = cx.marks;
            self.count_verdicts(marks, &lcx.out.drops[before..]);
            let Some(p) = next.into_packet(&mut lcx.slab) else { break };
            self.count_drop(p.size, DropReason::LinkDown);
            lcx.out.drops.push((p, DropReason::LinkDown));
        }
    }

    /// The link is up again: it takes packets and sends from now on.
    pub fn come_up(&mut self) {
        if let Some(d) = &mut self.dynamics {
            d.down = false;
        }
    }

    /// A packet offered to the link while it is down: dropped into `lcx.out.drops`.
    pub fn refuse_while_down(&mut self, now: Time, id: EntryId, lcx: &mut LinkCx) {
        let held = self.backlog();
        self.stats.integrate(now, held);
        let p = lcx.slab.release(id);
        self.stats.arrived_packets += 1;
        self.stats.arrived_bytes += p.size as u64;
        self.count_drop(p.size, DropReason::LinkDown);
        lcx.out.drops.push((p, DropReason::LinkDown));
    }

    /// The statistics as they stand at `now`: the backlog integrated up to it, and the busy
    /// time without the part of the current transmission still to come (busy time is credited
    /// when a transmission starts).
    pub fn stats_at(&self, now: Time) -> LinkStats {
        let mut s = self.stats.clone();
        s.integrate(now, self.backlog());
        if self.transmitting.is_some() && self.tx_done_at > now {
            s.busy = Dur(s.busy.0 - (self.tx_done_at - now).0);
        }
        let drops = self.drops.as_deref().cloned().unwrap_or_default();
        LinkStats { counters: s, dropped_packets: drops.packets, dropped_bytes: drops.bytes }
    }
}

#[cfg(test)]
thread_local! {
    /// Whether links on this thread may defer ends of transmission (`Link::defer_done`): test
    /// builds compare whole runs with and without (`deferral_tests.rs`).
    static DEFERRAL: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Let links on this thread defer ends of transmission, or not, from now on.
#[cfg(test)]
pub(crate) fn set_deferral(on: bool) {
    DEFERRAL.with(|c| c.set(on));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::droptail::{DropTail, DropTailConfig};
    use crate::qdisc::harness::packet;
    use crate::rng::StreamKind;
    use crate::units::Limit;

    fn link(limit: Limit) -> Link {
        link_with_device(limit, 0)
    }

    /// The context of the links of a two-node network.
    fn link_cx() -> LinkCx {
        LinkCx { node_buffers: vec![NodeBuffers::default(); 2], ..LinkCx::default() }
    }

    fn link_with_device(limit: Limit, device_queue: u32) -> Link {
        let params = LinkParams {
            from: NodeId(0),
            to: NodeId(1),
            rate: BitRate(10_000_000),
            delay: Dur(1_000_000),
            mtu: Bytes(1500),
            framing_overhead: Bytes(0),
            min_packet_gap: Dur(0),
            fragment_rule: FragmentRule::default(),
            loss: LossSpec::default(),
            jitter: None,
            corrupt: 0.0,
            device_queue,
            capacity: None,
        };
        let qdisc = AnyQdisc::DropTail(DropTail::new(&DropTailConfig { limit }).unwrap());
        let rng = |kind| Rng::stream(1, kind, 0);
        Link::new(params, qdisc, rng(StreamKind::Qdisc), (rng(StreamKind::LinkLoss), rng(StreamKind::Wire)))
    }

    /// A link is per-link state that every packet through it touches; at 10,000 flows a
    /// dumbbell has 40,002 of them, far beyond the caches, so its size is speed. Drop-tail is
    /// the only discipline stored inline (`qdisc::slot!`), so the queue is no larger than its
    /// FIFO, whose packets lie in the world's slab (`slab.rs`): the ends of a list, not a
    /// `VecDeque`.
    #[test]
    fn links_stay_small() {
        use std::mem::size_of;
        assert!(size_of::<AnyQdisc>() <= size_of::<DropTail>(), "AnyQdisc {}", size_of::<AnyQdisc>());
        assert!(size_of::<Link>() <= LINK_BYTES, "Link {} > {LINK_BYTES}", size_of::<Link>());
        // A scenario holds a spec per declared link while its network is built (20,001 on the
        // 10,000-flow dumbbell): the rarely set reverse qdisc and capacity traces are boxed.
        assert!(size_of::<LinkSpec>() <= LINK_SPEC_BYTES, "LinkSpec {} > {LINK_SPEC_BYTES}", size_of::<LinkSpec>());
    }
    const LINK_BYTES: usize = 384;
    const LINK_SPEC_BYTES: usize = 448;

    /// Cutting through leaves the link exactly as an enqueue followed by a dequeue would, over
    /// a run of packets sent whenever the previous one has left (each arrival finds it idle).
    #[test]
    fn cut_through_equals_enqueue_then_dequeue() {
        let limit = Limit { packets: Some(10), bytes: None };
        let (mut queued, mut direct) = (link(limit), link(limit));
        let mut cx = link_cx();
        let mut now = Time(5);
        for uid in 0..50u32 {
            let p = packet(uid, 1, 40 + (uid as u16 * 37) % 1460);
            assert!(queued.can_cut_through(&p) && direct.can_cut_through(&p));
            let id = cx.slab.hold(p);
            queued.enqueue(now, id, &mut cx);
            let TxStart::Started(done) = queued.start_tx(now, &mut cx) else { panic!("not started") };
            let id = cx.slab.hold(p);
            assert_eq!(direct.cut_through(now, id, &mut cx.slab), done);
            assert_eq!(queued.in_transmission(&cx.slab), direct.in_transmission(&cx.slab));
            assert!(!direct.can_cut_through(&p), "busy while transmitting");
            now = done + Dur(uid as u64 * 1000);
            assert_eq!(queued.finish_tx(done, &mut cx.slab), direct.finish_tx(done, &mut cx.slab));
        }
        assert_eq!(format!("{:?}", queued.stats_at(now)), format!("{:?}", direct.stats_at(now)));
        assert!(cx.out.drops.is_empty() && cx.out.emitted.is_empty());
    }

    /// A byte limit smaller than the packet means a drop, which the queue must decide.
    #[test]
    fn no_cut_through_past_a_byte_limit() {
        let small = link(Limit { packets: None, bytes: Some(Bytes(1000)) });
        assert!(small.can_cut_through(&packet(0, 1, 1000)));
        assert!(!small.can_cut_through(&packet(1, 1, 1001)));
    }

    /// A FIFO of 10 packets above a device queue of 4, offered 20 packets at one instant as the
    /// world offers them (enqueue, then start): the first is sent at once, the next 4 fill the
    /// device queue while the FIFO stays empty, the FIFO then takes 10, and the last 5 are
    /// dropped (15 held in all, against 11 without a device queue). Everything leaves in
    /// arrival order, and the link's identities count both queues.
    #[test]
    fn the_qdisc_sees_backlog_only_once_the_device_queue_is_full() {
        let limit = Limit { packets: Some(10), bytes: None };
        for (device, held) in [(4u32, 15u64), (0, 11)] {
            let mut l = link_with_device(limit, device);
            let mut cx = link_cx();
            let now = Time(1000);
            let (mut in_qdisc, mut drops) = (vec![], vec![]);
            let mut done = None;
            for uid in 0..20u32 {
                let id = cx.slab.hold(packet(uid, 1, 1000));
                l.enqueue(now, id, &mut cx);
                if l.ready_to_send() || l.has_device_queue() {
                    if let TxStart::Started(t) = l.start_tx(now, &mut cx) {
                        done = Some(t);
                    }
                }
                // The world takes the drops after each step.
                drops.extend(cx.out.drops.drain(..).map(|(p, _)| p.uid));
                in_qdisc.push(l.qdisc.backlog().packets);
            }
            assert_eq!(drops, (held as u32..20).collect::<Vec<_>>(), "device queue {device}");
            let d = device as u64;
            let want: Vec<u64> = (0..20u64).map(|i| i.saturating_sub(d).min(10)).collect();
            assert_eq!(in_qdisc, want, "device queue {device}");
            assert_eq!(l.backlog().packets, held - 1, "all but the one in transmission");
            // Drain: each end of transmission starts the next packet, in arrival order.
            let mut sent = vec![l.in_transmission(&cx.slab).unwrap().uid];
            let mut t = done.expect("the first packet starts at once");
            loop {
                assert!(matches!(l.finish_tx(t, &mut cx.slab), TxEnd::Pipe(_)));
                match l.start_tx(t, &mut cx) {
                    TxStart::Started(next) => {
                        sent.push(l.in_transmission(&cx.slab).unwrap().uid);
                        t = next;
                    }
                    _ => break,
                }
            }
            assert_eq!(sent, (0..held as u32).collect::<Vec<_>>());
            let s = l.stats_at(t);
            assert_eq!(s.arrived_packets, s.departed_packets + s.dropped_in_queue() + l.backlog().packets);
            assert_eq!(s.max_backlog_packets, held - 1, "the packet in transmission is not backlog");
            assert_eq!(l.device_sojourn().is_some(), device > 0);
            if let Some(waited) = l.device_sojourn() {
                // By hand, with T = 800 us (1000 B at 10 Mb/s): packet k starts at kT. Packets
                // 1-4 entered the device queue at 0, packet k > 4 when packet k - 4 left it, at
                // (k - 4)T: in the device queue kT for k <= 4 and 4T after, in the qdisc the
                // rest. Over packets 0-14: 105T in all, 10T + 10 x 4T = 50T in the device queue.
                let slot = Dur::from_micros(800).0;
                assert_eq!((s.sojourn_sum.0, waited.sum.0, waited.max.0), (105 * slot, 50 * slot, 4 * slot));
            }
        }
    }
}
