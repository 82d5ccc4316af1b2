//! Transport endpoints ("agents"): what lives at a host and turns application data into packets
//! and back. An endpoint never touches the world directly: it gets an [`AgentCx`] through which
//! its [`Host`] takes its packets, arms its timers and records. A packet is offered to the host
//! when it is sent, and the host answers at once what its first queue did with it (Linux's
//! `dev_queue_xmit` returning NET_XMIT_SUCCESS or NET_XMIT_DROP), so an endpoint emits first and
//! commits its own state only after the answer (as smoltcp's `dispatch` does).

pub mod assisted;
pub mod contract;
pub mod mptcp;
pub mod ndp;
pub mod pcp;
pub mod roce;
pub mod tcp;
pub mod udp;

use crate::packet::{AgentId, NodeId, Packet};
use crate::telemetry::IntRecord;
use crate::trace::Recorder;
use crate::units::{Bytes, Dur, Time};
pub use contract::{BuiltFlow, DeliveryCounts, FlowBuild, FlowReport, FlowRow, SendCounts, TransportSpec};
use serde::Serialize;

/// What the host's first queue did with a packet offered to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Queued or sent (or delivered on the host itself).
    Accepted,
    /// Dropped on arrival by the host's own queue: the packet never left the host.
    Refused,
}

/// The host an endpoint runs on, as the endpoint sees it while it acts.
pub trait Host {
    /// Take a packet an endpoint of host `node` sends: stamp its uid and send time, route it,
    /// and say what the first queue did with it.
    fn send(&mut self, node: NodeId, pkt: Packet) -> Admission;
    /// Queue `timer` of endpoint `owner` to expire at `at`.
    fn arm(&mut self, owner: AgentId, at: Time, timer: Timer);
    fn recorder(&mut self) -> &mut Recorder;
    /// The in-band telemetry echo the arriving packet `uid` carries (`telemetry.rs`), if any.
    fn telemetry(&self, _uid: u32) -> Option<IntRecord> {
        None
    }
    /// Count endpoint `agent`'s bytes queued in its host from now on (`host_queue.rs`).
    fn count_host_queue(&mut self, _agent: AgentId) {}
    /// Endpoint `agent`'s bytes queued in its host, if they are counted.
    fn host_queued(&self, _agent: AgentId) -> Bytes {
        Bytes(0)
    }
    /// Wake endpoint `agent` ([`Endpoint::on_host_room`]) when one of its packets leaves its
    /// host's queue.
    fn wake_on_host_room(&mut self, _agent: AgentId) {}
}

/// A timer as the event queue carries it: the owner's timer kind and the generation it was
/// armed with (a stale generation means it was cancelled or re-armed since).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    pub kind: u8,
    pub generation: u32,
}

/// One cancellable timer of an endpoint.
///
/// TCP re-arms its retransmission timer on nearly every ACK. Pushing a fresh event each time
/// would fill the event heap with stale entries (one per ACK per RTO period), so a re-arm to a
/// later deadline only moves the deadline: the event already queued finds it when it comes due
/// and re-queues itself once. Only an earlier deadline queues a new event.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerSlot {
    generation: u32,
    armed: bool,
    deadline: Time,
    /// An event for this slot is in the queue, due at `queued_at` (a flag beside a plain time
    /// rather than an `Option<Time>`: 24 bytes a slot instead of 32, and a sender has seven).
    queued: bool,
    queued_at: Time,
}

impl TimerSlot {
    pub fn arm(&mut self, kind: u8, at: Time, cx: &mut AgentCx<impl Host>) {
        self.armed = true;
        self.deadline = at;
        if self.queued && self.queued_at <= at {
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        (self.queued, self.queued_at) = (true, at);
        cx.arm(at, Timer { kind, generation: self.generation });
    }
    pub fn cancel(&mut self) {
        self.armed = false;
    }
    pub fn is_armed(&self) -> bool {
        self.armed
    }
    /// An expiry came due: true if the timer fires now. A superseded or cancelled expiry
    /// returns false, and one whose deadline moved later re-queues itself for it.
    pub fn on_expiry(&mut self, t: Timer, cx: &mut AgentCx<impl Host>) -> bool {
        if t.generation != self.generation {
            return false;
        }
        self.queued = false;
        if !self.armed {
            return false;
        }
        if cx.now < self.deadline {
            (self.queued, self.queued_at) = (true, self.deadline);
            cx.arm(self.deadline, t);
            return false;
        }
        self.armed = false;
        true
    }
}

/// What an endpoint may touch while it acts: the clock, its identity, and its host.
///
/// Generic over the host (the world, or a scripted one in unit tests) so that every call into
/// it is static and inlined: a `dyn Host` cost 0.8 % of the 16-flow dumbbell's instructions.
pub struct AgentCx<'a, H: Host> {
    pub now: Time,
    pub me: AgentId,
    pub node: NodeId,
    host: &'a mut H,
}

