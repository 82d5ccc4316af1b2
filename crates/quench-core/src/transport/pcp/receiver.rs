//! The receiving end of a PCP connection: answers the SYN, reassembles, and acknowledges
//! every data packet at once with the cumulative ACK, its constant advertised window and the
//! packet's send time echoed (see `mod.rs` for the wire format). The ACK leaves at the
//! arrival instant, so its own `sent_at` is the receive timestamp: the sender reads the
//! one-way delay as `ack.sent_at − echo` with no reverse-path noise.
//! Owns the receive state and its counts. It acts only through its `AgentCx`, never on the world or
//! the sender.

use super::config::PcpConfig;
use crate::packet::{tcp_flags, NodeId, Packet};
use crate::ranges::FrontVec;
use crate::transport::tcp::Connection;
use crate::transport::{AgentCx, DeliveryCounts, Endpoint, Host, Timer};
use crate::units::Time;

#[derive(Clone, Debug, Default)]
pub struct PcpReceiverStats {
    /// Bytes delivered, packets received and completion, as every transfer counts them.
    pub delivery: DeliveryCounts,
    pub duplicate_bytes: u64,
    pub acks_sent: u64,
    pub first_syn: Option<Time>,
}

pub struct PcpReceiver {
    conn: Connection,
    window: u64,
    established: bool,
    rcv_nxt: u64,
    /// Out-of-order data: sorted, disjoint [start, end) ranges.
    held: FrontVec<(u64, u64)>,
    expected_bytes: Option<u64>,
    pub stats: PcpReceiverStats,
}

impl PcpReceiver {
    pub fn new(conn: Connection, cfg: &PcpConfig, expected_bytes: Option<u64>) -> Self {
        PcpReceiver {
            conn,
            window: cfg.receive_window.0,
            established: false,
            rcv_nxt: 0,
            held: FrontVec::default(),
            expected_bytes,
            stats: PcpReceiverStats::default(),
        }
    }

    fn reply(&mut self, flags: u8, echo: Time, cx: &mut AgentCx<impl Host>) {
        cx.send(self.conn.segment(echo.0, self.rcv_nxt, 0, flags, self.window));
        self.stats.acks_sent += 1;
    }

    fn on_syn(&mut self, syn: &Packet, cx: &mut AgentCx<impl Host>) {
        if !self.established {
            self.established = true;
            self.rcv_nxt = super::FIRST_DATA_SEQ;
            self.stats.first_syn = Some(cx.now);
        }
        self.reply(tcp_flags::SYN | tcp_flags::ACK, syn.sent_at, cx);
    }

    fn on_data(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        self.stats.delivery.packets_received += 1;
        let (start, end) = (pkt.seq, pkt.seq + pkt.payload as u64);
        if end <= self.rcv_nxt {
            self.stats.duplicate_bytes += pkt.payload as u64;
        } else if start > self.rcv_nxt {
            if end <= self.rcv_nxt + self.window {
                crate::ranges::insert(&mut self.held, start, end);
            }
        } else {
            let before = self.rcv_nxt;
            self.rcv_nxt = crate::ranges::advance(&mut self.held, end);
            self.deliver(self.rcv_nxt - before, cx.now);
        }
        self.reply(tcp_flags::ACK, pkt.sent_at, cx);
    }

    fn deliver(&mut self, bytes: u64, now: Time) {
        self.stats.delivery.delivered(bytes, self.expected_bytes, now);
    }
}

impl Endpoint for PcpReceiver {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    /// It arms no timer.
    fn is_quiescent(&self) -> bool {
        true
    }
    fn on_start(&mut self, _cx: &mut AgentCx<impl Host>) {}
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(tcp_flags::SYN) {
            self.on_syn(&pkt, cx);
        } else if self.established && pkt.payload > 0 {
            self.on_data(&pkt, cx);
        }
    }
    fn on_timer(&mut self, _timer: Timer, _cx: &mut AgentCx<impl Host>) {}
}
