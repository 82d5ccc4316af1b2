//! Transport endpoints ("agents"): what lives at a host and turns application data into packets
//! and back. An endpoint never touches the world directly: it gets an [`AgentCx`] to send
//! packets, arm timers and record, and the world routes what it emits afterwards.

pub mod assisted;
pub mod icmp;
pub mod pcp;
pub mod tcp;
pub mod udp;

use crate::packet::{AgentId, NodeId, Packet};
use crate::trace::Recorder;
use crate::units::Time;

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
    /// Due time of the live event in the queue, if one is there.
    queued_at: Option<Time>,
}

impl TimerSlot {
    pub fn arm(&mut self, kind: u8, at: Time, cx: &mut AgentCx) {
        self.armed = true;
        self.deadline = at;
        if self.queued_at.is_some_and(|q| q <= at) {
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        self.queued_at = Some(at);
        cx.timers.push((at, Timer { kind, generation: self.generation }));
    }
    pub fn cancel(&mut self) {
        self.armed = false;
    }
    pub fn is_armed(&self) -> bool {
        self.armed
    }
    /// An expiry came due: true if the timer fires now. A superseded or cancelled expiry
    /// returns false, and one whose deadline moved later re-queues itself for it.
    pub fn on_expiry(&mut self, t: Timer, cx: &mut AgentCx) -> bool {
        if t.generation != self.generation {
            return false;
        }
        self.queued_at = None;
        if !self.armed {
            return false;
        }
        if cx.now < self.deadline {
            self.queued_at = Some(self.deadline);
            cx.timers.push((self.deadline, t));
            return false;
        }
        self.armed = false;
        true
    }
}

pub struct AgentCx<'a> {
    pub now: Time,
    pub me: AgentId,
    pub node: NodeId,
    pub rec: &'a mut Recorder,
    pub(crate) out: &'a mut Vec<Packet>,
    pub(crate) timers: &'a mut Vec<(Time, Timer)>,
    pub(crate) next_uid: &'a mut u32,
}

impl AgentCx<'_> {
    /// Hand a packet to this node's IP layer; stamps its uid and send time.
    pub fn send(&mut self, mut pkt: Packet) {
        pkt.uid = *self.next_uid;
        *self.next_uid = self.next_uid.wrapping_add(1);
        pkt.sent_at = self.now;
        self.out.push(pkt);
    }
}

pub trait Endpoint {
    fn node(&self) -> NodeId;
    /// The application starts (scheduled at the flow's start time).
    fn on_start(&mut self, cx: &mut AgentCx);
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx);
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx);
    /// The host received an ICMP Source Quench about this endpoint's traffic.
    fn on_source_quench(&mut self, _cx: &mut AgentCx) {}
}

/// Every endpoint kind, dispatched statically.
pub enum Agent {
    TcpSender(Box<tcp::TcpSender>),
    TcpReceiver(Box<tcp::TcpReceiver>),
    UdpSource(udp::UdpSource),
    UdpSink(udp::UdpSink),
    PcpSender(Box<pcp::PcpSender>),
    PcpReceiver(Box<pcp::PcpReceiver>),
    AssistedSender(Box<assisted::AssistedSender>),
    AssistedReceiver(Box<assisted::AssistedReceiver>),
}

macro_rules! each_agent {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            Agent::TcpSender($a) => $e,
            Agent::TcpReceiver($a) => $e,
            Agent::UdpSource($a) => $e,
            Agent::UdpSink($a) => $e,
            Agent::PcpSender($a) => $e,
            Agent::PcpReceiver($a) => $e,
            Agent::AssistedSender($a) => $e,
            Agent::AssistedReceiver($a) => $e,
        }
    };
}

impl Endpoint for Agent {
    #[inline]
    fn node(&self) -> NodeId {
        each_agent!(self, a => a.node())
    }
    #[inline]
    fn on_start(&mut self, cx: &mut AgentCx) {
        each_agent!(self, a => a.on_start(cx))
    }
    #[inline]
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx) {
        each_agent!(self, a => a.on_packet(pkt, cx))
    }
    #[inline]
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx) {
        each_agent!(self, a => a.on_timer(timer, cx))
    }
    fn on_source_quench(&mut self, cx: &mut AgentCx) {
        each_agent!(self, a => a.on_source_quench(cx))
    }
}
