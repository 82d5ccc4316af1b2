//! The contract between the engine and a transport: what a transport's flow spec gets while
//! the world is built ([`FlowBuild`]) and gives back ([`BuiltFlow`]), and the flows-table row
//! its sender fills at the end of a run ([`FlowRow`]), with the counts every reliable transfer
//! keeps alike ([`SendCounts`], [`DeliveryCounts`]) and the one function that writes them into
//! the row. The builder and the results import these from here; a transport needs nothing from
//! either.
//! Plain data and one function: it holds no simulation state and touches no component.

use crate::cc::PathFacts;
use crate::error::ConfigError;
use crate::packet::{AgentId, FlowId, NodeId};
use crate::transport::tcp::Connection;
use crate::transport::Agent;
use crate::units::{BitRate, Dur, Time};
use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// What a transport's flow spec (one `FlowSpec` variant) provides: its common keys and how it
/// builds its two endpoints once the builder has resolved the hosts and numbered the agents.
pub trait TransportSpec {
    fn name(&self) -> Option<&str>;
    /// The source and destination host names, as written.
    fn endpoints(&self) -> (&str, &str);
    /// When the application starts.
    fn start(&self) -> Dur;
    /// Checks that need no topology, made before the endpoints' names are resolved.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
    /// The flow's sender and receiver; errors name keys relative to the flow.
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError>;
    /// Packets the source is expected to send by `end` whatever the network does with them,
    /// for `budget.packets`: non-zero only for a source that sends at a rate of its own (UDP),
    /// not one that waits for acknowledgements.
    fn expected_packets(&self, _end: Dur) -> f64 {
        0.0
    }
    /// The options of the connection's SYN and SYN-ACK, for a capture; none for a transport
    /// without a TCP handshake.
    fn handshake(&self) -> crate::packet::Handshake {
        crate::packet::Handshake::default()
    }
}

/// What a transport's `build` gets: the flow's resolved hosts and agent ids, the run's seed and
/// end, path checks and the state flows share (per host, and by equality).
pub struct FlowBuild<'a> {
    pub id: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub sender: AgentId,
    pub receiver: AgentId,
    pub seed: u64,
    pub end: Time,
    /// The built network, as far as a transport may ask about it.
    pub(crate) topology: &'a dyn Topology,
}

impl FlowBuild<'_> {
    /// The (forward, backward) connections of a two-way transport: sender to receiver and back.
    pub fn connections(&self) -> (Connection, Connection) {
        self.connections_with_shim(0)
    }

    /// [`FlowBuild::connections`] whose every packet carries a `shim`-byte header
    /// (`Connection::shim`).
    pub fn connections_with_shim(&self, shim: u32) -> (Connection, Connection) {
        let shim = shim as u16;
        let forward = Connection {
            flow: self.id,
            local: self.src,
            remote: self.dst,
            peer: self.receiver,
            shim,
            upper: Default::default(),
        };
        let backward = Connection { local: self.dst, remote: self.src, peer: self.sender, ..forward };
        (forward, backward)
    }

    /// Check that `dst` is reachable from `src`; with `dont_fragment = Some((size, key))`, also
    /// that `size`-byte datagrams fit every MTU on the way (an error then names `key`).
    pub fn check_path(&self, dont_fragment: Option<(u64, &str)>) -> Result<(), ConfigError> {
        self.topology.check_path((self.src, self.dst), dont_fragment.map(|(size, _)| size)).map_err(|e| {
            match dont_fragment {
                // check_path leaves an MTU error's path empty: name the key that set the size.
                Some((_, key)) if e.path.is_empty() => ConfigError::new(key, e.message),
                _ => e,
            }
        })
    }

    /// Check that `src` is reachable from `dst`, for the acknowledgements.
    pub fn check_return_path(&self) -> Result<(), ConfigError> {
        self.topology
            .check_path((self.dst, self.src), None)
            .map_err(|e| ConfigError::new("src", format!("ACKs cannot return: {}", e.message)))
    }

    /// The flow's path when idle, for data packets of `data` bytes and ACKs of `ack` bytes on
    /// the wire: the routers a packet from `src` to `dst` passes (the links of its path less
    /// one, as an IP TTL would count them), the round trip of one data packet and its ACK
    /// (`fct.rs`'s packet-by-packet sums), and the sender's line rate; zeros if unreachable
    /// (`check_path` reports that). The paths ECMP or spraying choose among in a Clos fabric
    /// are all alike: the routing table's first stands for them.
    pub fn path_facts(&self, data: u64, ack: u64) -> PathFacts {
        self.topology.path_facts((self.src, self.dst), (data, ack))
    }

    /// The rate of the last link on the route from `src` to `dst`: the receiver's access link,
    /// at which a receiver-driven transport (NDP) paces its requests for data. None if
    /// unreachable (`check_path` reports that).
    pub fn last_hop_rate(&self) -> Option<BitRate> {
        self.topology.last_hop_rate((self.src, self.dst))
    }

    /// The value of type `T` that `host`'s flows share, made by `make` for the host's first.
    pub fn host_shared<T: Clone + Send + 'static>(&self, host: NodeId, make: impl FnOnce() -> T) -> T {
        let mut map = self.topology.shared().per_host.borrow_mut();
        let entry = map.entry((host, TypeId::of::<T>())).or_insert_with(|| Box::new(make()));
        entry.downcast_ref::<T>().expect("entries are keyed by their type").clone()
    }

    /// `value`, held once for every flow whose value equals it: the copy an earlier flow
    /// shared if one of the last [`SHARED_RECENT`] distinct values of its type equals it, else
    /// a new one. For what every flow of a kind holds alike and never changes, such as a TCP
    /// end's configuration: 10,000 flows of one kind then hold one copy, not 10,000.
    pub fn shared<T: PartialEq + Send + Sync + 'static>(&self, value: T) -> Arc<T> {
        let mut map = self.topology.shared().by_value.borrow_mut();
        let recent = map.entry(TypeId::of::<T>()).or_default();
        let mut held = recent.iter().filter_map(|entry| entry.downcast_ref::<Arc<T>>());
        if let Some(same) = held.find(|v| ***v == value) {
            return same.clone();
        }
        let new = Arc::new(value);
        recent.push_front(Box::new(new.clone()));
        recent.truncate(SHARED_RECENT);
        new
    }
}

