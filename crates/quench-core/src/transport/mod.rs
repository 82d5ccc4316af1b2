//! Transport endpoints ("agents"): what lives at a host and turns application data into packets
//! and back. An endpoint never touches the world directly: it gets an [`AgentCx`] to send
//! packets, arm timers and record, and the world routes what it emits afterwards.

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
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerSlot {
    generation: u32,
    armed: bool,
}

impl TimerSlot {
    pub fn arm(&mut self, kind: u8, at: Time, cx: &mut AgentCx) {
        self.generation = self.generation.wrapping_add(1);
        self.armed = true;
        cx.timers.push((at, Timer { kind, generation: self.generation }));
    }
    pub fn cancel(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.armed = false;
    }
    pub fn is_armed(&self) -> bool {
        self.armed
    }
    /// Is this expiry the live one? Consumes it if so.
    pub fn fires(&mut self, t: Timer) -> bool {
        let live = self.armed && t.generation == self.generation;
        if live {
            self.armed = false;
        }
        live
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
}

/// Every endpoint kind, dispatched statically.
pub enum Agent {
    TcpSender(Box<tcp::TcpSender>),
    TcpReceiver(Box<tcp::TcpReceiver>),
    UdpSource(udp::UdpSource),
    UdpSink(udp::UdpSink),
}

macro_rules! each_agent {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            Agent::TcpSender($a) => $e,
            Agent::TcpReceiver($a) => $e,
            Agent::UdpSource($a) => $e,
            Agent::UdpSink($a) => $e,
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
}