impl<'a, H: Host> AgentCx<'a, H> {
    pub fn new(now: Time, me: AgentId, node: NodeId, host: &'a mut H) -> Self {
        AgentCx { now, me, node, host }
    }
    /// Hand a packet to this node's IP layer; the answer is its first queue's.
    pub fn send(&mut self, pkt: Packet) -> Admission {
        self.host.send(self.node, pkt)
    }
    pub fn rec(&mut self) -> &mut Recorder {
        self.host.recorder()
    }
    /// The in-band telemetry echo the arriving packet `uid` carries, if its flow collects it.
    pub fn telemetry(&self, uid: u32) -> Option<IntRecord> {
        self.host.telemetry(uid)
    }
    fn arm(&mut self, at: Time, timer: Timer) {
        self.host.arm(self.me, at, timer);
    }
    /// Count this endpoint's bytes queued in its host from now on.
    pub fn count_host_queue(&mut self) {
        self.host.count_host_queue(self.me);
    }
    /// This endpoint's bytes queued in its host (counted once `count_host_queue` was called).
    pub fn host_queued(&self) -> Bytes {
        self.host.host_queued(self.me)
    }
    /// Be woken (`Endpoint::on_host_room`) when one of this endpoint's packets leaves the
    /// host's queue.
    pub fn wake_on_host_room(&mut self) {
        self.host.wake_on_host_room(self.me);
    }
}

pub trait Endpoint {
    fn node(&self) -> NodeId;
    /// The application starts (scheduled at the flow's start time).
    fn on_start(&mut self, cx: &mut AgentCx<impl Host>);
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>);
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>);
    /// The host received an ICMP Source Quench about this endpoint's traffic.
    fn on_source_quench(&mut self, _cx: &mut AgentCx<impl Host>) {}
    /// One of this endpoint's packets left its host's queue, as it asked
    /// (`AgentCx::wake_on_host_room`).
    fn on_host_room(&mut self, _cx: &mut AgentCx<impl Host>) {}
    /// Whether this endpoint would act again only if a packet reached it: no timer armed
    /// (a cancelled timer's queued expiry changes nothing) and nothing a Source Quench would
    /// change. The world reclaims a finished flow's endpoints once both are quiescent and none
    /// of the flow's packets is in the network. `false`, never reclaimed, unless implemented.
    fn is_quiescent(&self) -> bool {
        false
    }
}

/// A host for driving one endpoint by hand in unit tests: it keeps every packet sent and every
/// timer armed, and accepts everything (or refuses everything, with `refuse`).
#[cfg(test)]
pub(crate) struct ScriptedHost {
    pub now: Time,
    pub rec: Recorder,
    pub sent: Vec<Packet>,
    pub timers: Vec<(Time, Timer)>,
    pub refuse: bool,
    /// Packets offered, refused ones included.
    pub offers: u32,
    /// The data bytes queued in the host once the endpoint asked for them to be counted
    /// (a test empties it as the link would); the handshake is not counted, as it has left
    /// the host by the time its answer comes.
    pub queued: Option<u64>,
    /// The endpoint asked to be woken when its host's queue has room.
    pub wants_room: bool,
    next_uid: u32,
}

#[cfg(test)]
impl ScriptedHost {
    pub fn new(rec: Recorder) -> Self {
        ScriptedHost {
            now: Time::ZERO,
            rec,
            sent: vec![],
            timers: vec![],
            refuse: false,
            offers: 0,
            queued: None,
            wants_room: false,
            next_uid: 0,
        }
    }
}

#[cfg(test)]
impl Host for ScriptedHost {
    fn send(&mut self, _node: NodeId, mut pkt: Packet) -> Admission {
        (pkt.uid, pkt.sent_at) = (self.next_uid, self.now);
        self.next_uid += 1;
        self.offers += 1;
        if self.refuse {
            return Admission::Refused;
        }
        if let Some(q) = self.queued.as_mut().filter(|_| pkt.payload > 0) {
            *q += pkt.size as u64;
        }
        self.sent.push(pkt);
        Admission::Accepted
    }
    fn count_host_queue(&mut self, _agent: AgentId) {
        self.queued.get_or_insert(0);
    }
    fn host_queued(&self, _agent: AgentId) -> Bytes {
        Bytes(self.queued.unwrap_or(0))
    }
    fn wake_on_host_room(&mut self, _agent: AgentId) {
        self.wants_room = true;
    }
    fn arm(&mut self, _owner: AgentId, at: Time, timer: Timer) {
        self.timers.push((at, timer));
    }
    fn recorder(&mut self) -> &mut Recorder {
        &mut self.rec
    }
}

