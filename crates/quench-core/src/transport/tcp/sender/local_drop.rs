//! A drop in the sender's own host (`tcp.local_drop = "linux_cwr"`): what Linux 2.4-2.6, the
//! kernels of FAST's prototype and of the PFLDnet 2005 testbed, does when the interface's
//! queue is full. `dev_queue_xmit` answers NET_XMIT_DROP; `tcp_transmit_skb` then calls
//! `tcp_enter_cwr` and returns the error, and `tcp_write_xmit` (or the retransmit loop) stops
//! with the segment still at its head, to be sent on a later ACK. So the segment is not lost
//! to TCP, and nothing sent after it in the same burst left the host either.
//!
//! The host's answer comes back from the send itself (`AgentCx::send`), so the sender commits
//! nothing for a refused segment: snd_nxt, snd_max and HighRxt stay where they were, no RTT
//! timing, burstiness history or counter notes it, and nothing more is offered in the same
//! activation (`host_refused`), as `tcp_write_xmit` stops at its head. With nothing left in
//! flight no ACK will ask again, so a retry is due one RTO later (Linux's probe timer); the
//! refused segment is counted as the host link's drop, and the segments table keeps the
//! offer.
//!
//! CWR (`tcp_enter_cwr`, `tcp_cwnd_down`, `tcp_complete_cwr` of Linux 2.6 `tcp_input.c`), once
//! until the data outstanding at entry is acknowledged: ssthresh from the controller,
//! `cwnd = min(cwnd, in flight + 1 segment)`; while in CWR the window never grows, and every
//! second ACK takes one segment off it while it is above ssthresh, never above in flight + 1
//! segment; at the end `cwnd = min(cwnd, ssthresh)`. Loss recovery and timeouts supersede CWR,
//! as Linux's Recovery and Loss states do.
//! Part of `TcpSender`: it owns no state of its own, but drives the CWR state (`CaState`), the
//! window and the retry timer. It reaches the host only through its `AgentCx`, never the world or
//! the receiver.

use super::super::TcpTimer;
use super::{CaState, TcpSender};
use crate::cc::{CongestionControl, Signal};
use crate::trace::TcpEvent;
use crate::transport::{AgentCx, Host};

/// The congestion-window-reduced state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cwr {
    /// snd_max at entry: CWR ends when it is acknowledged (Linux `high_seq`).
    high_seq: u64,
    /// ACKs since the last one-segment reduction (Linux `snd_cwnd_cnt`).
    acks: u32,
}

impl TcpSender {
    /// The host's queue refused a segment: offer nothing more in this activation, enter CWR,
    /// and, with nothing in flight, try again after one RTO.
    pub(super) fn on_local_drop(&mut self, cx: &mut AgentCx<impl Host>) {
        self.send.host_refused = true;
        self.enter_cwr(cx);
        if self.send.snd_una >= self.send.snd_max {
            // Nothing left in flight, so no ACK will come to send it: try again after one RTO,
            // as Linux's probe timer does (`tcp_check_probe_timer`); it is no timeout.
            self.timers.cancel(TcpTimer::Retransmit);
            let at = cx.now + self.timing.rtt.rto();
            self.timers.arm(TcpTimer::Burst, at, cx);
        }
    }

    /// Linux `tcp_enter_cwr`: nothing if already reducing for this window or recovering.
    fn enter_cwr(&mut self, cx: &mut AgentCx<impl Host>) {
        if matches!(self.loss.ca, CaState::Cwr(_) | CaState::Recovery { .. }) {
            return;
        }
        self.w.flight = self.flight();
        self.w.ssthresh = self.cc.on_congestion(&self.w, Signal::LocalDrop);
        self.w.cwnd = self.w.cwnd.min(self.flight() + self.w.mss);
        self.loss.ca = CaState::Cwr(Cwr { high_seq: self.send.snd_max, acks: 0 });
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::LocalCwr);
        self.record_window(cx);
    }

    /// After the controller saw a new ACK in CWR: undo any growth (`cwnd_before`); leave CWR
    /// once its window is acknowledged (Linux `tcp_complete_cwr`), else reduce (`tcp_cwnd_down`).
    pub(super) fn cwr_after_ack(&mut self, cwnd_before: u64) {
        let CaState::Cwr(cwr) = &mut self.loss.ca else { return };
        let mss = self.w.mss;
        self.w.cwnd = self.w.cwnd.min(cwnd_before);
        if self.send.snd_una >= cwr.high_seq {
            self.w.cwnd = self.w.cwnd.min(self.w.ssthresh).max(mss);
            self.loss.ca = CaState::Open;
            return;
        }
        cwr.acks += 1;
        if cwr.acks >= 2 {
            cwr.acks = 0;
            if self.w.cwnd > self.w.ssthresh {
                self.w.cwnd -= mss;
            }
        }
        self.w.cwnd = self.w.cwnd.min(self.send.snd_max - self.send.snd_una + mss);
    }
}
