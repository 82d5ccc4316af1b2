//! TCP: one implementation of reliability (sequence space, retransmission timer with Karn's
//! rule and exponential backoff, duplicate-ACK loss detection, Tahoe/Reno/NewReno recovery,
//! handshake and FIN) with pluggable congestion control (`crate::cc`).
//!
//! Data flows one way per connection: a [`TcpSender`] at the source and a [`TcpReceiver`] at
//! the destination. Sequence numbers are 64-bit internally with ISN 0 (the SYN is seq 0, data
//! starts at 1); the pcap writer maps them onto 32-bit wire values. Every segment carries 20
//! bytes of IP and 20 of TCP header on the wire.
//!
//! Must not touch: the world or another endpoint. The sender and receiver act through their
//! `AgentCx` (send, timers, records); the congestion controller sees only the `cc::Window`
//! and the per-ACK record, never the sender's state.

pub mod burst;
mod config;
mod ecn;
mod flow;
pub(crate) mod options;
mod pacing;
mod profile;
pub mod quench;
mod quickack;
mod receiver;
mod rtt;
mod sack;
mod sender;

pub use config::{LimitedTransmit, RtoConfig, TcpConfig};
pub use flow::TcpFlowSpec;
pub(crate) use options::{agreed, handshake};
pub(crate) use profile::resolve as resolve_profile;
pub use receiver::TcpReceiver;
pub use rtt::RttEstimator;
pub use sender::TcpSender;

use crate::packet::{AgentId, FlowId, NodeId, Packet, Proto, IP_HEADER, TCP_HEADER};

/// Header bytes of every TCP segment on the wire.
pub const HEADERS: u32 = IP_HEADER + TCP_HEADER;

/// The timers of TCP endpoints, as their events carry them (`Timer::kind`). The sender's
/// come first: each is its index in the sender's timer table (`sender/timers.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum TcpTimer {
    /// The sender's retransmission timer (RFC 6298).
    Retransmit,
    /// SQuID's inter-datagram delay (RFC 1016).
    Pace,
    /// The wake-up of a send held by pacing, burstiness control or a local drop's probe.
    Burst,
    /// RACK's reorder timer (RFC 8985 section 6.2 step 5).
    Reorder,
    /// The tail loss probe's timer (RFC 8985 section 7.2).
    Probe,
    /// The congestion controller's own clock (`CongestionControl::wake_at`).
    Controller,
    /// The receiver's delayed-ACK timer (RFC 1122 4.2.3.2).
    DelayedAck,
}

impl TcpTimer {
    const ALL: [TcpTimer; 7] = [
        TcpTimer::Retransmit,
        TcpTimer::Pace,
        TcpTimer::Burst,
        TcpTimer::Reorder,
        TcpTimer::Probe,
        TcpTimer::Controller,
        TcpTimer::DelayedAck,
    ];

    pub(crate) fn kind(self) -> u8 {
        self as u8
    }

    /// The timer an expiry is for; None for a kind no TCP endpoint arms.
    pub(crate) fn of(timer: crate::transport::Timer) -> Option<TcpTimer> {
        Self::ALL.get(timer.kind as usize).copied()
    }
}

/// Addressing shared by both ends of a connection, and the shim every packet carries.
#[derive(Clone, Copy, Debug)]
pub struct Connection {
    pub flow: FlowId,
    pub local: NodeId,
    pub remote: NodeId,
    pub peer: AgentId,
    /// Bytes of a header every packet of the connection carries after its transport header
    /// (the in-band telemetry header, `telemetry::IntHeader`): counted in each packet's size
    /// and, as the options are, within the MSS, so a full segment still fits the path's MTU.
    pub shim: u16,
    /// Options a layer above TCP puts on this end's segments (Multipath TCP's).
    pub upper: UpperOptions,
}

/// Option bytes a layer above TCP adds to a connection's segments (Multipath TCP's, RFC 8684:
/// `transport/mptcp.rs` says which): counted in each segment's size where it is built
/// ([`Connection::segment`]); on a data segment within the MSS, as Linux's `tcp_current_mss`
/// counts every option; on an ACK, within the 40 option bytes, leaving fewer SACK blocks room.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpperOptions {
    /// On this end's SYN or SYN-ACK.
    pub syn: u8,
    /// On a segment with data, from either end (the peer's count against this end's MSS too).
    pub data: u8,
    /// On this end's other segments: ACKs without data, FINs.
    pub ack: u8,
}

impl Connection {
    /// Flow 0's end on node `local` to the peer agent on `remote` (agents numbered as their
    /// nodes), with no shim and no options of a layer above: the unit tests' connection.
    #[cfg(test)]
    pub(crate) fn for_tests(local: u32, remote: u32) -> Connection {
        Connection {
            flow: FlowId(0),
            local: NodeId(local),
            remote: NodeId(remote),
            peer: AgentId(remote),
            shim: 0,
            upper: UpperOptions::default(),
        }
    }

    /// Payload bytes of a full segment: the MSS less the options (`TcpConfig::segment_payload`,
    /// and those of the layer above on a data segment) and the shim.
    pub(crate) fn segment_payload(&self, cfg: &TcpConfig) -> u32 {
        cfg.segment_payload() - self.shim as u32 - self.upper.data as u32
    }

    /// Option bytes left for SACK blocks on this end's ACKs, after the timestamp option and
    /// the layer above's.
    pub(crate) fn sack_room(&self, cfg: &TcpConfig) -> u32 {
        crate::packet::TCP_OPTION_SPACE.saturating_sub(cfg.option_bytes() + self.upper.ack as u32)
    }

    /// The layer above's option bytes on a segment with these `flags` and `payload`.
    fn upper_option_bytes(&self, flags: u8, payload: u32) -> u32 {
        let bytes = if flags & crate::packet::tcp_flags::SYN != 0 {
            self.upper.syn
        } else if payload > 0 {
            self.upper.data
        } else {
            self.upper.ack
        };
        bytes as u32
    }

    /// A segment from this end to the peer.
    pub(crate) fn segment(&self, seq: u64, ack: u64, payload: u32, flags: u8, window: u64) -> Packet {
        Packet {
            uid: 0,
            seq,
            ack,
            sent_at: Default::default(),
            enqueued_at: Default::default(),
            src: self.local,
            dst: self.remote,
            flow: self.flow,
            dst_agent: self.peer,
            size: (HEADERS + self.shim as u32 + self.upper_option_bytes(flags, payload) + payload) as u16,
            payload: payload as u16,
            window: window.min(u32::MAX as u64) as u32,
            proto: Proto::Tcp,
            flags,
            ecn: 0,
            sack: Default::default(),
            frag: Default::default(),
            ts_on: false,
            ts_ecr: 0,
        }
    }
}
