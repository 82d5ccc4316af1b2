//! The sender's hooks into the high-frequency monitor (`trace/flow_monitor.rs`): one branch
//! per segment and per ACK when the flow is not watched.
//! It reads the sender's window, flight and burstiness and changes no sender state; what it writes
//! goes to the recorder through `AgentCx`.

use super::TcpSender;
use crate::packet::Packet;
use crate::transport::{AgentCx, Host};

impl TcpSender {
    /// A data segment is about to leave: cwnd, bytes in flight before it, and its B(n).
    #[inline]
    pub(super) fn watch_send(&self, seq: u64, len: u32, retransmit: bool, cx: &mut AgentCx<impl Host>) {
        let now = cx.now;
        if cx.rec().watching(self.conn.flow, now) {
            let b = self.pacing.burst.as_ref().map_or(f64::NAN, |b| b.value(now));
            cx.rec().watch_send(now, seq, len, retransmit, self.w.cwnd, self.flight(), b);
        }
    }

    /// An ACK has been processed: cwnd and bytes in flight after it.
    #[inline]
    pub(super) fn watch_ack(&self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        let now = cx.now;
        if cx.rec().watching(self.conn.flow, now) {
            cx.rec().watch_ack(now, pkt.ack, self.w.cwnd, self.flight());
        }
    }
}
