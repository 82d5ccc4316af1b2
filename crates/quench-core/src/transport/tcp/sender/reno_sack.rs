//! Linux's emulation of SACK on a connection without it, for a model-based controller that
//! asks for it (`Capabilities::linux_cong_control`, BBR): the state Linux keeps for a Reno
//! connection (net/ipv4/tcp_input.c `tcp_add_reno_sack`, `tcp_remove_reno_sacks`,
//! `tcp_limit_reno_sacked`; tcp_recovery.c `tcp_newreno_mark_lost`) and the one in-flight count
//! built on it, `tcp_packets_in_flight` = packets_out − (sacked_out + lost_out) + retrans_out.
//!
//! - Each duplicate ACK says one more segment above the hole has arrived: `sacked` grows by
//!   one, so the segment leaves the flight and counts as delivered, unless that would leave no
//!   segment for the hole (`tcp_limit_reno_sacked`: at least one segment stays out of it).
//! - The third duplicate ACK (with `dupack_threshold` = 3, Linux's `tcp_reordering`) and every
//!   partial ACK in recovery mark exactly the head of the unacknowledged data lost
//!   (`tcp_newreno_mark_lost`); the mark is the rate sample's loss, and the head is resent once
//!   per mark, into a slot of the window, paced, after the controller's turn
//!   (`tcp_xmit_retransmit_queue` with `lost_out` ≤ 1).
//! - A cumulative ACK of `n` segments counts `max(n − sacked, 1)` delivered (the hole once; the
//!   segments the duplicate ACKs counted are not counted again) and takes `n − 1` from `sacked`
//!   ("one ACK acked hole, the rest eat duplicate ACKs"); leaving recovery, an advancing ACK
//!   outside it, and a timeout clear it (`tcp_reset_reno_sack`).
//! - The ACK of exactly `recover` holds Recovery, with `sacked` cleared and duplicates of it
//!   uncounted, until an ACK above it (`tcp_try_undo_recovery`: "hold old state until
//!   something *above* high_seq is ACKed"); the controller's restore comes then.
//! - Nothing else writes the controller's window: no inflation, deflation, PRR or reset at the
//!   end of recovery (Linux calls neither `tcp_cwnd_reduction` nor sets cwnd at
//!   `tcp_end_cwnd_reduction` for a `cong_control` module).
//!
//! Part of `TcpSender`: owns `LossRecovery::reno`; reaches the host only through its `AgentCx`.

use super::super::config::NewRenoTimer;
use super::super::TcpTimer;
use super::{CaState, TcpSender};
use crate::trace::TcpEvent;
use crate::transport::{AgentCx, Host};

/// Linux's Reno counters, in segments (`tcp_skb_pcount`) as Linux keeps them.
///
/// Invariants: `sacked + max(head_lost, 1) <= packets_out` after every duplicate ACK;
/// `head_retransmitted` implies `head_lost`; both are false outside recovery.
#[derive(Clone, Debug, Default)]
pub(super) struct RenoSack {
    /// Linux `sacked_out`: segments above the hole that duplicate ACKs reported.
    sacked: u64,
    /// Linux `lost_out` (0 or 1 without SACK): the head is marked lost.
    head_lost: bool,
    /// Linux `retrans_out` (0 or 1): the marked head has been resent.
    head_retransmitted: bool,
    /// Bytes marked lost since the last rate sample (Linux's change in `tp->lost`).
    newly_lost: u64,
}

impl RenoSack {
    /// A duplicate ACK (`tcp_add_reno_sack` with `tcp_limit_reno_sacked`): the segments it
    /// credits as delivered, 1 or 0 when the hole would be left without a segment.
    pub fn on_duplicate(&mut self, packets_out: u64) -> u64 {
        let holes = (self.head_lost as u64).max(1).min(packets_out);
        let before = self.sacked;
        self.sacked = (self.sacked + 1).min(packets_out - holes);
        self.sacked.saturating_sub(before)
    }

    /// A cumulative ACK of `acked` segments (`tcp_remove_reno_sacks`): the segments it credits
    /// as delivered.
    pub fn on_cumulative(&mut self, acked: u64) -> u64 {
        let credit = acked.saturating_sub(self.sacked).max(1);
        self.sacked = self.sacked.saturating_sub(acked.saturating_sub(1));
        credit
    }

    /// Mark the head (`len` bytes) lost (`tcp_newreno_mark_lost` → `tcp_mark_skb_lost`).
    pub fn mark_head_lost(&mut self, len: u64) {
        self.head_lost = true;
        self.head_retransmitted = false;
        self.newly_lost += len;
    }

    /// Out of recovery, or a timeout (`tcp_reset_reno_sack`, and no mark survives).
    pub fn reset(&mut self) {
        (self.sacked, self.head_lost, self.head_retransmitted) = (0, false, false);
    }

    pub fn take_newly_lost(&mut self) -> u64 {
        std::mem::take(&mut self.newly_lost)
    }

    /// `tcp_packets_in_flight` in bytes: `outstanding` (what has been sent above snd_una) less
    /// the duplicate-ACKed segments and the head marked lost, plus the head once resent.
    pub fn in_flight(&self, outstanding: u64, mss: u64) -> u64 {
        let lost = (self.head_lost && !self.head_retransmitted) as u64;
        outstanding.saturating_sub((self.sacked + lost) * mss)
    }

    /// The head is marked lost and not yet resent.
    pub fn head_to_resend(&self) -> bool {
        self.head_lost && !self.head_retransmitted
    }
}

impl TcpSender {
    /// Segments sent and not cumulatively acknowledged (Linux `packets_out`).
    fn packets_out(&self) -> u64 {
        (self.send.snd_max - self.send.snd_una).div_ceil(self.w.mss)
    }

