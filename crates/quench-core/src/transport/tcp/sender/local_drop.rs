//! A drop in the sender's own host (`tcp.local_drop = "linux_cwr"`): what Linux 2.4-2.6, the
//! kernels of FAST's prototype and of the PFLDnet 2005 testbed, does when the interface's
//! queue is full. `dev_queue_xmit` answers NET_XMIT_DROP; `tcp_transmit_skb` then calls
//! `tcp_enter_cwr` and returns the error, and `tcp_write_xmit` (or the retransmit loop) stops
//! with the segment still at its head, to be sent on a later ACK. So the segment is not lost
//! to TCP, and nothing sent after it in the same burst left the host either.
//!
//! Taking the burst back: the world hands back every packet of the activation from the
//! refused one on (`Endpoint::on_local_drop`). Each transmission of the activation logged the
//! send state before it (snd_nxt, snd_max, HighRxt), so restoring the first refused one's
//! state unsends exactly that suffix, new data and SACK retransmissions alike (a
//! retransmission outside SACK recovery, which moves none of the three, is then resent by the
//! timer). RTT timings, the burstiness history and the counters forget the suffix too. With
//! nothing left in flight no ACK will ask again, so a retry is due one RTO later (Linux's
//! probe timer); the refused packets themselves are counted as the host link's drops.
//!
//! CWR (`tcp_enter_cwr`, `tcp_cwnd_down`, `tcp_complete_cwr` of Linux 2.6 `tcp_input.c`), once
//! until the data outstanding at entry is acknowledged: ssthresh from the controller,
//! `cwnd = min(cwnd, in flight + 1 segment)`; while in CWR the window never grows, and every
//! second ACK takes one segment off it while it is above ssthresh, never above in flight + 1
//! segment; at the end `cwnd = min(cwnd, ssthresh)`. Loss recovery and timeouts supersede CWR,
//! as Linux's Recovery and Loss states do.

use super::super::TIMER_BURST;
use super::TcpSender;
use crate::cc::{CongestionControl, Signal};
use crate::packet::Packet;
use crate::trace::TcpEvent;
use crate::transport::AgentCx;

/// One transmission of the current activation and the send state just before it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sent {
    seq: u64,
    len: u64,
    retransmit: bool,
    snd_nxt: u64,
    snd_max: u64,
    high_rxt: u64,
}

/// The congestion-window-reduced state.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cwr {
    /// snd_max at entry: CWR ends when it is acknowledged (Linux `high_seq`).
    high_seq: u64,
    /// ACKs since the last one-segment reduction (Linux `snd_cwnd_cnt`).
    acks: u32,
}

impl TcpSender {
    /// Note a transmission about to go out (only when local drops are taken back).
    pub(super) fn log_send(&mut self, seq: u64, len: u64, retransmit: bool) {
        if let Some(log) = self.sent_this_activation.as_mut() {
            log.push(Sent {
                seq,
                len,
                retransmit,
                snd_nxt: self.snd_nxt,
                snd_max: self.snd_max,
                high_rxt: self.high_rxt,
            });
        }
    }

    /// A new activation (packet, timer or start): earlier sends are out of the host's hands.
    pub(super) fn begin_activation(&mut self) {
        if let Some(log) = self.sent_this_activation.as_mut() {
            log.clear();
        }
    }

    /// The host refused `unsent[0]`, and `unsent[1..]` were never offered to it. True if they
    /// were all taken back.
    pub(super) fn take_back(&mut self, unsent: &[Packet], cx: &mut AgentCx) -> bool {
        let Some(log) = self.sent_this_activation.as_mut() else { return false };
        // Only this activation's data segments can be taken back (not a SYN, not a packet of
        // an earlier activation), and they must be the log's tail in order.
        let Some(first) = log.len().checked_sub(unsent.len()) else { return false };
        if !log[first..].iter().zip(unsent).all(|(s, p)| s.seq == p.seq) {
            return false;
        }
        let suffix: Vec<Sent> = log.drain(first..).collect();
        let before = suffix[0];
        (self.snd_nxt, self.snd_max, self.high_rxt) = (before.snd_nxt, before.snd_max, before.high_rxt);
        for s in &suffix {
            self.stats.segments_sent -= 1;
            self.stats.bytes_sent -= s.len;
            if s.retransmit {
                self.stats.retransmitted_segments -= 1;
                self.stats.retransmitted_bytes -= s.len;
            }
        }
        self.forget_sends_from(self.snd_max, suffix.len());
        self.enter_cwr(cx);
        if self.snd_una >= self.snd_max {
            // Nothing left in flight, so no ACK will come to send it: try again after one RTO,
            // as Linux's probe timer does (`tcp_check_probe_timer`); it is no timeout.
            self.rexmt.cancel();
            let at = cx.now + self.rtt.rto();
            self.burst_timer.arm(TIMER_BURST, at, cx);
        }
        true
    }

    /// Timings and burstiness history of the taken-back sends.
    fn forget_sends_from(&mut self, snd_max: u64, count: usize) {
        while self.send_times.back().is_some_and(|&(end, _)| end > snd_max) {
            self.send_times.pop_back();
        }
        if self.timed.is_some_and(|(seq, _)| seq >= snd_max) {
            self.timed = None;
        }
        if let Some(b) = self.burst.as_mut() {
            b.unsend(count);
        }
    }

    /// Linux `tcp_enter_cwr`: nothing if already reducing for this window or recovering.
    fn enter_cwr(&mut self, cx: &mut AgentCx) {
        if self.cwr.is_some() || self.in_recovery {
            return;
        }
        self.w.flight = self.flight();
        self.w.ssthresh = self.cc.ssthresh_after(&self.w, Signal::LocalDrop);
        self.w.cwnd = self.w.cwnd.min(self.flight() + self.w.mss);
        self.cwr = Some(Cwr { high_seq: self.snd_max, acks: 0 });
        cx.rec.event(cx.now, self.conn.flow, TcpEvent::LocalCwr);
        self.record_window(cx);
    }

    /// After the controller saw a new ACK in CWR: undo any growth (`cwnd_before`); leave CWR
    /// once its window is acknowledged (Linux `tcp_complete_cwr`), else reduce (`tcp_cwnd_down`).
    pub(super) fn cwr_after_ack(&mut self, cwnd_before: u64) {
        let Some(cwr) = self.cwr.as_mut() else { return };
        let mss = self.w.mss;
        self.w.cwnd = self.w.cwnd.min(cwnd_before);
        if self.snd_una >= cwr.high_seq {
            self.w.cwnd = self.w.cwnd.min(self.w.ssthresh).max(mss);
            self.cwr = None;
            return;
        }
        cwr.acks += 1;
        if cwr.acks >= 2 {
            cwr.acks = 0;
            if self.w.cwnd > self.w.ssthresh {
                self.w.cwnd -= mss;
            }
        }
        self.w.cwnd = self.w.cwnd.min(self.snd_max - self.snd_una + mss);
    }
}