/// A flow's two endpoints and what its flows-table row says about its transport.
pub struct BuiltFlow {
    pub sender: Agent,
    pub receiver: Agent,
    /// Congestion controller label ("" when the transport has none).
    pub cc: &'static str,
    /// Transfer size; unlimited when absent.
    pub bytes: Option<u64>,
    /// The flow's data gathers in-band telemetry and its ACKs echo it (`telemetry.rs`), in
    /// this header: its controller reads it.
    pub telemetry: Option<crate::telemetry::IntHeader>,
}

/// A sender fills its flow's row of the flows table from its own and its receiver's counters.
pub trait FlowReport {
    type Receiver;
    fn report(&self, rx: &Self::Receiver, row: &mut FlowRow);
}

/// What the flows being built share ([`FlowBuild::host_shared`], [`FlowBuild::shared`]): per
/// host, one value of each type (e.g. PCP's per-destination history); and by equality, the
/// recent distinct values of each type. Looked up only, so neither map's order can affect a
/// run, and a shared value is equal to the one it stands for.
#[derive(Default)]
pub(crate) struct FlowsShare {
    per_host: RefCell<BTreeMap<(NodeId, TypeId), Box<dyn Any + Send>>>,
    /// Each type's `Arc<T>`s, the most recently made first.
    by_value: RefCell<BTreeMap<TypeId, VecDeque<Box<dyn Any + Send>>>>,
}

/// Distinct values of a type [`FlowBuild::shared`] compares a new one with. A scenario's flows
/// come in a few kinds (a dumbbell's one, a study's handful); past this many, each further
/// distinct value is kept as often as it recurs, and building a flow costs at most this many
/// comparisons a shared type.
pub const SHARED_RECENT: usize = 16;

/// What the builder answers about the network while a flow is built.
pub(crate) trait Topology {
    /// Check that `to` is reachable from `from`; with `dont_fragment = Some(size)`, also that
    /// `size`-byte datagrams fit every MTU on the way (an MTU error leaves its path empty).
    fn check_path(&self, from_to: (NodeId, NodeId), dont_fragment: Option<u64>) -> Result<(), ConfigError>;
    /// The idle route from `from` to `to` for packets of (data, ack) bytes on the wire (zeros
    /// if there is none): see [`FlowBuild::path_facts`].
    fn path_facts(&self, from_to: (NodeId, NodeId), sizes: (u64, u64)) -> PathFacts;
    /// The rate of the last link on the route from `from` to `to` (None if there is none).
    fn last_hop_rate(&self, from_to: (NodeId, NodeId)) -> Option<BitRate>;
    /// The values the flows share, per host and by equality.
    fn shared(&self) -> &FlowsShare;
}