/// The `TransportSpec` accessors of a spec struct with `name`, `src`, `dst` and `start` fields
/// (every transport's, so far).
macro_rules! common_flow_keys {
    () => {
        fn name(&self) -> Option<&str> {
            self.name.as_deref()
        }
        fn endpoints(&self) -> (&str, &str) {
            (&self.src, &self.dst)
        }
        fn start(&self) -> crate::units::Dur {
            self.start
        }
    };
}
pub(crate) use common_flow_keys;

/// The transport registry: one line per transport, `Variant: "kind" => module::SpecType =>
/// SenderVariant(SenderType), ReceiverVariant(ReceiverType)`, with `(source_quench)` after the
/// kind when its sender reacts to an ICMP Source Quench (`Endpoint::on_source_quench`). It
/// generates the scenario's `FlowSpec` enum (tagged by `kind`), the `Agent` enum with its
/// `Endpoint` dispatch, and the flows-table row dispatch. The spec type implements
/// [`TransportSpec`], the sender [`FlowReport`]. Each endpoint type is a `Box`, so that an
/// `Agent` is a tag and a pointer (`agent_slots_stay_small`).
macro_rules! transports {
    ($($variant:ident: $name:literal $(($flag:ident))? => $module:ident::$spec:ident =>
        $sender:ident($sty:ty), $receiver:ident($rty:ty));+ $(;)?) => {
        /// A flow as written in a scenario: `{ kind = "tcp", src = "a", dst = "b", ... }`.
        #[derive(Clone, Debug, Serialize)]
        // Deserialize: `tagged::deserialize_by_kind!` below, so that an error inside keeps its path.
        #[serde(tag = "kind")]
        pub enum FlowSpec {
            $(#[serde(rename = $name)] $variant($module::$spec),)+
        }

        $crate::tagged::deserialize_by_kind!(FlowSpec, $($name => $variant),+);

        impl FlowSpec {
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            pub fn kind(&self) -> &'static str {
                match self { $(FlowSpec::$variant(_) => $name,)+ }
            }
            pub fn spec(&self) -> &dyn TransportSpec {
                match self { $(FlowSpec::$variant(f) => f,)+ }
            }
        }

        /// Every endpoint kind, dispatched statically.
        pub enum Agent {
            $($sender($sty), $receiver($rty),)+
        }

        impl Endpoint for Agent {
            #[inline]
            fn node(&self) -> NodeId {
                match self { $(Agent::$sender(a) => a.node(), Agent::$receiver(a) => a.node(),)+ }
            }
            #[inline]
            fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
                match self { $(Agent::$sender(a) => a.on_start(cx), Agent::$receiver(a) => a.on_start(cx),)+ }
            }
            #[inline]
            fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
                match self {
                    $(Agent::$sender(a) => a.on_packet(pkt, cx), Agent::$receiver(a) => a.on_packet(pkt, cx),)+
                }
            }
            #[inline]
            fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
                match self {
                    $(Agent::$sender(a) => a.on_timer(timer, cx), Agent::$receiver(a) => a.on_timer(timer, cx),)+
                }
            }
            fn on_source_quench(&mut self, cx: &mut AgentCx<impl Host>) {
                match self {
                    $(Agent::$sender(a) => a.on_source_quench(cx), Agent::$receiver(a) => a.on_source_quench(cx),)+
                }
            }
            fn on_host_room(&mut self, cx: &mut AgentCx<impl Host>) {
                match self {
                    $(Agent::$sender(a) => a.on_host_room(cx), Agent::$receiver(a) => a.on_host_room(cx),)+
                }
            }
            fn is_quiescent(&self) -> bool {
                match self {
                    $(Agent::$sender(a) => a.is_quiescent(), Agent::$receiver(a) => a.is_quiescent(),)+
                }
            }
        }

        impl Agent {
            /// Whether this endpoint is a sender that reacts to a Source Quench quoting its
            /// destination (the world indexes these when it is assembled).
            pub(crate) fn reacts_to_source_quench(&self) -> bool {
                match self {
                    $(Agent::$sender(_) => registry_flag!($($flag)?), Agent::$receiver(_) => false,)+
                }
            }
        }

        /// Fill a flow's row from its (sender, receiver) pair.
        pub(crate) fn report(sender: &Agent, receiver: &Agent, row: &mut FlowRow) {
            match (sender, receiver) {
                $((Agent::$sender(s), Agent::$receiver(r)) => s.report(r, row),)+
                _ => unreachable!("flow endpoints are built in matching pairs"),
            }
        }
    };
}

/// A registry line's `(source_quench)` mark, as a bool.
macro_rules! registry_flag {
    () => {
        false
    };
    (source_quench) => {
        true
    };
}