    /// The bytes this ACK delivers by Linux's Reno accounting: one segment for a duplicate ACK
    /// that grows `sacked`, `max(n − sacked, 1)` segments (no more than it acknowledges) for a
    /// cumulative ACK of `acked` bytes, `n` segments.
    pub(super) fn reno_delivered(&mut self, duplicate: bool, acked: u64) -> u64 {
        let (mss, packets_out) = (self.w.mss, self.packets_out());
        // Held in Recovery at `recover` (`reno_on_partial_ack`): Linux returns before counting.
        let held = self.in_recovery() && self.send.snd_una >= self.loss.recover_end;
        let Some(reno) = self.loss.reno.as_mut() else { return acked };
        if duplicate && held {
            0
        } else if duplicate {
            reno.on_duplicate(packets_out) * mss
        } else {
            (reno.on_cumulative(acked.div_ceil(mss)) * mss).min(acked)
        }
    }

    /// Bytes in flight for the window test (Linux `tcp_packets_in_flight`), with the emulation;
    /// else everything sent and not acknowledged (`snd_nxt − snd_una`, `output`'s count).
    pub(super) fn window_flight(&self) -> u64 {
        let outstanding = self.send.snd_nxt - self.send.snd_una;
        match self.loss.reno.as_ref() {
            Some(r) => r.in_flight(outstanding, self.w.mss),
            None => outstanding,
        }
    }

    /// A duplicate ACK with the emulation (its delivery already counted by `rate_deliver`):
    /// on the threshold's, mark the head lost and enter recovery, without a send and without
    /// touching the window; the controller's turn and the send of the head follow.
    pub(super) fn reno_on_dupack(&mut self, cx: &mut AgentCx<impl Host>) {
        self.loss.dupacks += 1;
        if self.loss.ca == CaState::Open {
            self.loss.ca = CaState::Disorder;
        }
        if self.in_recovery() || self.loss.dupacks != self.cfg.dupack_threshold || !self.past_recovery_point() {
            return;
        }
        self.begin_recovery_episode(cx);
        self.reno_mark_head_lost();
        self.arm_retransmit(cx);
    }

    /// A partial ACK with the emulation: the new head is marked lost (resent by `output` after
    /// the controller's turn), and the timer restarts as `tcp.newreno_timer` says. The ACK of
    /// exactly `recover` is not partial: Linux resets `sacked` and holds Recovery, marking
    /// nothing, until an ACK above it (`tcp_fastretrans_alert` step D, `tcp_try_undo_recovery`
    /// with `tcp_is_non_sack_preventing_reopen`).
    pub(super) fn reno_on_partial_ack(&mut self, ack: u64, cx: &mut AgentCx<impl Host>) {
        if ack >= self.loss.recover_end {
            return self.loss.reno.as_mut().map_or((), |r| r.reset());
        }
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::PartialAckRetransmit);
        self.reno_mark_head_lost();
        let first = self.loss.ca == (CaState::Recovery { partial_ack_seen: false });
        if first || self.cfg.newreno_timer == NewRenoTimer::SlowButSteady {
            self.loss.ca = CaState::Recovery { partial_ack_seen: true };
            self.arm_retransmit(cx);
        }
    }

    fn reno_mark_head_lost(&mut self) {
        let len = (self.segment_at(self.send.snd_una).0 as u64).max(1);
        if let Some(r) = self.loss.reno.as_mut() {
            r.mark_head_lost(len);
        }
    }

    /// Resend the head marked lost if the window has a slot for it and no pacing or queue holds
    /// it (`tcp_xmit_retransmit_queue`: `tcp_pacing_check`, `cwnd − tcp_packets_in_flight`).
    /// Returns false if it is still to be sent, so that no new data overtakes it.
    pub(super) fn reno_resend_head(&mut self, cx: &mut AgentCx<impl Host>) -> bool {
        if !self.in_recovery() || !self.loss.reno.as_ref().is_some_and(|r| r.head_to_resend()) {
            return true;
        }
        let len = (self.segment_at(self.send.snd_una).0 as u64).max(1);
        if self.window_flight() + len > self.w.cwnd || self.send_held(cx) {
            return false;
        }
        if self.transmit(self.send.snd_una, cx).is_none() {
            return false;
        }
        if let Some(r) = self.loss.reno.as_mut() {
            r.head_retransmitted = true;
        }
        if !self.timers.is_armed(TcpTimer::Retransmit) {
            self.arm_retransmit(cx);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::RenoSack;

    /// `tcp_limit_reno_sacked`: with 10 segments out and the head marked, at most 9 duplicate
    /// ACKs count; a tenth credits nothing.
    #[test]
    fn duplicate_acks_count_up_to_all_but_the_hole() {
        let mut r = RenoSack::default();
        let credits: u64 = (0..9).map(|_| r.on_duplicate(10)).sum();
        assert_eq!((credits, r.sacked), (9, 9));
        r.mark_head_lost(1000);
        assert_eq!(r.on_duplicate(10), 0);
        assert_eq!(r.in_flight(10_000, 1000), 0, "10 out, 9 reported, the head lost");
        r.head_retransmitted = true;
        assert_eq!(r.in_flight(10_000, 1000), 1000);
    }

    /// `tcp_remove_reno_sacks`: a partial ACK of 4 segments with 6 duplicate ACKs counted
    /// credits the hole alone and leaves 3; an ACK of more than was reported credits the rest.
    #[test]
    fn a_cumulative_ack_counts_the_hole_once() {
        let mut r = RenoSack { sacked: 6, ..RenoSack::default() };
        assert_eq!(r.on_cumulative(4), 1);
        assert_eq!(r.sacked, 3);
        assert_eq!(r.on_cumulative(10), 7);
        assert_eq!(r.sacked, 0);
    }
}