/// Per-flow figures gathered from both endpoints of each flow; each transport's sender fills
/// the ones it has (`transport::FlowReport`), the rest stay zero or NaN (undefined).
#[derive(Clone, Debug, Default)]
pub struct FlowRow {
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_delivered: u64,
    pub(crate) completion: Option<Time>,
    pub(crate) segments_sent: u64,
    pub(crate) retransmitted_segments: u64,
    pub(crate) timeouts: u64,
    pub(crate) fast_retransmits: u64,
    pub(crate) reordered_segments: u64,
    pub(crate) duplicate_segments: u64,
    pub(crate) dsacks_received: u64,
    pub(crate) cwnd: f64,
    pub(crate) srtt_s: f64,
    pub(crate) mean_rtt_s: f64,
    pub(crate) packets_sent: u64,
    pub(crate) packets_received: u64,
    pub(crate) mean_delay_s: f64,
    pub(crate) aborted: bool,
}

impl FlowRow {
    /// A row before its sender fills it: counts zero, averages undefined (NaN).
    pub(crate) fn undefined() -> Self {
        FlowRow { cwnd: f64::NAN, srtt_s: f64::NAN, mean_rtt_s: f64::NAN, mean_delay_s: f64::NAN, ..Default::default() }
    }

    /// The columns a reliable transfer (TCP, PCP, the assisted ideal, NDP) fills alike: its two
    /// ends' counts, its smoothed RTT (NaN before a sample) and its window in bytes. Every
    /// segment is one packet, so `packets_sent` is `segments_sent`; the mean RTT is NaN
    /// without samples (0/0).
    pub(crate) fn fill_transfer(&mut self, sent: &SendCounts, received: &DeliveryCounts, srtt: Option<Dur>, cwnd: f64) {
        self.bytes_sent = sent.bytes_sent;
        self.bytes_delivered = received.bytes_delivered;
        self.completion = received.completed;
        self.segments_sent = sent.segments_sent;
        self.packets_sent = sent.segments_sent;
        self.packets_received = received.packets_received;
        self.retransmitted_segments = sent.retransmitted_segments;
        self.timeouts = sent.timeouts;
        self.cwnd = cwnd;
        self.srtt_s = srtt.map_or(f64::NAN, |d| d.as_secs_f64());
        self.mean_rtt_s = sent.rtt_sum.as_secs_f64() / sent.rtt_samples as f64;
    }
}

/// What the sender of a reliable transfer counts for the flows table, the same for every
/// transport that has one (each keeps its other counters beside it).
#[derive(Clone, Copy, Debug, Default)]
pub struct SendCounts {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub retransmitted_segments: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// RTT samples taken and their sum: the flows table's mean RTT is the quotient.
    pub rtt_samples: u64,
    pub rtt_sum: Dur,
}

impl SendCounts {
    /// One segment of `payload` bytes sent; `retransmit` when it carries data sent before.
    pub fn sent(&mut self, payload: u64, retransmit: bool) {
        self.segments_sent += 1;
        self.bytes_sent += payload;
        self.retransmitted_segments += retransmit as u64;
    }

    pub fn rtt_sample(&mut self, rtt: Dur) {
        self.rtt_samples += 1;
        self.rtt_sum = self.rtt_sum + rtt;
    }
}

/// What the receiver of a reliable transfer counts for the flows table, the same for every
/// transport that has one.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeliveryCounts {
    /// Data bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// Data packets that arrived, duplicates included.
    pub packets_received: u64,
    /// When the last byte of a finite transfer was delivered.
    pub completed: Option<Time>,
}

impl DeliveryCounts {
    /// `bytes` more delivered in order at `now`; a transfer of `expected` bytes completes at
    /// the first delivery that reaches them.
    pub fn delivered(&mut self, bytes: u64, expected: Option<u64>, now: Time) {
        self.bytes_delivered += bytes;
        if self.completed.is_none() && expected.is_some_and(|n| self.bytes_delivered >= n) {
            self.completed = Some(now);
        }
    }
}