transports! {
    Tcp: "tcp" (source_quench) => tcp::TcpFlowSpec => TcpSender(Box<tcp::TcpSender>), TcpReceiver(Box<tcp::TcpReceiver>);
    Udp: "udp" => udp::UdpFlowSpec => UdpSource(Box<udp::UdpSource>), UdpSink(Box<udp::UdpSink>);
    Pcp: "pcp" => pcp::PcpFlowSpec => PcpSender(Box<pcp::PcpSender>), PcpReceiver(Box<pcp::PcpReceiver>);
    Assisted: "assisted" => assisted::AssistedFlowSpec =>
        AssistedSender(Box<assisted::AssistedSender>), AssistedReceiver(Box<assisted::AssistedReceiver>);
    Ndp: "ndp" => ndp::NdpFlowSpec => NdpSender(Box<ndp::NdpSender>), NdpReceiver(Box<ndp::NdpReceiver>);
    Mptcp: "mptcp" => mptcp::MptcpFlowSpec =>
        MptcpSender(Box<mptcp::MptcpSender>), MptcpReceiver(Box<mptcp::MptcpReceiver>);
    Roce: "roce" => roce::RoceFlowSpec => RoceSender(Box<roce::RoceSender>), RoceReceiver(Box<roce::RoceReceiver>);
}

impl FlowSpec {
    pub fn name(&self) -> Option<&str> {
        self.spec().name()
    }
    pub fn endpoints(&self) -> (&str, &str) {
        self.spec().endpoints()
    }
    pub fn start(&self) -> Dur {
        self.spec().start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    /// The JSON shape each registered transport had before the registry (hand-written, as the
    /// scenarios and the Python package write it): parsed to its kind and written back tagged.
    #[test]
    fn every_kind_parses_from_its_tag_and_writes_it_back() {
        let flows = [
            r#"{"kind":"tcp","src":"a","dst":"b","cc":"reno","bytes":"10KB"}"#,
            r#"{"kind":"udp","src":"a","dst":"b","rate":"1Mbps","pattern":"poisson"}"#,
            r#"{"kind":"pcp","src":"a","dst":"b","pcp":{"history":false}}"#,
            r#"{"kind":"assisted","src":"a","dst":"b","start":"1s"}"#,
            r#"{"kind":"ndp","src":"a","dst":"b","bytes":"64KB"}"#,
            r#"{"kind":"mptcp","src":"a","dst":"b","bytes":"64KB","subflows":4}"#,
            r#"{"kind":"roce","src":"a","dst":"b","bytes":"64KB","cc":"hpcc"}"#,
        ];
        assert_eq!(FlowSpec::NAMES, ["tcp", "udp", "pcp", "assisted", "ndp", "mptcp", "roce"]);
        for (text, name) in flows.iter().zip(FlowSpec::NAMES) {
            let f: FlowSpec = serde_json::from_str(text).unwrap();
            assert_eq!(f.kind(), *name);
            assert_eq!(f.endpoints(), ("a", "b"));
            assert_eq!(serde_json::to_value(&f).unwrap()["kind"], *name);
        }
        let e = serde_json::from_str::<FlowSpec>(r#"{"kind":"sctp","src":"a","dst":"b"}"#).unwrap_err();
        assert!(
            e.to_string().contains("expected one of `tcp`, `udp`, `pcp`, `assisted`, `ndp`, `mptcp`, `roce`"),
            "{e}"
        );
    }

    /// An endpoint slot is a tag and a pointer: every endpoint lives in a box of its own. At
    /// 10,000 flows the slots (two per flow) then fit in the processor's second-level cache,
    /// where slots as large as their largest inline endpoint (the UDP source's 200 bytes)
    /// missed it on every packet delivered (docs/benchmarks.md, scale).
    #[test]
    fn agent_slots_stay_small() {
        assert_eq!(std::mem::size_of::<Agent>(), 16);
    }

    /// A transport's `validate` runs before the host names are resolved: a UDP flow with both a
    /// zero rate and an unknown destination is reported for its rate, a TCP flow for its host.
    #[test]
    fn validate_precedes_name_resolution() {
        let sc = |flow: &str| {
            Scenario::from_json(&format!(
                r#"{{"duration":"1s","hosts":["a","b"],
                    "links":[{{"from":"a","to":"b","rate":"1Mbps","delay":"1ms"}}],"flows":[{flow}]}}"#
            ))
            .unwrap()
        };
        let e = crate::builder::build(&sc(r#"{"kind":"udp","src":"a","dst":"zz","rate":"0bps"}"#)).err().unwrap();
        assert_eq!(e.path, "flows[0].rate", "{e}");
        let e = crate::builder::build(&sc(r#"{"kind":"tcp","src":"a","dst":"zz","tcp":{"mss":0}}"#)).err().unwrap();
        assert_eq!(e.path, "flows[0].dst", "{e}");
    }
}
